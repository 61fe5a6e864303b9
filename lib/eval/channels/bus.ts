/**
 * The in-language event bus (language §16 "Channels", subsystems §8): named channels, each with
 * a sequence counter from 0, a ring of its newest 1,024 events, and subscribers.
 *
 * Memory is bounded everywhere: the ring is capped, and every subscriber reads through its own
 * bounded drop-oldest queue (256 events) — a slow consumer loses its oldest pending events and
 * gets an in-order `{dropped: n}` marker instead of making the channel grow. Publishing never
 * waits for a consumer.
 *
 * @module
 */

import { fail } from "../../value/errors.ts";
import { dateTimeFromEpochNs } from "../../value/datetime.ts";
import { RecordV, type Value } from "../../value/types.ts";
import type { ClockPort } from "../ports.ts";
import type { Item, Source } from "../streams/core.ts";
import { DropQueue, QueueSource } from "../streams/queue.ts";
import { within } from "../streams/timing.ts";

/** Events kept per channel for replay. */
export const RING_CAPACITY = 1024;
/** Pending events per subscriber before the oldest are dropped. */
export const SUBSCRIBER_CAPACITY = 256;

interface Taker {
  resolve(v: Value): void;
  reject(e: unknown): void;
}

class Channel {
  nextSeq = 0;
  /** Circular buffer of the newest events (`start` is the oldest). */
  readonly ring: RecordV[] = [];
  start = 0;
  latest: Value = null;
  readonly subs = new Set<DropQueue>();
  readonly takers = new Set<Taker>();
  constructor(readonly name: string) {}

  /** The ring's events with `seq > since`, oldest first. */
  replay(since: number): RecordV[] {
    const out: RecordV[] = [];
    const n = this.ring.length;
    for (let k = 0; k < n; k++) {
      const rec = this.ring[(this.start + k) % n];
      if ((rec.fields.get("seq") as number) > since) out.push(rec);
    }
    return out;
  }
}

/** Drops the queue of a subscription that became garbage without being closed. */
const ABANDONED = new FinalizationRegistry<{ subs: Set<DropQueue>; q: DropQueue }>(
  ({ subs, q }) => subs.delete(q),
);

/** Replay of the ring, then live events from the subscriber queue. */
class EventsSource implements Source {
  private i = 0;
  constructor(private replay: RecordV[], private readonly live: QueueSource) {}
  pull(): Item | Promise<Item> {
    if (this.i < this.replay.length) return this.replay[this.i++];
    return this.live.pull();
  }
  close(): void {
    this.replay = [];
    this.live.close();
  }
}

/** One evaluator's channel bus. */
export class ChannelBus {
  private readonly channels = new Map<string, Channel>();
  /** Set by `close()`: no more events; waiting takes fail with `channel_closed`. */
  closed = false;

  /** A bus stamping events with `clock`. */
  constructor(private readonly clock: ClockPort) {}

  private chan(name: string): Channel {
    let c = this.channels.get(name);
    if (c === undefined) {
      c = new Channel(name);
      this.channels.set(name, c);
    }
    return c;
  }

  /** Publish `payload` on `name`; returns the event record `{channel, seq, ts, payload}`. */
  publish(name: string, payload: Value): RecordV {
    const c = this.chan(name);
    const ts = dateTimeFromEpochNs(this.clock.nowNs(), this.clock.zone());
    const rec = new RecordV(
      new Map<string, Value>([["channel", name], ["seq", c.nextSeq++], ["ts", ts], [
        "payload",
        payload,
      ]]),
    );
    if (c.ring.length < RING_CAPACITY) c.ring.push(rec);
    else {
      c.ring[c.start] = rec;
      c.start = (c.start + 1) % RING_CAPACITY;
    }
    c.latest = payload;
    for (const q of c.subs) q.push(rec);
    if (c.takers.size > 0) {
      const takers = [...c.takers];
      c.takers.clear();
      for (const t of takers) t.resolve(payload);
    }
    return rec;
  }

  /** The last payload published on `name`, or null. */
  latest(name: string): Value {
    return this.channels.get(name)?.latest ?? null;
  }

  /** Subscribers currently attached to `name` (tests, diagnostics). */
  subscriberCount(name: string): number {
    return this.channels.get(name)?.subs.size ?? 0;
  }

  /**
   * A stream source of `name`'s events: the ring (only `seq > since` when given; nothing for
   * `"live"`) then live events through a bounded queue of `capacity`.
   */
  subscribe(
    name: string,
    since: number | null | "live",
    capacity = SUBSCRIBER_CAPACITY,
  ): Source {
    const c = this.chan(name);
    const replay = since === "live" ? [] : c.replay(since ?? -1);
    const q = new DropQueue(capacity);
    if (this.closed) q.close();
    else c.subs.add(q);
    const src = new EventsSource(replay, new QueueSource(q, () => c.subs.delete(q)));
    // An abandoned `events()` stream must not stay subscribed (and fed) forever.
    ABANDONED.register(src, { subs: c.subs, q });
    return src;
  }

  /**
   * The next payload published on `name` after this call. `timeoutMs` null waits until an
   * event arrives or the bus closes (`channel_closed`); otherwise `timeout` when it expires.
   */
  async take(
    name: string,
    timeoutMs: number | null,
    label: string,
    signal?: AbortSignal,
  ): Promise<Value> {
    if (this.closed) throw closedError(name);
    const c = this.chan(name);
    let taker!: Taker;
    const p = new Promise<Value>((resolve, reject) => {
      taker = { resolve, reject };
    });
    c.takers.add(taker);
    // An aborted wait (host or task cancel) stops waiting at once.
    signal?.addEventListener("abort", () => {
      if (c.takers.delete(taker)) taker.reject(fail("cancelled", "cancelled"));
    }, { once: true });
    if (timeoutMs === null) return await p;
    if (await within(this.clock, p, timeoutMs)) return await p;
    c.takers.delete(taker);
    throw fail(
      "timeout",
      `timed out after ${label} waiting for an event on channel \`${name}\``,
      null,
    );
  }

  /** Close the bus: live subscriptions end, pending and future takes fail. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const c of this.channels.values()) {
      for (const q of c.subs) q.close();
      c.subs.clear();
      for (const t of c.takers) t.reject(closedError(c.name));
      c.takers.clear();
    }
  }
}

function closedError(name: string): Error {
  return fail("channel_closed", `channel \`${name}\` closed while waiting for an event`, null);
}
