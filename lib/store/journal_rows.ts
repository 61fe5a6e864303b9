/**
 * Journal rows: begin/finish of requests with their statement rows, reads and
 * queries. Runs on the connection's own thread (the journal Worker, or inline).
 *
 * @module
 */

import { StoreError } from "./errors.ts";
import { appendEvent } from "./event_rows.ts";
import { type Conn, idOf, type Param } from "./sqlite_conn.ts";
import type {
  AppendedEvent,
  BeginRequestInput,
  EntryKind,
  EntryStatus,
  EventInput,
  FinishRequestInput,
  JournalEntry,
  JournalEntryWithStatements,
  JournalFilter,
  OutputRecord,
  StatementInput,
} from "./types.ts";
import * as v from "./validate.ts";
import { MAX_STATEMENTS_PER_REQUEST } from "./limits.ts";
import { invalid } from "./errors.ts";

/** Result of `finishRequest`. */
export interface FinishResult {
  /** The request id. */
  id: number;
  /** Ids of the statement rows, in order. */
  statementIds: number[];
  /** Events appended in the same transaction. */
  events: AppendedEvent[];
}

interface Row {
  id: number;
  parent_id: number | null;
  kind: EntryKind;
  ordinal: number | null;
  session: string;
  principal: string;
  started_at: number;
  duration_ns: number | null;
  cwd: string;
  env_hash: string | null;
  source: string;
  head: string;
  ast: string | null;
  effects: string;
  status: EntryStatus;
  ok: number | null;
  exit_status: number | null;
  signal: string | null;
  outputs: string;
  error_code: string | null;
  error_message: string | null;
}

const COLUMNS = `id, parent_id, kind, ordinal, session, principal, started_at, duration_ns, cwd,
  env_hash, source, head, ast, effects, status, ok, exit_status, signal, outputs, error_code,
  error_message`;

const INSERT_ROW = `INSERT INTO journal (parent_id, kind, ordinal, session, principal, writer,
  started_at, duration_ns, cwd, env_hash, source, head, ast, effects, status, ok, exit_status,
  signal, outputs, error_code, error_message)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

function insertKinds(c: Conn, id: number, kinds: readonly string[]): void {
  const s = c.stmt("INSERT OR IGNORE INTO journal_effect (kind, journal_id) VALUES (?, ?)");
  for (const k of kinds) s.run(k, id);
}

function insertRefs(c: Conn, id: number, refs: ReadonlyArray<{ hash: string; role: string }>) {
  const s = c.stmt("INSERT OR IGNORE INTO blob_ref (journal_id, hash, role) VALUES (?, ?, ?)");
  for (const r of refs) s.run(id, r.hash, r.role);
}

function beginFields(input: BeginRequestInput) {
  if (typeof input !== "object" || input === null) throw invalid("beginRequest expects an object");
  const source = v.text("source", input.source);
  return {
    session: v.text("session", input.session, 256, false),
    principal: v.text("principal", input.principal, 256, false),
    source,
    cwd: v.text("cwd", input.cwd, 64 * 1024),
    ast: v.json("ast", input.ast),
    fx: v.effects(input.effects),
    envHash: v.optText("envHash", input.envHash, 128),
    startedAt: input.startedAt === undefined ? Date.now() : v.ms("startedAt", input.startedAt),
  };
}

/** The request row of `b`, `running` or (with `o`) already finished; returns its id. */
function insertRequest(
  c: Conn,
  writer: string | null,
  b: ReturnType<typeof beginFields>,
  o: v.Outcome | null,
): number {
  const fx = o?.effects ?? b.fx;
  const r = c.stmt(INSERT_ROW).run(
    null,
    "request",
    null,
    b.session,
    b.principal,
    writer,
    b.startedAt,
    o?.durationNs ?? null,
    b.cwd,
    b.envHash,
    b.source,
    v.headOf(b.source),
    b.ast,
    JSON.stringify(fx.list),
    o?.status ?? "running",
    o?.ok ?? null,
    o?.exitStatus ?? null,
    o?.signal ?? null,
    o?.outputsJson ?? "[]",
    o?.error?.code ?? null,
    o?.error?.message ?? null,
  );
  const id = idOf(r.lastInsertRowid);
  insertKinds(c, id, fx.kinds);
  if (o) insertRefs(c, id, v.outputHashes(o.outputs));
  return id;
}

/** Insert a `running` request row; returns its id. */
export function beginRequest(c: Conn, writer: string | null, input: BeginRequestInput): number {
  const b = beginFields(input);
  return c.tx("beginRequest", () => insertRequest(c, writer, b, null));
}

/**
 * Insert a request that already finished — its row in its final state and its statement rows —
 * in one transaction (what `beginRequest` then `finishRequest` store, in one insert).
 */
export function recordRequest(
  c: Conn,
  writer: string | null,
  input: BeginRequestInput,
  result: FinishRequestInput,
  statements: readonly StatementInput[] = [],
): number {
  const b = beginFields(input);
  const outcome = v.outcome("result", result);
  const stmts = validStatements(statements);
  return c.tx("recordRequest", () => {
    const id = insertRequest(c, writer, b, outcome);
    insertStatements(c, id, {
      session: b.session,
      principal: b.principal,
      writer,
      started_at: b.startedAt,
      cwd: b.cwd,
      env_hash: b.envHash,
    }, stmts);
    return id;
  });
}

function validStatements(statements: readonly StatementInput[]) {
  if (!Array.isArray(statements)) throw invalid("statements must be an array");
  if (statements.length > MAX_STATEMENTS_PER_REQUEST) {
    throw invalid(`a request may record at most ${MAX_STATEMENTS_PER_REQUEST} statements`);
  }
  return statements.map((s, i) => v.statement(i, s));
}

/** The statement rows of request `id` (`row`: what they inherit from it); their ids. */
/** What a statement row inherits from its request row. */
interface Inherited {
  session: string;
  principal: string;
  writer: string | null;
  started_at: number;
  cwd: string;
  env_hash: string | null;
}

function insertStatements(
  c: Conn,
  id: number,
  row: Inherited,
  stmts: ReturnType<typeof validStatements>,
): number[] {
  const statementIds: number[] = [];
  const ins = c.stmt(INSERT_ROW);
  stmts.forEach((s, i) => {
    const fx = s.effects ?? { list: [], kinds: [] };
    const r = ins.run(
      id,
      "statement",
      i,
      row.session,
      row.principal,
      row.writer,
      s.startedAt ?? row.started_at,
      s.durationNs,
      s.cwd ?? row.cwd,
      row.env_hash,
      s.source,
      s.head,
      s.astJson,
      JSON.stringify(fx.list),
      s.status,
      s.ok,
      s.exitStatus,
      s.signal,
      s.outputsJson,
      s.error?.code ?? null,
      s.error?.message ?? null,
    );
    const sid = idOf(r.lastInsertRowid);
    statementIds.push(sid);
    insertKinds(c, sid, fx.kinds);
    insertRefs(c, sid, v.outputHashes(s.outputs));
  });
  return statementIds;
}

/**
 * Write the outcome of a request and all its statement rows (and optional
 * events) in one transaction: either everything is stored or nothing is.
 */
export function finishRequest(
  c: Conn,
  id: number,
  result: FinishRequestInput,
  statements: readonly StatementInput[] = [],
  events: readonly EventInput[] = [],
): FinishResult {
  v.rowId("id", id);
  const outcome = v.outcome("result", result);
  const stmts = validStatements(statements);
  if (!Array.isArray(events)) throw invalid("events must be an array");
  return c.tx("finishRequest", () => {
    const row = c.stmt(
      "SELECT kind, status, session, principal, writer, started_at, cwd, env_hash FROM journal WHERE id = ?",
    ).get(id) as (Inherited & { kind: EntryKind; status: EntryStatus }) | undefined;
    if (!row) throw new StoreError("journal_not_found", `no journal entry ${id}`, { id });
    if (row.kind !== "request") {
      throw invalid(`journal entry ${id} is a statement; finish its request instead`, { id });
    }
    if (row.status !== "running") {
      throw new StoreError(
        "journal_not_running",
        `journal entry ${id} is ${row.status}, not running; it cannot be finished again`,
        { id, status: row.status },
      );
    }
    c.stmt(
      `UPDATE journal SET status = ?, ok = ?, duration_ns = ?, exit_status = ?, signal = ?,
       outputs = ?, error_code = ?, error_message = ? WHERE id = ?`,
    ).run(
      outcome.status,
      outcome.ok,
      outcome.durationNs,
      outcome.exitStatus,
      outcome.signal,
      outcome.outputsJson,
      outcome.error?.code ?? null,
      outcome.error?.message ?? null,
      id,
    );
    if (outcome.effects) {
      c.stmt("UPDATE journal SET effects = ? WHERE id = ?").run(
        JSON.stringify(outcome.effects.list),
        id,
      );
      c.stmt("DELETE FROM journal_effect WHERE journal_id = ?").run(id);
      insertKinds(c, id, outcome.effects.kinds);
    }
    insertRefs(c, id, v.outputHashes(outcome.outputs));
    const statementIds = insertStatements(c, id, row, stmts);
    const appended = events.map((e) => appendEvent(c, e));
    return { id, statementIds, events: appended };
  });
}

function toEntry(r: Row): JournalEntry {
  return {
    id: r.id,
    parentId: r.parent_id,
    kind: r.kind,
    ordinal: r.ordinal,
    session: r.session,
    principal: r.principal,
    startedAt: r.started_at,
    durationNs: r.duration_ns,
    cwd: r.cwd,
    envHash: r.env_hash,
    source: r.source,
    head: r.head,
    ast: r.ast === null ? null : JSON.parse(r.ast),
    effects: JSON.parse(r.effects),
    status: r.status,
    ok: r.ok === null ? null : r.ok === 1,
    exitStatus: r.exit_status,
    signal: r.signal,
    outputs: JSON.parse(r.outputs),
    error: r.error_code === null ? null : { code: r.error_code, message: r.error_message ?? "" },
  };
}

const STATUSES: readonly EntryStatus[] = ["running", "ok", "error", "cancelled", "unfinished"];

/** Query rows, every filter in SQL before the limit, newest first. */
export function query(c: Conn, filter: JournalFilter = {}): JournalEntry[] {
  if (typeof filter !== "object" || filter === null) throw invalid("filter must be an object");
  const where: string[] = [];
  const params: Param[] = [];
  if (filter.since !== undefined) {
    where.push("started_at >= ?");
    params.push(v.ms("since", filter.since));
  }
  if (filter.until !== undefined) {
    where.push("started_at <= ?");
    params.push(v.ms("until", filter.until));
  }
  if (filter.principal !== undefined) {
    where.push("principal = ?");
    params.push(v.text("principal", filter.principal, 256));
  }
  if (filter.session !== undefined) {
    where.push("session = ?");
    params.push(v.text("session", filter.session, 256));
  }
  if (filter.head !== undefined) {
    where.push("head = ?");
    params.push(v.text("head", filter.head));
  }
  if (filter.ok !== undefined) {
    if (typeof filter.ok !== "boolean") throw invalid("ok must be a boolean");
    where.push("ok = ?");
    params.push(filter.ok ? 1 : 0);
  }
  if (filter.status !== undefined) {
    if (!STATUSES.includes(filter.status)) {
      throw invalid(`status must be one of ${STATUSES.join(", ")}`);
    }
    where.push("status = ?");
    params.push(filter.status);
  }
  if (filter.kind !== undefined) {
    if (filter.kind !== "request" && filter.kind !== "statement") {
      throw invalid("kind must be request or statement");
    }
    // A literal, never a parameter: v4's partial indexes (`WHERE kind = 'request'`) are
    // only chosen when the query's WHERE names the same literal (a bound value would make
    // SQLite re-plan the cached statement on every bind). The value is one of two constants.
    where.push(filter.kind === "request" ? "kind = 'request'" : "kind = 'statement'");
  }
  if (filter.parentId !== undefined) {
    where.push("parent_id = ?");
    params.push(v.rowId("parentId", filter.parentId));
  }
  if (filter.beforeId !== undefined) {
    where.push("id < ?");
    params.push(v.rowId("beforeId", filter.beforeId));
  }
  if (filter.effects !== undefined) {
    if (!Array.isArray(filter.effects)) throw invalid("effects must be an array of kinds");
    // All-of, exact kind match (D-11): one indexed lookup per kind.
    for (const k of new Set(filter.effects.map((k) => v.effectKind(k, "effects[]")))) {
      where.push("id IN (SELECT journal_id FROM journal_effect WHERE kind = ?)");
      params.push(k);
    }
  }
  const sql = `SELECT ${COLUMNS} FROM journal ${
    where.length ? "WHERE " + where.join(" AND ") : ""
  } ORDER BY id DESC LIMIT ?`;
  params.push(v.limit(filter.limit));
  return (c.stmt(sql).all(...params) as unknown as Row[]).map(toEntry);
}

/** One row with its statements, or null. */
export function get(c: Conn, id: number): JournalEntryWithStatements | null {
  v.rowId("id", id);
  const r = c.stmt(`SELECT ${COLUMNS} FROM journal WHERE id = ?`).get(id) as Row | undefined;
  if (!r) return null;
  const statements = r.kind === "request"
    ? (c.stmt(`SELECT ${COLUMNS} FROM journal WHERE parent_id = ? ORDER BY ordinal`).all(
      id,
    ) as unknown as Row[]).map(toEntry)
    : [];
  return { ...toEntry(r), statements };
}

/**
 * The bytes of an inline output (a preview that is the whole output) whose hash is `hash`, as
 * text, or null: how `blob.get` resolves the hash of an output kept in its row, not the CAS.
 */
export function inlineOutput(c: Conn, hash: string): string | null {
  const rows = c.stmt(
    `SELECT j.outputs FROM blob_ref AS r JOIN journal AS j ON j.id = r.journal_id
     WHERE r.hash = ? AND r.role LIKE '${v.INLINE_ROLE}%' LIMIT 4`,
  ).all(hash) as Array<{ outputs: string }>;
  for (const r of rows) {
    for (const o of JSON.parse(r.outputs) as OutputRecord[]) {
      if (o.hash === hash && o.preview !== undefined) return o.preview;
    }
  }
  return null;
}

/**
 * Mark `running` rows whose writer process is gone as `unfinished`
 * (`isAlive(writer)` decides). Returns how many rows changed.
 */
export function sweepUnfinished(
  c: Conn,
  self: string | null,
  isAlive: (writer: string | null) => boolean,
): number {
  const writers = c.stmt("SELECT DISTINCT writer FROM journal WHERE status = 'running'")
    .all() as Array<{ writer: string | null }>;
  let changed = 0;
  for (const { writer } of writers) {
    if (writer !== null && writer === self) continue;
    if (isAlive(writer)) continue;
    changed += Number(
      c.tx(
        "sweepUnfinished",
        () =>
          c.stmt(
            "UPDATE journal SET status = 'unfinished' WHERE status = 'running' AND writer IS ?",
          )
            .run(writer).changes,
      ),
    );
  }
  return changed;
}
