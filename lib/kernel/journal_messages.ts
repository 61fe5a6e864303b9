/**
 * Journal traffic between a session Worker and the kernel's main thread (issue 7). The worker
 * knows what ran (AST, statements, outputs, effects, undo inverses); the main thread owns the
 * journal connection (the store's own Worker) and writes the rows.
 *
 * @module
 */

import type { Effect, ErrorInfo, OutputRecord, StatementInput, UndoCheck } from "../store/mod.ts";

/** Worker → main: an exec was parsed (or failed to parse): write its `running` row now. */
export interface JBeginMsg {
  t: "jbegin";
  task: number;
  /** Program AST JSON, or null when the source did not parse. */
  ast: unknown;
  cwd: string;
  env_hash: string;
  /** Start, ms since the epoch. */
  started_ms: number;
}

/** An undo inverse observed while an exec ran, ready to store (its prior bytes are in the CAS). */
export type UndoIntent =
  & { precondition: UndoCheck[] }
  & (
    | { kind: "trash_move"; data: { original: string; trash: string } }
    | { kind: "restore_bytes"; data: { path: string; prior: string } }
    | { kind: "move_back"; data: { from: string; to: string } }
  );

/** What the worker reports about one finished exec (carried by its `done` message). */
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

/** What a session worker needs to reach the content store. */
export interface JournalInit {
  /** `<state>/cas` (shared by every session worker and the main thread). */
  casDir: string;
}
