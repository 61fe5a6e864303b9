/**
 * Conversions at the language's boundaries: conditions (§4.3), word binding — "site 2" — where
 * a command word meets a declared parameter type (§6.2), argv conversion for external
 * processes (§6.3), stdin feed bytes (§19.6), and strict `str::parse`-style number parsing
 * (§15.3).
 */

import type { TypeRef } from "../syntax/ast.ts";
import { fail } from "./errors.ts";
import { parseDateTime, parseTimeOfDay } from "./datetime.ts";
import { formatFloat, quoteStr } from "./render.ts";
import { parseDurationWord, parseSizeWord } from "./units.ts";
import {
  DurationV,
  FloatV,
  GlobV,
  I64_MAX,
  I64_MIN,
  type Int,
  ListV,
  mkInt,
  PathV,
  SizeV,
  typeName,
  type Value,
} from "./types.ts";

// ---------------------------------------------------------------------------------------------
// Conditions

/**
 * A value used as a condition (§4.3): bool → itself, outcome → `.ok`; anything else →
 * type_error «expected bool in condition, found T» with the no-truthiness hint.
 */
export function asCondition(v: Value): boolean {
  if (typeof v === "boolean") return v;
  if (v !== null && typeof v === "object" && v.t === "outcome") return v.ok;
  throw fail(
    "type_error",
    `expected bool in condition, found ${typeName(v)}`,
    "shoal has no truthiness — try .is_empty(), .is_some(), or != null",
  );
}

// ---------------------------------------------------------------------------------------------
// Strict number parsing (Rust `str::parse`)

const INT_TEXT = /^[+-]?[0-9]+$/;

/** Parse an i64 like Rust: optional sign, ASCII digits only, in range. Null otherwise. */
export function parseIntStrict(text: string): Int | null {
  if (!INT_TEXT.test(text)) return null;
  if (text.length <= 15) return Number(text) + 0; // ≤ 15 digits: always a safe integer
  const n = BigInt(text);
  return n < I64_MIN || n > I64_MAX ? null : mkInt(n);
}

const FLOAT_TEXT = /^[+-]?(?:inf|infinity|nan|(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:e[+-]?[0-9]+)?)$/i;

/**
 * Parse an f64 like Rust: `3.5`, `.5`, `5.`, `1e5`, `-2E-3`, `inf`, `infinity`, `NaN` (case-
 * insensitive words, optional sign), no whitespace, underscores or hex. Null otherwise.
 */
export function parseFloatStrict(text: string): number | null {
  if (!FLOAT_TEXT.test(text)) return null;
  const neg = text[0] === "-";
  const body = text[0] === "-" || text[0] === "+" ? text.slice(1) : text;
  const lower = body.toLowerCase();
  if (lower === "nan") return NaN;
  if (lower === "inf" || lower === "infinity") return neg ? -Infinity : Infinity;
  return Number(text);
}

// ---------------------------------------------------------------------------------------------
// Word binding (site 2)

function expected(type: string, word: string): Error {
  return fail("arg_error", `expected ${type}, found ${quoteStr(word)}`);
}

/**
 * Coerce a command word to a declared parameter type (§6.2). Non-string values and unknown or
 * absent types pass through unchanged; `T?` is treated as `T`. `cwd` is the origin recorded on
 * a `glob` (the session cwd at binding time). Failure → arg_error «expected T, found "word"».
 */
export function coerceWord(v: Value, type: TypeRef | undefined, cwd = ""): Value {
  if (typeof v !== "string" || type === undefined) return v;
  switch (type.name) {
    case "int": {
      const n = parseIntStrict(v);
      if (n === null) throw expected("int", v);
      return n;
    }
    case "float": {
      const f = parseFloatStrict(v);
      if (f === null) throw expected("float", v);
      return new FloatV(f);
    }
    case "size": {
      const b = parseSizeWord(v);
      if (b === null) throw expected("size", v);
      return new SizeV(b);
    }
    case "duration": {
      const ns = parseDurationWord(v);
      if (ns === null) throw expected("duration", v);
      return new DurationV(ns);
    }
    case "time": {
      const t = parseTimeOfDay(v);
      if (t === null) throw expected("time", v);
      return t;
    }
    case "datetime":
      try {
        return parseDateTime(v);
      } catch {
        throw expected("datetime", v);
      }
    case "bool":
      if (v === "true") return true;
      if (v === "false") return false;
      throw expected("bool", v);
    case "path":
      return new PathV(v);
    case "glob":
      return new GlobV(v, cwd);
    default:
      return v;
  }
}

/** The element type `T` of a `list<T>` annotation (optional or not), else undefined. */
export function listElementType(type: TypeRef | undefined): TypeRef | undefined {
  return type !== undefined && type.name === "list" ? type.args[0] : undefined;
}

/**
 * Coerce every element of a list argument to `elem` (§6.2, `list<T>` parameters); non-list
 * values pass through. Returns the same list when nothing changed.
 */
export function coerceListElements(v: Value, elem: TypeRef | undefined, cwd = ""): Value {
  if (!(v instanceof ListV) || elem === undefined) return v;
  let out: Value[] | null = null;
  for (let i = 0; i < v.items.length; i++) {
    const x = v.items[i];
    const y = coerceWord(x, elem, cwd);
    if (y !== x && out === null) out = v.items.slice(0, i);
    if (out !== null) out.push(y);
  }
  return out === null ? v : new ListV(out);
}

// ---------------------------------------------------------------------------------------------
// argv

/**
 * A value as one external-process argument (§6.3): str itself; path its text; int decimal;
 * float Rust-style; size its byte count; duration its nanoseconds; bool `true`/`false`.
 * secret → type_error «secret cannot be placed in argv»; others → «T cannot be passed as argv».
 */
export function toArgv(v: Value): string | Uint8Array {
  switch (typeof v) {
    case "string":
      return v;
    case "number":
    case "bigint":
      return String(v);
    case "boolean":
      return v ? "true" : "false";
  }
  if (v !== null) {
    switch (v.t) {
      case "path":
        return v.path;
      case "float":
        return formatFloat(v.v);
      case "size":
        return String(v.bytes);
      case "duration":
        return String(v.ns);
      case "secret":
        throw fail(
          "type_error",
          "secret cannot be placed in argv",
          "pass secrets through an explicit channel such as an http header or `with env:`",
        );
    }
  }
  throw fail(
    "type_error",
    `${typeName(v)} cannot be passed as argv`,
    'convert it explicitly first, e.g. with interpolation "{x}" or .json()',
  );
}
