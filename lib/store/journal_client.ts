/**
 * Asynchronous access to the journal. Two modes with the same API:
 *
 * - `worker` (default): the connection lives in a dedicated Worker; the
 *   calling thread only posts messages (tens of µs), so a kernel's main thread
 *   never blocks on SQLite, fsync or a WAL checkpoint.
 * - `inline`: the connection lives on the calling thread behind the same
 *   group-commit batcher; each batch blocks the thread for its duration (for
 *   tools and tests where that is fine).
 *
 * In both, writes submitted close together share one transaction, and a
 * write's promise resolves only once it is committed.
 *
 * @module
 */

import { BatchRunner, type BatchStats } from "./batch_runner.ts";
import { StoreError, type StoreErrorCode } from "./errors.ts";
import {
  JournalDb,
  type JournalDbOptions,
  type JournalOp,
  type OpArgs,
  type OpenInfo,
  type OpResult,
} from "./journal_db.ts";

/** Where the connection runs. */
export type JournalMode = "worker" | "inline";

type ErrorJson = { code: StoreErrorCode; message: string; details?: Record<string, unknown> };

/** Messages to the journal Worker. */
export type ToWorker =
  | { t: "open"; opts: JournalDbOptions }
  | { t: "call"; id: number; op: string; args: unknown[] }
  | { t: "stats"; id: number }
  | { t: "close" };

/** Messages from the journal Worker. */
export type FromWorker =
  | { t: "opened"; info: OpenInfo }
  | { t: "open_failed"; error: ErrorJson }
  | { t: "result"; id: number; ok: true; value: unknown }
  | { t: "result"; id: number; ok: false; error: ErrorJson }
  | { t: "stats"; id: number; stats: BatchStats | null }
  | { t: "closed" };

interface Transport {
  call(op: string, args: unknown[]): Promise<unknown>;
  stats(): Promise<BatchStats | null>;
  close(): Promise<void>;
}

class InlineTransport implements Transport {
  readonly #runner: BatchRunner;
  constructor(runner: BatchRunner) {
    this.#runner = runner;
  }
  call(op: string, args: unknown[]): Promise<unknown> {
    return this.#runner.submit(op, args);
  }
  stats(): Promise<BatchStats | null> {
    return Promise.resolve({ ...this.#runner.stats });
  }
  close(): Promise<void> {
    return this.#runner.close();
  }
}

class WorkerTransport implements Transport {
  readonly #worker: Worker;
  readonly #pending = new Map<
    number,
    { resolve: (v: unknown) => void; reject: (e: StoreError) => void }
  >();
  #next = 1;
  #dead: StoreError | null = null;
  #closed: Promise<void> | null = null;
  #onClosed: (() => void) | null = null;

  private constructor(worker: Worker) {
    this.#worker = worker;
  }

  static open(opts: JournalDbOptions): Promise<{ t: WorkerTransport; info: OpenInfo }> {
    const worker = new Worker(new URL("./journal_worker.ts", import.meta.url).href, {
      type: "module",
    });
    const t = new WorkerTransport(worker);
    return new Promise((resolve, reject) => {
      let opened = false;
      worker.onmessage = (ev: MessageEvent<FromWorker>) => {
        const m = ev.data;
        if (!opened) {
          if (m.t === "opened") {
            opened = true;
            resolve({ t, info: m.info });
          } else if (m.t === "open_failed") {
            worker.terminate();
            reject(StoreError.fromJSON(m.error));
          }
          return;
        }
        t.#receive(m);
      };
      worker.onerror = (ev: ErrorEvent) => {
        ev.preventDefault();
        const err = new StoreError(
          "store_closed",
          `the journal worker failed: ${ev.message}`,
        );
        if (!opened) {
          worker.terminate();
          reject(err);
        } else t.#die(err);
      };
      worker.postMessage({ t: "open", opts } satisfies ToWorker);
    });
  }

  #receive(m: FromWorker): void {
    if (m.t === "result" || m.t === "stats") {
      const p = this.#pending.get(m.id);
      if (!p) return;
      this.#pending.delete(m.id);
      if (m.t === "stats") p.resolve(m.stats);
      else if (m.ok) p.resolve(m.value);
      else p.reject(StoreError.fromJSON(m.error));
    } else if (m.t === "closed") {
      this.#onClosed?.();
    }
  }

  #die(err: StoreError): void {
    this.#dead = err;
    for (const p of this.#pending.values()) p.reject(err);
    this.#pending.clear();
    this.#worker.terminate();
    this.#onClosed?.();
  }

  #send(msg: ToWorker & { id: number }): Promise<unknown> {
    if (this.#dead) return Promise.reject(this.#dead);
    if (this.#closed) {
      return Promise.reject(new StoreError("store_closed", "the journal is closed"));
    }
    return new Promise((resolve, reject) => {
      this.#pending.set(msg.id, { resolve, reject });
      try {
        this.#worker.postMessage(msg);
      } catch (e) {
        this.#pending.delete(msg.id);
        reject(
          new StoreError(
            "invalid_input",
            `journal arguments cannot be sent to the journal thread: ${(e as Error).message}`,
          ),
        );
      }
    });
  }

  call(op: string, args: unknown[]): Promise<unknown> {
    return this.#send({ t: "call", id: this.#next++, op, args });
  }

  stats(): Promise<BatchStats | null> {
    return this.#send({ t: "stats", id: this.#next++ }) as Promise<BatchStats | null>;
  }

  close(): Promise<void> {
    if (this.#closed) return this.#closed;
    if (this.#dead) return Promise.resolve();
    this.#closed = new Promise<void>((resolve) => {
      this.#onClosed = () => {
        this.#worker.terminate();
        resolve();
      };
      // Queued calls are answered before the worker closes (messages are FIFO).
      this.#worker.postMessage({ t: "close" } satisfies ToWorker);
    });
    return this.#closed;
  }
}

/** Options of {@link JournalClient.open}. */
export interface JournalClientOptions extends JournalDbOptions {
  /** Where the connection runs (default `worker`). */
  mode?: JournalMode;
}

/** Asynchronous journal handle. */
export class JournalClient {
  /** Where the connection runs. */
  readonly mode: JournalMode;
  /** What opening found (schema version, migrations, crash sweep). */
  readonly info: OpenInfo;
  readonly #t: Transport;

  private constructor(mode: JournalMode, info: OpenInfo, t: Transport) {
    this.mode = mode;
    this.info = info;
    this.#t = t;
  }

  /** Open the journal in a Worker (default) or inline. */
  static async open(opts: JournalClientOptions): Promise<JournalClient> {
    const { mode = "worker", ...dbOpts } = opts;
    if (mode === "inline") {
      const db = JournalDb.open(dbOpts);
      return new JournalClient(mode, db.info, new InlineTransport(new BatchRunner(db)));
    }
    if (mode !== "worker") {
      throw new StoreError("invalid_input", `journal mode must be worker or inline, got ${mode}`);
    }
    const { t, info } = await WorkerTransport.open(dbOpts);
    return new JournalClient(mode, info, t);
  }

  /** Run one journal operation. */
  call<K extends JournalOp>(op: K, ...args: OpArgs<K>): Promise<OpResult<K>> {
    return this.#t.call(op, args) as Promise<OpResult<K>>;
  }

  /** Batching counters (for benchmarks). */
  stats(): Promise<BatchStats | null> {
    return this.#t.stats();
  }

  /** Finish queued work and close. */
  close(): Promise<void> {
    return this.#t.close();
  }
}
