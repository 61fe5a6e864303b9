/**
 * Maybe-async helpers.
 *
 * The evaluator runs synchronously while nothing needs to wait (pure arithmetic, calls,
 * loops — the hot paths) and switches to promises only when something does (a process, a
 * timer, a stream). Functions that may wait return `MaybePromise<T>`; these helpers keep the
 * synchronous path free of microtask hops.
 */

/** A value now, or later. */
export type MaybePromise<T> = T | Promise<T>;

/** True when `x` is a promise (thenable created by this runtime). */
export function isPromise<T>(x: MaybePromise<T>): x is Promise<T> {
  return x instanceof Promise;
}

/** Apply `f` to `x`, synchronously when `x` is already available. */
export function then<T, U>(x: MaybePromise<T>, f: (v: T) => MaybePromise<U>): MaybePromise<U> {
  return x instanceof Promise ? x.then(f) : f(x);
}

/** Map over items in order; stays synchronous until some `f` call returns a promise. */
export function mapMaybe<T, U>(
  items: readonly T[],
  f: (item: T, index: number) => MaybePromise<U>,
): MaybePromise<U[]> {
  const out: U[] = new Array(items.length);
  for (let i = 0; i < items.length; i++) {
    const r = f(items[i], i);
    if (r instanceof Promise) return finishMapAsync(items, f, out, i, r);
    out[i] = r;
  }
  return out;
}

async function finishMapAsync<T, U>(
  items: readonly T[],
  f: (item: T, index: number) => MaybePromise<U>,
  out: U[],
  start: number,
  pending: Promise<U>,
): Promise<U[]> {
  out[start] = await pending;
  for (let i = start + 1; i < items.length; i++) out[i] = await f(items[i], i);
  return out;
}

/**
 * Run `step(i)` for i = 0, 1, … while it returns `true` (`false` stops early); stays
 * synchronous until a step returns a promise. Returns the index where it stopped.
 */
export function loopMaybe(
  count: number,
  step: (i: number) => MaybePromise<boolean>,
): MaybePromise<number> {
  for (let i = 0; i < count; i++) {
    const r = step(i);
    if (r instanceof Promise) return finishLoopAsync(count, step, i, r);
    if (!r) return i;
  }
  return count;
}

async function finishLoopAsync(
  count: number,
  step: (i: number) => MaybePromise<boolean>,
  at: number,
  pending: Promise<boolean>,
): Promise<number> {
  if (!(await pending)) return at;
  for (let i = at + 1; i < count; i++) if (!(await step(i))) return i;
  return count;
}
