/**
 * Rendering (language spec §19): `renderInline` is the canonical one-line form the corpus
 * asserts; `renderBlock` is the human form (aligned tables, `key: value` records) used by the
 * CLI, the REPL and the kernel's `render` field. Block rendering is bounded: it looks at no more
 * rows/items/characters than it shows, so it costs O(shown), never O(value).
 */

import { fail } from "./errors.ts";
import { formatDateTimeUtc, formatTime } from "./datetime.ts";
import {
  type BytesV,
  type ClosureV,
  DurationV,
  FloatV,
  ListV,
  type OutcomeV,
  RecordV,
  SizeV,
  type TableV,
  type Value,
} from "./types.ts";

// ---------------------------------------------------------------------------------------------
// Scalars

/**
 * A float like Rust's `Display` for f64 (§19.2): shortest round-trip digits, never exponent
 * form, no trailing `.0`; `nan`, `inf`, `-inf`, and `-0` for negative zero.
 */
export function formatFloat(n: number): string {
  if (n !== n) return "nan";
  if (n === Infinity) return "inf";
  if (n === -Infinity) return "-inf";
  if (n === 0) return Object.is(n, -0) ? "-0" : "0";
  const s = String(n);
  const e = s.indexOf("e");
  if (e < 0) return s;
  // Expand JS's exponent form (|n| ≥ 1e21 or < 1e-6) into plain digits.
  const neg = s[0] === "-";
  const mant = s.slice(neg ? 1 : 0, e);
  const exp = Number(s.slice(e + 1));
  const dot = mant.indexOf(".");
  const digits = dot < 0 ? mant : mant.slice(0, dot) + mant.slice(dot + 1);
  const point = (dot < 0 ? mant.length : dot) + exp;
  let out: string;
  if (point <= 0) out = "0." + "0".repeat(-point) + digits;
  else if (point >= digits.length) out = digits + "0".repeat(point - digits.length);
  else out = digits.slice(0, point) + "." + digits.slice(point);
  return neg ? "-" + out : out;
}

/**
 * `x` (positive, finite, < 2^50) with exactly two decimals, rounding the exact binary value
 * with ties to even, as Rust's `{:.2}` does. (`toFixed` rounds exact ties up; an exact tie at
 * two decimals happens only when 8·x is an odd integer.)
 */
function fixed2(x: number): string {
  const x8 = x * 8;
  if (Number.isInteger(x8) && x8 % 2 === 1) {
    const lo = Math.floor(x * 100);
    const n = lo % 2 === 0 ? lo : lo + 1;
    const frac = n % 100;
    return `${(n - frac) / 100}.${frac < 10 ? "0" : ""}${frac}`;
  }
  return x.toFixed(2);
}

const SIZE_STEPS: [number, string][] = [[1e3, "kb"], [1e6, "mb"], [1e9, "gb"], [1e12, "tb"]];

/**
 * A size (§19.3): `<n>b` below 1000 bytes, else the largest decimal unit (kb…tb) not above
 * the value, two decimals (Rust rounding), trailing zeros and `.` stripped; a value that rounds
 * up to 1000 of a unit moves to the next unit (`999999b` → `1mb`).
 */
export function formatSize(bytes: bigint): string {
  if (bytes < 1000n) return `${bytes}b`;
  const b = Number(bytes);
  let i = SIZE_STEPS.length - 1;
  while (i > 0 && b < SIZE_STEPS[i][0]) i--;
  let text = fixed2(b / SIZE_STEPS[i][0]);
  // Below tb the quotient is < 1000, so only a round-up can reach "1000.00" (7 characters).
  if (text.length >= 7 && i < SIZE_STEPS.length - 1 && Number(text) >= 1000) {
    i++;
    text = fixed2(b / SIZE_STEPS[i][0]);
  }
  if (text.endsWith("00")) text = text.slice(0, -3);
  else if (text.endsWith("0")) text = text.slice(0, -1);
  return text + SIZE_STEPS[i][1];
}

const DURATION_STEPS: [bigint, string][] = [
  [604_800_000_000_000n, "w"],
  [86_400_000_000_000n, "d"],
  [3_600_000_000_000n, "h"],
  [60_000_000_000n, "m"],
  [1_000_000_000n, "s"],
  [1_000_000n, "ms"],
  [1_000n, "us"],
  [1n, "ns"],
];

/** A duration (§19.4): `0s`, else an optional `-` and every non-zero unit, greedy (`1m30s`). */
export function formatDuration(ns: bigint): string {
  if (ns === 0n) return "0s";
  let rest = ns < 0n ? -ns : ns;
  let out = ns < 0n ? "-" : "";
  for (const [unit, name] of DURATION_STEPS) {
    if (rest >= unit) {
      const q = rest / unit;
      rest -= q * unit;
      out += `${q}${name}`;
    }
  }
  return out;
}

const NEEDS_ESCAPE = /["\\\n\t\r\0]/;
const CONTROL = /[\n\t\r\0]/;

/** A string literal as `render_inline` shows it (§19.1): quoted, with `" \ LF TAB CR NUL` escaped. */
export function quoteStr(s: string): string {
  return `"${NEEDS_ESCAPE.test(s) ? escapeStr(s) : s}"`;
}

function escapeStr(s: string): string {
  return s.replace(/["\\\n\t\r\0]/g, (c) => ESCAPES[c]);
}

const ESCAPES: Record<string, string> = {
  '"': '\\"',
  "\\": "\\\\",
  "\n": "\\n",
  "\t": "\\t",
  "\r": "\\r",
  "\0": "\\0",
};

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A record key as rendered: bare when identifier-shaped, else quoted and escaped. */
export function renderKey(k: string): string {
  return IDENT.test(k) ? k : quoteStr(k);
}

function renderPath(p: string): string {
  return p.includes(" ") ? `"${p}"` : p;
}

function renderBytes(b: BytesV): string {
  const head = `bytes(${formatSize(BigInt(b.size))})`;
  if (b.ref === null) return head;
  return `${head} ${b.ref.startsWith("val:") ? b.ref : "val:blake3:" + b.ref}`;
}

function renderOutcome(o: OutcomeV): string {
  if (o.signal !== null) return `outcome(signal: ${o.signal}, ok: ${o.ok})`;
  return `outcome(status: ${o.status ?? -1}, ok: ${o.ok})`;
}

function renderClosure(c: ClosureV): string {
  const names = c.params.map((p) => p.name);
  if (c.rest) names.push("..." + c.rest.name);
  return c.name === null ? `closure(${names.join(", ")})` : `fn ${c.name}(${names.join(", ")})`;
}

/** The inline form of a non-container value; undefined for list/record/table. */
function scalarInline(v: Value): string | undefined {
  if (v === null) return "null";
  switch (typeof v) {
    case "boolean":
      return v ? "true" : "false";
    case "number":
    case "bigint":
      return String(v);
    case "string":
      return quoteStr(v);
  }
  switch (v.t) {
    case "float":
      return formatFloat(v.v);
    case "size":
      return formatSize(v.bytes);
    case "duration":
      return formatDuration(v.ns);
    case "path":
      return renderPath(v.path);
    case "glob":
      return v.pattern;
    case "regex":
      return `re"${v.source}"`;
    case "datetime":
      return formatDateTimeUtc(v);
    case "time":
      return formatTime(v);
    case "bytes":
      return renderBytes(v);
    case "range":
      return `${v.start}..${v.inclusive ? "=" : ""}${v.end}`;
    case "stream":
      return `stream<${v.label}>`;
    case "error":
      return `error(${v.code}: ${v.msg})`;
    case "outcome":
      return renderOutcome(v);
    case "task":
      return `task(${v.id})`;
    case "closure":
      return renderClosure(v);
    case "command":
      return `command(${v.cmd.head})`;
    case "secret":
      return `secret(${v.name})`;
    default:
      return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// Inline rendering with an optional character budget

/** Thrown inside `inlineInto` once the budget is passed. */
const STOP = Symbol("render-budget");

interface Sink {
  s: string;
  max: number;
}

function put(o: Sink, text: string): void {
  o.s += text;
  if (o.s.length > o.max) throw STOP;
}

function inlineInto(v: Value, o: Sink): void {
  const scalar = scalarInline(v);
  if (scalar !== undefined) return put(o, scalar);
  switch ((v as { t: string }).t) {
    case "list":
    case "table": {
      const items: readonly Value[] = (v as { t: "list"; items: Value[] }).t === "list"
        ? (v as { items: Value[] }).items
        : (v as TableV).rows;
      put(o, "[");
      for (let i = 0; i < items.length; i++) {
        if (i > 0) put(o, ", ");
        inlineInto(items[i], o);
      }
      return put(o, "]");
    }
    case "record": {
      put(o, "{");
      let first = true;
      for (const [k, x] of (v as RecordV).fields) {
        put(o, first ? renderKey(k) + ": " : ", " + renderKey(k) + ": ");
        first = false;
        inlineInto(x, o);
      }
      return put(o, "}");
    }
  }
}

/** The canonical inline rendering of any value (§4 table, §19). */
export function renderInline(v: Value): string {
  const scalar = scalarInline(v);
  if (scalar !== undefined) return scalar;
  const o: Sink = { s: "", max: Infinity };
  inlineInto(v, o);
  return o.s;
}

/** Cut `s` to at most `max` UTF-16 units, ending in `…` when cut (never splits a pair). */
export function truncateText(s: string, max: number): string {
  if (s.length <= max) return s;
  if (max <= 0) return "";
  let cut = max - 1;
  const c = s.charCodeAt(cut - 1);
  if (c >= 0xd800 && c <= 0xdbff) cut--;
  return s.slice(0, cut) + "…";
}

/** `renderInline` cut to `max` characters (ending in `…`); costs O(max), not O(value). */
export function renderInlineBounded(v: Value, max: number): string {
  if (typeof v === "string") {
    return truncateText(quoteStr(v.length > max + 2 ? v.slice(0, max + 2) : v), max);
  }
  const o: Sink = { s: "", max };
  try {
    inlineInto(v, o);
  } catch (e) {
    if (e !== STOP) throw e;
  }
  return truncateText(o.s, max);
}

// ---------------------------------------------------------------------------------------------
// Top-level display and interpolation

/** The echo / statement-sink form (§19.7): str and path raw, null empty, else inline. */
export function displayTop(v: Value): string {
  if (typeof v === "string") return v;
  if (v === null) return "";
  if (typeof v === "object" && v.t === "path") return v.path;
  return renderInline(v);
}

/**
 * The `"{x}"` form (§19.7): str inserted raw, path as its text, everything else inline;
 * a secret → type_error «secrets cannot be interpolated».
 */
export function interpolate(v: Value): string {
  if (typeof v === "string") return v;
  if (v !== null && typeof v === "object") {
    if (v.t === "path") return v.path;
    if (v.t === "secret") {
      throw fail(
        "type_error",
        "secrets cannot be interpolated",
        "pass the secret where it is accepted explicitly (e.g. an http header) instead",
      );
    }
  }
  return renderInline(v);
}

// ---------------------------------------------------------------------------------------------
// Block rendering

/** Options for `renderBlock`. */
export interface BlockOptions {
  /** Most table rows / list items / record fields / output lines shown (default 50). */
  maxRows?: number;
  /** Most characters of a scalar or text body rendered (default 65536). */
  maxChars?: number;
}

const DEFAULT_MAX_ROWS = 50;
const DEFAULT_MAX_CHARS = 65536;
const MIN_COL = 3;

/** Length in code points (what a terminal column count approximates). */
function cpLen(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) n--;
  }
  return n;
}

/** Cut to `w` code points with `…`, then pad (left or right) to exactly `w`. */
function fitCell(s: string, w: number, right: boolean): string {
  let len = cpLen(s);
  if (len > w) {
    const cps = Array.from(s);
    s = w <= 0 ? "" : cps.slice(0, w - 1).join("") + "…";
    len = w;
  }
  const pad = " ".repeat(w - len);
  return right ? pad + s : s + pad;
}

/** One table cell: strings and paths raw (control characters escaped), null empty. */
function cellText(v: Value, max: number): string {
  if (v === null) return "";
  if (typeof v === "string") {
    const s = v.length > max ? v.slice(0, max + 1) : v;
    return CONTROL.test(s) ? s.replace(/[\n\t\r\0]/g, (c) => ESCAPES[c]) : s;
  }
  if (typeof v === "object" && v.t === "path") return truncateText(v.path, max + 1);
  return renderInlineBounded(v, max + 1);
}

function isNumeric(v: Value): boolean {
  return typeof v === "number" || typeof v === "bigint" || v instanceof FloatV ||
    v instanceof SizeV || v instanceof DurationV;
}

function renderTable(rows: readonly Value[], width: number, maxRows: number): string {
  if (rows.length === 0) return "(empty table)";
  const shown = Math.min(rows.length, maxRows);
  const cols: string[] = [];
  const seen = new Set<string>();
  for (let r = 0; r < shown; r++) {
    for (const k of (rows[r] as RecordV).fields.keys()) {
      if (!seen.has(k)) {
        seen.add(k);
        cols.push(k);
      }
    }
  }
  const cells: string[][] = [];
  const widths = cols.map((c) => cpLen(c));
  const numeric = cols.map(() => true);
  for (let r = 0; r < shown; r++) {
    const f = (rows[r] as RecordV).fields;
    const line = cols.map((c, i) => {
      const v = f.get(c) ?? null;
      if (v !== null && !isNumeric(v)) numeric[i] = false;
      const t = cellText(v, width);
      widths[i] = Math.max(widths[i], cpLen(t));
      return t;
    });
    cells.push(line);
  }
  // Keep as many leading columns as fit at their minimum widths (header text up to 10, or the
  // natural width when smaller), then shrink the widest kept columns until the row fits.
  const minW = cols.map((c, i) => Math.min(widths[i], Math.max(MIN_COL, Math.min(cpLen(c), 10))));
  let ncols = 0;
  for (let used = -2; ncols < cols.length && used + 2 + minW[ncols] <= width; ncols++) {
    used += 2 + minW[ncols];
  }
  ncols = Math.max(ncols, 1);
  widths.length = ncols;
  const total = () => widths.reduce((a, b) => a + b, 0) + 2 * (widths.length - 1);
  let excess = total() - width;
  while (excess > 0) {
    let wi = -1;
    for (let i = 0; i < ncols; i++) {
      if (widths[i] > minW[i] && (wi < 0 || widths[i] > widths[wi])) wi = i;
    }
    if (wi < 0) break;
    let next = minW[wi];
    for (let i = 0; i < ncols; i++) {
      if (i !== wi && widths[i] > next && widths[i] < widths[wi]) next = widths[i];
    }
    const cut = Math.max(1, Math.min(excess, widths[wi] - next));
    widths[wi] -= cut;
    excess -= cut;
  }
  // Numeric columns (headers included) are right-aligned so digits line up.
  const fmt = (texts: string[]) =>
    texts.slice(0, ncols).map((t, i) => fitCell(t, widths[i], numeric[i])).join("  ").trimEnd();
  const lines = [fmt(cols), "─".repeat(Math.min(width, total()))];
  for (const line of cells) lines.push(fmt(line));
  const notes: string[] = [];
  if (rows.length > shown) notes.push(`… ${rows.length - shown} more rows`);
  if (ncols < cols.length) notes.push(`… ${cols.length - ncols} more columns`);
  if (notes.length) lines.push(notes.join(", "));
  return lines.join("\n");
}

function renderRecordBlock(r: RecordV, width: number, maxRows: number): string {
  if (r.fields.size === 0) return "{}";
  const keys: string[] = [];
  const vals: Value[] = [];
  for (const [k, v] of r.fields) {
    if (keys.length >= maxRows) break;
    keys.push(renderKey(k));
    vals.push(v);
  }
  const kw = Math.min(Math.max(...keys.map(cpLen)), 30);
  const lines = keys.map((k, i) => {
    const key = fitCell(k, kw, false);
    return `${key}: ${renderInlineBounded(vals[i], Math.max(width - kw - 2, 8))}`;
  });
  if (r.fields.size > keys.length) lines.push(`… ${r.fields.size - keys.length} more fields`);
  return lines.join("\n");
}

function renderListBlock(items: readonly Value[], width: number, maxRows: number): string {
  if (items.length === 0) return "[]";
  let allRecords = true;
  for (let i = 0; i < Math.min(items.length, maxRows); i++) {
    if (!(items[i] instanceof RecordV)) {
      allRecords = false;
      break;
    }
  }
  if (allRecords) return renderTable(items, width, maxRows);
  const inline = renderInlineBounded(new ListV(items as Value[]), width + 1);
  if (cpLen(inline) <= width) return inline;
  const shown = Math.min(items.length, maxRows);
  const lines: string[] = [];
  for (let i = 0; i < shown; i++) lines.push(renderInlineBounded(items[i], width));
  if (items.length > shown) lines.push(`… ${items.length - shown} more items`);
  return lines.join("\n");
}

function renderTextBlock(
  text: string,
  maxRows: number,
  maxChars: number,
  cutBefore = false,
): string {
  const cut = cutBefore || text.length > maxChars;
  let body = cut ? text.slice(0, maxChars) : text;
  if (!cut && body.endsWith("\n")) body = body.slice(0, -1);
  let lines = body.split("\n");
  const more = lines.length > maxRows;
  if (!more && !cut) return body;
  if (more) lines = lines.slice(0, maxRows);
  return `${lines.join("\n")}\n… output truncated`;
}

const lossy = new TextDecoder("utf-8");

/**
 * The human rendering of a value at `width` columns (§8.3 of the protocol): tables as aligned
 * columns under a header (cells cut with `…`), lists of records as tables, other long lists one
 * item per line, records as `key: value` lines, outcomes as their output, scalars inline.
 * At most `maxRows` rows/items/fields are shown, followed by a `… N more rows` line.
 */
export function renderBlock(v: Value, width = 80, opts: BlockOptions = {}): string {
  const maxRows = opts.maxRows ?? DEFAULT_MAX_ROWS;
  const maxChars = opts.maxChars ?? DEFAULT_MAX_CHARS;
  if (v !== null && typeof v === "object") {
    switch (v.t) {
      case "table":
        return renderTable(v.rows, width, maxRows);
      case "list":
        return renderListBlock(v.items, width, maxRows);
      case "record":
        return renderRecordBlock(v, width, maxRows);
      case "outcome": {
        const status = v.ok ? "" : renderOutcome(v);
        let body = "";
        if (v.parsed !== undefined) {
          body = v.parsed === null ? "" : renderBlock(v.parsed, width, opts);
        } else if (v.stdout.length > 0) {
          const cut = v.stdout.length > maxChars;
          const text = lossy.decode(cut ? v.stdout.subarray(0, maxChars) : v.stdout);
          body = renderTextBlock(text, maxRows, maxChars, cut || v.stdoutTruncated);
        }
        if (body === "" && status === "") return renderOutcome(v);
        return body === "" ? status : status === "" ? body : `${body}\n${status}`;
      }
      case "error":
        return v.hint ? `${renderInline(v)}\nhint: ${v.hint}` : renderInline(v);
    }
  }
  return renderInlineBounded(v, maxChars);
}
