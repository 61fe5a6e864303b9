/**
 * Equality and ordering (language spec §4.1, §4.2).
 *
 * Equality is total: values of different kinds are simply unequal (`5 == 5kb` is false), with
 * one exception — comparing a stream with a non-stream is a type_error. Ordering is defined only
 * for like kinds (plus int/float promotion) and raises «cannot compare X with Y» otherwise.
 */

import { fail } from "./errors.ts";
import {
  type BytesV,
  type ErrorV,
  type RecordV,
  type TimeV,
  typeName,
  type Value,
} from "./types.ts";

function streamMismatch(): Error {
  return fail(
    "type_error",
    "cannot compare a stream with a value",
    "a stream is a single-use source — .collect() it first to compare its items",
  );
}

/** Structural equality (§4.1). Throws type_error only for a stream compared with a non-stream. */
export function valuesEqual(a: Value, b: Value): boolean {
  // Hot paths: unboxed scalars of the same kind.
  if (typeof a !== "object" || a === null) {
    if (typeof b === "object" && b !== null) {
      if (b.t === "stream") throw streamMismatch();
      if (b.t === "float" && (typeof a === "number" || typeof a === "bigint")) {
        return Number(a) === b.v;
      }
      if (b.t === "path" && typeof a === "string") return a === b.path;
      return false;
    }
    return a === b;
  }
  if (b === null || typeof b !== "object") {
    if (a.t === "stream") throw streamMismatch();
    if (a.t === "float" && (typeof b === "number" || typeof b === "bigint")) {
      return a.v === Number(b);
    }
    if (a.t === "path" && typeof b === "string") return a.path === b;
    return false;
  }
  if (a.t === "stream" || b.t === "stream") {
    if (a.t !== b.t) throw streamMismatch();
    return a === b;
  }
  switch (a.t) {
    case "float":
      return b.t === "float" && a.v === b.v;
    case "size":
      return b.t === "size" && a.bytes === b.bytes;
    case "duration":
      return b.t === "duration" && a.ns === b.ns;
    case "path":
      return b.t === "path" && pathsEqual(a.path, b.path);
    case "glob":
      return b.t === "glob" && a.pattern === b.pattern;
    case "regex":
      return b.t === "regex" && a.source === b.source;
    case "datetime":
      return b.t === "datetime" && a.ns === b.ns;
    case "time":
      return b.t === "time" && compareTime(a, b) === 0;
    case "bytes":
      return b.t === "bytes" && bytesEqual(a, b);
    case "list":
      if (b.t === "list") return seqEqual(a.items, b.items);
      return b.t === "table" && seqEqual(a.items, b.rows);
    case "table":
      if (b.t === "table") return seqEqual(a.rows, b.rows);
      return b.t === "list" && seqEqual(a.rows, b.items);
    case "record":
      return b.t === "record" && recordsEqual(a, b);
    case "range":
      return b.t === "range" && a.inclusive === b.inclusive && a.start === b.start &&
        a.end === b.end;
    case "error":
      return b.t === "error" && errorsEqual(a, b);
    case "command":
      return b.t === "command" && a.name === b.name && plainEqual(a.cmd, b.cmd);
    case "secret":
      return b.t === "secret" && a.name === b.name && a.value === b.value;
    default: // outcome, task, closure: identity
      return a === b;
  }
}

function seqEqual(xs: readonly Value[], ys: readonly Value[]): boolean {
  if (xs.length !== ys.length) return false;
  for (let i = 0; i < xs.length; i++) if (!valuesEqual(xs[i], ys[i])) return false;
  return true;
}

function recordsEqual(a: RecordV, b: RecordV): boolean {
  if (a.fields.size !== b.fields.size) return false;
  for (const [k, v] of a.fields) {
    const w = b.fields.get(k);
    if (w === undefined || !valuesEqual(v, w)) return false;
  }
  return true;
}

function bytesEqual(a: BytesV, b: BytesV): boolean {
  if (a.ref !== null && b.ref !== null && a.ref === b.ref) return true;
  const x = a.data, y = b.data;
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

function errorsEqual(a: ErrorV, b: ErrorV): boolean {
  return a.code === b.code && a.msg === b.msg && a.hint === b.hint && a.stderr === b.stderr &&
    a.status === b.status;
}

/** Deep equality of plain AST data, ignoring source positions. */
function plainEqual(x: unknown, y: unknown): boolean {
  if (x === y) return true;
  if (typeof x !== "object" || typeof y !== "object" || x === null || y === null) return false;
  if (Array.isArray(x) !== Array.isArray(y)) return false;
  const xo = x as Record<string, unknown>, yo = y as Record<string, unknown>;
  const keys = Object.keys(xo).filter((k) => k !== "span" && k !== "headSpan");
  if (keys.length !== Object.keys(yo).filter((k) => k !== "span" && k !== "headSpan").length) {
    return false;
  }
  return keys.every((k) => plainEqual(xo[k], yo[k]));
}

// ---------------------------------------------------------------------------------------------
// Paths compare component-wise (`a//b` == `a/b/`, and `a/b` < `a.b`), like Rust's `Path`.

// Component kinds, in Rust's `Component` order.
const ROOT = 0, CUR = 1, PARENT = 2, NORMAL = 3;

function pathComponents(p: string): [number, string][] {
  const out: [number, string][] = [];
  if (p.startsWith("/")) out.push([ROOT, ""]);
  const parts = p.split("/");
  for (let i = 0; i < parts.length; i++) {
    const s = parts[i];
    if (s === "") continue;
    if (s === ".") {
      if (i === 0) out.push([CUR, ""]);
      continue;
    }
    out.push(s === ".." ? [PARENT, ""] : [NORMAL, s]);
  }
  return out;
}

function pathsEqual(a: string, b: string): boolean {
  return a === b || comparePaths(a, b) === 0;
}

/** Component-wise path ordering. */
export function comparePaths(a: string, b: string): number {
  if (a === b) return 0;
  const x = pathComponents(a), y = pathComponents(b);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    if (x[i][0] !== y[i][0]) return x[i][0] - y[i][0];
    const c = compareStrings(x[i][1], y[i][1]);
    if (c !== 0) return c;
  }
  return x.length - y.length;
}

// ---------------------------------------------------------------------------------------------
// Ordering

/**
 * Byte-wise (UTF-8) lexicographic string order, which is code point order. JS `<` compares
 * UTF-16 units, which misorders astral characters against U+E000–U+FFFF; fix up at the first
 * difference.
 */
export function compareStrings(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i), y = b.charCodeAt(i);
    if (x !== y) {
      if (x >= 0xd800 && y >= 0xd800) {
        x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
        y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
      }
      return x - y;
    }
  }
  return a.length - b.length;
}

function compareTime(a: TimeV, b: TimeV): number {
  return a.h - b.h || a.m - b.m || a.s - b.s || a.nanos - b.nanos;
}

function sign(x: number | bigint): number {
  return x < 0 ? -1 : x > 0 ? 1 : 0;
}

function cannotCompare(a: Value, b: Value, hint: string | null = null): Error {
  return fail("type_error", `cannot compare ${typeName(a)} with ${typeName(b)}`, hint);
}

function compareNumbers(x: number, y: number, a: Value, b: Value): number {
  if (x !== x || y !== y) throw cannotCompare(a, b, "NaN has no ordering");
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * Ordering (§4.2): `<0`, `0` or `>0`. Comparable pairs: int/int, float/float, int/float
 * (promoted; NaN → type_error), str/str (code point order), path/path, size, duration,
 * datetime (instant), time, bool (`false < true`). Anything else → type_error
 * «cannot compare X with Y».
 */
export function compareValues(a: Value, b: Value): number {
  switch (typeof a) {
    case "number":
      if (typeof b === "number") return a < b ? -1 : a > b ? 1 : 0;
      if (typeof b === "bigint") return a < b ? -1 : 1; // normalised: a bigint is never equal
      if (typeof b === "object" && b !== null && b.t === "float") {
        return compareNumbers(a, b.v, a, b);
      }
      throw cannotCompare(a, b);
    case "bigint":
      if (typeof b === "number" || typeof b === "bigint") return sign(a - BigInt(b));
      if (typeof b === "object" && b !== null && b.t === "float") {
        return compareNumbers(Number(a), b.v, a, b);
      }
      throw cannotCompare(a, b);
    case "string":
      if (typeof b === "string") return sign(compareStrings(a, b));
      throw cannotCompare(a, b);
    case "boolean":
      if (typeof b === "boolean") return Number(a) - Number(b);
      throw cannotCompare(a, b);
  }
  if (a === null || b === null || typeof b !== "object") {
    if (a !== null && a.t === "float" && (typeof b === "number" || typeof b === "bigint")) {
      return compareNumbers(a.v, Number(b), a, b);
    }
    throw cannotCompare(a, b);
  }
  switch (a.t) {
    case "float":
      if (b.t === "float") return compareNumbers(a.v, b.v, a, b);
      break;
    case "size":
      if (b.t === "size") return sign(a.bytes - b.bytes);
      break;
    case "duration":
      if (b.t === "duration") return sign(a.ns - b.ns);
      break;
    case "datetime":
      if (b.t === "datetime") return sign(a.ns - b.ns);
      break;
    case "time":
      if (b.t === "time") return sign(compareTime(a, b));
      break;
    case "path":
      if (b.t === "path") return sign(comparePaths(a.path, b.path));
      break;
  }
  throw cannotCompare(a, b);
}
