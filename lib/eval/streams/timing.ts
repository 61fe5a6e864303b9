/**
 * Time-driven stream stages and the `every` source (language §16): debounce, throttle,
 * window(duration), merge, take_until(stream).
 *
 * All waiting goes through the evaluator's clock port and is asynchronous: a stage racing a
 * pending pull against a timer keeps the loser (see `Ahead`) and cancels the timer, so nothing
 * is lost and no stray timer keeps the process alive. Items that are already available
 * (in-memory sources) count as arriving instantly, which gives the documented finite-source
 * results: debounce → only the last item, throttle → only the first.
 *
 * @module
 */

import { DurationV, ListV, typeName, type Value } from "../../value/types.ts";
import { dateTimeFromEpochNs } from "../../value/datetime.ts";
import { fail } from "../../value/errors.ts";
import type { Span } from "../../syntax/ast.ts";
import type { MaybePromise } from "../maybe.ts";
import type { ClockPort } from "../ports.ts";
import { Ahead, END, type Item, type Source } from "./core.ts";

/** A cancellable timer on the clock port. */
function timer(clock: ClockPort, ms: number): { done: Promise<void>; cancel(): void } {
  const ctl = new AbortController();
  return { done: clock.sleep(ms, ctl.signal), cancel: () => ctl.abort() };
}

/** Wait for `p` at most `ms`: true when it settled first, false on timeout. */
export async function within(clock: ClockPort, p: Promise<unknown>, ms: number): Promise<boolean> {
  const t = timer(clock, ms);
  try {
    return await Promise.race([p.then(() => true, () => true), t.done.then(() => false)]);
  } finally {
    t.cancel();
  }
}

/** A duration argument of a timing stage: non-negative, or positive when `positive`. */
export function durationArg(
  name: string,
  v: Value | undefined,
  span: Span | null,
  positive = false,
): DurationV {
  if (!(v instanceof DurationV)) {
    if (v === undefined) {
      throw fail("arg_error", `.${name} requires a duration argument`, null, span);
    }
    throw fail("type_error", `.${name} expects a duration, found ${typeName(v)}`, null, span);
  }
  if (v.ns < 0n || (positive && v.ns === 0n)) {
    throw fail(
      "arg_error",
      `.${name} expects a ${positive ? "positive" : "non-negative"} duration`,
      null,
      span,
    );
  }
  return v;
}

/**
 * `every(d)`: a tick (the datetime it was due) every `d`, starting `d` after construction.
 * Pull-driven with a one-slot semantics: a consumer that falls behind gets the earliest
 * undelivered tick at once, and the ticks missed meanwhile coalesce into it. Holds no timer
 * between pulls, so an idle or abandoned `every` costs nothing.
 */
export class EverySource implements Source {
  private next: bigint;
  private closed = false;
  private wait: AbortController | null = null;
  constructor(private readonly clock: ClockPort, private readonly ns: bigint) {
    this.next = clock.nowNs() + ns;
  }
  pull(): MaybePromise<Item> {
    if (this.closed) return END;
    const now = this.clock.nowNs();
    if (now >= this.next) return this.tick(now);
    const ctl = new AbortController();
    this.wait = ctl;
    return this.clock.sleep(Number(this.next - now) / 1e6, ctl.signal).then(() => {
      this.wait = null;
      if (this.closed) return END;
      // Trust the sleep even when the clock reads earlier (a pinned test clock).
      const t = this.clock.nowNs();
      return this.tick(t > this.next ? t : this.next);
    });
  }
  private tick(now: bigint): Item {
    const due = this.next;
    // Coalesce: the next tick is the first one strictly after now.
    const missed = (now - due) / this.ns + 1n;
    this.next = due + missed * this.ns;
    return dateTimeFromEpochNs(due, this.clock.zone());
  }
  close(): void {
    this.closed = true;
    this.wait?.abort();
  }
}

/** `debounce(d)`: emit an item only once no newer item arrived within `d`. */
export class DebounceStage implements Source {
  private readonly src: Ahead;
  private done = false;
  constructor(private readonly clock: ClockPort, src: Source, private readonly ms: number) {
    this.src = new Ahead(src);
  }
  pull(): MaybePromise<Item> {
    if (this.done) return END;
    const first = this.src.pull();
    if (first instanceof Promise) return first.then((x) => x === END ? END : this.settle(x));
    return first === END ? END : this.settle(first);
  }
  /** Hold `held` until the quiet period passes (or the source ends). */
  private settle(held: Value): MaybePromise<Item> {
    for (;;) {
      const nx = this.src.peek();
      if (nx instanceof Promise) return this.settleAsync(held);
      if (nx === END) {
        this.done = true;
        return held;
      }
      // Already available = arrived within any positive quiet period.
      if (this.ms <= 0) return held;
      held = this.src.pull() as Value;
    }
  }
  private async settleAsync(held: Value): Promise<Item> {
    for (;;) {
      const nx = this.src.peek();
      // A zero quiet period has passed as soon as nothing newer is already there.
      if (nx instanceof Promise && (this.ms <= 0 || !(await within(this.clock, nx, this.ms)))) {
        return held;
      }
      const x = await this.src.pull();
      if (x === END) {
        this.done = true;
        return held;
      }
      held = x;
    }
  }
  close(): void {
    this.done = true;
    this.src.close();
  }
}

/** `throttle(d)`: drop items that arrive within `d` of the last emitted one. */
export class ThrottleStage implements Source {
  private last: bigint | null = null;
  constructor(
    private readonly clock: ClockPort,
    private readonly src: Source,
    private readonly ns: bigint,
  ) {}
  pull(): MaybePromise<Item> {
    for (;;) {
      const x = this.src.pull();
      if (x instanceof Promise) return x.then(this.judge);
      if (x === END || this.pass()) return x;
    }
  }
  private pass(): boolean {
    const now = this.clock.nowNs();
    if (this.last !== null && now - this.last < this.ns) return false;
    this.last = now;
    return true;
  }
  private readonly judge = (x: Item): MaybePromise<Item> =>
    x === END || this.pass() ? x : this.pull();
  close(): void {
    this.src.close();
  }
}

/** `window(d)`: lists of the items that arrive within `d` of each window's first item. */
export class TimeWindow implements Source {
  private readonly src: Ahead;
  private done = false;
  constructor(
    private readonly clock: ClockPort,
    src: Source,
    private readonly ns: bigint,
  ) {
    this.src = new Ahead(src);
  }
  pull(): MaybePromise<Item> {
    if (this.done) return END;
    const first = this.src.pull();
    if (first instanceof Promise) {
      return first.then((x) => x === END ? END : this.fill([x], this.clock.nowNs()));
    }
    return first === END ? END : this.fill([first], this.clock.nowNs());
  }
  private fill(items: Value[], start: bigint): MaybePromise<Item> {
    for (;;) {
      const nx = this.src.peek();
      if (nx instanceof Promise) return this.fillAsync(items, start);
      if (nx === END) {
        this.done = true;
        return new ListV(items);
      }
      if (this.clock.nowNs() - start >= this.ns) return new ListV(items);
      items.push(this.src.pull() as Value);
    }
  }
  private async fillAsync(items: Value[], start: bigint): Promise<Item> {
    for (;;) {
      const left = Number(start + this.ns - this.clock.nowNs()) / 1e6;
      if (left <= 0) return new ListV(items);
      const nx = this.src.peek();
      if (nx instanceof Promise && !(await within(this.clock, nx, left))) return new ListV(items);
      const x = await this.src.pull();
      if (x === END) {
        this.done = true;
        return new ListV(items);
      }
      items.push(x);
    }
  }
  close(): void {
    this.done = true;
    this.src.close();
  }
}

/** `merge(other)`: items from both sources as they come (alternating when both are ready). */
export class MergeStage implements Source {
  private readonly srcs: (Ahead | null)[];
  private turn = 0;
  constructor(a: Source, b: Source) {
    this.srcs = [new Ahead(a), new Ahead(b)];
  }
  pull(): MaybePromise<Item> {
    const order = this.turn === 0 ? [0, 1] : [1, 0];
    for (const i of order) {
      const s = this.srcs[i];
      if (s === null) continue;
      const x = s.peek();
      if (x instanceof Promise) continue;
      s.pull();
      if (x === END) {
        this.srcs[i] = null; // this side is done; try the other
        continue;
      }
      this.turn = 1 - i;
      return x;
    }
    const live = this.srcs.filter((s) => s !== null) as Ahead[];
    return live.length === 0 ? END : this.race(live);
  }
  private async race(live: Ahead[]): Promise<Item> {
    const winner = await Promise.race(
      live.map((s, k) => (s.peek() as Promise<Item>).then(() => k, () => k)),
    );
    const s = live[winner];
    const x = await s.pull();
    if (x !== END) {
      this.turn = this.srcs[0] === s ? 1 : 0;
      return x;
    }
    this.srcs[this.srcs.indexOf(s)] = null;
    return this.pull();
  }
  close(): void {
    for (const s of this.srcs) s?.close();
    this.srcs[0] = this.srcs[1] = null;
  }
}

/** `take_until(stream)`: the main items until the other stream yields its first item. */
export class TakeUntilStream implements Source {
  private readonly main: Ahead;
  private other: Ahead | null;
  private done = false;
  constructor(main: Source, other: Source) {
    this.main = new Ahead(main);
    this.other = new Ahead(other);
  }
  pull(): MaybePromise<Item> {
    if (this.done) return END;
    if (this.other !== null) {
      const o = this.other.peek();
      if (!(o instanceof Promise)) {
        if (o !== END) return this.stop();
        this.other.close(); // the other stream ended without yielding: it never stops us
        this.other = null;
      }
    }
    const m = this.main.peek();
    if (!(m instanceof Promise)) {
      this.main.pull();
      return m === END ? this.stop() : m;
    }
    if (this.other === null) {
      return (this.main.pull() as Promise<Item>).then((x) => x === END ? this.stop() : x);
    }
    return this.race(m, this.other.peek() as Promise<Item>);
  }
  private async race(m: Promise<Item>, o: Promise<Item>): Promise<Item> {
    const first = await Promise.race([m.then(() => 0, () => 0), o.then(() => 1, () => 1)]);
    if (first === 1 && this.other !== null) {
      const y = await this.other.pull(); // rethrows the other stream's error
      if (y !== END) return this.stop();
      this.other.close();
      this.other = null;
    }
    const x = await this.main.pull();
    return x === END ? this.stop() : x;
  }
  private stop(): Item {
    this.close();
    return END;
  }
  close(): void {
    this.done = true;
    this.main.close();
    this.other?.close();
    this.other = null;
  }
}
