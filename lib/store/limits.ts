/**
 * Size and count limits of the storage layer, in one place so the kernel and
 * the tests use the same numbers.
 *
 * @module
 */

/**
 * Largest number of bytes one blob read may return (`get`, one `getRange`).
 * Equal to the protocol frame limit, so a `blob.get` answer always fits a frame.
 */
export const BLOB_READ_CAP = 16 * 1024 * 1024;

/** Largest inline preview stored with an output record, in UTF-8 bytes. */
export const PREVIEW_MAX_BYTES = 4096;

/** Largest `source` or JSON text (AST, effects, payload) stored in one row, in UTF-8 bytes. */
export const TEXT_MAX_BYTES = 16 * 1024 * 1024;

/** Most statement rows one `finishRequest` may write. */
export const MAX_STATEMENTS_PER_REQUEST = 65_536;

/** Most outputs one journal row may carry. */
export const MAX_OUTPUTS_PER_ROW = 1024;

/** Default and maximum `limit` of journal queries, undo and pin listings. */
export const QUERY_LIMIT_DEFAULT = 100;
/** Upper bound enforced on every listing's `limit` (larger values are clamped). */
export const QUERY_LIMIT_MAX = 1000;

/** Default and maximum number of events one `readSince` returns. */
export const EVENT_READ_DEFAULT = 256;
/** Upper bound on `readSince`/`readLatest` limits (larger values are clamped). */
export const EVENT_READ_MAX = 4096;

/**
 * Blobs (and temp files) younger than this are never deleted by GC unless the
 * caller overrides it: it protects blobs written by a request that has not
 * recorded its references yet. Blobs that must survive longer unreferenced
 * should be pinned.
 */
export const GC_GRACE_MS_DEFAULT = 10 * 60 * 1000;

/** Chunk size used for streaming reads of blob files. */
export const IO_CHUNK = 1024 * 1024;
