/**
 * The storage layer as one object: content store, journal, durable events,
 * pins, undo records and GC over a state directory.
 *
 * ```
 * <state>/journal.db (+ -wal, -shm)   SQLite journal
 * <state>/cas/<hh>/<62 hex>           blobs
 * <state>/cas/tmp/                    stream temp files, GC tombstones
 * <state>/writers/<token>.lock        liveness locks of open journal connections
 * ```
 *
 * @module
 */

import { join, resolve } from "node:path";
import { ContentStore } from "./cas.ts";
import type { CompressionPolicy } from "./blob_format.ts";
import { invalid, ioError, StoreError } from "./errors.ts";
import type { FinishResult } from "./journal_rows.ts";
import { JournalClient, type JournalMode } from "./journal_client.ts";
import type { OpenInfo } from "./journal_db.ts";
import type { IntakeReport } from "./intake_apply.ts";
import { runGc } from "./gc.ts";
import type { PinFilter, PinInput } from "./pin_rows.ts";
import type { ChannelState, LatestOptions, ReadOptions } from "./event_rows.ts";
import { parseRef } from "./refs.ts";
import { checkStale } from "./undo_check.ts";
import { priorHashOf } from "./undo_rows.ts";
import type {
  AppendedEvent,
  BeginRequestInput,
  EventInput,
  FinishRequestInput,
  GcOptions,
  GcReport,
  JournalEntry,
  JournalEntryWithStatements,
  JournalFilter,
  OutputRecord,
  Pin,
  StatementInput,
  StoredEvent,
  UndoFilter,
  UndoFreshness,
  UndoInput,
  UndoRecord,
} from "./types.ts";

/** Options of {@link openStore}. */
export interface OpenStoreOptions {
  /**
   * In-memory journal and a private temp-dir CAS, removed on close (tests, an
   * ephemeral kernel). Nothing is written under `stateDir`.
   */
  ephemeral?: boolean;
  /** Where the SQLite connection runs (default `worker`; see `journal_client.ts`). */
  journalMode?: JournalMode;
  /** Default CAS compression (default `auto`). */
  compression?: CompressionPolicy;
  /** fsync blob files and directories on put (default false; see `cas.ts` for the trade-off). */
  fsync?: boolean;
  /** Size cap of `journal.db`; writes past it fail with `journal_full`. */
  maxDbBytes?: number;
  /** How long a write waits for another process's lock (default 5000 ms). */
  busyTimeoutMs?: number;
}

/** Journal rows: one request per `exec`, statement rows under it. */
export class JournalApi {
  readonly #j: JournalClient;
  readonly #cas: ContentStore;

  /** @internal */
  constructor(j: JournalClient, cas: ContentStore) {
    this.#j = j;
    this.#cas = cas;
  }

  /** Write a `running` request row; resolves with its id once stored. */
  beginRequest(input: BeginRequestInput): Promise<number> {
    return this.#j.call("beginRequest", input);
  }

  /**
   * Write the request's outcome, its statement rows and optional events in one
   * transaction. Every output `ref` must name a stored blob (`blob_not_found`
   * otherwise, and nothing is written).
   */
  async finishRequest(
    id: number,
    result: FinishRequestInput,
    statements: readonly StatementInput[] = [],
    opts: { events?: readonly EventInput[] } = {},
  ): Promise<FinishResult> {
    const outs: Array<readonly OutputRecord[] | undefined> = [
      result?.outputs,
      ...(Array.isArray(statements) ? statements.map((s) => s?.outputs) : []),
    ];
    const refs = new Set<string>();
    for (const list of outs) {
      if (!Array.isArray(list)) continue;
      for (const o of list) if (o && typeof o.ref === "string") refs.add(parseRef(o.ref));
    }
    for (const h of refs) {
      if (!(await this.#cas.has(h))) {
        throw new StoreError(
          "blob_not_found",
          `output refers to blob ${h}, which is not in the content store; put the bytes first`,
          { hash: h },
        );
      }
    }
    return await this.#j.call("finishRequest", id, result, [...statements], [
      ...(opts.events ?? []),
    ]);
  }

  /** Rows matching `filter` (all filters in SQL before the limit), newest first. */
  query(filter: JournalFilter = {}): Promise<JournalEntry[]> {
    return this.#j.call("query", filter);
  }

  /** A row with its statements, or null. */
  get(id: number): Promise<JournalEntryWithStatements | null> {
    return this.#j.call("get", id);
  }

  /** The text of an inline output with this BLAKE3 hash (see `OutputRecord.hash`), or null. */
  inlineOutput(hash: string): Promise<string | null> {
    return this.#j.call("inlineOutput", parseRef(hash));
  }

  /** Mark running rows of processes that died since as `unfinished`; returns the count. */
  sweepUnfinished(): Promise<number> {
    return this.#j.call("sweepUnfinished");
  }

  /** `PRAGMA integrity_check` of the journal ("ok" when healthy). */
  integrityCheck(): Promise<string> {
    return this.#j.call("integrityCheck");
  }

  /**
   * Fold the intake (`intake.ts`) now; returns the requests finished by every fold since the
   * last call, each with its `journal` channel event, then `kernelEvents` — the kernel's own
   * events on that channel — numbered after them and stored (see {@link IntakeReport.events}).
   */
  intakeTake(
    kernelEvents: ReadonlyArray<{ scope: string; payload: Record<string, unknown> }> = [],
  ): Promise<IntakeReport> {
    return this.#j.call("intakeTake", kernelEvents);
  }

  /** Session worker `worker` of this process died: fold its intake, end its unfinished exec. */
  async intakeAbandon(worker: number): Promise<void> {
    await this.#j.call("intakeAbandon", worker);
  }
}

/** Durable event log for the `journal` and `session.transcript` channels. */
export class EventLog {
  readonly #j: JournalClient;

  /** @internal */
  constructor(j: JournalClient) {
    this.#j = j;
  }

  /**
   * Append an event; seq starts at 0 per (channel, scope) and continues across
   * restarts. With `seq`, the append is refused (`event_seq_conflict`) unless
   * that is the stream's next number.
   */
  append(
    channel: string,
    payload: unknown,
    opts: { scope?: string | null; ts?: number; seq?: number } = {},
  ): Promise<AppendedEvent> {
    return this.#j.call("appendEvent", { channel, payload, ...opts });
  }

  /**
   * Append several events in one transaction. Each stands alone: one refused (e.g. with
   * `event_seq_conflict`) never drops another. Resolves with the refused ones only (by index
   * into `list`), so a batch of thousands costs nothing to answer.
   */
  appendMany(
    list: ReadonlyArray<
      { channel: string; payload: unknown; scope?: string | null; ts?: number; seq?: number }
    >,
  ): Promise<Array<{ index: number; code: string; message: string }>> {
    return this.#j.call("appendEvents", [...list]);
  }

  /** Events with `seq > since` (omit since for all), oldest first, at most `limit`. */
  readSince(
    channel: string,
    since?: number | null,
    limit?: number,
    opts?: ReadOptions,
  ): Promise<StoredEvent[]> {
    return this.#j.call("readSince", channel, since, limit, opts);
  }

  /** The newest `limit` events (with `seq > since` when given), oldest first. */
  readLatest(channel: string, limit?: number, opts?: LatestOptions): Promise<StoredEvent[]> {
    return this.#j.call("readLatest", channel, limit, opts);
  }

  /** Last assigned seq of a stream, or null if none. */
  lastSeq(channel: string, opts?: ReadOptions): Promise<number | null> {
    return this.#j.call("lastSeq", channel, opts);
  }

  /** Every stream with its next seq (the kernel seeds its counters from this at start). */
  listChannels(): Promise<ChannelState[]> {
    return this.#j.call("listChannels");
  }
}

/** Pins: GC roots with owner, reason and optional expiry. */
export class Pins {
  readonly #j: JournalClient;
  readonly #cas: ContentStore;

  /** @internal */
  constructor(j: JournalClient, cas: ContentStore) {
    this.#j = j;
    this.#cas = cas;
  }

  /** Pin a stored blob (`blob_not_found` if absent). Idempotent per (hash, owner). */
  async pin(
    hash: string,
    opts: { owner: string; reason?: string; expiresAt?: number | null },
  ): Promise<Pin> {
    const h = parseRef(hash);
    if (typeof opts !== "object" || opts === null) throw invalid("pin needs {owner}");
    if (!(await this.#cas.has(h))) {
      throw new StoreError("blob_not_found", `no blob ${h} to pin`, { hash: h });
    }
    const input: PinInput = { hash: h, owner: opts.owner, reason: opts.reason };
    if (opts.expiresAt !== undefined) input.expiresAt = opts.expiresAt;
    return await this.#j.call("pin", input);
  }

  /** Remove one owner's pin; returns whether one existed. */
  unpin(hash: string, owner: string): Promise<boolean> {
    return this.#j.call("unpin", hash, owner);
  }

  /** Remove all pins of an owner; returns the count. */
  unpinOwner(owner: string): Promise<number> {
    return this.#j.call("unpinOwner", owner);
  }

  /** List pins, newest first. */
  list(filter: PinFilter = {}): Promise<Pin[]> {
    return this.#j.call("listPins", filter);
  }
}

/** Undo records (storage side). */
export class UndoLog {
  readonly #j: JournalClient;
  readonly #cas: ContentStore;

  /** @internal */
  constructor(j: JournalClient, cas: ContentStore) {
    this.#j = j;
    this.#cas = cas;
  }

  /** Store a typed inverse for a journal row. A `restore_bytes` prior blob must be stored. */
  async recordUndo(input: UndoInput): Promise<UndoRecord> {
    const prior = priorHashOf(input);
    if (prior !== null && !(await this.#cas.has(prior))) {
      throw new StoreError(
        "blob_not_found",
        `the prior bytes ${prior} of this undo record are not in the content store; put them first`,
        { hash: prior },
      );
    }
    return await this.#j.call("recordUndo", input);
  }

  /** One record, or null. */
  get(id: number): Promise<UndoRecord | null> {
    return this.#j.call("getUndo", id);
  }

  /** Records, newest first (replay order). */
  listUndo(filter: UndoFilter = {}): Promise<UndoRecord[]> {
    return this.#j.call("listUndo", filter);
  }

  /** Mark a record applied (`undo_already_applied` the second time). */
  markApplied(id: number, at?: number): Promise<UndoRecord> {
    return this.#j.call("markApplied", id, at);
  }

  /** Re-stat/re-hash the record's targets: `fresh`, or `stale` with a reason. */
  checkStale(record: Pick<UndoRecord, "precondition" | "appliedAt">): Promise<UndoFreshness> {
    return checkStale(record);
  }
}

/** An open store. Close it with {@link Store.close}. */
export class Store {
  /** Absolute state directory (a temp dir for an ephemeral store). */
  readonly stateDir: string;
  /** True for an in-memory journal + temp CAS. */
  readonly ephemeral: boolean;
  /** Content-addressed blobs. */
  readonly cas: ContentStore;
  /** Journal rows. */
  readonly journal: JournalApi;
  /** `<state>/intake`: where session workers log exec records (`intake.ts`). */
  readonly intakeDir: string;
  /** Durable events. */
  readonly events: EventLog;
  /** Pins. */
  readonly pins: Pins;
  /** Undo records. */
  readonly undo: UndoLog;
  /** What opening the journal found (schema version, migrations, rows marked unfinished). */
  readonly openInfo: OpenInfo;
  readonly #client: JournalClient;
  #gcChain: Promise<unknown> = Promise.resolve();
  #closed: Promise<void> | null = null;

  /** @internal */
  constructor(stateDir: string, ephemeral: boolean, cas: ContentStore, client: JournalClient) {
    this.stateDir = stateDir;
    this.ephemeral = ephemeral;
    this.cas = cas;
    this.#client = client;
    this.openInfo = client.info;
    this.journal = new JournalApi(client, cas);
    this.intakeDir = join(stateDir, "intake");
    this.events = new EventLog(client);
    this.pins = new Pins(client, cas);
    this.undo = new UndoLog(client, cas);
  }

  /** The underlying journal client (benchmarks read its batching stats). */
  get journalClient(): JournalClient {
    return this.#client;
  }

  /**
   * Retention: TTL over journal rows/events and blobs, then a byte budget over
   * unreferenced blobs. Dry run (plan only) unless `apply: true`. GC runs of
   * one store never overlap.
   */
  gc(opts: GcOptions = {}): Promise<GcReport> {
    const run = this.#gcChain.then(() => runGc(this.cas, this.#client, opts));
    this.#gcChain = run.catch(() => {});
    return run;
  }

  /** Finish queued journal writes, close the database, remove an ephemeral store's files. */
  close(): Promise<void> {
    if (!this.#closed) {
      this.#closed = (async () => {
        await this.#gcChain;
        await this.#client.close();
        if (this.ephemeral) await Deno.remove(this.stateDir, { recursive: true }).catch(() => {});
      })();
    }
    return this.#closed;
  }
}

/**
 * Open the store under `stateDir` (created with mode 0700 if missing): the
 * journal `journal.db` (migrated; rows left running by dead processes marked
 * unfinished) and the CAS `cas/`.
 */
export async function openStore(stateDir: string, opts: OpenStoreOptions = {}): Promise<Store> {
  if (typeof stateDir !== "string" || stateDir === "") {
    throw invalid("openStore needs a state directory path");
  }
  const ephemeral = opts.ephemeral === true;
  let dir: string;
  try {
    dir = ephemeral ? await Deno.makeTempDir({ prefix: "shoal-store-" }) : resolve(stateDir);
    if (!ephemeral) await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (e) {
    throw ioError(e, "creating the state directory", stateDir);
  }
  try {
    const cas = await ContentStore.open(join(dir, "cas"), {
      compression: opts.compression,
      fsync: opts.fsync,
    });
    const client = await JournalClient.open({
      mode: opts.journalMode ?? "worker",
      path: ephemeral ? ":memory:" : join(dir, "journal.db"),
      writersDir: ephemeral ? null : join(dir, "writers"),
      busyTimeoutMs: opts.busyTimeoutMs,
      maxDbBytes: opts.maxDbBytes,
      intakeDir: join(dir, "intake"),
    });
    return new Store(dir, ephemeral, cas, client);
  } catch (e) {
    if (ephemeral) await Deno.remove(dir, { recursive: true }).catch(() => {});
    throw e;
  }
}
