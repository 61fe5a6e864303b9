/**
 * The synchronous journal: one `node:sqlite` connection (WAL,
 * synchronous=NORMAL, foreign keys on), migrated to the current schema, with
 * a writer lock for crash honesty. It blocks its thread, so in the kernel it
 * lives in the journal Worker (see `journal_client.ts`); tools may use it
 * inline.
 *
 * @module
 */

import { DatabaseSync } from "node:sqlite";
import { StoreError } from "./errors.ts";
import * as events from "./event_rows.ts";
import { gcPlan, type GcPlanInput, referencedAmong } from "./gc_rows.ts";
import * as journal from "./journal_rows.ts";
import * as pins from "./pin_rows.ts";
import { migrate, SCHEMA_VERSION, schemaVersion } from "./schema.ts";
import { Conn } from "./sqlite_conn.ts";
import { fromSqlite } from "./sqlite_errors.ts";
import * as undo from "./undo_rows.ts";
import { sweepStaleLocks, writerAlive, WriterLock } from "./writer_lock.ts";
import { IntakeFolder, type IntakeReport, type RecordedEvent } from "./intake_apply.ts";

/** Options of {@link JournalDb.open}. */
export interface JournalDbOptions {
  /** Database file, or `:memory:`. */
  path: string;
  /** Directory of writer lock files (`<state>/writers`); null for an in-memory journal. */
  writersDir: string | null;
  /** How long to wait for another process's write lock (default 5000 ms). */
  busyTimeoutMs?: number;
  /** Size cap of the database file; writes past it fail with `journal_full`. */
  maxDbBytes?: number;
  /**
   * The journal intake directory (`<state>/intake`, see `intake.ts`); null/absent: none. At
   * open, intake files of dead writers are folded in (their unfinished execs marked so).
   */
  intakeDir?: string | null;
}

/**
 * The journal's files are the user's alone (issue 19): create the database 0600, and tighten it
 * and an existing -wal/-shm (left by an older kernel) when they are open to others.
 */
function privateFiles(path: string): void {
  try {
    Deno.openSync(path, { read: true, write: true, create: true, mode: 0o600 }).close();
  } catch { /* SQLite's own open reports why */ }
  for (const f of [path, `${path}-wal`, `${path}-shm`]) {
    try {
      const st = Deno.lstatSync(f);
      if (st.isFile && st.uid === Deno.uid() && ((st.mode ?? 0) & 0o077) !== 0) {
        Deno.chmodSync(f, 0o600);
      }
    } catch { /* not there */ }
  }
}

/** What opening found. */
export interface OpenInfo {
  /** Schema version after migration. */
  schemaVersion: number;
  /** Migrations applied by this open. */
  migrated: number[];
  /** Rows of dead writers marked `unfinished` by this open. */
  unfinished: number;
  /** This connection's writer token. */
  writer: string | null;
  /** The token this connection's intake files carry (null: no intake). */
  intakeToken: string | null;
}

/** A synchronous journal connection. */
export class JournalDb {
  /** The connection (with statement cache). */
  readonly conn: Conn;
  /** What opening found. */
  readonly info: OpenInfo;
  /** The intake folder (null: this journal has no intake). */
  readonly intake: IntakeFolder | null;
  readonly #lock: WriterLock | null;
  readonly #writersDir: string | null;
  #closed = false;

  private constructor(
    conn: Conn,
    lock: WriterLock | null,
    writersDir: string | null,
    info: OpenInfo,
    intake: IntakeFolder | null,
  ) {
    this.conn = conn;
    this.#lock = lock;
    this.#writersDir = writersDir;
    this.info = info;
    this.intake = intake;
  }

  /** Open (creating and migrating) a journal. */
  static open(opts: JournalDbOptions): JournalDb {
    let db: DatabaseSync;
    try {
      // 0600 before SQLite creates it: its -wal and -shm take the database file's mode.
      if (opts.path !== ":memory:") privateFiles(opts.path);
      db = new DatabaseSync(opts.path);
    } catch (e) {
      throw fromSqlite(e, `opening the journal ${opts.path}`);
    }
    let lock: WriterLock | null = null;
    try {
      const busy = opts.busyTimeoutMs ?? 5000;
      if (!Number.isSafeInteger(busy) || busy < 0) {
        throw new StoreError("invalid_input", "busyTimeoutMs must be a non-negative integer");
      }
      // Set by pragma: the constructor's `timeout` option is not honoured for 0 in Deno 2.9.
      db.exec(`PRAGMA busy_timeout = ${busy}`);
      if (opts.path !== ":memory:") {
        const mode = (db.prepare("PRAGMA journal_mode = WAL").get() as { journal_mode: string })
          .journal_mode;
        if (mode !== "wal") {
          throw new StoreError(
            "journal_write_failed",
            `the journal ${opts.path} could not switch to WAL mode (got ${mode})`,
          );
        }
      }
      // temp_store MEMORY: savepoints (one per op and per intake line) keep their statement
      // journals in memory instead of writing every touched page to a temp file.
      db.exec("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA temp_store = MEMORY;");
      if (opts.maxDbBytes !== undefined) {
        if (!Number.isSafeInteger(opts.maxDbBytes) || opts.maxDbBytes <= 0) {
          throw new StoreError("invalid_input", "maxDbBytes must be a positive integer");
        }
        const page = (db.prepare("PRAGMA page_size").get() as { page_size: number }).page_size;
        db.exec(`PRAGMA max_page_count = ${Math.max(1, Math.floor(opts.maxDbBytes / page))}`);
      }
      const migrated = migrate(db);
      const conn = new Conn(db);
      if (opts.writersDir !== null) lock = WriterLock.acquire(opts.writersDir);
      const writer = lock?.token ?? null;
      const dir = opts.writersDir;
      let intake: IntakeFolder | null = null;
      if (opts.intakeDir) {
        const token = writer ?? `e${Deno.pid}-${crypto.randomUUID()}`;
        intake = new IntakeFolder(conn, opts.intakeDir, token, writer);
        // A crashed kernel's intake: fold what it wrote, its unfinished execs become unfinished.
        const isDead = (t: string) => dir === null ? false : !writerAlive(dir, t);
        while (intake.catchUp(isDead) > 0) { /* bounded batches until none is left */ }
        intake.sweepMarks();
      }
      // After the fold: a dead writer's exec whose finish is in its intake must not be swept.
      const unfinished = dir === null
        ? 0
        : journal.sweepUnfinished(conn, writer, (w) => writerAlive(dir, w));
      if (dir !== null && writer !== null) sweepStaleLocks(dir, writer);
      return new JournalDb(conn, lock, opts.writersDir, {
        schemaVersion: schemaVersion(db),
        migrated,
        unfinished,
        writer,
        intakeToken: intake?.token ?? null,
      }, intake);
    } catch (e) {
      lock?.release();
      try {
        db.close();
      } catch {
        // already closed
      }
      throw fromSqlite(e, `opening the journal ${opts.path}`);
    }
  }

  /** This connection's writer token (stored in rows it begins). */
  get writer(): string | null {
    return this.#lock?.token ?? null;
  }

  /** Re-run the crash sweep (e.g. periodically, to catch other processes that died). */
  sweepUnfinished(): number {
    const dir = this.#writersDir;
    if (dir === null) return 0;
    return journal.sweepUnfinished(this.conn, this.writer, (w) => writerAlive(dir, w));
  }

  /** `PRAGMA integrity_check` ("ok" when healthy). */
  integrityCheck(): string {
    const rows = this.conn.db.prepare("PRAGMA integrity_check").all() as Array<
      { integrity_check: string }
    >;
    return rows.map((r) => r.integrity_check).join("\n");
  }

  /** Close the connection and release the writer lock. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    // Every session worker of this process is gone: fold their intake and end it.
    this.intake?.abandon();
    try {
      this.conn.db.exec("PRAGMA optimize");
    } catch {
      // best effort
    }
    this.conn.db.close();
    this.#lock?.release();
  }
}

/**
 * Every operation the journal thread serves, by name. Arguments and results
 * are plain data so they can cross `postMessage`.
 */
export const JOURNAL_OPS = {
  beginRequest: (j: JournalDb, input: Parameters<typeof journal.beginRequest>[2]) =>
    journal.beginRequest(j.conn, j.writer, input),
  finishRequest: (
    j: JournalDb,
    id: number,
    result: Parameters<typeof journal.finishRequest>[2],
    statements?: Parameters<typeof journal.finishRequest>[3],
    evs?: Parameters<typeof journal.finishRequest>[4],
  ) => journal.finishRequest(j.conn, id, result, statements, evs),
  query: (j: JournalDb, filter?: Parameters<typeof journal.query>[1]) =>
    journal.query(j.conn, filter),
  get: (j: JournalDb, id: number) => journal.get(j.conn, id),
  inlineOutput: (j: JournalDb, hash: string) => journal.inlineOutput(j.conn, hash),
  sweepUnfinished: (j: JournalDb) => j.sweepUnfinished(),
  appendEvent: (j: JournalDb, e: Parameters<typeof events.appendEvent>[1]) =>
    events.appendEvent(j.conn, e),
  /** Several appends in one transaction; each stands alone (one refused never drops another). */
  appendEvents: (j: JournalDb, list: Parameters<typeof events.appendEvents>[1]) =>
    events.appendEvents(j.conn, list).flatMap((r, index) =>
      r.ok ? [] : [{ index, code: r.error.code, message: r.error.message }]
    ),
  readSince: (
    j: JournalDb,
    channel: string,
    since?: number | null,
    limit?: number,
    opts?: events.ReadOptions,
  ) => events.readSince(j.conn, channel, since, limit, opts),
  readLatest: (j: JournalDb, channel: string, limit?: number, opts?: events.LatestOptions) =>
    events.readLatest(j.conn, channel, limit, opts),
  lastSeq: (j: JournalDb, channel: string, opts?: events.ReadOptions) =>
    events.lastSeq(j.conn, channel, opts),
  listChannels: (j: JournalDb) => events.listChannels(j.conn),
  pin: (j: JournalDb, input: pins.PinInput) => pins.pin(j.conn, input),
  unpin: (j: JournalDb, hash: string, owner: string) => pins.unpin(j.conn, hash, owner),
  unpinOwner: (j: JournalDb, owner: string) => pins.unpinOwner(j.conn, owner),
  listPins: (j: JournalDb, filter?: pins.PinFilter) => pins.listPins(j.conn, filter),
  recordUndo: (j: JournalDb, input: Parameters<typeof undo.recordUndo>[1]) =>
    undo.recordUndo(j.conn, input),
  getUndo: (j: JournalDb, id: number) => undo.getUndo(j.conn, id),
  listUndo: (j: JournalDb, filter?: Parameters<typeof undo.listUndo>[1]) =>
    undo.listUndo(j.conn, filter),
  markApplied: (j: JournalDb, id: number, at?: number) => undo.markApplied(j.conn, id, at),
  gcPlan: (j: JournalDb, p: GcPlanInput) => gcPlan(j.conn, p),
  referencedAmong: (j: JournalDb, hashes: string[], now: number) =>
    referencedAmong(j.conn, hashes, now),
  integrityCheck: (j: JournalDb) => j.integrityCheck(),
  /**
   * What intake folds finished (and any problems) since the last call. Runs outside a batch's
   * transaction, after the fold that precedes every batch (`BatchRunner`).
   */
  intakeTake: (
    j: JournalDb,
    kernelEvents: ReadonlyArray<{ scope: string; payload: Record<string, unknown> }> = [],
  ): IntakeReport => {
    const r: IntakeReport = j.intake?.take() ?? { finished: [], errors: [] };
    // The kernel's own journal channel events, numbered after the rows folded so far.
    r.events = kernelEvents.map((e): RecordedEvent => ({
      scope: e.scope,
      payload: e.payload,
      ...events.recordEvent(j.conn, { channel: "journal", scope: e.scope, payload: e.payload }),
    }));
    return r;
  },
  /** A session worker died: fold its intake and mark its unfinished exec unfinished. */
  intakeAbandon: (j: JournalDb, worker: number) => j.intake?.abandon(worker),
  schemaVersion: (_j: JournalDb) => SCHEMA_VERSION,
};

/** Name of a journal operation. */
export type JournalOp = keyof typeof JOURNAL_OPS;

/** Arguments of an operation (without the connection). */
export type OpArgs<K extends JournalOp> = typeof JOURNAL_OPS[K] extends
  (j: JournalDb, ...args: infer A) => unknown ? A : never;

/** Result of an operation. */
export type OpResult<K extends JournalOp> = ReturnType<typeof JOURNAL_OPS[K]>;

/** Operations that run before a batch, outside its transaction (they commit on their own). */
export const OUTSIDE_BATCH_OPS: ReadonlySet<JournalOp> = new Set<JournalOp>([
  "intakeTake",
  "intakeAbandon",
]);

/** Operations that never write (a batch of only these takes no write lock). */
export const READ_ONLY_OPS: ReadonlySet<JournalOp> = new Set<JournalOp>([
  "query",
  "get",
  "inlineOutput",
  "readSince",
  "readLatest",
  "lastSeq",
  "listChannels",
  "listPins",
  "getUndo",
  "listUndo",
  "referencedAmong",
  "integrityCheck",
  "schemaVersion",
]);

/** Run one operation by name. */
export function dispatch(j: JournalDb, op: string, args: unknown[]): unknown {
  const fn = (JOURNAL_OPS as Record<string, (j: JournalDb, ...a: unknown[]) => unknown>)[op];
  if (!fn) throw new StoreError("invalid_input", `unknown journal operation ${op}`);
  return fn(j, ...args);
}
