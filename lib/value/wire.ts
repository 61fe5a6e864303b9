/**
 * Tagged wire values (protocol §7): every value crosses the socket as a JSON object whose `$`
 * member names its type. Encoding is bounded: `encodeBounded` stops as soon as the encoded
 * size passes its limit, so an elision decision costs O(limit), never O(value).
 */

import type { Span } from "../syntax/ast.ts";
import {
  BytesV,
  DateTimeV,
  DurationV,
  ErrorV,
  FloatV,
  type Int,
  ListV,
  mkInt,
  type OutcomeV,
  PathV,
  RangeV,
  RecordV,
  SizeV,
  TableV,
  TimeV,
  type Value,
} from "./types.ts";
import { formatDateTimeUtc } from "./datetime.ts";
import { renderInline } from "./render.ts";

/** A tagged wire value: `{"$": "<type>", …}`. */
export type Wire = { $: string; [k: string]: unknown };

/** Thrown internally when a bounded encoding passes its limit. */
class OverBudget extends Error {}

/** UTF-8 byte length of a string (exact). */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/** Tracks the approximate encoded JSON size while building a wire tree. */
class Meter {
  used = 0;
  constructor(readonly limit: number) {}
  add(n: number): void {
    this.used += n;
    if (this.used > this.limit) throw new OverBudget();
  }
  /** Charge a JSON string literal (quotes + escapes, counted in UTF-8 bytes). */
  str(s: string): void {
    // A string longer than the remaining budget cannot fit whatever its escapes are.
    if (s.length > this.limit - this.used) throw new OverBudget();
    this.add(utf8Length(JSON.stringify(s)));
  }
}

const rawJSON = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON;

/** An i64 as a JSON number; values beyond 2^53 are emitted verbatim (exact) via `JSON.rawJSON`. */
function intJson(v: Int): unknown {
  return typeof v === "bigint" ? rawJSON(v.toString()) : v;
}

function spanJson(span: Span | null): { start: number; end: number } | undefined {
  return span ? { start: span[0], end: span[1] } : undefined;
}

function base64(bytes: Uint8Array): string {
  return (bytes as Uint8Array & { toBase64(): string }).toBase64();
}

/** `HH:MM:SS` for the wire `time` tag. */
function wireTime(t: TimeV): string {
  const p = (n: number) => String(n).padStart(2, "0");
  return `${p(t.h)}:${p(t.m)}:${p(t.s)}`;
}

/**
 * Encode a value completely (unbounded). Use for storage (CAS value blobs); responses use
 * `encodeBounded` or `elide`.
 */
export function encodeWire(v: Value, outcomeOut: (o: OutcomeV) => Value): Wire {
  return encode(v, new Meter(Number.POSITIVE_INFINITY), outcomeOut);
}

/**
 * Encode a value if its encoded size stays within `limit` bytes; `null` when it would not.
 * Costs O(limit) at most.
 */
export function encodeBounded(
  v: Value,
  limit: number,
  outcomeOut: (o: OutcomeV) => Value,
): Wire | null {
  try {
    return encode(v, new Meter(limit), outcomeOut);
  } catch (e) {
    if (e instanceof OverBudget) return null;
    throw e;
  }
}

function encode(v: Value, m: Meter, outcomeOut: (o: OutcomeV) => Value): Wire {
  m.add(8);
  if (v === null) return { $: "null" };
  switch (typeof v) {
    case "boolean":
      m.add(6);
      return { $: "bool", v };
    case "number":
    case "bigint":
      m.add(21);
      return { $: "int", v: intJson(v) };
    case "string":
      m.str(v);
      return { $: "str", v };
  }
  const enc = (x: Value) => encode(x, m, outcomeOut);
  switch (v.t) {
    case "float":
      m.add(24);
      return { $: "float", v: Number.isFinite(v.v) ? v.v : String(v.v) };
    case "size":
      m.add(21);
      return { $: "size", v: intJson(mkInt(v.bytes)) };
    case "duration":
      m.add(21);
      return { $: "duration", v: intJson(mkInt(v.ns)) };
    case "path":
      m.str(v.path);
      return { $: "path", v: v.path };
    case "glob":
      m.str(v.pattern);
      return { $: "glob", pattern: v.pattern };
    case "regex":
      m.str(v.source);
      return { $: "regex", src: v.source };
    case "datetime": {
      const s = formatDateTimeUtc(v);
      m.str(s);
      return { $: "datetime", v: s };
    }
    case "time":
      m.add(12);
      return { $: "time", v: wireTime(v) };
    case "bytes": {
      m.add(Math.ceil(v.data.length / 3) * 4 + 4);
      const w: Wire = { $: "bytes", v: base64(v.data) };
      if (v.ref) w.ref = v.ref;
      return w;
    }
    case "list":
      return { $: "list", v: v.items.map(enc) };
    case "record": {
      const o: Record<string, Wire> = {};
      for (const [k, x] of v.fields) {
        m.str(k);
        o[k] = enc(x);
      }
      return { $: "record", v: o };
    }
    case "table":
      return encodeTable(v, m, enc);
    case "range":
      m.add(48);
      return { $: "range", start: intJson(v.start), end: intJson(v.end), inclusive: v.inclusive };
    case "stream":
      m.str(v.label);
      return { $: "stream", label: v.label };
    case "error":
      return encodeError(v, m);
    case "outcome":
      return encodeOutcome(v, m, outcomeOut, enc);
    case "task":
      m.add(24);
      return { $: "task", id: v.id, done: taskDone(v.impl) };
    case "closure": {
      const repr = renderInline(v);
      m.str(repr);
      return { $: "closure", repr };
    }
    case "command": {
      const repr = renderInline(v);
      m.str(repr);
      return { $: "cmd", repr };
    }
    case "secret":
      m.str(v.name);
      return { $: "secret", name: v.name };
  }
}

function taskDone(impl: unknown): boolean {
  const d = (impl as { done?: unknown } | null)?.done;
  return typeof d === "function" ? Boolean(d.call(impl)) : Boolean(d);
}

/** The columns of a table: union of keys, first-seen order. */
export function tableColumns(t: TableV): string[] {
  const seen = new Set<string>();
  for (const r of t.rows) for (const k of r.fields.keys()) seen.add(k);
  return [...seen];
}

function encodeTable(t: TableV, m: Meter, enc: (x: Value) => Wire): Wire {
  const cols: Record<string, Wire[]> = {};
  // Every row costs at least a separator in the output: charging while collecting the column
  // union keeps a bounded encoding of a huge table O(limit), not O(rows).
  const seen = new Set<string>();
  for (const r of t.rows) {
    m.add(2);
    for (const k of r.fields.keys()) seen.add(k);
  }
  const names = [...seen];
  for (const c of names) {
    m.str(c);
    const col: Wire[] = new Array(t.rows.length);
    for (let i = 0; i < t.rows.length; i++) {
      const cell = t.rows[i].fields.get(c);
      col[i] = cell === undefined ? (m.add(12), { $: "null" }) : enc(cell);
    }
    cols[c] = col;
  }
  return { $: "table", cols, n: t.rows.length };
}

function encodeError(e: ErrorV, m: Meter): Wire {
  m.str(e.code);
  m.str(e.msg);
  const w: Wire = { $: "error", code: e.code, msg: e.msg };
  if (e.span) w.span = spanJson(e.span);
  if (e.hint !== null) {
    m.str(e.hint);
    w.hint = e.hint;
  }
  if (e.stderr !== null) {
    m.str(e.stderr);
    w.stderr = e.stderr;
  }
  return w;
}

const lossy = new TextDecoder("utf-8", { fatal: false });

/** The metadata members of an outcome (everything but `out`), with `err` and `cmd` as given. */
export function outcomeMetaWire(o: OutcomeV, err: string, cmd: string): Wire {
  const w: Wire = {
    $: "outcome",
    status: o.status,
    ok: o.ok,
    signal: o.signal,
    err,
    dur_ns: intJson(mkInt(o.durNs)),
    pid: o.pid,
    cmd,
  };
  if (o.span) w.span = spanJson(o.span);
  return w;
}

/** The metadata members of an outcome, metered. */
function outcomeMeta(o: OutcomeV, m: Meter): Wire {
  const err = lossy.decode(o.stderr);
  m.str(err);
  m.str(o.cmd);
  m.add(96);
  return outcomeMetaWire(o, err, o.cmd);
}

function encodeOutcome(
  o: OutcomeV,
  m: Meter,
  outcomeOut: (o: OutcomeV) => Value,
  enc: (x: Value) => Wire,
): Wire {
  const w = outcomeMeta(o, m);
  w.out = enc(outcomeOut(o));
  return w;
}

// ---------------------------------------------------------------------------------------------
// Decoding (clients, events.publish of tagged payloads, CAS value blobs)

/** Decode a tagged wire value back into a value. Unknown or malformed tags decode to null. */
export function decodeWire(w: unknown): Value {
  if (w === null || typeof w !== "object" || Array.isArray(w)) return null;
  const o = w as Record<string, unknown>;
  const num = (x: unknown): Int => typeof x === "string" ? mkInt(BigInt(x)) : Number(x);
  switch (o.$) {
    case "bool":
      return Boolean(o.v);
    case "int":
      return num(o.v);
    case "float":
      return new FloatV(typeof o.v === "string" ? Number(o.v) : Number(o.v));
    case "str":
      return String(o.v);
    case "size":
      return new SizeV(BigInt(o.v as number | string));
    case "duration":
      return new DurationV(BigInt(o.v as number | string));
    case "path":
      return new PathV(String(o.v));
    case "datetime": {
      const ms = Date.parse(String(o.v));
      return Number.isNaN(ms) ? null : new DateTimeV(BigInt(ms) * 1_000_000n);
    }
    case "time": {
      const [h, mi, s] = String(o.v).split(":").map(Number);
      return new TimeV(h || 0, mi || 0, s || 0);
    }
    case "bytes":
      return new BytesV(
        (Uint8Array as unknown as { fromBase64(s: string): Uint8Array }).fromBase64(String(o.v)),
      );
    case "list":
      return new ListV(Array.isArray(o.v) ? o.v.map(decodeWire) : []);
    case "record": {
      const f = new Map<string, Value>();
      for (const [k, x] of Object.entries((o.v ?? {}) as Record<string, unknown>)) {
        f.set(k, decodeWire(x));
      }
      return new RecordV(f);
    }
    case "table": {
      const cols = (o.cols ?? {}) as Record<string, unknown[]>;
      const n = Number(o.n) || 0;
      const rows: RecordV[] = [];
      for (let i = 0; i < n; i++) {
        const f = new Map<string, Value>();
        for (const [c, col] of Object.entries(cols)) f.set(c, decodeWire(col[i]));
        rows.push(new RecordV(f));
      }
      return new TableV(rows);
    }
    case "range":
      return new RangeV(num(o.start), num(o.end), Boolean(o.inclusive));
    case "error":
      return new ErrorV(
        String(o.code),
        String(o.msg),
        typeof o.hint === "string" ? o.hint : null,
        typeof o.stderr === "string" ? o.stderr : null,
      );
    default:
      return null;
  }
}

/** Serialise a wire tree to compact JSON text (a frame body). */
export function stringifyWire(w: unknown): string {
  return JSON.stringify(w);
}
