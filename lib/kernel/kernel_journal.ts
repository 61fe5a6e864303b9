/**
 * The kernel's journal (issue 7), main-thread side: opens the store under the state directory
 * (or an in-memory one for `--ephemeral`), writes one request row per `exec` with its
 * statement rows, outputs, effects and undo records, publishes the `journal` channel, and
 * answers `blob.get` / `journal.query`.
 *
 * Hot path: `begin` does not wait (the row id is a promise); `finish` is one message to the
 * store's Worker (group commit); the exec's result is delivered once its row committed, so a
 * client that saw a result finds it in the journal even after a crash. Journal failures are
 * reported on stderr and on the session's `journal` channel (`{error}` payload), never
 * swallowed; they never fail the exec itself.
 *
 * @module
 */

import { RPC, RpcError } from "../client/errors.ts";
import {
  type JournalEntry,
  type JournalFilter,
  openStore,
  type OpenStoreOptions,
  type OutputRecord,
  parseRef,
  type Store,
  StoreError,
} from "../store/mod.ts";
import { HARD_CAP } from "../value/elide.ts";
import type { EventBus } from "./event_bus.ts";
import { StoreDurableLog } from "./durable_log.ts";
import type { ExecRecord, JBeginMsg, JReplyMsg, JReqMsg } from "./journal_messages.ts";
import type { Task } from "./tasks.ts";
import { applyUndo, UndoError } from "./undo_apply.ts";

/** Most write-behind rows in flight before results wait for the journal. */
export const BACKLOG_MAX = 256;

/** The principal of the kernel's own user (permissive policy: it may read every row, D-1). */
export function localPrincipal(): string {
  return `uid:${Deno.uid() ?? 0}`;
}

/** Does `principal`'s policy grant `journal_read` (every row)? Only the local user's does. */
export function grantsJournalRead(principal: string): boolean {
  return principal === localPrincipal();
}

interface Row {
  id: Promise<number | null>;
  finished: boolean;
}

/** Journal state of a kernel. */
export class KernelJournal {
  readonly store: Store;
  readonly durable: StoreDurableLog;
  readonly #rows = new Map<Task, Row>();
  readonly #principals = new WeakMap<Task, string>();
  /** Tasks whose row was finished (or is being finished). */
  readonly #done = new WeakSet<Task>();
  #bus: EventBus | null = null;
  readonly #onError: (e: unknown) => void;
  /** Deliver an exec's result only once its row committed (else write behind). */
  readonly sync: boolean;
  /** Write-behind rows not yet committed (bounded: see {@link finish}). */
  #backlog = 0;
  readonly #writes = new Set<Promise<void>>();
  #drained: Array<() => void> = [];

  private constructor(
    store: Store,
    durable: StoreDurableLog,
    onError: (e: unknown) => void,
    sync: boolean,
  ) {
    this.store = store;
    this.durable = durable;
    this.#onError = onError;
    this.sync = sync;
  }

  /** Open the store (`ephemeral`: in memory + temp CAS) and seed the durable channels. */
  static async open(
    stateDir: string | null,
    ephemeral: boolean,
    onError: (e: unknown) => void,
    sync = true,
    storeOptions: Pick<OpenStoreOptions, "maxDbBytes"> = {},
  ): Promise<KernelJournal> {
    const store = await openStore(stateDir ?? "ephemeral", { ...storeOptions, ephemeral });
    try {
      const durable = await StoreDurableLog.open(store.events, onError);
      return new KernelJournal(store, durable, onError, sync);
    } catch (e) {
      await store.close();
      throw e;
    }
  }

  /** The bus the `journal` channel is published on (set once the bus exists). */
  set bus(b: EventBus) {
    this.#bus = b;
  }

  /** `<state>/cas`, for session workers. */
  get casDir(): string {
    return this.store.cas.dir;
  }

  /** Who submitted a task. */
  principalOf(t: Task): string {
    return this.#principals.get(t) ?? localPrincipal();
  }

  /** Record who submitted a task (the attachment's principal). */
  notePrincipal(t: Task, principal: string): void {
    this.#principals.set(t, principal);
  }

  #report(session: string, what: string, e: unknown, entryId: number | null = null): void {
    const message = `${what}: ${(e as Error)?.message ?? e}`;
    this.#onError(new Error(`journal: ${message}`));
    const code = e instanceof StoreError ? e.code : "journal_write_failed";
    this.#bus?.publish(session, "journal", { error: { code, message }, entry_id: entryId });
  }

  /** The worker parsed the exec: write its `running` row (not awaited). */
  begin(t: Task, m: JBeginMsg): void {
    if (this.#rows.has(t)) return;
    const id = this.store.journal.beginRequest({
      session: t.session,
      principal: this.#principals.get(t) ?? localPrincipal(),
      source: t.src,
      cwd: m.cwd,
      ast: m.ast,
      envHash: m.env_hash || null,
      startedAt: m.started_ms,
    }).catch((e) => {
      this.#report(t.session, "writing the request row failed", e);
      return null;
    });
    this.#rows.set(t, { id, finished: false });
  }

  /**
   * Record a finished exec; resolves when its result may be delivered (never rejects).
   *
   * - sync (default): once the row committed — a client that saw a result finds it finished
   *   in the journal, even after a crash. Costs one journal commit of latency per exec.
   * - write-behind (`--journal-async`): at once, unless more than {@link BACKLOG_MAX} rows
   *   wait to be committed (then once the backlog is below it, so memory stays bounded and
   *   the journal keeps up through group commit). A crash can leave an answered exec's row
   *   `unfinished` (honest: the journal never learned how it ended).
   */
  finish(t: Task, rec: ExecRecord, cwd: string): Promise<void> {
    const write = this.#write(t, rec, cwd);
    this.#writes.add(write);
    void write.finally(() => this.#writes.delete(write));
    if (this.sync) return write;
    this.#backlog++;
    void write.finally(() => {
      this.#backlog--;
      if (this.#backlog < BACKLOG_MAX) { for (const f of this.#drained.splice(0)) f(); }
    });
    if (this.#backlog <= BACKLOG_MAX) return Promise.resolve();
    return new Promise((r) => this.#drained.push(r));
  }

  /**
   * Write the outcome (statements, outputs, effects) in one transaction, then its undo records,
   * then publish the `journal` event. Never rejects.
   */
  async #write(t: Task, rec: ExecRecord, cwd: string): Promise<void> {
    let row = this.#rows.get(t);
    if (!row) {
      this.begin(t, {
        t: "jbegin",
        task: t.id,
        ast: null,
        cwd,
        env_hash: "",
        started_ms: Date.now(),
      });
      row = this.#rows.get(t)!;
    }
    row.finished = true;
    this.#done.add(t);
    this.#rows.delete(t);
    for (const w of rec.warnings) this.#report(t.session, "exec output", w);
    const id = await row.id;
    if (id === null) return;
    try {
      await this.store.journal.finishRequest(id, {
        status: rec.status,
        ok: rec.ok,
        durationNs: rec.durationNs,
        exitStatus: rec.exitStatus,
        signal: rec.signal,
        outputs: rec.outputs,
        error: rec.error,
        effects: rec.effects,
      }, rec.statements);
    } catch (e) {
      this.#report(t.session, `finishing journal entry ${id} failed`, e, id);
      return;
    }
    for (const u of rec.undo) {
      try {
        await this.store.undo.recordUndo(
          { ...u, journalId: id } as Parameters<Store["undo"]["recordUndo"]>[0],
        );
      } catch (e) {
        this.#report(t.session, `recording an undo inverse of entry ${id} failed`, e, id);
      }
    }
    this.#bus?.publish(t.session, "journal", {
      entry_id: id,
      head: headOf(t.src),
      ok: rec.ok,
      principal: this.#principals.get(t) ?? localPrincipal(),
      session: t.session,
    });
  }

  /**
   * A task ended without a worker record (cancelled while queued, worker crash, shutdown):
   * close its row honestly (a queued task that never began gets one too).
   */
  settle(t: Task, state: "completed" | "cancelled" | "failed", message: string, cwd: string): void {
    if (state === "completed" || this.#done.has(t)) return;
    const rec: ExecRecord = {
      status: state === "cancelled" ? "cancelled" : "error",
      ok: false,
      durationNs: t.startedNs === null ? 0 : Math.max(0, Date.now() * 1e6 - t.startedNs),
      exitStatus: null,
      signal: null,
      outputs: [],
      error: { code: state === "cancelled" ? "cancelled" : "internal_error", message },
      effects: [],
      statements: [],
      undo: [],
      warnings: [],
    };
    void this.finish(t, rec, cwd);
  }

  /** Answer a language `journal`/`undo` request from a session worker. */
  async answer(m: JReqMsg, _session: string, principal: string): Promise<JReplyMsg> {
    try {
      if (m.op === "undo") {
        const id = typeof m.params.id === "number" ? m.params.id : null;
        const scope = grantsJournalRead(principal) ? null : principal;
        return {
          t: "jreply",
          rid: m.rid,
          ok: true,
          result: await applyUndo(this.store, id, scope),
        };
      }
      const f: JournalFilter = { kind: "request" };
      if (typeof m.params.head === "string") f.head = m.params.head;
      if (typeof m.params.principal === "string") f.principal = m.params.principal;
      if (typeof m.params.limit === "number") f.limit = m.params.limit;
      if (!grantsJournalRead(principal)) {
        if (f.principal !== undefined && f.principal !== principal) {
          return { t: "jreply", rid: m.rid, ok: true, result: [] };
        }
        f.principal = principal;
      }
      const rows = await this.store.journal.query(f);
      return { t: "jreply", rid: m.rid, ok: true, result: rows.map(entryJson) };
    } catch (e) {
      const code = e instanceof UndoError ? e.code : "io_error";
      return {
        t: "jreply",
        rid: m.rid,
        ok: false,
        error: { code, message: (e as Error)?.message ?? String(e) },
      };
    }
  }

  /** Flush durable events and close the store. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.#rows.values()].map((r) => r.id));
    await Promise.allSettled([...this.#writes]);
    await this.durable.flushed();
    await this.store.close();
  }
}

/** First whitespace-separated word of a source text (the journal's `head`). */
export function headOf(src: string): string {
  return src.trim().split(/\s+/, 1)[0] ?? "";
}

function outputJson(o: OutputRecord): Record<string, unknown> {
  const out: Record<string, unknown> = {
    kind: o.kind,
    hash: o.ref ? parseRef(o.ref) : null,
    len: o.len,
  };
  if (o.preview !== undefined) out.preview = o.preview;
  if (o.truncated) out.truncated = true;
  return out;
}

/**
 * A journal row in the protocol's shape (§14): `ts` and `dur_ns` in ns, `status` the exit
 * status, `ok` null while running; plus `kind`, `parent_id`, `state` and `error` (additive).
 */
export function entryJson(e: JournalEntry): Record<string, unknown> {
  return {
    id: e.id,
    kind: e.kind,
    parent_id: e.parentId,
    session: e.session,
    principal: e.principal,
    ts: e.startedAt * 1_000_000,
    dur_ns: e.durationNs,
    cwd: { display: e.cwd },
    env_hash: e.envHash,
    src: e.source,
    head: e.head,
    ast: e.ast,
    effects: e.effects,
    state: e.status,
    status: e.exitStatus,
    signal: e.signal,
    ok: e.ok,
    opaque: e.effects.some((x) => x.kind === "opaque"),
    outputs: e.outputs.map(outputJson),
    error: e.error,
  };
}

/** Parse `journal.query` params into a store filter (all applied in SQL before the limit). */
export function queryFilter(p: Record<string, unknown>, principal: string): JournalFilter {
  const bad = (msg: string) => new RpcError(RPC.INVALID_PARAMS, msg);
  const f: JournalFilter = {};
  const ns = (k: string): number | undefined => {
    const v = p[k];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== "number" || !Number.isSafeInteger(v) && !Number.isFinite(v)) {
      throw bad(`\`${k}\` must be an integer (ns since the epoch)`);
    }
    return v;
  };
  const since = ns("since");
  if (since !== undefined) f.since = Math.max(0, Math.ceil(since / 1_000_000));
  const until = ns("until");
  if (until !== undefined) f.until = Math.floor(until / 1_000_000);
  for (const k of ["principal", "head", "session"] as const) {
    const v = p[k];
    if (v === undefined || v === null) continue;
    if (typeof v !== "string") throw bad(`\`${k}\` must be a string`);
    f[k] = v;
  }
  if (p.ok !== undefined && p.ok !== null) {
    if (typeof p.ok !== "boolean") throw bad("`ok` must be a boolean");
    f.ok = p.ok;
  }
  if (p.effects !== undefined && p.effects !== null) {
    if (!Array.isArray(p.effects) || !p.effects.every((x) => typeof x === "string" && x !== "")) {
      throw bad("`effects` must be a list of effect kinds (strings)");
    }
    f.effects = (p.effects as string[]).map((k) => k.replaceAll(".", "_"));
  }
  const kind = p.kind ?? "request";
  if (kind !== "request" && kind !== "statement" && kind !== "all") {
    throw bad("`kind` must be request, statement or all");
  }
  if (kind !== "all") f.kind = kind;
  if (p.limit !== undefined && p.limit !== null) {
    if (typeof p.limit !== "number" || !Number.isSafeInteger(p.limit) || p.limit < 0) {
      throw bad("`limit` must be a non-negative integer");
    }
    if (p.limit > 0) f.limit = p.limit;
  }
  if (p.before_id !== undefined && p.before_id !== null) {
    if (typeof p.before_id !== "number" || !Number.isSafeInteger(p.before_id)) {
      throw bad("`before_id` must be an integer");
    }
    f.beforeId = p.before_id;
  }
  // D-1: without `journal_read` a principal sees only its own rows.
  if (!grantsJournalRead(principal)) {
    if (f.principal !== undefined && f.principal !== principal) {
      throw new RpcError(
        RPC.LEASH_DENIED,
        `principal ${principal} may read only its own journal rows (no journal_read grant)`,
        { effects: [{ kind: "journal_read" }] },
      );
    }
    f.principal = principal;
  }
  return f;
}

/**
 * `blob.get {hash, offset?, length?}` (protocol §5.2, D-8): at most {@link HARD_CAP} bytes per
 * call. A whole blob that is JSON comes back as that JSON (value blobs are tagged wire JSON);
 * anything else as `{"$":"bytes","len","v"}`. Unknown, malformed or corrupted → -32004.
 */
export async function blobGet(store: Store, p: Record<string, unknown>): Promise<unknown> {
  const hashParam = p.hash;
  if (hashParam === undefined || hashParam === null) {
    throw new RpcError(RPC.INVALID_PARAMS, "blob.get requires a hash");
  }
  if (typeof hashParam !== "string") {
    throw new RpcError(RPC.INVALID_PARAMS, "`hash` must be a string (64 hex digits)");
  }
  const uint = (k: string): number | undefined => {
    const v = p[k];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0) {
      throw new RpcError(RPC.INVALID_PARAMS, `\`${k}\` must be a non-negative integer`);
    }
    return v;
  };
  const offset = uint("offset") ?? 0;
  const length = Math.min(uint("length") ?? HARD_CAP, HARD_CAP);
  let hash: string;
  try {
    hash = parseRef(hashParam);
  } catch {
    throw new RpcError(RPC.UNKNOWN_REF, "unknown value hash", {
      ref: hashParam,
      code: "not_found",
    });
  }
  try {
    const r = await store.cas.getRange(hash, offset, length);
    const whole = offset === 0 && r.data.length === r.size;
    const base = {
      hash,
      offset,
      size: r.size,
      len: r.data.length,
      more: offset + r.data.length < r.size,
    };
    if (whole) {
      try {
        return {
          ...base,
          value: JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(r.data)),
        };
      } catch { /* not JSON text: bytes */ }
    }
    return { ...base, value: { $: "bytes", len: r.data.length, v: r.data.toBase64() } };
  } catch (e) {
    if (e instanceof StoreError) {
      if (e.code === "blob_not_found") {
        throw new RpcError(RPC.UNKNOWN_REF, "unknown value hash", { ref: hash, code: "not_found" });
      }
      if (e.code === "bad_range") {
        throw new RpcError(RPC.BAD_PATH_OR_SLICE, e.message, { ref: hash });
      }
      throw new RpcError(RPC.UNKNOWN_REF, `blob ${hash} is unreadable: ${e.message}`, {
        ref: hash,
        code: "io_error",
        store_code: e.code,
      });
    }
    throw e;
  }
}

/** Outputs as inline previews (≤ 4 KiB) or CAS refs: re-exported for the worker side. */
export type { OutputRecord };
