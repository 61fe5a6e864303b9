/**
 * Typed errors of the storage layer. Every failure carries a stable `code`
 * that callers branch on (the kernel maps them to JSON-RPC numbers, e.g.
 * `blob_not_found`/`blob_corrupt` → -32004 with `data: {ref, code}`), and a
 * message a person can act on.
 *
 * @module
 */

/** Stable error codes raised by `lib/store`. Never renamed once shipped. */
export type StoreErrorCode =
  /** Bad argument shape or value (caller bug or bad client input). */
  | "invalid_input"
  /** A hash or `val:blake3:` ref that is not 64 lowercase/uppercase hex digits. */
  | "bad_ref"
  /** No blob with that hash in the content store. */
  | "blob_not_found"
  /** The stored bytes do not hash to their address (or the file is malformed). */
  | "blob_corrupt"
  /** A whole-blob read, or a range, larger than the read cap (16 MiB). */
  | "blob_too_large"
  /** A byte range that starts past the end of the blob. */
  | "bad_range"
  /** No journal row with that id. */
  | "journal_not_found"
  /** `finishRequest` on a row that is not `running` (finished twice, or marked unfinished). */
  | "journal_not_running"
  /** SQLite refused a write (I/O error, read-only file, constraint). */
  | "journal_write_failed"
  /** The journal reached its size cap or the disk is full. */
  | "journal_full"
  /** Another process held the database write lock past the busy timeout. */
  | "journal_busy"
  /** The database file was written by a newer Shoal (schema version unknown here). */
  | "schema_too_new"
  /** The database file is not a Shoal journal or is damaged. */
  | "journal_corrupt"
  /** An append with an explicit `seq` that is not the stream's next (a second writer). */
  | "event_seq_conflict"
  /** No undo record with that id. */
  | "undo_not_found"
  /** `markApplied` on a record that was already applied. */
  | "undo_already_applied"
  /** The store (or its journal writer) was closed or died. */
  | "store_closed"
  /** A filesystem operation failed (permissions, disk full, …). */
  | "io_error";

/** Error thrown by every `lib/store` API. Branch on `code`, never on `message`. */
export class StoreError extends Error {
  /** Stable, machine-readable code. */
  readonly code: StoreErrorCode;
  /** Optional structured details (e.g. `{hash}`, `{sqlite: 13}`). */
  readonly details: Record<string, unknown> | undefined;

  /** Create an error with a stable code and an actionable message. */
  constructor(
    code: StoreErrorCode,
    message: string,
    details?: Record<string, unknown>,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "StoreError";
    this.code = code;
    this.details = details;
  }

  /** Plain-object form that survives `postMessage` (structured clone drops the class). */
  toJSON(): { code: StoreErrorCode; message: string; details?: Record<string, unknown> } {
    return this.details === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, details: this.details };
  }

  /** Rebuild a `StoreError` from its `toJSON()` form. */
  static fromJSON(
    v: { code: StoreErrorCode; message: string; details?: Record<string, unknown> },
  ): StoreError {
    return new StoreError(v.code, v.message, v.details);
  }
}

/** True if `e` is a `StoreError` (optionally with the given code). */
export function isStoreError(e: unknown, code?: StoreErrorCode): e is StoreError {
  return e instanceof StoreError && (code === undefined || e.code === code);
}

/** Shorthand for an `invalid_input` error. */
export function invalid(message: string, details?: Record<string, unknown>): StoreError {
  return new StoreError("invalid_input", message, details);
}

/**
 * Wrap a filesystem error as `io_error` (or pass a `StoreError` through), keeping
 * the OS message and the path so the user can act on it.
 */
export function ioError(e: unknown, what: string, path?: string): StoreError {
  if (e instanceof StoreError) return e;
  const msg = e instanceof Error ? e.message : String(e);
  return new StoreError(
    "io_error",
    `${what} failed: ${msg}`,
    path === undefined ? undefined : { path },
    { cause: e },
  );
}
