/**
 * The journal port (issue 7): how a journaling host (a kernel session) learns what the
 * filesystem builtins did — derived effects and the typed inverses `undo` can replay — and how
 * the `journal`/`history`/`undo` heads reach the journal. The evaluator never imports the
 * store (layering): the host implements this port; without one, nothing is recorded, `journal`
 * is an empty table and `undo` raises «…this session has no journal».
 *
 * @module
 */

import type { Value } from "../value/types.ts";
import { denoFs, type FsPort } from "./fs_port.ts";

/** A derived effect (protocol §11.1): `{kind: "fs_write", paths: [...]}`, … */
export interface EffectInfo {
  kind: string;
  [field: string]: unknown;
}

/** A reversible mutation a builtin just performed (the host fingerprints the result). */
export type UndoIntent =
  /** `rm` moved `original` into the trash at `trash`. */
  | { kind: "trash_move"; original: string; trash: string }
  /** `mv` moved `to` (the original location) to `from`. */
  | { kind: "move_back"; from: string; to: string }
  /** A write replaced the file at `path`, whose previous bytes were `prior`. */
  | { kind: "restore_bytes"; path: string; prior: Uint8Array };

/** Filters of the `journal`/`history` heads. */
export interface JournalQuery {
  head?: string;
  principal?: string;
  limit?: number;
}

/** What a journaling host provides. */
export interface JournalPort {
  /** An effect the running statement had (called synchronously as builtins act). */
  effect(e: EffectInfo): void;
  /** A reversible mutation that just happened (called synchronously, right after it). */
  undoable(u: UndoIntent): void;
  /** Rows for `journal`/`history` (a table of `{id, ts, principal, src, ok, status, effects}`). */
  query(q: JournalQuery): Promise<Value>;
  /** Undo journal entry `id` (null: the newest one with an inverse); returns a report record. */
  undo(id: number | null): Promise<Value>;
  /** The whole content of lazy bytes `val:blake3:<hex>` (verified; bounded by the read cap). */
  loadBytes(ref: string): Promise<Uint8Array>;
}

/** Largest prior file whose bytes are kept for a `restore_bytes` inverse (larger: no inverse). */
export const SNAPSHOT_MAX = 8 * 1024 * 1024;

/**
 * Run `write`, which replaces (or appends to) the file at `path`, recording an `fs_write` effect
 * and — when a regular file of at most {@link SNAPSHOT_MAX} bytes was there — its prior bytes
 * as a `restore_bytes` inverse. Free when the session has no journal.
 */
export function journaledWrite<T>(ev: unknown, path: string, write: () => T): T {
  // Any interpreter: method tables see the evaluator as `Interp`, which hides its ports.
  const ports = (ev as { ports?: { journal?: JournalPort; fs?: FsPort } }).ports;
  const port = ports?.journal;
  if (port === undefined) return write();
  const fs = ports?.fs ?? denoFs;
  let prior: Uint8Array | null = null;
  try {
    const st = fs.lstat(path);
    if (st.isFile && st.size <= SNAPSHOT_MAX) prior = fs.readFile(path);
  } catch { /* absent or unreadable: creation has no inverse */ }
  const r = write();
  port.effect({ kind: "fs_write", paths: [path] });
  if (prior !== null) port.undoable({ kind: "restore_bytes", path, prior });
  return r;
}
