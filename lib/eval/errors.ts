/**
 * Evaluator error helpers: did-you-mean suggestions (language §15, §9.2) and the mapping of
 * stray JS exceptions onto language errors.
 *
 * @module
 */

import type { Span } from "../syntax/ast.ts";
import { ErrorV } from "../value/types.ts";
import { fail, ShoalError } from "../value/errors.ts";

/** Levenshtein distance (two-row dynamic programme; names are short). */
export function levenshtein(a: string, b: string): number {
  if (a === b) return 0;
  if (a.length === 0) return b.length;
  if (b.length === 0) return a.length;
  let prev = new Array<number>(b.length + 1);
  let cur = new Array<number>(b.length + 1);
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
    }
    [prev, cur] = [cur, prev];
  }
  return prev[b.length];
}

/**
 * The nearest candidate within the did-you-mean budget: distance ≤ 1 for names shorter than 5
 * characters, ≤ 2 otherwise, and strictly less than the name's length. Ties keep the first
 * candidate in iteration order.
 */
export function nearest(name: string, candidates: Iterable<string>): string | null {
  const budget = name.length < 5 ? 1 : 2;
  let best: string | null = null;
  let bestD = Infinity;
  for (const c of candidates) {
    if (c === name) continue;
    const d = levenshtein(name, c);
    if (d <= budget && d < name.length && d < bestD) {
      best = c;
      bestD = d;
    }
  }
  return best;
}

/** True for the JS engine's stack overflow. */
export function isStackOverflow(e: unknown): boolean {
  return e instanceof RangeError && /call stack/i.test(e.message);
}

/** The `recursion_limit` error (message is API). */
export function recursionLimit(span: Span | null = null): ShoalError {
  return fail(
    "recursion_limit",
    "recursion limit exceeded (10000 nested calls)",
    null,
    span,
  );
}

/**
 * Turn anything thrown during evaluation into an `ErrorV`: language errors as they are, a
 * JS stack overflow as `recursion_limit`, anything else as `internal`.
 */
export function toErrorValue(e: unknown, span: Span | null = null): ErrorV {
  if (e instanceof ShoalError) {
    const err = e.err;
    if (err.span === null && span !== null) {
      return new ErrorV(err.code, err.msg, err.hint, err.stderr, err.status, span);
    }
    return err;
  }
  if (isStackOverflow(e)) return recursionLimit(span).err;
  const msg = e instanceof Error ? e.message : String(e);
  return new ErrorV("internal", `internal error: ${msg}`, null, null, null, span);
}

/** Re-raise `e` as a `ShoalError` (see `toErrorValue`). */
export function asShoalError(e: unknown, span: Span | null = null): ShoalError {
  if (e instanceof ShoalError && (e.err.span !== null || span === null)) return e;
  return new ShoalError(toErrorValue(e, span));
}

/** Attach `span` to a language error that has none (first span wins: the innermost site). */
export function withSpan(e: unknown, span: Span): unknown {
  if (e instanceof ShoalError && e.err.span === null) {
    const err = e.err;
    return new ShoalError(new ErrorV(err.code, err.msg, err.hint, err.stderr, err.status, span));
  }
  return e;
}
