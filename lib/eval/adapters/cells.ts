/**
 * Typed cells: how a parser turns one piece of a tool's output into a value of the hinted
 * type (subsystems §7 "cell coercions"). Every conversion is strict — a cell that does not
 * fit its type makes the whole parse fail, so the outcome keeps its raw output instead of a
 * table that only looks right.
 *
 * Types: `str`; `datetime` (RFC 3339 / ISO text → a datetime value); `path`; `int`, `float`,
 * `bool` (`true`/`false`); `size` (a number with a unit, `4.0K` is not one: write the unit
 * out); `size_kb` (a count of 1024-byte blocks); `size_b` (a count of bytes); `duration`
 * (`1h30m`, or a bare number of seconds); `time` (`H:MM[:SS]`); `pct` (`22%` or `0.5` →
 * a number); `epoch` (seconds since 1970, fraction allowed → a UTC datetime); `any` (left as
 * the tool gave it). An optional type (`int?`) also accepts an empty
 * cell or `-` as null.
 *
 * @module
 */

import {
  DateTimeV,
  DurationV,
  FloatV,
  isInt,
  PathV,
  SizeV,
  type Value,
} from "../../value/types.ts";
import { parseFloatStrict, parseIntStrict } from "../../value/coerce.ts";
import { parseDurationWord, parseSizeWord } from "../../value/units.ts";
import { checkDateTimeNs, parseDateTime, parseTimeOfDay } from "../../value/datetime.ts";
import type { FieldHint, TypeHint } from "./hint.ts";

/** Why a cell did not fit (parsers add where it was). */
export class CellError extends Error {}

const DIGITS = /^[0-9]+$/;
const MAX_BLOCKS = (2n ** 64n - 1n) / 1024n;

function bad(text: string, type: string): CellError {
  const shown = text.length > 40 ? text.slice(0, 40) + "…" : text;
  return new CellError(`expected ${type}, found ${JSON.stringify(shown)}`);
}

function number(text: string, type: string): Value {
  const i = parseIntStrict(text);
  if (i !== null) return i;
  const f = parseFloatStrict(text);
  if (f === null || !Number.isFinite(f)) throw bad(text, type);
  return new FloatV(f);
}

const EPOCH = /^(-?[0-9]{1,12})(?:\.([0-9]{1,9}))?$/;

/** Seconds since the Unix epoch (`1796160758`, `1796160758.25`) as a UTC datetime. */
function epoch(text: string): Value {
  const m = EPOCH.exec(text);
  if (!m) throw bad(text, "epoch");
  const frac = BigInt((m[2] ?? "").padEnd(9, "0"));
  const secs = BigInt(m[1]);
  const ns = secs * 1_000_000_000n + (secs < 0n ? -frac : frac);
  try {
    return new DateTimeV(checkDateTimeNs(ns));
  } catch {
    throw bad(text, "epoch");
  }
}

/** The value of a text cell of type `t`; throws {@link CellError}. */
export function textCell(text: string, t: TypeHint): Value {
  if (t.optional && (text === "" || text === "-")) return null;
  if (t.k !== "cell") return text; // nested shapes are kept as text in a text cell
  switch (t.name) {
    case "str":
    case "any":
      return text;
    case "path":
      if (text === "") throw bad(text, "path");
      return new PathV(text);
    case "int": {
      const n = parseIntStrict(text);
      if (n === null) throw bad(text, "int");
      return n;
    }
    case "float": {
      const f = parseFloatStrict(text);
      if (f === null) throw bad(text, "float");
      return new FloatV(f);
    }
    case "bool":
      if (text === "true") return true;
      if (text === "false") return false;
      throw bad(text, "bool");
    case "size": {
      const b = /[A-Za-z]/.test(text) ? parseSizeWord(text) : null;
      if (b === null) throw bad(text, "size");
      return new SizeV(b);
    }
    case "size_kb": {
      if (!DIGITS.test(text)) throw bad(text, "size_kb");
      const n = BigInt(text);
      if (n > MAX_BLOCKS) throw bad(text, "size_kb");
      return new SizeV(n * 1024n);
    }
    case "size_b": {
      const b = DIGITS.test(text) ? parseSizeWord(text) : null;
      if (b === null) throw bad(text, "size_b");
      return new SizeV(b);
    }
    case "duration": {
      const ns = parseDurationWord(text);
      if (ns === null) throw bad(text, "duration");
      return new DurationV(ns);
    }
    case "time": {
      const tm = parseTimeOfDay(text);
      if (tm === null) throw bad(text, "time");
      return tm;
    }
    case "datetime":
      try {
        return parseDateTime(text);
      } catch {
        throw bad(text, "datetime");
      }
    case "pct":
      return number(text.endsWith("%") ? text.slice(0, -1) : text, "pct");
    case "epoch":
      return epoch(text);
  }
  return text;
}

/**
 * A value that came from JSON, checked against its hint: strings go through {@link textCell},
 * byte counts become sizes, ints widen to floats where a float is hinted; null only where the
 * hint is optional. Shapes the hint does not describe are left alone.
 */
export function jsonCell(v: Value, t: TypeHint): Value {
  if (v === null) {
    if (t.optional || (t.k === "cell" && t.name === "any")) return null;
    throw new CellError("expected a value, found null");
  }
  if (t.k !== "cell") return v;
  if (typeof v === "string") return t.name === "any" ? v : textCell(v, t);
  switch (t.name) {
    case "any":
      return v;
    case "int":
      if (isInt(v)) return v;
      break;
    case "float":
    case "pct":
      if (isInt(v)) return t.name === "float" ? new FloatV(Number(v)) : v;
      if (v instanceof FloatV) return v;
      break;
    case "bool":
      if (typeof v === "boolean") return v;
      break;
    case "size_b":
    case "size_kb":
      if (isInt(v) && BigInt(v) >= 0n) {
        const n = BigInt(v) * (t.name === "size_kb" ? 1024n : 1n);
        if (n < 2n ** 64n) return new SizeV(n);
      }
      break;
    case "duration":
      if (isInt(v)) return new DurationV(BigInt(v) * 1_000_000_000n);
      break;
    case "epoch":
      if (isInt(v)) return epoch(String(v));
      break;
  }
  throw new CellError(`expected ${t.name}, found a JSON ${typeof v === "object" ? v.t : typeof v}`);
}

/** Type the hinted fields of one JSON record (a fresh map; unhinted fields as they came). */
export function typeJsonFields(
  fields: ReadonlyMap<string, Value>,
  hints: readonly FieldHint[],
): Map<string, Value> {
  const out = new Map(fields);
  for (const h of hints) {
    if (!out.has(h.name)) {
      if (h.type.optional) continue;
      throw new CellError(`missing field \`${h.name}\``);
    }
    out.set(h.name, jsonCell(out.get(h.name)!, h.type));
  }
  return out;
}
