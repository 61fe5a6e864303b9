/**
 * The untimed stream stages (language §16): map, where, scan, flat_map, take, skip, take_until
 * (predicate), dedupe, distinct, enumerate, sliding window, zip, and the in-memory sources.
 *
 * Every stage pulls synchronously while its upstream and callbacks answer synchronously, so a
 * pipeline over an in-memory source creates no promise per item.
 *
 * @module
 */

import { valuesEqual } from "../../value/compare.ts";
import { asCondition } from "../../value/coerce.ts";
import { fail } from "../../value/errors.ts";
import { ListV, StreamV, typeName, type Value } from "../../value/types.ts";
import type { MaybePromise } from "../maybe.ts";
import type { Interp } from "../method_types.ts";
import { EqIndex, type Seq, trySeq } from "../methods/seq.ts";
import { END, type Item, type Source, takeSource } from "./core.ts";
import type { Span } from "../../syntax/ast.ts";

/** A source over a collection's elements (ranges are read lazily, never materialized). */
export class SeqSource implements Source {
  private i = 0;
  constructor(private readonly seq: Seq) {}
  pull(): Item {
    return this.i < this.seq.length ? this.seq.at(this.i++) : END;
  }
  close(): void {
    this.i = this.seq.length;
  }
}

/** `map(f)`. */
export class MapStage implements Source {
  constructor(
    private readonly ip: Interp,
    private readonly src: Source,
    private readonly f: Value,
  ) {}
  pull(): MaybePromise<Item> {
    const x = this.src.pull();
    if (x instanceof Promise) return x.then(this.apply);
    return x === END ? END : this.ip.callValue(this.f, [x]);
  }
  private readonly apply = (x: Item): MaybePromise<Item> =>
    x === END ? END : this.ip.callValue(this.f, [x]);
  close(): void {
    this.src.close();
  }
}

/** `where(f)` / `filter(f)`. */
export class WhereStage implements Source {
  constructor(
    private readonly ip: Interp,
    private readonly src: Source,
    private readonly f: Value,
  ) {}
  pull(): MaybePromise<Item> {
    for (;;) {
      const x = this.src.pull();
      if (x instanceof Promise) return x.then(this.judge);
      if (x === END) return END;
      const c = this.ip.callValue(this.f, [x]);
      if (c instanceof Promise) return c.then((ok) => asCondition(ok) ? x : this.pull());
      if (asCondition(c)) return x;
    }
  }
  private readonly judge = (x: Item): MaybePromise<Item> => {
    if (x === END) return END;
    const c = this.ip.callValue(this.f, [x]);
    if (c instanceof Promise) return c.then((ok) => asCondition(ok) ? x : this.pull());
    return asCondition(c) ? x : this.pull();
  };
  close(): void {
    this.src.close();
  }
}

/** `scan(init, f)`: emit each accumulator `acc = f(acc, x)`. */
export class ScanStage implements Source {
  constructor(
    private readonly ip: Interp,
    private readonly src: Source,
    private acc: Value,
    private readonly f: Value,
  ) {}
  pull(): MaybePromise<Item> {
    const x = this.src.pull();
    if (x instanceof Promise) return x.then(this.step);
    return this.step(x);
  }
  private readonly step = (x: Item): MaybePromise<Item> => {
    if (x === END) return END;
    const r = this.ip.callValue(this.f, [this.acc, x]);
    if (r instanceof Promise) {
      return r.then((v) => {
        this.acc = v;
        return v;
      });
    }
    this.acc = r;
    return r;
  };
  close(): void {
    this.src.close();
  }
}

/** The items of a `flat_map` result: a collection's elements or a stream's source. */
export function innerSource(v: Value, outerBounded: boolean, span: Span | null): Source {
  if (v instanceof StreamV) {
    // A bounded pipeline must stay bounded: an endless inner stream would make it hang.
    if (outerBounded && !v.bounded) {
      throw fail(
        "stream_unbounded",
        "this stream has no natural end",
        "flat_map over a bounded stream needs bounded inner streams — add .take(n)",
        span,
      );
    }
    return takeSource(v, span);
  }
  const seq = v !== null && typeof v === "object" && v.t !== "record" ? trySeq(v) : null;
  if (seq === null) {
    throw fail(
      "type_error",
      `.flat_map expects the function to return a list, table, range or stream, found ${
        typeName(v)
      }`,
      null,
      span,
    );
  }
  return new SeqSource(seq);
}

/** `flat_map(f)`: each result drained fully before the next outer item. */
export class FlatMapStage implements Source {
  private inner: Source | null = null;
  constructor(
    private readonly ip: Interp,
    private readonly src: Source,
    private readonly f: Value,
    private readonly bounded: boolean,
    private readonly span: Span | null,
  ) {}
  pull(): MaybePromise<Item> {
    for (;;) {
      if (this.inner !== null) {
        const y = this.inner.pull();
        if (y instanceof Promise) return y.then((v) => v === END ? this.nextInner() : v);
        if (y !== END) return y;
        this.inner = null;
      }
      const x = this.src.pull();
      if (x instanceof Promise) return x.then((v) => this.open(v));
      if (x === END) return END;
      const r = this.ip.callValue(this.f, [x]);
      if (r instanceof Promise) return r.then((v) => this.openInner(v));
      this.inner = innerSource(r, this.bounded, this.span);
    }
  }
  private nextInner(): MaybePromise<Item> {
    this.inner = null;
    return this.pull();
  }
  private open(x: Item): MaybePromise<Item> {
    if (x === END) return END;
    const r = this.ip.callValue(this.f, [x]);
    return r instanceof Promise ? r.then((v) => this.openInner(v)) : this.openInner(r);
  }
  private openInner(v: Value): MaybePromise<Item> {
    this.inner = innerSource(v, this.bounded, this.span);
    return this.pull();
  }
  close(): void {
    this.inner?.close();
    this.inner = null;
    this.src.close();
  }
}

/** `take(n)`: the first n items, then the upstream is released. */
export class TakeStage implements Source {
  private left: number;
  constructor(private readonly src: Source, n: number) {
    this.left = n;
  }
  pull(): MaybePromise<Item> {
    if (this.left <= 0) {
      this.src.close();
      return END;
    }
    this.left--;
    const x = this.src.pull();
    if (this.left === 0 && !(x instanceof Promise)) this.src.close();
    return x;
  }
  close(): void {
    this.left = 0;
    this.src.close();
  }
}

/** `skip(n)`: drop the first n items. */
export class SkipStage implements Source {
  constructor(private readonly src: Source, private left: number) {}
  pull(): MaybePromise<Item> {
    while (this.left > 0) {
      const x = this.src.pull();
      if (x instanceof Promise) return x.then((v) => this.skipped(v));
      if (x === END) return END;
      this.left--;
    }
    return this.src.pull();
  }
  private skipped(x: Item): MaybePromise<Item> {
    if (x === END) return END;
    this.left--;
    return this.pull();
  }
  close(): void {
    this.src.close();
  }
}

/** `take_until(pred)`: stops before the first item satisfying pred. */
export class TakeUntilPred implements Source {
  private done = false;
  constructor(
    private readonly ip: Interp,
    private readonly src: Source,
    private readonly f: Value,
  ) {}
  pull(): MaybePromise<Item> {
    if (this.done) return END;
    const x = this.src.pull();
    if (x instanceof Promise) return x.then(this.judge);
    return this.judge(x);
  }
  private readonly judge = (x: Item): MaybePromise<Item> => {
    if (x === END) return END;
    const c = this.ip.callValue(this.f, [x]);
    if (c instanceof Promise) return c.then((ok) => this.verdict(x, ok));
    return this.verdict(x, c);
  };
  private verdict(x: Value, ok: Value): Item {
    if (!asCondition(ok)) return x;
    this.done = true;
    this.src.close();
    return END;
  }
  close(): void {
    this.done = true;
    this.src.close();
  }
}

/** `dedupe()`: drop adjacent duplicates. */
export class DedupeStage implements Source {
  private has = false;
  private last: Value = null;
  constructor(private readonly src: Source) {}
  pull(): MaybePromise<Item> {
    for (;;) {
      const x = this.src.pull();
      if (x instanceof Promise) return x.then(this.judge);
      if (x === END) return END;
      if (!this.has || !valuesEqual(this.last, x)) return this.keep(x);
    }
  }
  private keep(x: Value): Value {
    this.has = true;
    this.last = x;
    return x;
  }
  private readonly judge = (x: Item): MaybePromise<Item> => {
    if (x === END) return END;
    return !this.has || !valuesEqual(this.last, x) ? this.keep(x) : this.pull();
  };
  close(): void {
    this.src.close();
  }
}

/** `distinct()`: drop every value seen before (memory grows with the distinct values). */
export class DistinctStage implements Source {
  private readonly seen = new EqIndex();
  private n = 0;
  constructor(private readonly src: Source) {}
  pull(): MaybePromise<Item> {
    for (;;) {
      const x = this.src.pull();
      if (x instanceof Promise) return x.then(this.judge);
      if (x === END) return END;
      if (this.fresh(x)) return x;
    }
  }
  private fresh(x: Value): boolean {
    if (this.seen.find(x) >= 0) return false;
    this.seen.add(x, this.n++);
    return true;
  }
  private readonly judge = (x: Item): MaybePromise<Item> => {
    if (x === END) return END;
    return this.fresh(x) ? x : this.pull();
  };
  close(): void {
    this.src.close();
  }
}

/** `enumerate()`: `[i, x]` pairs. */
export class EnumerateStage implements Source {
  private i = 0;
  constructor(private readonly src: Source) {}
  pull(): MaybePromise<Item> {
    const x = this.src.pull();
    if (x instanceof Promise) return x.then(this.pair);
    return this.pair(x);
  }
  private readonly pair = (x: Item): Item => x === END ? END : new ListV([this.i++, x]);
  close(): void {
    this.src.close();
  }
}

/** `window(n)`: sliding windows of n items (`[1,2,3]` → `[1,2]`, `[2,3]`). */
export class SlidingWindow implements Source {
  private buf: Value[] = [];
  constructor(private readonly src: Source, private readonly n: number) {}
  pull(): MaybePromise<Item> {
    for (;;) {
      const x = this.src.pull();
      if (x instanceof Promise) return x.then(this.added);
      if (x === END) return END;
      const w = this.add(x);
      if (w !== undefined) return w;
    }
  }
  /** Add an item; the full window, or undefined while it is still filling. */
  private add(x: Value): Value | undefined {
    this.buf.push(x);
    if (this.buf.length > this.n) this.buf.shift();
    return this.buf.length === this.n ? new ListV(this.buf.slice()) : undefined;
  }
  private readonly added = (x: Item): MaybePromise<Item> =>
    x === END ? END : this.add(x) ?? this.pull();
  close(): void {
    this.src.close();
  }
}

/** `zip(other)`: pairs until either side ends. */
export class ZipStage implements Source {
  private done = false;
  constructor(private readonly a: Source, private readonly b: Source) {}
  pull(): MaybePromise<Item> {
    if (this.done) return END;
    const x = this.a.pull();
    if (x instanceof Promise) return x.then(this.second);
    return this.second(x);
  }
  private readonly second = (x: Item): MaybePromise<Item> => {
    if (x === END) return this.finish();
    const y = this.b.pull();
    if (y instanceof Promise) return y.then((v) => v === END ? this.finish() : new ListV([x, v]));
    return y === END ? this.finish() : new ListV([x, y]);
  };
  private finish(): Item {
    this.close();
    return END;
  }
  close(): void {
    this.done = true;
    this.a.close();
    this.b.close();
  }
}
