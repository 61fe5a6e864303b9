/**
 * Conversions at the language's boundaries: conditions (§4.3), word binding — "site 2" — where
 * a command word meets a declared parameter type (§6.2), argv conversion for external
 * processes (§6.3), stdin feed bytes (§19.6), and strict `str::parse`-style number parsing
 * (§15.3).
 */

import type { TypeRef } from "../syntax/ast.ts";
import { fail } from "./errors.ts";
import { parseDateTime, parseTimeOfDay } from "./datetime.ts";
import { formatFloat, quoteStr, renderInline } from "./render.ts";
import { stringifyValue, tryParseJson } from "./json.ts";
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
  type OutcomeV,
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

// ---------------------------------------------------------------------------------------------
// Feed bytes (stdin serialization)

const ENC = new TextEncoder();
const LOSSY = new TextDecoder("utf-8", { ignoreBOM: true });

/**
 * An outcome's semantic payload without the ok check (§10.2): the builtin/adapter value when
 * there is one, else stdout decoded lossily with one trailing newline stripped, converted from
 * JSON when its first non-space character is `{` or `[` and it parses.
 */
export function outcomePayload(o: OutcomeV): Value {
  if (o.parsed !== undefined) return o.parsed;
  let text = LOSSY.decode(o.stdout);
  if (text.endsWith("\n")) text = text.slice(0, -1);
  const first = text.trimStart()[0];
  if (first === "{" || first === "[") {
    const j = tryParseJson(text);
    if (j !== undefined) return j;
  }
  return text;
}

function cannotFeed(code: string, what: string, hint: string | null = null): Error {
  return fail(code, `cannot feed ${what} to a command's stdin`, hint);
}

/**
 * The bytes a value puts on a command's stdin (§19.6): str → UTF-8 (no newline added); bytes →
 * raw; scalars → their inline render; a list of only strs → each + `\n`; other lists, records,
 * tables and ranges → compact JSON; an outcome → its raw stdout when its payload is a str, else
 * the feed bytes of the payload. path/stream/null/command → type_error; secret, task, closure,
 * error, glob and regex → feed_error.
 */
export function feedBytes(v: Value): Uint8Array {
  switch (typeof v) {
    case "string":
      return ENC.encode(v);
    case "number":
    case "bigint":
    case "boolean":
      return ENC.encode(String(v));
  }
  if (v === null) throw cannotFeed("type_error", "null", "feed a str, bytes or data value");
  switch (v.t) {
    case "bytes":
      return v.data;
    case "float":
    case "size":
    case "duration":
    case "datetime":
    case "time":
      return ENC.encode(renderInline(v));
    case "list":
      if (v.items.every((x) => typeof x === "string")) {
        let text = "";
        for (const x of v.items) text += (x as string) + "\n";
        return ENC.encode(text);
      }
      return ENC.encode(stringifyValue(v));
    case "record":
    case "table":
    case "range":
      return ENC.encode(stringifyValue(v));
    case "outcome": {
      const payload = outcomePayload(v);
      return typeof payload === "string" ? v.stdout : feedBytes(payload);
    }
    case "path":
      throw fail(
        "type_error",
        "cannot feed a path to a command's stdin — a bare path is a name, not the file's contents",
        "feed the file's contents instead: p.read.feed(cmd) (or p.read_bytes for binary data)",
      );
    case "stream":
      throw fail(
        "type_error",
        "cannot feed a stream to a command's stdin: streams are not fed incrementally",
        "collect it first: s.collect().feed(cmd)",
      );
    case "command":
      throw cannotFeed("type_error", "a command", "run it first: (cmd).feed(other)");
    case "secret":
      throw cannotFeed("feed_error", "a secret", "secrets are never written to a process's stdin");
    default: // task, closure, error, glob, regex
      throw cannotFeed(
        "feed_error",
        `a ${v.t}`,
        v.t === "glob" ? "expand it first: g.expand().map(.display()).feed(cmd)" : null,
      );
  }
}
