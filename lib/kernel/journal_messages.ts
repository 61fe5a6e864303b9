/**
 * Journal traffic between a session Worker and the kernel's main thread (issue 7). The worker
 * knows what ran (AST, statements, outputs, effects, undo inverses) and logs each exec to the
 * journal intake itself (`lib/store/intake.ts`) before its result is delivered; the journal
 * thread folds the intake into SQLite in batches and the main thread publishes the `journal`
 * channel from what was folded.
 *
 * @module
 */

import type {
  Effect,
  ErrorInfo,
  FinishRequestInput,
  OutputRecord,
  StatementInput,
  UndoCheck,
} from "../store/mod.ts";

/** An undo inverse observed while an exec ran, ready to store (its prior bytes are in the CAS). */
export type UndoIntent =
  & { precondition: UndoCheck[] }
  & (
    | { kind: "trash_move"; data: { original: string; trash: string } }
    | { kind: "restore_bytes"; data: { path: string; prior: string } }
    | { kind: "move_back"; data: { from: string; to: string } }
  );

/** What the worker tells the main thread about an exec's journaling (on its `done`). */
export interface JournalDone {
  /** Problems seen on the worker side (a CAS put failed…): reported, never hidden. */
  warnings: string[];
  /** The exec could not be logged to the intake (it has no journal row): why. */
  error: string | null;
}

/**
 * What an exec's result says about its journal record when something went wrong (issue 19):
 * `durable: false` — the record could not be written at all (no journal row will exist);
 * `missing` — the row exists but these outputs could not be stored. Absent when all is well.
 */
export interface JournalNote {
  durable: boolean;
  error?: { code: "journal_write_failed"; message: string };
  missing?: string[];
}

/** The note a result carries for `done` (null: its record is whole). */
export function journalNote(done: JournalDone): JournalNote | null {
  if (done.error !== null) {
    return {
      durable: false,
      error: { code: "journal_write_failed", message: done.error },
      ...(done.warnings.length ? { missing: done.warnings } : {}),
    };
  }
  return done.warnings.length ? { durable: true, missing: done.warnings } : null;
}

/** What is recorded about one finished exec (its intake finish line; `settle` on main). */
export interface ExecRecord {
  status: "ok" | "error" | "cancelled";
  ok: boolean;
  durationNs: number;
  exitStatus: number | null;
  signal: string | null;
  outputs: OutputRecord[];
  error: ErrorInfo | null;
  effects: Effect[];
  statements: StatementInput[];
  undo: UndoIntent[];
  /** Journal problems seen on the worker side (a CAS put failed…): reported, never hidden. */
  warnings: string[];
}

/** The request-row outcome of an exec record (what `finishRequest` takes). */
export function outcomeOf(rec: ExecRecord): FinishRequestInput {
  return {
    status: rec.status,
    ok: rec.ok,
    durationNs: rec.durationNs,
    exitStatus: rec.exitStatus,
    signal: rec.signal,
    outputs: rec.outputs,
    error: rec.error,
    effects: rec.effects,
  };
}

/** Worker → main: a language `journal`/`history`/`undo` head needs the journal. */
export interface JReqMsg {
  t: "jreq";
  rid: number;
  op: "query" | "undo";
  params: Record<string, unknown>;
}

/** Main → worker: the answer to a {@link JReqMsg}. */
export type JReplyMsg =
  | { t: "jreply"; rid: number; ok: true; result: unknown }
  | {
    t: "jreply";
    rid: number;
    ok: false;
    error: { code: string; message: string; hint?: string };
  };

/** What a session worker needs to reach the content store and the journal intake. */
export interface JournalInit {
  /** `<state>/cas` (shared by every session worker and the main thread). */
  casDir: string;
  /** Where and under which name this worker logs its execs (`IntakeWriter`). */
  intake: { dir: string; token: string; worker: number };
  /**
   * A confined session (issue 16) reaches neither: it sends its intake lines and store
   * operations to the kernel, and spills captures into this private directory first.
   */
  proxied?: { spillDir: string };
}
