/**
 * `lib/store`: the journal (SQLite through `node:sqlite`), the
 * content-addressed store (BLAKE3), durable events, pins, undo records and
 * retention. Open everything with {@link openStore}.
 *
 * ```ts
 * const store = await openStore(stateDir);
 * const id = await store.journal.beginRequest({ session, principal, source, cwd, ast, effects });
 * const out = await store.cas.put(bytes);
 * await store.journal.finishRequest(id, { status: "ok", durationNs, outputs: [{ kind: "stdout", len: out.size, ref: out.ref }] }, statements, { events: [{ channel: "journal", payload }] });
 * await store.close();
 * ```
 *
 * @module
 */

export { EventLog, JournalApi, openStore, Pins, Store, UndoLog } from "./store.ts";
export type { OpenStoreOptions } from "./store.ts";
export { ContentStore } from "./cas.ts";
export type {
  BlobFileInfo,
  BlobRange,
  BlobStat,
  ContentStoreOptions,
  PutOptions,
  PutResult,
} from "./cas.ts";
export type { Codec, CompressionPolicy } from "./blob_format.ts";
export { isStoreError, StoreError } from "./errors.ts";
export type { StoreErrorCode } from "./errors.ts";
export { parseRef, REF_PREFIX, toRef } from "./refs.ts";
export {
  acquireHasher,
  blake3Hex,
  getBlake3Backend,
  hashWasmBackend,
  isBlake3Hex,
  releaseHasher,
  setBlake3Backend,
} from "./blake3.ts";
export type { Blake3Backend, Blake3Hasher } from "./blake3.ts";
export { envHash } from "./env_hash.ts";
export { fingerprint, hashFile } from "./undo_check.ts";
export { DURABLE_CHANNELS } from "./event_rows.ts";
export type { ChannelState, LatestOptions, ReadOptions } from "./event_rows.ts";
export type { PinFilter } from "./pin_rows.ts";
export type { FinishResult } from "./journal_rows.ts";
export type { OpenInfo } from "./journal_db.ts";
export { JournalClient } from "./journal_client.ts";
export type { JournalClientOptions, JournalMode } from "./journal_client.ts";
export type { BatchStats } from "./batch_runner.ts";
export { JOURNAL_OPS, JournalDb } from "./journal_db.ts";
export { Conn } from "./sqlite_conn.ts";
export type { JournalDbOptions, JournalOp, OpArgs, OpResult } from "./journal_db.ts";
export { SCHEMA_VERSION } from "./schema.ts";
export {
  BLOB_READ_CAP,
  EVENT_READ_MAX,
  GC_GRACE_MS_DEFAULT,
  PREVIEW_MAX_BYTES,
  QUERY_LIMIT_DEFAULT,
  QUERY_LIMIT_MAX,
} from "./limits.ts";
export type * from "./types.ts";
export { IntakeWriter, parseIntakeName } from "./intake.ts";
export type { IntakeBegin, IntakeEvent, IntakeFinish, IntakeUndo, IntakeWhole } from "./intake.ts";
export { journalEventPayload } from "./intake_apply.ts";
export type { IntakeNotice, IntakeProblem, IntakeReport, RecordedEvent } from "./intake_apply.ts";
