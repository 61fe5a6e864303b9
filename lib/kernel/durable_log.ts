/**
 * The event bus's {@link DurableLog} over the store's event log (protocol §13, D-20): the
 * `journal` and `session.transcript` streams keep sequence numbers per (channel, scope) that
 * continue across kernel restarts, dense except where an event could not be stored (its exec
 * could not be logged, or the journal refused it: reported, and its number never reused).
 *
 * With a journal, the kernel's events on these channels are numbered and stored where their
 * execs are: a session worker logs each transcript event with its exec, the journal thread's
 * fold stores each exec's `journal` event with its row, and the kernel's own `journal` reports
 * are numbered there too (`EventLog.record`); the bus then delivers them live with those numbers
 * (`EventBus.publishStored`). So an event of an answered exec survives a crash exactly when its
 * exec's row does. This log serves their history, seeds the bus's counters at start, and still
 * appends anything published on a durable channel through `EventBus.publish`: behind, with the
 * bus's `seq`, which the store checks is the stream's next one (a second writer is detected,
 * `event_seq_conflict`, instead of interleaved), gathered on the schedule of `write_window.ts`
 * (or until {@link APPEND_BATCH} events) into one transaction. Reads send what is gathered
 * first and travel through the journal's single FIFO queue, so they see earlier appends.
 *
 * Timestamps: the bus uses ns since the epoch, the store ms; bus timestamps are whole ms
 * (`nowNs()`), so nothing is lost.
 *
 * @module
 */

import type { EventLog, StoredEvent } from "../store/mod.ts";
import type { BusEvent, DurableLog } from "./event_bus.ts";
import { WriteWindow } from "./write_window.ts";

function toBus(e: StoredEvent): BusEvent {
  return { channel: e.channel, seq: e.seq, ts: e.ts * 1_000_000, payload: e.payload };
}

/** Appends gathered at most before they are sent at once (bounds memory). */
export const APPEND_BATCH = 512;

interface Gathered {
  channel: string;
  payload: unknown;
  scope: string;
  ts: number;
  seq: number;
}

/** A write-behind {@link DurableLog} over the store's `EventLog`. */
export class StoreDurableLog implements DurableLog {
  readonly #log: EventLog;
  readonly #next = new Map<string, number>();
  readonly #onError: (e: unknown) => void;
  #pending = 0;
  #idle: Array<() => void> = [];
  #gathered: Gathered[] = [];
  #timer: ReturnType<typeof setTimeout> | null = null;
  readonly #window = new WriteWindow();

  private constructor(log: EventLog, onError: (e: unknown) => void) {
    this.#log = log;
    this.#onError = onError;
  }

  /** Seed the counters of every stream the journal knows. */
  static async open(log: EventLog, onError: (e: unknown) => void): Promise<StoreDurableLog> {
    const d = new StoreDurableLog(log, onError);
    for (const s of await log.listChannels()) {
      d.#next.set(`${s.scope}\u0000${s.channel}`, s.nextSeq);
    }
    return d;
  }

  nextSeq(scope: string, channel: string): number {
    return this.#next.get(`${scope}\u0000${channel}`) ?? 0;
  }

  append(scope: string, channel: string, e: BusEvent): void {
    this.#next.set(`${scope}\u0000${channel}`, e.seq + 1);
    this.#gathered.push({
      channel,
      payload: e.payload,
      scope,
      ts: Math.floor(e.ts / 1_000_000),
      seq: e.seq,
    });
    if (this.#gathered.length >= APPEND_BATCH) this.#send();
    else if (this.#timer === null) {
      this.#timer = setTimeout(() => this.#send(), this.#window.delay());
    }
  }

  /** Send what has gathered now (the journal's fold sends it in the same batch). */
  sendNow(): void {
    this.#send();
  }

  /** Send what has gathered as one append batch. */
  #send(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    const batch = this.#gathered;
    if (batch.length === 0) return;
    this.#gathered = [];
    this.#window.wrote();
    this.#pending++;
    const lost = (ev: Gathered, why: string) =>
      this.#onError(
        new Error(
          `journal: event ${ev.channel} seq ${ev.seq} (session ${
            JSON.stringify(ev.scope)
          }) was not persisted: ${why}`,
        ),
      );
    this.#log.appendMany(batch).then(
      (refused) => {
        for (const r of refused) lost(batch[r.index], r.message);
      },
      (err) => {
        for (const ev of batch) lost(ev, (err as Error)?.message ?? String(err));
      },
    ).finally(() => {
      if (--this.#pending === 0) { for (const f of this.#idle.splice(0)) f(); }
    });
  }

  async readLatest(
    scope: string,
    channel: string,
    since: number | null,
    limit: number,
  ): Promise<BusEvent[]> {
    this.#send();
    return (await this.#log.readLatest(channel, limit, { scope, since })).map(toBus);
  }

  async readAfter(
    scope: string,
    channel: string,
    since: number,
    limit: number,
  ): Promise<BusEvent[]> {
    this.#send();
    return (await this.#log.readSince(channel, since, limit, { scope })).map(toBus);
  }

  /** Resolves once every append issued so far has settled (shutdown, tests). */
  flushed(): Promise<void> {
    this.#send();
    if (this.#pending === 0) return Promise.resolve();
    return new Promise((r) => this.#idle.push(r));
  }
}
