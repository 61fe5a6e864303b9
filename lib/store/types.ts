/**
 * Shapes that cross the storage API: journal rows, filters, events, pins,
 * undo records and GC reports. Everything here is plain JSON-able data so it
 * can travel to and from the journal Worker unchanged.
 *
 * @module
 */

/** A derived effect, `{kind, …fields}` (protocol §11.1; kinds are snake_case). */
export interface Effect {
  /** `fs_write`, `proc_spawn`, `opaque`, … (dots are normalised to underscores on write). */
  kind: string;
  /** Kind-specific fields (`paths`, `host`, `port`, `names`, …). */
  [field: string]: unknown;
}

/** Row kind: one `request` per kernel `exec`, `statement` rows under it. */
export type EntryKind = "request" | "statement";

/** Lifecycle status of a journal row. */
export type EntryStatus = "running" | "ok" | "error" | "cancelled" | "unfinished";

/** Status a caller may finish a row with. */
export type FinishStatus = "ok" | "error" | "cancelled";

/**
 * One output of a row: a CAS blob (`ref`) and/or a small inline preview.
 * At least one of `ref` and `preview` is present.
 */
export interface OutputRecord {
  /** `value`, `render`, `stdout`, `stderr`, … */
  kind: string;
  /** Full length of the output in bytes. */
  len: number;
  /** `val:blake3:<hex>` of the full output in the CAS. */
  ref?: string;
  /** Up to {@link PREVIEW_MAX_BYTES} of UTF-8 text for display. */
  preview?: string;
  /**
   * BLAKE3 hex of an inline output (its `preview` is then the whole output): `blob.get`
   * resolves it from the row, so every output has a hash without a blob file per exec.
   */
  hash?: string;
  /** True when the stored output was cut at a cap. */
  truncated?: boolean;
}

/** Language-level error of a failed row. */
export interface ErrorInfo {
  /** Stable language error code (`cmd_failed`, `io_error`, …). */
  code: string;
  /** Human message. */
  message: string;
}

/** Input of `beginRequest`. */
export interface BeginRequestInput {
  /** Session name. */
  session: string;
  /** Principal (`human`, `agent:reviewer`, …). */
  principal: string;
  /** Exact source text of the request. */
  source: string;
  /** Session cwd at the start. */
  cwd: string;
  /** AST JSON (any JSON value). */
  ast?: unknown;
  /** Planned/derived effects. */
  effects?: readonly Effect[];
  /** Digest of the session env (see `envHash`). */
  envHash?: string | null;
  /** Start time, ms since the epoch (default: now). */
  startedAt?: number;
}

/** Outcome fields shared by requests and statements. */
export interface OutcomeInput {
  /** Final status. */
  status: FinishStatus;
  /** Semantic success (default: `status === "ok"`). */
  ok?: boolean;
  /** Wall time in nanoseconds. */
  durationNs: number;
  /** Exit status of the last process outcome, if any. */
  exitStatus?: number | null;
  /** Terminating signal name (`SIGKILL`), if any. */
  signal?: string | null;
  /** Outputs (CAS refs and/or previews). */
  outputs?: readonly OutputRecord[];
  /** The language error, for `error` rows. */
  error?: ErrorInfo | null;
  /** Replace the row's effects (e.g. effects observed while running). */
  effects?: readonly Effect[];
}

/** Input of `finishRequest` for the request row itself. */
export type FinishRequestInput = OutcomeInput;

/** One statement row written by `finishRequest`. */
export interface StatementInput extends OutcomeInput {
  /** Exact source slice of the statement. */
  source: string;
  /** AST JSON of the statement. */
  ast?: unknown;
  /** cwd when the statement started (default: the request's). */
  cwd?: string;
  /** Start time, ms since the epoch (default: the request's). */
  startedAt?: number;
}

/** An event to append (also accepted by `finishRequest` to append atomically). */
export interface EventInput {
  /** Channel name, e.g. `journal`, `session.transcript`. */
  channel: string;
  /** Any JSON value. */
  payload: unknown;
  /** Stream scope: a session name, or "" / omitted for kernel-wide events (D-21). */
  scope?: string | null;
  /** Timestamp, ms since the epoch (default: now). */
  ts?: number;
  /** Expected sequence number; the append fails with `event_seq_conflict` unless it is the next. */
  seq?: number;
}

/** A stored event. */
export interface StoredEvent {
  /** Channel name. */
  channel: string;
  /** Stream scope ("" = kernel-wide). */
  scope: string;
  /** 0-based, dense per (channel, scope), continuous across restarts. */
  seq: number;
  /** ms since the epoch. */
  ts: number;
  /** The JSON payload. */
  payload: unknown;
}

/** Where an appended event landed. */
export interface AppendedEvent {
  /** Channel name. */
  channel: string;
  /** Stream scope. */
  scope: string;
  /** Assigned sequence number. */
  seq: number;
  /** Stored timestamp (ms). */
  ts: number;
}

/** A journal row as read back. */
export interface JournalEntry {
  /** Row id (never reused). */
  id: number;
  /** Request id for statement rows, null for requests. */
  parentId: number | null;
  /** Row kind. */
  kind: EntryKind;
  /** 0-based position of a statement in its request; null for requests. */
  ordinal: number | null;
  /** Session name. */
  session: string;
  /** Principal. */
  principal: string;
  /** Start, ms since the epoch. */
  startedAt: number;
  /** Wall time in ns; null while running/unfinished. */
  durationNs: number | null;
  /** cwd. */
  cwd: string;
  /** Env digest. */
  envHash: string | null;
  /** Source text. */
  source: string;
  /** First whitespace-separated word of the source. */
  head: string;
  /** AST JSON, or null. */
  ast: unknown;
  /** Effects. */
  effects: Effect[];
  /** Lifecycle status. */
  status: EntryStatus;
  /** Semantic success; null while running/unfinished. */
  ok: boolean | null;
  /** Exit status of the last process outcome. */
  exitStatus: number | null;
  /** Terminating signal. */
  signal: string | null;
  /** Outputs. */
  outputs: OutputRecord[];
  /** Error, for failed rows. */
  error: ErrorInfo | null;
}

/** A row with its statement rows (ordered by ordinal). */
export interface JournalEntryWithStatements extends JournalEntry {
  /** Statement rows (empty for statement rows themselves). */
  statements: JournalEntry[];
}

/**
 * Journal query filters. All are applied in SQL before the limit (D-11);
 * results are newest first (by id).
 */
export interface JournalFilter {
  /** Inclusive lower bound on `startedAt` (ms). */
  since?: number;
  /** Inclusive upper bound on `startedAt` (ms). */
  until?: number;
  /** Exact principal. */
  principal?: string;
  /** Exact session. */
  session?: string;
  /** Exact first word of the source. */
  head?: string;
  /** Semantic success (running/unfinished rows never match). */
  ok?: boolean;
  /** Row status. */
  status?: EntryStatus;
  /** Effect kinds that must all be present (exact match after `.`→`_`). */
  effects?: readonly string[];
  /** Row kind (default: both). */
  kind?: EntryKind;
  /** Only statements of this request. */
  parentId?: number;
  /** Only rows with `id < beforeId` (paging). */
  beforeId?: number;
  /** Default 100, clamped to 1000. */
  limit?: number;
}

/** A pin: a hard GC root with an owner and a reason. */
export interface Pin {
  /** Blob hash. */
  hash: string;
  /** Who holds it (`session:build`, `spill:task:3`, …). */
  owner: string;
  /** Why. */
  reason: string;
  /** ms since the epoch. */
  createdAt: number;
  /** After this (ms) the pin no longer protects the blob; null = never expires. */
  expiresAt: number | null;
}

/** Kinds of typed inverse. */
export type UndoKind = "trash_move" | "restore_bytes" | "move_back";

/** Data of a `trash_move` inverse: move `trash` back to `original`. */
export interface TrashMoveData {
  /** Where the file was. */
  original: string;
  /** Where it is now (in the trash). */
  trash: string;
}

/** Data of a `restore_bytes` inverse: write the blob `prior` back to `path`. */
export interface RestoreBytesData {
  /** The overwritten file. */
  path: string;
  /** `val:blake3:<hex>` of its previous bytes (kept alive as a blob ref of the row). */
  prior: string;
}

/** Data of a `move_back` inverse: move `from` back to `to`. */
export interface MoveBackData {
  /** Current location. */
  from: string;
  /** Original location. */
  to: string;
}

/**
 * One expected filesystem state. `file` checks size, and mtime/BLAKE3 when
 * given; `dir` checks it is a directory (and mtime when given); `absent` checks
 * nothing is there. Symlinks never match.
 */
export type UndoCheck =
  | { path: string; expect: "absent" }
  | { path: string; expect: "file"; size: number; mtimeMs?: number; blake3?: string }
  | { path: string; expect: "dir"; mtimeMs?: number };

/** Input of `recordUndo`. */
export type UndoInput =
  & { journalId: number; precondition: readonly UndoCheck[] }
  & (
    | { kind: "trash_move"; data: TrashMoveData }
    | { kind: "restore_bytes"; data: RestoreBytesData }
    | { kind: "move_back"; data: MoveBackData }
  );

/** A stored undo record. */
export type UndoRecord = UndoInput & {
  /** Record id. */
  id: number;
  /** ms since the epoch. */
  createdAt: number;
  /** When the inverse was applied (ms), or null. */
  appliedAt: number | null;
};

/** Result of `checkStale`. */
export type UndoFreshness =
  | { state: "fresh" }
  | { state: "stale"; reason: string; path?: string };

/** Filters of `listUndo`. */
export interface UndoFilter {
  /** Only records of this journal row. */
  journalId?: number;
  /** true: not yet applied; false: applied. */
  pending?: boolean;
  /** Default 100, clamped to 1000. */
  limit?: number;
}

/** Options of `gc`. */
export interface GcOptions {
  /** Delete journal rows (with their statements, refs, undo records) and events older than this, and unreferenced blobs older than this. */
  ttlMs?: number;
  /** Then delete the oldest unreferenced blobs until the CAS is at most this many bytes on disk. */
  budgetBytes?: number;
  /** Actually delete (default false: dry run, returns the plan). */
  apply?: boolean;
  /** Blobs and temp files younger than this are never deleted (default 10 min). */
  graceMs?: number;
  /** "Now" for age computations (ms; default `Date.now()`). */
  now?: number;
}

/** A blob GC deletes (or would delete). */
export interface GcBlob {
  /** Hash. */
  hash: string;
  /** Bytes on disk. */
  storedSize: number;
  /** mtime (ms). */
  mtimeMs: number;
  /** Why it was chosen. */
  reason: "ttl" | "budget";
}

/** What GC did, or would do on a dry run. */
export interface GcReport {
  /** False for a dry run. */
  applied: boolean;
  /** Journal-side deletions. */
  journal: { requests: number; statements: number; undo: number; events: number; pins: number };
  /** Blobs chosen for deletion. */
  blobs: GcBlob[];
  /** Blobs chosen but kept because they became referenced, pinned or touched meanwhile. */
  kept: string[];
  /** Bytes freed (or that would be freed) by blob deletion. */
  bytesFreed: number;
  /** CAS bytes on disk before. */
  casBytesBefore: number;
  /** CAS bytes on disk after (projected for a dry run). */
  casBytesAfter: number;
  /** False when `budgetBytes` could not be reached (the rest is referenced, pinned or young). */
  budgetMet: boolean;
  /** Orphan temp files / tombstones removed (or that would be). */
  tempFiles: number;
}
