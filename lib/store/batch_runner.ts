/**
 * Group commit for the journal thread. Operations submitted while a batch is
 * pending run together in one transaction (each inside its own savepoint, so
 * one failing operation rolls back only itself). A write's promise resolves
 * only after COMMIT, so "resolved" always means "stored". If SQLite drops the
 * whole transaction (disk full, I/O error), every write of it is rejected
 * with that error; nothing is reported stored that is not.
 *
 * @module
 */

import { setImmediate } from "node:timers";
import { StoreError } from "./errors.ts";
import { dispatch, type JournalDb, OUTSIDE_BATCH_OPS, READ_ONLY_OPS } from "./journal_db.ts";
import type { JournalOp } from "./journal_db.ts";
import { fromSqlite } from "./sqlite_errors.ts";

interface Pending {
  op: string;
  args: unknown[];
  resolve: (v: unknown) => void;
  reject: (e: StoreError) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: StoreError };

/** Counters for benchmarks and health checks. */
export interface BatchStats {
  /** Transactions committed. */
  batches: number;
  /** Operations run. */
  ops: number;
  /** Largest batch seen. */
  maxBatch: number;
  /** Longest time one batch held the journal thread (ms). Inline, that is the caller's thread. */
  maxFlushMs: number;
  /** Total time spent running batches (ms). */
  flushMs: number;
}

/** Batches operations on a {@link JournalDb}. */
export class BatchRunner {
  readonly #db: JournalDb;
  readonly #maxBatch: number;
  #queue: Pending[] = [];
  #scheduled = false;
  #closed = false;
  #idle: Array<() => void> = [];
  /** Counters. */
  readonly stats: BatchStats = { batches: 0, ops: 0, maxBatch: 0, maxFlushMs: 0, flushMs: 0 };

  /** `maxBatch` bounds how long one transaction holds the thread. */
  constructor(db: JournalDb, maxBatch = 512) {
    this.#db = db;
    this.#maxBatch = maxBatch;
  }

  /** Queue an operation; resolves with its result after its transaction committed. */
  submit(op: string, args: unknown[]): Promise<unknown> {
    if (this.#closed) {
      return Promise.reject(new StoreError("store_closed", "the journal is closed"));
    }
    return new Promise((resolve, reject) => {
      this.#queue.push({ op, args, resolve, reject });
      this.#schedule();
    });
  }

  /** Resolve when everything queued so far has run. */
  drain(): Promise<void> {
    if (this.#queue.length === 0 && !this.#scheduled) return Promise.resolve();
    return new Promise((r) => this.#idle.push(r));
  }

  /** Finish queued work, then close the database. */
  async close(): Promise<void> {
    if (this.#closed) return;
    await this.drain();
    this.#closed = true;
    this.#db.close();
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    // setImmediate runs after pending I/O and messages, so everything that
    // arrived in this turn joins the batch; unlike nested setTimeout it is never
    // clamped to 4 ms.
    setImmediate(() => this.#flush());
  }

  #flush(): void {
    this.#scheduled = false;
    let batch = this.#queue.splice(0, this.#maxBatch);
    // Every read and write sees the execs a session worker logged before it was asked
    // (read-your-writes across the intake): fold the intake first, in its own transaction.
    if (batch.length > 0) this.#db.intake?.catchUp();
    // Intake maintenance commits on its own: never inside the batch's transaction.
    if (batch.some((p) => OUTSIDE_BATCH_OPS.has(p.op as JournalOp))) {
      for (const p of batch) {
        if (!OUTSIDE_BATCH_OPS.has(p.op as JournalOp)) continue;
        try {
          p.resolve(dispatch(this.#db, p.op, p.args));
        } catch (e) {
          p.reject(e instanceof StoreError ? e : fromSqlite(e, p.op));
        }
      }
      batch = batch.filter((p) => !OUTSIDE_BATCH_OPS.has(p.op as JournalOp));
    }
    if (batch.length > 0) {
      const t0 = performance.now();
      const outcomes = this.#run(batch);
      const took = performance.now() - t0;
      this.stats.maxFlushMs = Math.max(this.stats.maxFlushMs, took);
      this.stats.flushMs += took;
      batch.forEach((p, i) => {
        const o = outcomes[i];
        if (o.ok) p.resolve(o.value);
        else p.reject(o.error);
      });
      this.stats.batches++;
      this.stats.ops += batch.length;
      this.stats.maxBatch = Math.max(this.stats.maxBatch, batch.length);
    }
    if (this.#queue.length > 0) this.#schedule();
    else for (const r of this.#idle.splice(0)) r();
  }

  #run(batch: Pending[]): Outcome[] {
    const db = this.#db.conn.db;
    const writes = batch.some((p) => !READ_ONLY_OPS.has(p.op as JournalOp));
    const outcomes: Outcome[] = new Array(batch.length);
    // Writes that succeeded inside the current (uncommitted) transaction.
    let uncommitted: number[] = [];
    const begin = (): StoreError | null => {
      try {
        db.exec(writes ? "BEGIN IMMEDIATE" : "BEGIN");
        return null;
      } catch (e) {
        return fromSqlite(e, "starting a journal transaction");
      }
    };
    let failed = begin();
    for (let i = 0; i < batch.length; i++) {
      const p = batch[i];
      if (failed) {
        outcomes[i] = { ok: false, error: failed };
        continue;
      }
      try {
        outcomes[i] = { ok: true, value: dispatch(this.#db, p.op, p.args) };
        if (!READ_ONLY_OPS.has(p.op as JournalOp)) uncommitted.push(i);
      } catch (e) {
        const err = e instanceof StoreError ? e : fromSqlite(e, p.op);
        outcomes[i] = { ok: false, error: err };
        if (!db.isTransaction) {
          // SQLite rolled the whole transaction back: earlier writes are lost too.
          for (const j of uncommitted) outcomes[j] = { ok: false, error: err };
          uncommitted = [];
          failed = begin();
        }
      }
    }
    if (!failed) {
      try {
        db.exec("COMMIT");
      } catch (e) {
        const err = fromSqlite(e, "committing the journal");
        if (db.isTransaction) {
          try {
            db.exec("ROLLBACK");
          } catch {
            // nothing left to roll back
          }
        }
        for (const j of uncommitted) outcomes[j] = { ok: false, error: err };
      }
    }
    return outcomes;
  }
}
