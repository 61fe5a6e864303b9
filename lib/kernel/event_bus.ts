/**
 * The kernel event bus (protocol §13): per-channel rings of the last 1,024 events, sequence
 * numbers from 0 per channel, and per-subscription bounded queues (256) so a publish never
 * blocks. A slow subscriber loses events, and learns so from a `{dropped, latest_seq}` summary
 * delivered exactly at the gap (D-37).
 *
 * Channels live in a *scope* (a session name, or "" for kernel-wide channels), so one
 * session's transcript, render, task and user events are invisible to another (D-21).
 * Durable channels delegate history and sequence numbers to a `DurableLog` (the journal), so
 * sequences continue across restarts and old events replay from disk (D-20).
 */

/** One event as it travels on the wire. */
export interface BusEvent {
  channel: string;
  seq: number;
  ts: number;
  payload: unknown;
}

/**
 * Persistent history for durable channels (implemented over lib/store's EventLog by
 * `durable_log.ts`). Events stored by their producers arrive through {@link
 * EventBus.publishStored}; for {@link EventBus.publish} the bus assigns the seq synchronously
 * from counters the log seeded at start and the log writes behind with it, so publish never
 * waits on disk. Reads of history older than the ring are asynchronous.
 */
export interface DurableLog {
  /** The next seq of a stream (seeded from the store at start; continues across restarts). */
  nextSeq(scope: string, channel: string): number;
  /** Persist an event whose seq the bus assigned (write-behind; failures are reported). */
  append(scope: string, channel: string, e: BusEvent): void;
  /** The newest `limit` events with seq > since (all when since is null), ascending. */
  readLatest(
    scope: string,
    channel: string,
    since: number | null,
    limit: number,
  ): Promise<BusEvent[]>;
  /** The oldest `limit` events with seq > since, ascending. */
  readAfter(scope: string, channel: string, since: number, limit: number): Promise<BusEvent[]>;
}

/** Ring size per channel. */
export const RING_SIZE = 1024;
/** Pending events per subscription. */
export const SUBSCRIBER_QUEUE = 256;

type QueueItem = { event: BusEvent } | {
  gap: { dropped: number; latest_seq: number; channel: string };
};

/** Nanoseconds since the epoch (display only; ordering uses seq). */
export function nowNs(): number {
  return Date.now() * 1_000_000;
}

class Channel {
  ring: BusEvent[] = [];
  nextSeq = 0;
  subs = new Set<Subscription>();
}

/** A subscription: its own bounded queue drained by one writer loop. */
export class Subscription {
  #queue: QueueItem[] = [];
  #wake: (() => void) | null = null;
  #closed = false;
  #lastSeq = -1;
  /** Pending durable replay (the subscription joins live traffic when it settles). */
  replaying: Promise<void> | null = null;

  constructor(
    readonly channel: string,
    readonly deliver: (e: BusEvent) => Promise<void>,
  ) {
    this.#run();
  }

  /** True once unsubscribed or the connection went away. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Number of queued items (tests, metrics). */
  get pending(): number {
    return this.#queue.length;
  }

  /** Enqueue without blocking; overflow turns into (or extends) a gap marker. */
  offer(e: BusEvent): void {
    if (this.#closed || e.seq <= this.#lastSeq) return; // replay/live overlap: dedupe by seq
    this.#lastSeq = e.seq;
    if (this.#queue.length >= SUBSCRIBER_QUEUE) {
      const last = this.#queue[this.#queue.length - 1];
      if ("gap" in last) {
        last.gap.dropped++;
        last.gap.latest_seq = e.seq;
      } else {
        this.#queue.push({ gap: { dropped: 1, latest_seq: e.seq, channel: e.channel } });
      }
    } else {
      this.#queue.push({ event: e });
    }
    this.#wake?.();
  }

  /** Record that events up to `latestSeq` were skipped (bounded replay). */
  offerGap(dropped: number, latestSeq: number): void {
    if (this.#closed || dropped <= 0) return;
    this.#lastSeq = Math.max(this.#lastSeq, latestSeq);
    this.#queue.push({ gap: { dropped, latest_seq: latestSeq, channel: this.channel } });
    this.#wake?.();
  }

  /** Stop delivering; pending items are discarded. */
  close(): void {
    this.#closed = true;
    this.#queue = [];
    this.#wake?.();
  }

  async #run(): Promise<void> {
    while (!this.#closed) {
      const item = this.#queue.shift();
      if (!item) {
        await new Promise<void>((r) => (this.#wake = r));
        this.#wake = null;
        continue;
      }
      const e: BusEvent = "event" in item ? item.event : {
        channel: item.gap.channel,
        seq: item.gap.latest_seq,
        ts: nowNs(),
        payload: { dropped: item.gap.dropped, latest_seq: item.gap.latest_seq },
      };
      try {
        await this.deliver(e);
      } catch {
        this.close(); // the connection is gone
      }
    }
  }
}

/** Which channels are durable (journal-backed). */
export const DURABLE_CHANNELS = new Set(["journal", "session.transcript"]);

/** The bus. */
export class EventBus {
  #channels = new Map<string, Channel>();

  /**
   * Channels whose events another component keeps itself (the task registry's `task.N`):
   * reads come from there, and a real channel (seeded with them) exists only once someone
   * subscribes. Every exec has a task, and a ring per task cost every exec an allocation that
   * lived as long as the task record. (null: none.)
   */
  derived: ((scope: string, channel: string) => BusEvent[] | null) | null = null;

  constructor(readonly durable: DurableLog | null = null) {}

  static #key(scope: string, channel: string): string {
    return `${scope}\u0000${channel}`;
  }

  #chan(key: string): Channel {
    let c = this.#channels.get(key);
    if (!c) {
      c = new Channel();
      const sep = key.indexOf("\u0000");
      const channel = key.slice(sep + 1);
      if (this.durable && DURABLE_CHANNELS.has(channel)) {
        c.nextSeq = this.durable.nextSeq(key.slice(0, sep), channel);
      } else {
        const d = this.derived?.(key.slice(0, sep), channel);
        if (d) {
          c.ring = d;
          c.nextSeq = d.length;
        }
      }
      this.#channels.set(key, c);
    }
    return c;
  }

  #isDurable(channel: string): boolean {
    return this.durable !== null && DURABLE_CHANNELS.has(channel);
  }

  /** Publish; returns the stored event. Never blocks (durable channels write behind). */
  publish(scope: string, channel: string, payload: unknown): BusEvent {
    const c = this.#chan(EventBus.#key(scope, channel));
    const e: BusEvent = { channel, seq: c.nextSeq++, ts: nowNs(), payload };
    if (this.#isDurable(channel)) this.durable!.append(scope, channel, e);
    EventBus.#deliver(c, e);
    return e;
  }

  /**
   * Deliver an event its producer numbered and stored itself (a journaling session worker logs
   * each transcript event with its exec): the ring and subscribers only, no durable append.
   * The channel's numbering continues after it.
   */
  publishStored(scope: string, e: BusEvent): void {
    const c = this.#chan(EventBus.#key(scope, e.channel));
    if (e.seq >= c.nextSeq) c.nextSeq = e.seq + 1;
    EventBus.#deliver(c, e);
  }

  static #deliver(c: Channel, e: BusEvent): void {
    c.ring.push(e);
    if (c.ring.length > RING_SIZE) c.ring.shift();
    for (const s of c.subs) s.offer(e);
  }

  /**
   * A derived channel's owner recorded an event (see {@link derived}): deliver it to the
   * channel's subscribers, if it has become a real channel; otherwise the owner keeps it.
   */
  publishDerived(scope: string, channel: string, payload: unknown): void {
    if (this.#channels.has(EventBus.#key(scope, channel))) this.publish(scope, channel, payload);
  }

  /**
   * Events with seq > since (all retained when `since` is null), ascending, from the in-memory
   * ring only; `limit` keeps the newest. See {@link history} for durable history.
   */
  read(scope: string, channel: string, since: number | null, limit = RING_SIZE): BusEvent[] {
    const ring = this.#channels.get(EventBus.#key(scope, channel))?.ring ??
      this.derived?.(scope, channel);
    if (!ring) return [];
    const out = since === null ? ring : ring.filter((e) => e.seq > since);
    return out.slice(Math.max(0, out.length - limit));
  }

  /**
   * Called before a durable channel's history is read: publishes what its producer holds back
   * (the journal folds its intake, so `journal` shows every exec answered before the read).
   */
  settle: ((channel: string) => Promise<void> | undefined) | null = null;

  /**
   * `events.read`: like {@link read}, but a durable channel serves what the ring no longer
   * (or, after a restart, not yet) holds from the journal (D-20).
   */
  async history(
    scope: string,
    channel: string,
    since: number | null,
    limit = RING_SIZE,
  ): Promise<BusEvent[]> {
    if (!this.#isDurable(channel)) return this.read(scope, channel, since, limit);
    await this.settle?.(channel);
    const c = this.#chan(EventBus.#key(scope, channel));
    const oldest = c.ring.length ? c.ring[0].seq : c.nextSeq;
    // The ring answers when it holds every event after `since`, or the newest `limit` ones.
    const covered = since === null
      ? oldest === 0 || c.ring.length >= limit
      : since >= oldest - 1 || (c.ring.length >= limit && c.nextSeq - 1 - since >= limit);
    if (covered) return this.read(scope, channel, since, limit);
    return await this.durable!.readLatest(scope, channel, since, limit);
  }

  /**
   * Subscribe: replay events with seq > since through the subscription's queue (so replay is
   * bounded like live traffic), then push live ones. With `since` null only live events flow.
   * Durable channels replay from the journal (D-20): at most one queue's worth, the rest is
   * reported as a gap the consumer fills with `events.read` (the seed's consumer algorithm).
   * Live events published while the journal is read are held back and delivered after the
   * replay, in order.
   */
  subscribe(
    scope: string,
    channel: string,
    since: number | null,
    deliver: (e: BusEvent) => Promise<void>,
  ): Subscription {
    const key = EventBus.#key(scope, channel);
    const c = this.#chan(key);
    const sub = new Subscription(channel, deliver);
    if (since === null) {
      c.subs.add(sub);
      return sub;
    }
    const oldest = c.ring.length ? c.ring[0].seq : c.nextSeq;
    if (!this.#isDurable(channel) || since >= oldest - 1) {
      for (const e of c.ring) if (e.seq > since) sub.offer(e);
      c.subs.add(sub);
      return sub;
    }
    sub.replaying = this.durable!.readAfter(scope, channel, since, SUBSCRIBER_QUEUE).then(
      (batch) => {
        if (sub.closed) return;
        for (const e of batch) sub.offer(e);
        const last = batch.length ? batch[batch.length - 1].seq : since;
        const first = c.ring.length ? c.ring[0].seq : c.nextSeq;
        if (first > last + 1) sub.offerGap(first - 1 - last, first - 1);
        for (const e of c.ring) if (e.seq > last) sub.offer(e);
      },
      () => {
        // The journal could not be read: tell the consumer what it missed instead of hiding it.
        const first = c.ring.length ? c.ring[0].seq : c.nextSeq;
        if (first - 1 > since) sub.offerGap(first - 1 - since, first - 1);
        for (const e of c.ring) sub.offer(e);
      },
    ).finally(() => {
      if (!sub.closed && this.#channels.get(key) === c) c.subs.add(sub);
      sub.replaying = null;
    });
    return sub;
  }

  /** Remove a subscription. */
  unsubscribe(scope: string, channel: string, sub: Subscription): void {
    sub.close();
    this.#channels.get(EventBus.#key(scope, channel))?.subs.delete(sub);
  }

  /** Forget a channel and close its subscriptions (evicted task channels). */
  drop(scope: string, channel: string): void {
    const key = EventBus.#key(scope, channel);
    const c = this.#channels.get(key);
    if (!c) return;
    for (const s of c.subs) s.close();
    this.#channels.delete(key);
  }

  /** Channels currently held (tests: eviction keeps this bounded). */
  get channelCount(): number {
    return this.#channels.size;
  }

  /** The next seq a channel will assign (tests, `latest_seq`). */
  nextSeq(scope: string, channel: string): number {
    return this.#chan(EventBus.#key(scope, channel)).nextSeq;
  }
}
