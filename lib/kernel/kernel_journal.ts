/**
 * The kernel's journal (issue 7), main-thread side: opens the store under the state directory
 * (or an in-memory one for `--ephemeral`), writes one request row per `exec` with its
 * statement rows, outputs, effects and undo records, publishes the `journal` channel, and
 * answers `blob.get` / `journal.query`.
 *
 * Hot path: nothing here. A session worker logs each exec to the journal intake
 * (`lib/store/intake.ts`) before its result is delivered, so a client that saw a result finds
 * it in the journal even after a crash; this side only nudges the journal thread (on the
 * schedule of `write_window.ts`) to fold the intake into SQLite in one transaction, and
 * publishes the `journal` channel from what was folded. Journal failures are
 * reported on stderr and on the `journal` channel (`{error}` payload), never swallowed; they
 * never fail the exec itself.
 *
 * @module
 */

import { RPC, RpcError } from "../client/errors.ts";
import {
  type JournalEntry,
  journalEventPayload,
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
import {
  type ExecRecord,
  type JournalDone,
  type JReplyMsg,
  type JReqMsg,
  outcomeOf,
} from "./journal_messages.ts";
import type { Task } from "./tasks.ts";
import { applyUndo, UndoError } from "./undo_apply.ts";
import { WriteWindow } from "./write_window.ts";
import { type JournalRead, localPrincipal } from "../leash/mod.ts";

/** Retrying a fold the journal could not take (full, busy): first after 1 s, at most every 30 s. */
const RETRY_MIN_MS = 1000;
const RETRY_MAX_MS = 30_000;

/** Kernel events waiting for a fold at most (beyond, they are delivered unstored). */
const MAX_KERNEL_EVENTS = 1024;

/**
 * Which journal rows a principal may read without a policy to ask (D-1): the kernel's own
 * user every row, anyone else their own. A kernel with Leash replaces it with the policy's
 * `journal_read` (`KernelJournal.access`).
 */
export function defaultJournalAccess(principal: string): JournalRead {
  return principal === localPrincipal() ? "all" : "own";
}

/** Journal state of a kernel. */
export class KernelJournal {
  readonly store: Store;
  readonly durable: StoreDurableLog;
  readonly #principals = new WeakMap<Task, string>();
  /** Tasks whose row was settled here (never reached a worker). */
  readonly #done = new WeakSet<Task>();
  #bus: EventBus | null = null;
  readonly #onError: (e: unknown) => void;
  readonly #writes = new Set<Promise<void>>();
  /** Session workers started (numbers their intake files), and whose each is. */
  #workers = 0;
  readonly #workerSession = new Map<number, string>();
  #foldTimer: ReturnType<typeof setTimeout> | null = null;
  /** The kernel's own `journal` channel events, for the next fold to number and store. */
  #kernelEvents: Array<{ scope: string; payload: Record<string, unknown> }> = [];
  /** The problems the last fold reported (`code\0message`). */
  #foldProblems = new Set<string>();
  readonly #foldWindow = new WriteWindow();
  #folding: Promise<void> | null = null;
  #foldAgain = false;
  /** Set by `close`: no fold is scheduled after the last one. */
  #closing = false;
  /** Which rows a principal may read (the policy's `journal_read`; issue 15). */
  access: (principal: string) => JournalRead = defaultJournalAccess;

  private constructor(store: Store, durable: StoreDurableLog, onError: (e: unknown) => void) {
    this.store = store;
    this.durable = durable;
    this.#onError = onError;
  }

  /** Open the store (`ephemeral`: in memory + temp CAS) and seed the durable channels. */
  static async open(
    stateDir: string | null,
    ephemeral: boolean,
    onError: (e: unknown) => void,
    storeOptions: Pick<OpenStoreOptions, "maxDbBytes"> = {},
  ): Promise<KernelJournal> {
    const store = await openStore(stateDir ?? "ephemeral", { ...storeOptions, ephemeral });
    try {
      const durable = await StoreDurableLog.open(store.events, onError);
      const j = new KernelJournal(store, durable, onError);
      if (store.openInfo.intakeToken === null) {
        throw new Error("the store opened without an intake");
      }
      return j;
    } catch (e) {
      await store.close();
      throw e;
    }
  }

  /** The bus the `journal` channel is published on (set once the bus exists). */
  set bus(b: EventBus) {
    this.#bus = b;
    // Reading the history of `journal` (published from folds) or `session.transcript` (stored
    // by folds) first folds every exec already answered.
    b.settle = (channel) =>
      channel === "journal" || channel === "session.transcript" ? this.foldNow() : undefined;
  }

  /** `<state>/cas`, for session workers. */
  get casDir(): string {
    return this.store.cas.dir;
  }

  /** The highest `out:N` this state directory's transcript gave `session` (0: none). */
  async lastOut(session: string): Promise<number> {
    try {
      const [e] = await this.durable.readLatest(session, "session.transcript", null, 1);
      const n = (e?.payload as { n?: unknown } | undefined)?.n;
      return typeof n === "number" && Number.isSafeInteger(n) && n > 0 ? n : 0;
    } catch (err) {
      this.#onError(err);
      return 0;
    }
  }

  /** The state directory itself (a temp one for an ephemeral kernel): the trash is below it. */
  get stateDir(): string {
    return this.store.stateDir;
  }

  /** Who submitted a task. */
  principalOf(t: Task): string {
    return this.#principals.get(t) ?? localPrincipal();
  }

  /** Record who submitted a task (the attachment's principal). */
  notePrincipal(t: Task, principal: string): void {
    this.#principals.set(t, principal);
  }

  /**
   * Report a journal problem: stderr, and an `{error}` event on the session's `journal` channel
   * (stored with the next fold; `live`: delivered now without storing, when the fold itself is
   * what failed).
   */
  #report(
    session: string,
    what: string,
    e: unknown,
    entryId: number | null = null,
    live = false,
  ): void {
    const message = `${what}: ${(e as Error)?.message ?? e}`;
    this.#onError(new Error(`journal: ${message}`));
    const code = e instanceof StoreError ? e.code : "journal_write_failed";
    const payload = { error: { code, message }, entry_id: entryId };
    if (live) this.#live(session, payload);
    else this.#record(session, payload);
  }

  /**
   * A `journal` channel event of the kernel's own (a report, a row written here). The journal
   * thread numbers the channel — its fold stores each exec's event with the row — so this one
   * goes with the next fold, numbered after the rows folded before it and delivered in order.
   */
  #record(session: string, payload: Record<string, unknown>): void {
    if (!this.#bus) return;
    if (this.#closing || this.#kernelEvents.length >= MAX_KERNEL_EVENTS) {
      this.#live(session, payload); // no fold will take it: deliver it unstored
      return;
    }
    this.#kernelEvents.push({ scope: session, payload });
    this.#nudge();
  }

  /**
   * Deliver a `journal` channel event live, under the number the journal gave it; one it could
   * not number takes the bus's next (it may then repeat a stored event's number: this happens
   * only when the journal is failing).
   */
  #live(session: string, payload: unknown, seq: number | null = null, tsNs?: number): void {
    const bus = this.#bus;
    if (!bus) return;
    bus.publishStored(session, {
      channel: "journal",
      seq: seq ?? bus.nextSeq(session, "journal"),
      ts: tsNs ?? Date.now() * 1_000_000,
      payload,
    });
  }

  /** Where the next session worker of `session` logs its execs (`IntakeWriter`). */
  intakeFor(session: string): { dir: string; token: string; worker: number } {
    const worker = ++this.#workers;
    this.#workerSession.set(worker, session);
    return { dir: this.store.intakeDir, token: this.store.openInfo.intakeToken!, worker };
  }

  /** A worker finished an exec (already in its intake): report its problems, fold soon. */
  afterExec(session: string, done: JournalDone): void {
    for (const w of done.warnings) this.#report(session, "exec output", w);
    if (done.error !== null) this.#report(session, "journal", done.error);
    this.#nudge();
  }

  /** A session worker died: fold its intake; the exec it was running ends `unfinished`. */
  abandonIntake(worker: number): void {
    const w = this.store.journal.intakeAbandon(worker).then(
      () => this.#nudge(),
      (e) => this.#report("", "closing a crashed session's journal intake failed", e),
    );
    this.#writes.add(w);
    void w.finally(() => this.#writes.delete(w));
  }

  /** Fold the intake soon (see `write_window.ts`); one fold at a time. */
  #nudge(): void {
    if (this.#closing) return;
    if (this.#foldTimer !== null) return;
    if (this.#folding !== null) {
      this.#foldAgain = true;
      return;
    }
    this.#foldTimer = setTimeout(() => {
      this.#foldTimer = null;
      this.#fold();
    }, this.#foldWindow.delay());
  }

  #retryTimer: ReturnType<typeof setTimeout> | null = null;
  #retryMs = 0;

  #retryLater(behind: boolean): void {
    if (!behind) {
      this.#retryMs = 0;
      return;
    }
    if (this.#closing || this.#retryTimer !== null) return;
    this.#retryMs = Math.min(Math.max(this.#retryMs * 2, RETRY_MIN_MS), RETRY_MAX_MS);
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = null;
      this.#nudge();
    }, this.#retryMs);
    Deno.unrefTimer(this.#retryTimer);
  }

  /** Fold now and publish: afterwards the `journal` channel shows every exec answered so far. */
  async foldNow(): Promise<void> {
    if (this.#closing) return;
    if (this.#foldTimer !== null) clearTimeout(this.#foldTimer);
    this.#foldTimer = null;
    await this.#folding;
    await this.#fold();
  }

  #fold(): Promise<void> {
    this.#foldWindow.wrote();
    // Anything gathered for the durable log travels in the same journal batch: one wake.
    this.durable.sendNow();
    const kernelEvents = this.#kernelEvents;
    this.#kernelEvents = [];
    const run = this.store.journal.intakeTake(kernelEvents).then((r) => {
      // Each row's event was numbered and stored with it by the fold, the kernel's own events
      // after them: deliver them live, in that order.
      for (const n of r.finished) {
        this.#live(n.session, journalEventPayload(n), n.seq, n.ts * 1_000_000);
      }
      for (const e of r.events ?? []) {
        this.#live(e.scope, e.payload, e.seq, e.ts * 1_000_000);
        if (e.error) {
          this.#onError(
            new Error(`journal: a journal channel event was not stored: ${e.error.message}`),
          );
        }
      }
      // Lines the journal could not take stay in the intake: fold again later, backing off,
      // so they are applied once space returns even if no exec comes to nudge (issue 19).
      this.#retryLater(r.behind === true);
      // A problem the previous fold reported already (the journal stays busy, the intake
      // unreadable) is not reported again: each report queues an event for the next fold,
      // which would meet the same problem and report it again, and again.
      const seen = this.#foldProblems;
      this.#foldProblems = new Set(r.errors.map((e) => `${e.code}\u0000${e.message}`));
      for (const e of r.errors) {
        if (seen.has(`${e.code}\u0000${e.message}`)) continue;
        const sessions = new Set(e.workers.map((w) => this.#workerSession.get(w) ?? ""));
        if (sessions.size === 0) sessions.add("");
        for (const s of sessions) {
          this.#report(s, "folding the journal intake", new StoreError(e.code as never, e.message));
        }
      }
    }, (e) => {
      for (const k of kernelEvents) this.#live(k.scope, k.payload);
      this.#report("", "folding the journal intake failed", e, null, true);
    }).finally(() => {
      this.#folding = null;
      if (this.#foldAgain) {
        this.#foldAgain = false;
        this.#nudge();
      }
    });
    this.#folding = run;
    return run;
  }

  /**
   * A task that never reached a session worker ended (cancelled while queued, its worker
   * crashed, shutdown): it still gets an honest row, written here.
   */
  settle(t: Task, state: "completed" | "cancelled" | "failed", message: string, cwd: string): void {
    if (state === "completed" || this.#done.has(t)) return;
    this.#done.add(t);
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
    const w = this.#writeSettled(t, rec, cwd);
    this.#writes.add(w);
    void w.finally(() => this.#writes.delete(w));
  }

  async #writeSettled(t: Task, rec: ExecRecord, cwd: string): Promise<void> {
    const principal = this.#principals.get(t) ?? localPrincipal();
    let id: number;
    try {
      id = await this.store.journal.beginRequest({
        session: t.session,
        principal,
        source: t.src,
        cwd,
        ast: null,
        envHash: null,
        startedAt: Date.now(),
      });
      await this.store.journal.finishRequest(id, outcomeOf(rec));
    } catch (e) {
      this.#report(t.session, "writing the row of a task that never ran failed", e);
      return;
    }
    this.#record(
      t.session,
      journalEventPayload({ id, head: headOf(t.src), ok: rec.ok, principal, session: t.session }),
    );
  }

  /**
   * An approval decision (issue 15, D-2): a row in the plan owner's session with the approver
   * as principal, source `cap.request <plan_ref>`, the plan's effects, and the decision (who,
   * what, when) as its `decision` output. Resolves with the row id (null when writing failed —
   * reported like every journal problem).
   */
  async recordDecision(
    session: string,
    approver: string,
    planRef: string,
    effects: readonly Record<string, unknown>[],
    decision: Record<string, unknown>,
    cwd: string,
  ): Promise<number | null> {
    const text = JSON.stringify(decision);
    const source = `cap.request ${planRef}`;
    try {
      const id = await this.store.journal.beginRequest({
        session,
        principal: approver,
        source,
        cwd,
        ast: null,
        effects: effects as never,
        envHash: null,
        startedAt: Date.now(),
      });
      await this.store.journal.finishRequest(id, {
        status: "ok",
        ok: true,
        durationNs: 0,
        outputs: [{ kind: "decision", len: new TextEncoder().encode(text).length, preview: text }],
      });
      this.#record(
        session,
        journalEventPayload({ id, head: "cap.request", ok: true, principal: approver, session }),
      );
      return id;
    } catch (e) {
      this.#report(session, "recording an approval decision failed", e);
      return null;
    }
  }

  /** Answer a language `journal`/`undo` request from a session worker. */
  async answer(m: JReqMsg, _session: string, principal: string): Promise<JReplyMsg> {
    try {
      if (m.op === "undo") {
        const id = typeof m.params.id === "number" ? m.params.id : null;
        const scope = this.access(principal) === "all" ? null : principal;
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
      const access = this.access(principal);
      if (access === "none") return { t: "jreply", rid: m.rid, ok: true, result: [] };
      if (access === "own") {
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
    this.#closing = true;
    if (this.#foldTimer !== null) clearTimeout(this.#foldTimer);
    this.#foldTimer = null;
    if (this.#retryTimer !== null) clearTimeout(this.#retryTimer);
    this.#retryTimer = null;
    await this.#folding;
    await Promise.allSettled([...this.#writes]);
    await this.#fold(); // what the sessions logged last, published before the bus goes
    await Promise.allSettled([...this.#writes]); // rows written here meanwhile
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
    hash: o.ref ? parseRef(o.ref) : o.hash ?? null,
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

/** The largest time a date can hold (ECMAScript's ±8.64e15 ms), in ns. */
const MAX_TIME_NS = 8.64e21;

/** Parse `journal.query` params into a store filter (all applied in SQL before the limit). */
export function queryFilter(
  p: Record<string, unknown>,
  principal: string,
  access: JournalRead = defaultJournalAccess(principal),
): JournalFilter {
  const bad = (msg: string) => new RpcError(RPC.INVALID_PARAMS, msg);
  const f: JournalFilter = {};
  const ns = (k: string): number | undefined => {
    const v = p[k];
    if (v === undefined || v === null) return undefined;
    // ns since the epoch exceed 2^53, so any finite number is taken — within the range of a
    // date (±8.64e21 ns), beyond which no row can match and the store could not compare.
    if (typeof v !== "number" || !Number.isFinite(v)) {
      throw bad(`\`${k}\` must be an integer (ns since the epoch)`);
    }
    if (Math.abs(v) > MAX_TIME_NS) {
      throw new RpcError(
        RPC.INVALID_PARAMS,
        `\`${k}\` is out of range: a time in ns since the epoch is at most ${MAX_TIME_NS} ` +
          `in magnitude (got ${v})`,
        { param: k, max: MAX_TIME_NS },
      );
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
  // D-1: `journal_read` — none: no rows; own (true): the principal's rows; all: every row.
  if (access === "none") {
    throw new RpcError(
      RPC.LEASH_DENIED,
      `the policy of ${principal} does not grant journal_read; ask for \`journal_read = true\``,
      { effects: [{ kind: "journal_read" }] },
    );
  }
  if (access === "own") {
    if (f.principal !== undefined && f.principal !== principal) {
      throw new RpcError(
        RPC.LEASH_DENIED,
        `principal ${principal} may read only its own journal rows (journal_read = true, not "all")`,
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
    const r = await getBlobOrInline(store, hash, offset, length);
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

/**
 * A range of the CAS blob `hash`, or of the inline output (kept in its journal row) with that
 * hash: every output hash `journal.query` shows resolves (issue 19).
 */
async function getBlobOrInline(
  store: Store,
  hash: string,
  offset: number,
  length: number,
): Promise<{ data: Uint8Array; size: number }> {
  try {
    return await store.cas.getRange(hash, offset, length);
  } catch (e) {
    if (!(e instanceof StoreError && e.code === "blob_not_found")) throw e;
    const text = await store.journal.inlineOutput(hash);
    if (text === null) throw e;
    const all = new TextEncoder().encode(text);
    if (offset > all.length) {
      throw new StoreError("bad_range", `offset ${offset} is past the end (${all.length} bytes)`);
    }
    return { data: all.subarray(offset, offset + length), size: all.length };
  }
}

/** Outputs as inline previews (≤ 4 KiB) or CAS refs: re-exported for the worker side. */
export type { OutputRecord };
