/**
 * The pull protocol behind stream values (language §16, subsystems §8).
 *
 * A `Source` hands out items one at a time: `pull()` returns the next item or `END`, now when it
 * is already available (in-memory sources, pure stages) or as a promise when it must be waited
 * for (timers, channel subscriptions, filesystem events). Stages chain pulls with the
 * maybe-async helpers, so a pipeline over an in-memory source runs without a single promise, and
 * a stage that waits never blocks the thread.
 *
 * A `StreamV` is the single-use handle around a source: combinators and sinks take the source
 * with `takeSource` (marking the handle consumed); a second use raises `stream_consumed`.
 *
 * @module
 */

import type { Span } from "../../syntax/ast.ts";
import { fail } from "../../value/errors.ts";
import { StreamV, type Value } from "../../value/types.ts";
import type { MaybePromise } from "../maybe.ts";
import { currentTask, type TaskControl, taskWaitPoint } from "../tasks.ts";
import { MAX_MATERIALIZE } from "../methods/seq.ts";

/** End of a stream (never a language value). */
export const END: unique symbol = Symbol("end of stream");

/** What a pull yields. */
export type Item = Value | typeof END;

/** A pull-driven producer of items. */
export interface Source {
  /** The next item, or END once the source is exhausted (and forever after). */
  pull(): MaybePromise<Item>;
  /**
   * Release what the source holds (subscriptions, watchers, upstream sources). Idempotent;
   * called when a consumer stops early, finishes or fails.
   */
  close(): void;
}

/** Wrap a source in a fresh stream handle. */
export function mkStream(label: string, bounded: boolean, src: Source): StreamV {
  return new StreamV(label, bounded, src);
}

/** The «stream already consumed» error (language §11.3). */
export function consumedError(span: Span | null): Error {
  return fail(
    "stream_consumed",
    "stream already consumed",
    "a stream can be driven only once — fork it first with .tee(2)",
    span,
  );
}

/** The «this stream has no natural end» error (language §11.3). */
export function unboundedError(span: Span | null): Error {
  return fail(
    "stream_unbounded",
    "this stream has no natural end",
    "bound it first with .take(n) or .take_until(…), or drive it with .each(f)",
    span,
  );
}

/** Take ownership of a stream's source; the handle is consumed from now on. */
export function takeSource(s: StreamV, span: Span | null): Source {
  if (s.consumed) throw consumedError(span);
  s.consumed = true;
  return s.source as Source;
}

/** Raise `stream_unbounded` unless the stream is bounded (checked before consuming it). */
export function requireBounded(s: StreamV, span: Span | null): void {
  if (s.consumed) throw consumedError(span);
  if (!s.bounded) throw unboundedError(span);
}

/** A source over an array (already-materialized items). */
export class ArraySource implements Source {
  private i = 0;
  /** Read `items` in order. */
  constructor(private readonly items: readonly Value[]) {}
  /** The next element, or END. */
  pull(): Item {
    return this.i < this.items.length ? this.items[this.i++] : END;
  }
  /** Skip the rest. */
  close(): void {
    this.i = this.items.length;
  }
}

/** Something that may need a cancellation check (the evaluator). */
export interface Cancellable {
  /** Throw `cancelled` if the work was cancelled. */
  checkCancelled(): void;
  /** Run `f` with a signal that aborts when the host cancels (the evaluator provides it). */
  withCancelSignal?<T>(f: (signal: AbortSignal | undefined) => Promise<T>): Promise<T>;
}

/**
 * Drive `src` to its end, calling `onItem` for each item; `onItem` returning `false` stops early.
 * Synchronous while pulls and callbacks are; checks cancellation every 1,024 items. The source is
 * closed on every exit path. Inside a spawned task, a wait is where the task honours
 * suspend/resume, and cancelling the task releases the source at once (tasks.ts).
 */
export function drain(
  ip: Cancellable,
  src: Source,
  onItem: (v: Value) => MaybePromise<boolean | void>,
): MaybePromise<void> {
  const task = currentTask();
  const unhook = task?.onCancel(() => src.close());
  try {
    for (let n = 1;; n++) {
      if ((n & 1023) === 0) ip.checkCancelled();
      const x = src.pull();
      if (x instanceof Promise) return drainLater(ip, src, onItem, x, null, n, task, unhook);
      if (x === END) break;
      const r = onItem(x);
      if (r instanceof Promise) return drainLater(ip, src, onItem, null, r, n, task, unhook);
      if (r === false) break;
    }
  } catch (e) {
    unhook?.();
    src.close();
    throw e;
  }
  unhook?.();
  src.close();
}

/**
 * Continue draining asynchronously. A host cancel (Ctrl-C, a kernel task cancel) closes the
 * source, which ends any pending wait at once — a drain blocked on `every(1h)` or a quiet
 * channel does not hold the cancel until its next item.
 */
function drainLater(
  ip: Cancellable,
  src: Source,
  onItem: (v: Value) => MaybePromise<boolean | void>,
  pendingPull: Promise<Item> | null,
  pendingItem: Promise<boolean | void> | null,
  n: number,
  task: TaskControl | undefined,
  unhook: (() => void) | undefined,
): Promise<void> {
  const run = () => drainAsync(ip, src, onItem, pendingPull, pendingItem, n, task, unhook);
  if (ip.withCancelSignal === undefined) return run();
  return ip.withCancelSignal((signal) => {
    const stop = () => src.close();
    signal?.addEventListener("abort", stop, { once: true });
    return run().finally(() => signal?.removeEventListener("abort", stop));
  });
}

async function drainAsync(
  ip: Cancellable,
  src: Source,
  onItem: (v: Value) => MaybePromise<boolean | void>,
  pendingPull: Promise<Item> | null,
  pendingItem: Promise<boolean | void> | null,
  n: number,
  task: TaskControl | undefined,
  unhook: (() => void) | undefined,
): Promise<void> {
  try {
    if (pendingItem !== null && (await pendingItem) === false) return;
    if (pendingPull !== null) {
      const x = await pendingPull;
      await waited(ip, task);
      if (x === END) return;
      if ((await onItem(x)) === false) return;
    }
    for (n++;; n++) {
      if ((n & 1023) === 0) ip.checkCancelled();
      let x = src.pull();
      if (x instanceof Promise) {
        x = await x;
        await waited(ip, task);
      }
      if (x === END) return;
      let r = onItem(x);
      if (r instanceof Promise) r = await r;
      if (r === false) return;
    }
  } finally {
    unhook?.();
    src.close();
    // A cancel that closed the source ends the loop quietly; the work still ends cancelled.
    ip.checkCancelled();
    task?.check();
  }
}

/** After a wait, which may have been long: honour a cancel or suspend that arrived meanwhile. */
function waited(ip: Cancellable, task: TaskControl | undefined): Promise<void> | undefined {
  ip.checkCancelled();
  return taskWaitPoint(task) ?? undefined;
}

/** Collect every item (the caller checked boundedness), up to `MAX_MATERIALIZE` of them. */
export function collectAll(ip: Cancellable, src: Source): MaybePromise<Value[]> {
  const out: Value[] = [];
  const done = drain(ip, src, (v) => {
    if (out.length >= MAX_MATERIALIZE) {
      throw fail(
        "arg_error",
        `collecting this stream would materialize more than ${MAX_MATERIALIZE} items`,
        "bound it first with .take(n), or process items as they come with .each(f)",
      );
    }
    out.push(v);
  });
  return done instanceof Promise ? done.then(() => out) : out;
}

/**
 * A source wrapper that can look one pull ahead: `peek()` starts (or reuses) a pull and keeps
 * its result — value or promise — for the next `pull()`. Timing stages use it to race a pending
 * pull against a timer or another source without losing the item when the pull loses the race.
 */
export class Ahead implements Source {
  private slot: MaybePromise<Item> | undefined = undefined;
  /** Look ahead on `src`. */
  constructor(readonly src: Source) {}

  /** The next item without taking it. */
  peek(): MaybePromise<Item> {
    if (this.slot === undefined) {
      const r = this.src.pull();
      // A rejected pull that nobody is waiting on yet must not count as unhandled; the error
      // still reaches whoever takes the slot.
      if (r instanceof Promise) {
        // Once settled, keep the plain value so the next pull is synchronous.
        r.then((v) => {
          if (this.slot === r) this.slot = v;
        }, () => {});
      }
      this.slot = r;
    }
    return this.slot;
  }

  /** True when a pull is in flight (peeked but not yet settled into a value). */
  get pending(): boolean {
    return this.slot instanceof Promise;
  }

  /** The peeked item if any, else a fresh pull. */
  pull(): MaybePromise<Item> {
    if (this.slot !== undefined) {
      const s = this.slot;
      this.slot = undefined;
      return s;
    }
    return this.src.pull();
  }

  /** Drop the peeked item and close the source. */
  close(): void {
    this.slot = undefined;
    this.src.close();
  }
}

/** Settle `p` into `{item}` so it can be raced with other signals. */
export function settled(p: Promise<Item>): Promise<{ item: Item } | { error: unknown }> {
  return p.then((item) => ({ item }), (error) => ({ error }));
}
