/**
 * Operators on values (language spec §5): the arithmetic matrix (§5.2, the only implicit
 * coercion site), unary minus, membership (§5.3) and int ranges (§5.4).
 *
 * ints are i64 and checked: the hot path computes with JS numbers while the result stays a safe
 * integer and falls back to BigInt (range-checked against i64) only when it does not.
 */

import { fail } from "./errors.ts";
import { valuesEqual } from "./compare.ts";
import { addDuration, diffDateTimes } from "./datetime.ts";
import {
  DateTimeV,
  DurationV,
  FloatV,
  I64_MAX,
  I64_MIN,
  type Int,
  intToBig,
  isInt,
  ListV,
  mkInt,
  RangeV,
  SizeV,
  typeName,
  U64_MAX,
  type Value,
} from "./types.ts";

/** A binary arithmetic operator. */
export type ArithOp = "+" | "-" | "*" | "/" | "%";

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const TWO_63 = 9223372036854775808; // 2^63 as a float (exact)
const TWO_64 = 18446744073709551616; // 2^64 as a float (exact)

function intOverflow(): Error {
  return fail("overflow", "integer overflow");
}

function divZero(op: ArithOp): Error {
  return fail("div_zero", op === "%" ? "remainder by zero" : "division by zero");
}

function sizeOverflow(): Error {
  return fail("overflow", "size overflow");
}

function sizeNegative(): Error {
  return fail(
    "type_error",
    "size cannot go negative",
    "sizes are unsigned — compare them first (a > b)",
  );
}

function durationOverflow(): Error {
  return fail("overflow", "duration overflow");
}

function mismatch(op: ArithOp, a: Value, b: Value): Error {
  return fail("type_error", `cannot apply \`${op}\` to ${typeName(a)} and ${typeName(b)}`);
}

/** i64 arithmetic on bigints, checked. */
function intBig(op: ArithOp, x: bigint, y: bigint): Int {
  let r: bigint;
  switch (op) {
    case "+":
      r = x + y;
      break;
    case "-":
      r = x - y;
      break;
    case "*":
      r = x * y;
      break;
    case "/":
      if (y === 0n) throw divZero(op);
      r = x / y; // BigInt division truncates toward zero
      break;
    case "%":
      if (y === 0n) throw divZero(op);
      if (x === I64_MIN && y === -1n) throw intOverflow();
      r = x % y; // sign of the dividend
      break;
  }
  if (r < I64_MIN || r > I64_MAX) throw intOverflow();
  return mkInt(r);
}

/** int ⊕ int where both are safe-integer numbers and `+ - *` did not stay safe, or `/ %`. */
function intNum(op: ArithOp, a: number, b: number): Int {
  switch (op) {
    case "/":
      if (b === 0) throw divZero(op);
      // Exact: a % b is exact and a - a % b is a multiple of b no larger than |a|.
      return (a - (a % b)) / b + 0;
    case "%":
      if (b === 0) throw divZero(op);
      return (a % b) + 0;
    default:
      return intBig(op, BigInt(a), BigInt(b));
  }
}

function floatOp(op: ArithOp, x: number, y: number): number {
  switch (op) {
    case "+":
      return x + y;
    case "-":
      return x - y;
    case "*":
      return x * y;
    case "/":
      return x / y;
    case "%":
      return x % y; // IEEE fmod, sign of the dividend (as Rust's `%`)
  }
}

/** Round half away from zero (Rust `f64::round`). */
function roundHalfAway(x: number): number {
  return x < 0 ? -Math.round(-x) : Math.round(x);
}

function sizeTimesInt(bytes: bigint, n: bigint): SizeV {
  if (n < 0n) throw sizeNegative();
  const r = bytes * n;
  if (r > U64_MAX) throw sizeOverflow();
  return new SizeV(r);
}

function sizeTimesFloat(bytes: bigint, f: number): SizeV {
  const p = roundHalfAway(Number(bytes) * f);
  if (p !== p) throw sizeOverflow();
  if (p < 0) throw sizeNegative();
  if (p >= TWO_64) throw sizeOverflow();
  return new SizeV(BigInt(p));
}

function checkedNs(ns: bigint): DurationV {
  if (ns < I64_MIN || ns > I64_MAX) throw durationOverflow();
  return new DurationV(ns);
}

function durationTimesFloat(ns: bigint, f: number): DurationV {
  const p = roundHalfAway(Number(ns) * f);
  if (!(p >= -TWO_63 && p < TWO_63)) throw durationOverflow();
  return new DurationV(BigInt(p));
}

function sizeArith(op: ArithOp, bytes: bigint, b: Value, a: Value): Value {
  if (b instanceof SizeV) {
    switch (op) {
      case "+": {
        const r = bytes + b.bytes;
        if (r > U64_MAX) throw sizeOverflow();
        return new SizeV(r);
      }
      case "-":
        if (b.bytes > bytes) throw sizeNegative();
        return new SizeV(bytes - b.bytes);
      case "/":
        if (b.bytes === 0n) throw divZero(op);
        return new FloatV(Number(bytes) / Number(b.bytes));
    }
  } else if (isInt(b)) {
    const n = intToBig(b);
    if (op === "*") return sizeTimesInt(bytes, n);
    if (op === "/") {
      if (n === 0n) throw divZero(op);
      if (n < 0n) throw sizeNegative();
      return new SizeV(bytes / n);
    }
  } else if (b instanceof FloatV && op === "*") {
    return sizeTimesFloat(bytes, b.v);
  }
  throw mismatch(op, a, b);
}

function durationArith(op: ArithOp, ns: bigint, b: Value, a: Value): Value {
  if (b instanceof DurationV) {
    switch (op) {
      case "+":
        return checkedNs(ns + b.ns);
      case "-":
        return checkedNs(ns - b.ns);
      case "/":
        if (b.ns === 0n) throw divZero(op);
        return new FloatV(Number(ns) / Number(b.ns));
    }
  } else if (isInt(b)) {
    const n = intToBig(b);
    if (op === "*") return checkedNs(ns * n);
    if (op === "/") {
      if (n === 0n) throw divZero(op);
      return checkedNs(ns / n);
    }
  } else if (b instanceof FloatV && op === "*") {
    return durationTimesFloat(ns, b.v);
  } else if (b instanceof DateTimeV && op === "+") {
    return addDuration(b, ns);
  }
  throw mismatch(op, a, b);
}

/**
 * `a op b` per the arithmetic matrix (§5.2). Errors: `overflow` (checked int/size/duration/
 * datetime), `div_zero` («division by zero» / «remainder by zero»), `type_error` («size cannot
 * go negative», «cannot apply `+` to A and B»).
 */
export function arith(op: ArithOp, a: Value, b: Value): Value {
  // Hot path, kept small so engines inline it: safe-int `+ - *` whose result stays safe.
  if (typeof a === "number" && typeof b === "number") {
    const r = op === "+" ? a + b : op === "-" ? a - b : op === "*" ? a * b + 0 : NaN;
    if (r <= MAX_SAFE && r >= -MAX_SAFE) return r;
    return intNum(op, a, b);
  }
  return arithSlow(op, a, b);
}

/** Everything but number ⊕ number. */
function arithSlow(op: ArithOp, a: Value, b: Value): Value {
  if (isInt(a)) {
    if (isInt(b)) return intBig(op, intToBig(a), intToBig(b));
    if (b instanceof FloatV) return new FloatV(floatOp(op, Number(a), b.v));
    if (op === "*") {
      if (b instanceof SizeV) return sizeTimesInt(b.bytes, intToBig(a));
      if (b instanceof DurationV) return checkedNs(b.ns * intToBig(a));
    }
    throw mismatch(op, a, b);
  }
  if (typeof a === "string") {
    if (typeof b === "string" && op === "+") return a + b;
    throw mismatch(op, a, b);
  }
  if (a === null || typeof a !== "object") throw mismatch(op, a, b);
  switch (a.t) {
    case "float":
      if (b instanceof FloatV) return new FloatV(floatOp(op, a.v, b.v));
      if (isInt(b)) return new FloatV(floatOp(op, a.v, Number(b)));
      if (op === "*") {
        if (b instanceof SizeV) return sizeTimesFloat(b.bytes, a.v);
        if (b instanceof DurationV) return durationTimesFloat(b.ns, a.v);
      }
      break;
    case "list":
      if (b instanceof ListV && op === "+") return new ListV(a.items.concat(b.items));
      break;
    case "size":
      return sizeArith(op, a.bytes, b, a);
    case "duration":
      return durationArith(op, a.ns, b, a);
    case "datetime":
      if (b instanceof DurationV) {
        if (op === "+") return addDuration(a, b.ns);
        if (op === "-") return addDuration(a, -b.ns);
      } else if (b instanceof DateTimeV && op === "-") {
        return new DurationV(diffDateTimes(a, b));
      }
      break;
  }
  throw mismatch(op, a, b);
}

/**
 * Unary minus (§5.1): int (checked → overflow «integer negation overflow»), float, duration
 * (checked). Anything else → type_error «cannot apply unary operator to T».
 */
export function negate(v: Value): Value {
  if (typeof v === "number") return v === 0 ? 0 : -v;
  if (typeof v === "bigint") {
    const r = -v;
    if (r > I64_MAX) throw fail("overflow", "integer negation overflow");
    return mkInt(r);
  }
  if (v instanceof FloatV) return new FloatV(-v.v);
  if (v instanceof DurationV) {
    if (v.ns === I64_MIN) throw durationOverflow();
    return new DurationV(-v.ns);
  }
  throw fail("type_error", `cannot apply unary operator to ${typeName(v)}`);
}

// ---------------------------------------------------------------------------------------------
// Membership and ranges

/**
 * `needle in haystack` (§5.3): list/table — some element `==`; str in str — substring; str in
 * record — key exists; int in range — bounds. Else type_error «cannot test X membership in Y».
 */
export function membership(needle: Value, haystack: Value): boolean {
  if (typeof haystack === "string") {
    if (typeof needle === "string") return haystack.includes(needle);
  } else if (haystack !== null && typeof haystack === "object") {
    switch (haystack.t) {
      case "list":
        return haystack.items.some((x) => valuesEqual(needle, x));
      case "table":
        return haystack.rows.some((x) => valuesEqual(needle, x));
      case "record":
        if (typeof needle === "string") return haystack.fields.has(needle);
        break;
      case "range":
        if (isInt(needle)) return rangeContains(haystack, needle);
        break;
    }
  }
  throw fail(
    "type_error",
    `cannot test ${typeName(needle)} membership in ${typeName(haystack)}`,
  );
}

/** Build `start..end` / `start..=end`; both bounds must be ints («range bounds must be int»). */
export function makeRange(start: Value, end: Value, inclusive: boolean): RangeV {
  if (!isInt(start) || !isInt(end)) {
    throw fail(
      "type_error",
      "range bounds must be int",
      `found ${typeName(start)}..${typeName(end)}`,
    );
  }
  return new RangeV(start, end, inclusive);
}

/** Number of ints in a range (reversed or empty ranges have length 0). */
export function rangeLen(r: RangeV): Int {
  if (typeof r.start === "number" && typeof r.end === "number") {
    const n = r.end - r.start + (r.inclusive ? 1 : 0);
    if (Number.isSafeInteger(n)) return n > 0 ? n : 0;
  }
  const n = intToBig(r.end) - intToBig(r.start) + (r.inclusive ? 1n : 0n);
  return n > 0n ? mkInt(n) : 0;
}

/** `n in r`: `start ≤ n < end` (`≤ end` when inclusive). */
export function rangeContains(r: RangeV, n: Int): boolean {
  return n >= r.start && (r.inclusive ? n <= r.end : n < r.end);
}

/** The `i`-th int of a range (0-based; the caller checks `i < rangeLen(r)`). */
export function rangeAt(r: RangeV, i: number): Int {
  if (typeof r.start === "number") {
    const v = r.start + i;
    if (Number.isSafeInteger(v)) return v;
  }
  return mkInt(intToBig(r.start) + BigInt(i));
}

/** The ints of a range, in order. */
export function* rangeValues(r: RangeV): Generator<Int> {
  if (typeof r.start === "number" && typeof r.end === "number") {
    const end = r.inclusive ? r.end : r.end - 1;
    for (let i = r.start; i <= end; i++) yield i;
    return;
  }
  const end = intToBig(r.end) - (r.inclusive ? 0n : 1n);
  for (let i = intToBig(r.start); i <= end; i++) yield mkInt(i);
}

/** The first `max` ints of a range as an array (the whole range by default). */
export function rangeToArray(r: RangeV, max = Infinity): Int[] {
  const len = rangeLen(r);
  const n = Math.min(typeof len === "number" ? len : Infinity, max);
  if (n > 0xffffffff) throw fail("overflow", "range too large to materialize");
  const out: Int[] = new Array(n);
  for (let i = 0; i < n; i++) out[i] = rangeAt(r, i);
  return out;
}
