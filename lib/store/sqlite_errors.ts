/**
 * Mapping of `node:sqlite` errors to stable `StoreError` codes. SQLite errors
 * carry the numeric result code in `errcode` (extended codes keep the primary
 * code in the low byte).
 *
 * @module
 */

import { StoreError } from "./errors.ts";

const SQLITE_BUSY = 5;
const SQLITE_LOCKED = 6;
const SQLITE_READONLY = 8;
const SQLITE_IOERR = 10;
const SQLITE_CORRUPT = 11;
const SQLITE_FULL = 13;
const SQLITE_CANTOPEN = 14;
const SQLITE_NOTADB = 26;

/** Primary SQLite result code of an error, or null if it is not a SQLite error. */
export function sqliteCode(e: unknown): number | null {
  const c = (e as { errcode?: unknown })?.errcode;
  return typeof c === "number" ? c & 0xff : null;
}

/** Turn any error thrown while talking to SQLite into a `StoreError`. */
export function fromSqlite(e: unknown, what: string): StoreError {
  if (e instanceof StoreError) return e;
  const msg = e instanceof Error ? e.message : String(e);
  const code = sqliteCode(e);
  const details = code === null ? undefined : { sqlite: code };
  const opts = { cause: e };
  switch (code) {
    case SQLITE_FULL:
      return new StoreError(
        "journal_full",
        `${what}: the journal is full (${msg}); free space with gc or raise the size limit`,
        details,
        opts,
      );
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return new StoreError(
        "journal_busy",
        `${what}: another process held the journal lock too long (${msg}); retry`,
        details,
        opts,
      );
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return new StoreError(
        "journal_corrupt",
        `${what}: the journal database is damaged or not a Shoal journal (${msg}); move it aside to start a fresh one`,
        details,
        opts,
      );
    case SQLITE_READONLY:
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
      return new StoreError(
        "journal_write_failed",
        `${what}: ${msg}; check permissions and free space of the state directory`,
        details,
        opts,
      );
    default:
      return new StoreError("journal_write_failed", `${what}: ${msg}`, details, opts);
  }
}
