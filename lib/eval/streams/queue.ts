/**
 * A bounded per-consumer queue that never blocks its producer (live `tee` forks, channel
 * subscribers, `watch`). When the consumer falls behind and the queue is full, the **oldest**
 * pending item is dropped and counted; the consumer then receives one `{dropped: n}` record at
 * the place the dropped items had (before everything still queued), so overflow is never silent
 * and memory stays bounded by the capacity.
 *
 * @module
 */

import { RecordV, type Value } from "../../value/types.ts";
import { END, type Item, type Source } from "./core.ts";

/** The in-order overflow marker `{dropped: n}`. */
export function droppedMarker(n: number): RecordV {
  return new RecordV(new Map<string, Value>([["dropped", n]]));
}

/** A bounded drop-oldest queue with a waiting consumer. */
export class DropQueue {
  private items: Value[] = [];
  private head = 0;
  private dropped = 0;
  private waiter: (() => void) | null = null;
  /** No more items will be pushed; the consumer ends after draining. */
  closed = false;
  /** Total items dropped over the queue's life (tests, diagnostics). */
  droppedTotal = 0;

  constructor(readonly capacity: number) {}

  /** Items waiting (markers excluded). */
  get size(): number {
    return this.items.length - this.head;
  }

  /** Enqueue an item, dropping the oldest pending one when full. */
  push(v: Value): void {
    if (this.closed) return;
    if (this.size >= this.capacity) {
      this.head++;
      this.dropped++;
      this.droppedTotal++;
    }
    this.items.push(v);
    // Compact once the consumed prefix dominates, keeping push/shift O(1) amortized.
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    this.wake();
  }

  /** The next item (a pending marker first), or undefined when empty. */
  shift(): Value | undefined {
    if (this.dropped > 0) {
      const m = droppedMarker(this.dropped);
      this.dropped = 0;
      return m;
    }
    if (this.head < this.items.length) {
      const v = this.items[this.head];
      this.items[this.head++] = null;
      return v;
    }
    return undefined;
  }

  /** Resolves when an item is pushed or the queue closes. */
  waitForItem(): Promise<void> {
    return new Promise((r) => {
      const prev = this.waiter;
      this.waiter = () => {
        prev?.();
        r();
      };
    });
  }

  /** Stop accepting items; a waiting consumer wakes and sees the end after draining. */
  close(): void {
    this.closed = true;
    this.wake();
  }

  private wake(): void {
    const w = this.waiter;
    if (w !== null) {
      this.waiter = null;
      w();
    }
  }
}

/** A source reading a DropQueue: synchronous while items are queued, waits otherwise. */
export class QueueSource implements Source {
  private released = false;
  constructor(readonly queue: DropQueue, private readonly onClose: () => void = () => {}) {}
  pull(): Item | Promise<Item> {
    const v = this.queue.shift();
    if (v !== undefined) return v;
    if (this.queue.closed) return END;
    return this.queue.waitForItem().then(() => this.pull());
  }
  close(): void {
    this.queue.close();
    if (!this.released) {
      this.released = true;
      this.onClose();
    }
  }
}
