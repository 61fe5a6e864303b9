/**
 * The JSON mapping (language §13.1): Shoal values to JSON and back.
 *
 * - `parseJsonText` is a hand-written single-pass parser that builds values directly. It keeps
 *   what `JSON.parse` loses: integers beyond 2^53 stay exact, `1.0` stays a float, and object
 *   keys keep their document order (JS objects would move integer-like keys to the front).
 * - `stringifyValue` walks values directly and writes serde-style text (`1.0` for whole
 *   floats, exact big ints, non-finite floats as `null`).
 * - `valueToJson` / `jsonToValue` convert to and from plain JS data for hosts and libraries.
 *
 * Key order: records keep insertion order in both directions (the documented contract). The
 * reference sorts keys (serde_json without `preserve_order`); the corpus only uses sorted keys,
 * so both agree there.
 *
 * @module
 */

import { fail } from "./errors.ts";
import { renderInline } from "./render.ts";
import { formatDateTimeZoned } from "./datetime.ts";
import {
  FloatV,
  I64_MAX,
  I64_MIN,
  intToBig,
  ListV,
  mkInt,
  type RangeV,
  RecordV,
  TableV,
  type TimeV,
  type Value,
} from "./types.ts";

/** Nesting limit for parsing (serde_json's default recursion limit). */
const MAX_DEPTH = 128;

/** Ranges longer than this are refused rather than materialised into a JSON array. */
const MAX_RANGE_ITEMS = 10_000_000;

// ---------------------------------------------------------------------------------------------
// Value → JSON

const lossy = new TextDecoder("utf-8");

/**
 * Lower a value with no direct JSON form onto one that has one (str, int, record), per §13.1.
 * Returns `undefined` for the JSON-native kinds (null, bool, int, float, str, list, record,
 * table, range), which the writers handle themselves.
 */
function lower(v: Value): Value | undefined {
  if (v === null || typeof v !== "object") return undefined;
  switch (v.t) {
    case "float":
    case "list":
    case "record":
    case "table":
    case "range":
      return undefined;
    case "path":
      return v.path;
    case "glob":
      return v.pattern;
    case "regex":
      return v.source;
    case "time":
      return timeText(v);
    case "datetime":
      return formatDateTimeZoned(v);
    case "size":
      return mkInt(v.bytes);
    case "duration":
      return mkInt(v.ns);
    case "bytes":
      return lossy.decode(v.data);
    case "outcome":
      return new RecordV(
        new Map<string, Value>([
          ["status", v.status],
          ["ok", v.ok],
          ["out", lossy.decode(v.stdout)],
          ["err", lossy.decode(v.stderr)],
        ]),
      );
    case "error":
      return new RecordV(new Map<string, Value>([["code", v.code], ["msg", v.msg]]));
    case "secret":
      return `secret(${v.name})`;
    default:
      // stream, task, closure, command: their inline render.
      return renderInline(v);
  }
}

/** The elements of a range (bounded, so a huge range fails cleanly instead of exhausting memory). */
function rangeItems(r: RangeV): Value[] {
  const start = intToBig(r.start);
  const end = intToBig(r.end) + (r.inclusive ? 1n : 0n);
  const n = end > start ? end - start : 0n;
  if (n > BigInt(MAX_RANGE_ITEMS)) {
    throw fail(
      "custom",
      `range ${renderInline(r)} is too long to serialize (${n} elements)`,
      "serialize a slice instead, e.g. `.take(n)`",
    );
  }
  const out: Value[] = new Array(Number(n));
  for (let i = 0; i < out.length; i++) out[i] = mkInt(start + BigInt(i));
  return out;
}

/** `HH:MM:SS[.fraction]` (minimal fraction digits). */
function timeText(t: TimeV): string {
  return `${pad2(t.h)}:${pad2(t.m)}:${pad2(t.s)}${fraction(t.nanos)}`;
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : `${n}`;
}

/** `.123` for 123 000 000 ns, `""` for 0 (minimal digits, like jiff). */
function fraction(nanos: number): string {
  if (nanos === 0) return "";
  return "." + String(nanos).padStart(9, "0").replace(/0+$/, "");
}

/**
 * A value as plain JS data for `JSON.stringify`-style consumers (§13.1). Records become
 * null-prototype objects (so a `__proto__` key is an ordinary key); ints beyond 2^53 stay
 * `bigint` (use `stringifyValue` for text); non-finite floats become `null`. A whole float
 * becomes a JS number, so its float-ness is not visible in the result.
 */
export function valueToJson(v: Value): unknown {
  if (v === null || typeof v === "boolean" || typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "bigint") return v;
  switch (v.t) {
    case "float":
      return Number.isFinite(v.v) ? v.v : null;
    case "list":
      return v.items.map(valueToJson);
    case "table":
      return v.rows.map(valueToJson);
    case "range":
      return rangeItems(v).map(valueToJson);
    case "record": {
      const o: Record<string, unknown> = Object.create(null);
      for (const [k, x] of v.fields) o[k] = valueToJson(x);
      return o;
    }
  }
  return valueToJson(lower(v) as Value);
}

// ---------------------------------------------------------------------------------------------
// JSON text writer

/**
 * A finite float the way serde_json (ryu) prints it: shortest round-trip digits; integral
 * values below 1e16 keep a `.0`; large or tiny magnitudes use `1e21` / `1.5e-7` forms.
 */
export function jsonFloatText(n: number): string {
  if (n === 0) return Object.is(n, -0) ? "-0.0" : "0.0";
  const exp = n.toExponential(); // shortest round-trip digits: "-1.2345e+21"
  const neg = exp.charCodeAt(0) === 45;
  const e = exp.indexOf("e");
  const mantissa = exp.slice(neg ? 1 : 0, e);
  const digits = mantissa.length > 1 ? mantissa[0] + mantissa.slice(2) : mantissa;
  const len = digits.length;
  const kk = Number(exp.slice(e + 1)) + 1; // 10^(kk-1) <= |n| < 10^kk
  const k = kk - len;
  let out: string;
  if (k >= 0 && kk <= 16) out = digits + "0".repeat(k) + ".0";
  else if (kk > 0 && kk <= 16) out = digits.slice(0, kk) + "." + digits.slice(kk);
  else if (kk > -5 && kk <= 0) out = "0." + "0".repeat(-kk) + digits;
  else if (len === 1) out = `${digits}e${kk - 1}`;
  else out = `${digits[0]}.${digits.slice(1)}e${kk - 1}`;
  return neg ? "-" + out : out;
}

/** Writes JSON text; `indent` is null for compact output. */
class JsonWriter {
  out = "";
  constructor(readonly indent: string | null) {}

  value(v: Value, depth: number): void {
    if (v === null) {
      this.out += "null";
      return;
    }
    switch (typeof v) {
      case "boolean":
        this.out += v ? "true" : "false";
        return;
      case "number":
      case "bigint":
        this.out += String(v);
        return;
      case "string":
        this.out += JSON.stringify(v);
        return;
    }
    switch (v.t) {
      case "float":
        this.out += Number.isFinite(v.v) ? jsonFloatText(v.v) : "null";
        return;
      case "list":
        this.array(v.items, depth);
        return;
      case "table":
        this.array(v.rows, depth);
        return;
      case "range":
        this.array(rangeItems(v), depth);
        return;
      case "record":
        this.object(v, depth);
        return;
    }
    this.value(lower(v) as Value, depth);
  }

  newline(depth: number): void {
    this.out += "\n" + (this.indent as string).repeat(depth);
  }

  array(items: readonly Value[], depth: number): void {
    if (items.length === 0) {
      this.out += "[]";
      return;
    }
    this.out += "[";
    for (let i = 0; i < items.length; i++) {
      if (i > 0) this.out += ",";
      if (this.indent !== null) this.newline(depth + 1);
      this.value(items[i], depth + 1);
    }
    if (this.indent !== null) this.newline(depth);
    this.out += "]";
  }

  object(r: RecordV, depth: number): void {
    if (r.fields.size === 0) {
      this.out += "{}";
      return;
    }
    this.out += "{";
    let first = true;
    for (const [k, x] of r.fields) {
      if (!first) this.out += ",";
      first = false;
      if (this.indent !== null) this.newline(depth + 1);
      this.out += JSON.stringify(k) + (this.indent !== null ? ": " : ":");
      this.value(x, depth + 1);
    }
    if (this.indent !== null) this.newline(depth);
    this.out += "}";
  }
}

/**
 * JSON text of a value (§13.1): compact (`{"a":1}`) or 2-space pretty. Whole floats print as
 * `1.0`, ints are exact at any size, non-finite floats are `null`.
 */
export function stringifyValue(v: Value, pretty = false): string {
  const w = new JsonWriter(pretty ? "  " : null);
  try {
    w.value(v, 0);
  } catch (e) {
    if (e instanceof RangeError && /call stack/i.test(e.message)) {
      throw fail("custom", "value is nested too deeply to serialize as JSON");
    }
    throw e;
  }
  return w.out;
}

// ---------------------------------------------------------------------------------------------
// JSON data → value

/** Options for `jsonToValue`. */
export interface FromDataOptions {
  /**
   * Integers arrive as `bigint` and every JS `number` is a float (YAML/TOML parsers in
   * big-int mode). Default false: integral numbers become ints (plain `JSON.parse` output).
   */
  bigintInts?: boolean;
}

/** Rows of a table when every element is a record (and there is at least one), else null. */
function asRows(items: Value[]): RecordV[] | null {
  if (items.length === 0) return null;
  for (const x of items) if (!(x instanceof RecordV)) return null;
  return items as RecordV[];
}

/** An array of converted elements: a table iff non-empty and all records, else a list. */
function arrayValue(items: Value[]): ListV | TableV {
  const rows = asRows(items);
  return rows ? new TableV(rows) : new ListV(items);
}

/** An integer: int when it fits i64, else float (§13.1). */
function bigToValue(n: bigint): Value {
  return n >= I64_MIN && n <= I64_MAX ? mkInt(n) : new FloatV(Number(n));
}

/**
 * Plain JS data (from `JSON.parse`, YAML, TOML…) as a value: arrays follow the table heuristic,
 * objects and `Map`s become records (non-string keys are stringified), `Date`s become their
 * ISO text. Anything else (functions, symbols, undefined) becomes null.
 */
export function jsonToValue(x: unknown, opts: FromDataOptions = {}): Value {
  const bigintInts = opts.bigintInts === true;
  const conv = (x: unknown): Value => {
    if (x === null || x === undefined) return null;
    switch (typeof x) {
      case "boolean":
      case "string":
        return x;
      case "bigint":
        return bigToValue(x);
      case "number":
        if (!bigintInts && Number.isInteger(x)) {
          return Number.isSafeInteger(x) ? (x === 0 ? 0 : x) : bigToValue(BigInt(x));
        }
        return new FloatV(x);
      case "object":
        break;
      default:
        return null;
    }
    if (Array.isArray(x)) return arrayValue(x.map(conv));
    if (x instanceof Date) return x.toISOString();
    const fields = new Map<string, Value>();
    if (x instanceof Map) {
      for (const [k, v] of x) fields.set(String(k), conv(v));
    } else {
      for (const k of Object.keys(x)) fields.set(k, conv((x as Record<string, unknown>)[k]));
    }
    return new RecordV(fields);
  };
  return conv(x);
}

// ---------------------------------------------------------------------------------------------
// JSON text parser

/** Internal parse failure: where and why. */
class JsonSyntax {
  constructor(readonly pos: number, readonly why: string) {}
}

/** Single-pass JSON parser producing values. */
class JsonParser {
  pos = 0;
  constructor(readonly text: string) {}

  err(why: string, at = this.pos): JsonSyntax {
    return new JsonSyntax(at, why);
  }

  ws(): void {
    const s = this.text;
    let p = this.pos;
    for (;;) {
      const c = s.charCodeAt(p);
      if (c === 32 || c === 10 || c === 13 || c === 9) p++;
      else break;
    }
    this.pos = p;
  }

  document(): Value {
    this.ws();
    const v = this.value(0);
    this.ws();
    if (this.pos < this.text.length) throw this.err("trailing characters");
    return v;
  }

  value(depth: number): Value {
    const s = this.text;
    const c = s.charCodeAt(this.pos);
    switch (c) {
      case 123: // {
        return this.object(depth + 1);
      case 91: // [
        return this.array(depth + 1);
      case 34: // "
        return this.string();
      case 116: // t
        return this.literal("true", true);
      case 102: // f
        return this.literal("false", false);
      case 110: // n
        return this.literal("null", null);
      default:
        if (c === 45 || (c >= 48 && c <= 57)) return this.number();
        throw this.err(this.pos >= s.length ? "EOF while parsing a value" : "expected value");
    }
  }

  literal(word: string, v: Value): Value {
    if (!this.text.startsWith(word, this.pos)) throw this.err("expected value");
    this.pos += word.length;
    return v;
  }

  number(): Value {
    const s = this.text;
    const start = this.pos;
    let p = start;
    if (s.charCodeAt(p) === 45) p++;
    const intStart = p;
    let c = s.charCodeAt(p);
    if (c === 48) {
      p++;
    } else if (c >= 49 && c <= 57) {
      while ((c = s.charCodeAt(p)) >= 48 && c <= 57) p++;
    } else {
      throw this.err("invalid number", p);
    }
    const intDigits = p - intStart;
    let isFloat = false;
    if (s.charCodeAt(p) === 46) { // .
      isFloat = true;
      p++;
      const f = p;
      while ((c = s.charCodeAt(p)) >= 48 && c <= 57) p++;
      if (p === f) throw this.err("invalid number", p);
    }
    c = s.charCodeAt(p);
    if (c === 101 || c === 69) { // e E
      isFloat = true;
      p++;
      c = s.charCodeAt(p);
      if (c === 43 || c === 45) p++;
      const f = p;
      while ((c = s.charCodeAt(p)) >= 48 && c <= 57) p++;
      if (p === f) throw this.err("invalid number", p);
    }
    this.pos = p;
    const text = s.slice(start, p);
    if (isFloat) {
      const n = Number(text);
      if (!Number.isFinite(n)) throw this.err("number out of range", start);
      return new FloatV(n);
    }
    if (intDigits <= 15) {
      const n = Number(text);
      return n === 0 ? 0 : n; // `-0` is the int 0
    }
    return bigToValue(BigInt(text));
  }

  string(): string {
    const s = this.text;
    let p = this.pos + 1;
    let chunkStart = p;
    let out = "";
    for (;;) {
      const c = s.charCodeAt(p);
      if (c === 34) {
        out += s.slice(chunkStart, p);
        this.pos = p + 1;
        return out;
      }
      if (c === 92) {
        out += s.slice(chunkStart, p);
        p = this.escape(p + 1, (piece) => (out += piece));
        chunkStart = p;
        continue;
      }
      if (Number.isNaN(c)) throw this.err("EOF while parsing a string", p);
      if (c < 32) {
        throw this.err("control character (\\u0000-\\u001F) found while parsing a string", p);
      }
      p++;
    }
  }

  /** Decode the escape after a backslash at `p`; returns the position after it. */
  escape(p: number, emit: (piece: string) => void): number {
    const s = this.text;
    const c = s[p];
    switch (c) {
      case '"':
      case "\\":
      case "/":
        emit(c);
        return p + 1;
      case "b":
        emit("\b");
        return p + 1;
      case "f":
        emit("\f");
        return p + 1;
      case "n":
        emit("\n");
        return p + 1;
      case "r":
        emit("\r");
        return p + 1;
      case "t":
        emit("\t");
        return p + 1;
      case "u": {
        const hi = this.hex4(p + 1);
        if (hi >= 0xdc00 && hi <= 0xdfff) {
          throw this.err("lone trailing surrogate in hex escape", p);
        }
        if (hi >= 0xd800 && hi <= 0xdbff) {
          if (s[p + 5] !== "\\" || s[p + 6] !== "u") {
            throw this.err("lone leading surrogate in hex escape", p);
          }
          const lo = this.hex4(p + 7);
          if (lo < 0xdc00 || lo > 0xdfff) throw this.err("lone leading surrogate in hex escape", p);
          emit(String.fromCharCode(hi, lo));
          return p + 11;
        }
        emit(String.fromCharCode(hi));
        return p + 5;
      }
      default:
        throw this.err(p >= s.length ? "EOF while parsing a string" : "invalid escape", p);
    }
  }

  hex4(p: number): number {
    const h = this.text.slice(p, p + 4);
    if (!/^[0-9a-fA-F]{4}$/.test(h)) throw this.err("invalid escape", p);
    return parseInt(h, 16);
  }

  array(depth: number): Value {
    if (depth > MAX_DEPTH) throw this.err("recursion limit exceeded");
    this.pos++; // [
    const items: Value[] = [];
    this.ws();
    if (this.text.charCodeAt(this.pos) === 93) {
      this.pos++;
      return new ListV(items);
    }
    for (;;) {
      this.ws();
      items.push(this.value(depth));
      this.ws();
      const c = this.text.charCodeAt(this.pos);
      if (c === 44) {
        this.pos++;
        this.ws();
        if (this.text.charCodeAt(this.pos) === 93) throw this.err("trailing comma");
        continue;
      }
      if (c === 93) {
        this.pos++;
        return arrayValue(items);
      }
      throw this.err(
        this.pos >= this.text.length ? "EOF while parsing a list" : "expected `,` or `]`",
      );
    }
  }

  object(depth: number): Value {
    if (depth > MAX_DEPTH) throw this.err("recursion limit exceeded");
    this.pos++; // {
    const fields = new Map<string, Value>();
    this.ws();
    if (this.text.charCodeAt(this.pos) === 125) {
      this.pos++;
      return new RecordV(fields);
    }
    for (;;) {
      this.ws();
      const c0 = this.text.charCodeAt(this.pos);
      if (c0 !== 34) {
        if (Number.isNaN(c0)) throw this.err("EOF while parsing an object");
        throw this.err(c0 === 125 ? "trailing comma" : "key must be a string");
      }
      const key = this.string();
      this.ws();
      if (this.text.charCodeAt(this.pos) !== 58) {
        throw this.err(
          this.pos >= this.text.length ? "EOF while parsing an object" : "expected `:`",
        );
      }
      this.pos++;
      this.ws();
      fields.set(key, this.value(depth));
      this.ws();
      const c = this.text.charCodeAt(this.pos);
      if (c === 44) {
        this.pos++;
        continue;
      }
      if (c === 125) {
        this.pos++;
        return new RecordV(fields);
      }
      throw this.err(
        this.pos >= this.text.length ? "EOF while parsing an object" : "expected `,` or `}`",
      );
    }
  }
}

/** 1-based line and column of a UTF-16 offset. */
function lineCol(text: string, pos: number): [number, number] {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(pos, text.length);
  for (let i = 0; i < end; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return [line, end - lineStart + 1];
}

function parseOrSyntax(text: string): Value | JsonSyntax {
  try {
    return new JsonParser(text).document();
  } catch (e) {
    if (e instanceof JsonSyntax) return e;
    throw e;
  }
}

/**
 * Parse JSON text into a value (§13.1). Throws arg_error «invalid JSON: <why> at line L column
 * C». Integers keep full precision (beyond i64 → float), `1.0` is a float, keys keep order.
 */
export function parseJsonText(text: string): Value {
  const r = parseOrSyntax(text);
  if (r instanceof JsonSyntax) {
    const [line, col] = lineCol(text, r.pos);
    throw fail("arg_error", `invalid JSON: ${r.why} at line ${line} column ${col}`);
  }
  return r;
}

/** Parse JSON text, or `undefined` when it is not valid JSON (for `.out` sniffing). */
export function tryParseJson(text: string): Value | undefined {
  const r = parseOrSyntax(text);
  return r instanceof JsonSyntax ? undefined : r;
}

/**
 * A value reduced to the JSON data model, deeply: the result contains only null, bool, int,
 * float, str, `ListV` (tables and ranges become lists) and `RecordV`. Used by the YAML and TOML
 * writers, which serialize "through the JSON model" (§13.2).
 */
export function toJsonModel(v: Value): Value {
  if (v === null || typeof v !== "object") return v;
  switch (v.t) {
    case "float":
      return v;
    case "list":
      return new ListV(v.items.map(toJsonModel));
    case "table":
      return new ListV(v.rows.map(toJsonModel));
    case "range":
      return new ListV(rangeItems(v));
    case "record": {
      const fields = new Map<string, Value>();
      for (const [k, x] of v.fields) fields.set(k, toJsonModel(x));
      return new RecordV(fields);
    }
  }
  return toJsonModel(lower(v) as Value);
}
