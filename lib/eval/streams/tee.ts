/**
 * `tee(n)` (language §16): fork one stream into n independently drivable streams.
 *
 * A bounded stream is materialized once and every fork replays it exactly. A live (unbounded)
 * stream is shared: whichever fork needs an item pulls the source once and the item is queued
 * for every other open fork in a bounded queue of 64; a fork that falls further behind loses its
 * oldest pending items and receives an in-order `{dropped: n}` marker (see `DropQueue`).
 *
 * @module
 */

import type { Value } from "../../value/types.ts";
import type { MaybePromise } from "../maybe.ts";
import { ArraySource, END, type Item, type Source } from "./core.ts";
import { DropQueue } from "./queue.ts";

/** Pending items per live fork. */
export const TEE_FORK_CAPACITY = 64;

/** n sources replaying the same materialized items. */
export function replayForks(items: readonly Value[], n: number): Source[] {
  return Array.from({ length: n }, () => new ArraySource(items));
}

/** n live forks over one shared source. */
export function liveForks(src: Source, n: number, capacity = TEE_FORK_CAPACITY): Source[] {
  const hub = new TeeHub(src);
  return Array.from({ length: n }, () => hub.fork(capacity));
}

class TeeHub {
  private readonly queues = new Set<DropQueue>();
  private inflight: Promise<void> | null = null;
  ended = false;
  constructor(private readonly src: Source) {}

  fork(capacity: number): Source {
    const q = new DropQueue(capacity);
    this.queues.add(q);
    return new ForkSource(this, q);
  }

  /** Pull the shared source once and queue the item for every open fork. */
  advance(): MaybePromise<void> {
    if (this.inflight !== null) return this.inflight;
    const x = this.src.pull();
    if (x instanceof Promise) {
      this.inflight = x.then(
        (v) => {
          this.inflight = null;
          this.deliver(v);
        },
        (e) => {
          this.inflight = null;
          throw e;
        },
      );
      return this.inflight;
    }
    this.deliver(x);
  }

  private deliver(x: Item): void {
    if (x === END) {
      this.ended = true;
      for (const q of this.queues) q.close();
      return;
    }
    for (const q of this.queues) q.push(x);
  }

  release(q: DropQueue): void {
    this.queues.delete(q);
    if (this.queues.size === 0) this.src.close();
  }
}

class ForkSource implements Source {
  private closed = false;
  constructor(private readonly hub: TeeHub, private readonly q: DropQueue) {}
  pull(): MaybePromise<Item> {
    for (;;) {
      const v = this.q.shift();
      if (v !== undefined) return v;
      if (this.closed || this.hub.ended) return END;
      const r = this.hub.advance();
      if (r instanceof Promise) return r.then(() => this.pull());
    }
  }
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.hub.release(this.q);
  }
}
