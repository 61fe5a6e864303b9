/**
 * Rendering (language spec §19): `renderInline` is the canonical one-line form the corpus
 * asserts; `renderBlock` is the human form (aligned tables, `key: value` records) used by the
 * CLI, the REPL and the kernel's `render` field. Block rendering is bounded: it looks at no more
 * rows/items/characters than it shows — save counting the lines of a cut text, a scan bounded
 * by `LINE_SCAN` — so it costs O(shown), never O(value).
 */

import { basename } from "node:path";
import { fail } from "./errors.ts";
import { formatDateTimeUtc, formatTime } from "./datetime.ts";
import {
  type BytesV,
  type ClosureV,
  DateTimeV,
  DurationV,
  FloatV,
  ListV,
  type OutcomeV,
  PathV,
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

/**
 * A size without rounding, for readers who take the number as it is shown (agents): `512b`,
 * `48.213kb` (48213 bytes), `999.999kb`, `1.5mb`: the largest decimal unit not above it.
 */
export function formatSizeExact(bytes: bigint): string {
  if (bytes < 1000n) return formatSize(bytes);
  const unit = SIZE_STEPS.findLast(([step]) => BigInt(step) <= bytes)!;
  const scale = BigInt(unit[0]);
  const whole = bytes / scale;
  const frac = (bytes % scale).toString().padStart(String(unit[0]).length - 1, "0")
    .replace(/0+$/, "");
  return `${whole}${frac === "" ? "" : "." + frac}${unit[1]}`;
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

/** Who reads a block: where paths are relative to, and whether sizes are shown exactly. */
export interface Reader {
  /** Paths under this directory are shown relative to it. */
  cwd?: string;
  /** Sizes without rounding (`48.213kb`, not `48.21kb`): for readers of text (agents). */
  exactSizes?: boolean;
}

interface Sink extends Reader {
  s: string;
  max: number;
}

function put(o: Sink, text: string): void {
  o.s += text;
  if (o.s.length > o.max) throw STOP;
}

function inlineInto(v: Value, o: Sink): void {
  if (o.cwd !== undefined && v instanceof PathV) return put(o, renderPath(relPath(v.path, o.cwd)));
  if (o.exactSizes && v instanceof SizeV) return put(o, formatSizeExact(v.bytes));
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

/**
 * `renderInline` cut to `max` characters (ending in `…`); costs O(max), not O(value). For a
 * `reader` with a `cwd`, paths under it are shown relative to it (block rendering).
 */
export function renderInlineBounded(v: Value, max: number, reader: Reader = {}): string {
  if (typeof v === "string") {
    return truncateText(quoteStr(v.length > max + 2 ? v.slice(0, max + 2) : v), max);
  }
  const o: Sink = { s: "", max, cwd: reader.cwd, exactSizes: reader.exactSizes };
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

/** Where a block rendering stopped showing a value (see `BlockOptions.more`). */
export interface Cut {
  /** What was left out: table rows, list items, record fields, text lines or characters. */
  unit: "rows" | "items" | "fields" | "lines" | "chars";
  /** Selection path from the rendered value to the cut one: `""`, or `"out"` inside an outcome. */
  path: string;
  /** How many rows/items/fields/lines were shown. */
  shown: number;
  /** How many more there are; null when only a bounded scan was made and it did not end. */
  left: number | null;
  /**
   * Where the rest begins as a `value.get` slice start on the value at `path`: an item index,
   * or for text the character (Unicode scalar) offset.
   */
  next: number;
  /** Text only: its size in bytes, when known. */
  bytes?: number;
}

/** Options for `renderBlock`. */
export interface BlockOptions {
  /** Most table rows / list items / record fields / output lines shown (default 50). */
  maxRows?: number;
  /** Most characters of a scalar or text body rendered (default 65536). */
  maxChars?: number;
  /** The session's directory: absolute paths under it are shown relative to it. */
  cwd?: string;
  /** Lines of stderr a failed outcome shows (default 10; 0 for none). */
  stderrLines?: number;
  /** The line that ends a cut value (default: `… 9950 more rows`, `… 12 more lines (3kb)`). */
  more?: (cut: Cut) => string;
  /**
   * For a reader of text that never wraps (an agent), not a terminal: a table's last column is
   * shown whole, past the width (the others fit around its first 20 characters — a log subject
   * or a command line is usually the column they came for); sizes are exact (`48.213kb`); a
   * whole list or table of more than a few items says how many (no counting by hand, no call
   * to ask). Default false.
   */
  forText?: boolean;
  /**
   * Under a whole multi-line text, whether it ends in a newline (`(3 lines, ending in a
   * newline)`): shown as lines, a text hides that, and a reader of text who wrote a file spends a
   * call to ask. Default: `forText`; off for a page of a longer text.
   */
  textEnds?: boolean;
}

/**
 * The width a block is laid out at for its reader: a terminal's 80 columns, or 200 for a reader
 * of text (an agent), which never wraps and pays a call for every cell cut short (a `git log`
 * row — two 40-character hashes, an email, a date — needs about 170).
 */
export function readerWidth(tty: boolean): number {
  return tty ? 80 : 200;
}

const DEFAULT_MAX_ROWS = 50;
/** A whole list or table this long says, for a reader of text, how many items it has. */
const COUNTED = 5;
const DEFAULT_MAX_CHARS = 65536;
/** A list item or record field on a line of its own is cut only past this many widths. */
const LINE_WIDTHS = 8;
const DEFAULT_STDERR_LINES = 10;
const MIN_COL = 3;
/** Characters of a whole last column the other columns make room for. */
const WHOLE_LAST_FIT = 20;
/** Bytes of text scanned to count the lines of a cut text (beyond it the count is unknown). */
const LINE_SCAN = 1 << 20;

/** Resolved block options. */
interface Opts {
  maxRows: number;
  maxChars: number;
  cwd?: string;
  stderrLines: number;
  more: (cut: Cut) => string;
  path: string;
  forText: boolean;
  /** Sizes without rounding (set for a reader of text). */
  exactSizes: boolean;
  /** Say whether a whole multi-line text ends in a newline. */
  textEnds: boolean;
}

/** `1,234,567`. */
function grouped(n: number): string {
  return n.toLocaleString("en-US");
}

/** The default line that ends a cut value. */
export function moreLine(cut: Cut): string {
  const size = cut.bytes === undefined ? "" : ` (${formatSize(BigInt(cut.bytes))} in all)`;
  if (cut.left === null) return `… output truncated${size}`;
  const unit = cut.left === 1 ? cut.unit.slice(0, -1) : cut.unit;
  return `… ${grouped(cut.left)} more ${unit}${size}`;
}

/**
 * `p` relative to `cwd` when it lies under it (and is shorter that way), else `p`. The cwd
 * itself stays whole: `[pwd, n]` showing `.` told an agent nothing (found in a trial).
 */
export function relPath(p: string, cwd: string): string {
  if (cwd === "" || !p.startsWith("/") || p === cwd) return p;
  const base = cwd.endsWith("/") ? cwd : cwd + "/";
  return p.startsWith(base) ? p.slice(base.length) : p;
}

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

const NS_PER_SEC = 1_000_000_000n;

/**
 * One table cell: strings and paths raw (control characters escaped), null empty. For a reader
 * of text a datetime is shown to the second (`2026-12-02T04:24:12Z`): a listing's milliseconds
 * cost 4 characters a row and no one reads them; the value itself keeps them.
 */
function cellText(v: Value, max: number, o: Opts): string {
  if (v === null) return "";
  if (o.forText && v instanceof DateTimeV) {
    const frac = ((v.ns % NS_PER_SEC) + NS_PER_SEC) % NS_PER_SEC;
    return formatDateTimeUtc(new DateTimeV(v.ns - frac, v.zone));
  }
  if (typeof v === "string") {
    const s = v.length > max ? v.slice(0, max + 1) : v;
    return CONTROL.test(s) ? s.replace(/[\n\t\r\0]/g, (c) => ESCAPES[c]) : s;
  }
  if (v instanceof PathV) {
    return truncateText(o.cwd ? relPath(v.path, o.cwd) : v.path, max + 1);
  }
  return renderInlineBounded(v, max + 1, o);
}

/**
 * Whether a listing's `name` column only repeats the last segment of its `path` column in every
 * shown row (a directory listing): a reader of text is then shown `path` alone, which halves a
 * listing row, and told in the line under the table that `.name` is there — for every listing,
 * however short, so that a listing's shape does not change with its length.
 */
function nameRepeatsPath(rows: readonly Value[], shown: number, cols: string[]): boolean {
  if (!cols.includes("name") || !cols.includes("path")) return false;
  for (let r = 0; r < shown; r++) {
    const f = (rows[r] as RecordV).fields;
    const name = f.get("name");
    const path = f.get("path");
    const p = path instanceof PathV ? path.path : path;
    if (typeof name !== "string" || typeof p !== "string" || basename(p) !== name) {
      return false;
    }
  }
  return true;
}

function isNumeric(v: Value): boolean {
  return typeof v === "number" || typeof v === "bigint" || v instanceof FloatV ||
    v instanceof SizeV || v instanceof DurationV;
}

function renderTable(rows: readonly Value[], width: number, o: Opts): string {
  if (rows.length === 0) return "(empty table)";
  const shown = Math.min(rows.length, o.maxRows);
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
  const hideName = o.forText && nameRepeatsPath(rows, shown, cols);
  if (hideName) cols.splice(cols.indexOf("name"), 1);
  const cells: string[][] = [];
  const widths = cols.map((c) => cpLen(c));
  const numeric = cols.map(() => true);
  for (let r = 0; r < shown; r++) {
    const f = (rows[r] as RecordV).fields;
    const line = cols.map((c, i) => {
      const v = f.get(c) ?? null;
      if (v !== null && !isNumeric(v)) numeric[i] = false;
      const t = cellText(v, o.forText ? width * LINE_WIDTHS : width, o);
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
  // A whole last column: the others fit around its first 20 characters, and it is never cut.
  const whole = o.forText && ncols === cols.length && ncols > 1 ? widths[ncols - 1] : null;
  if (whole !== null) widths[ncols - 1] = Math.min(whole, WHOLE_LAST_FIT);
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
  if (whole !== null) widths[ncols - 1] = Math.max(widths[ncols - 1], whole);
  // Numeric columns (headers included) are right-aligned so digits line up.
  const fmt = (texts: string[]) =>
    texts.slice(0, ncols).map((t, i) => fitCell(t, widths[i], numeric[i])).join("  ").trimEnd();
  // A reader of text needs no rule under the header: the first line is the header.
  const lines = o.forText ? [fmt(cols)] : [fmt(cols), "─".repeat(Math.min(width, total()))];
  for (const line of cells) lines.push(fmt(line));
  const notes: string[] = [];
  if (rows.length > shown) {
    const cut = { unit: "rows", path: o.path, shown, left: rows.length - shown, next: shown };
    notes.push(o.more(cut as Cut));
  }
  if (ncols < cols.length) notes.push(`… ${cols.length - ncols} more columns`);
  // For a reader of text: how many rows (when all are shown), and where a hidden name went.
  const told: string[] = [];
  if (o.forText && rows.length >= COUNTED && rows.length <= shown) {
    told.push(`${grouped(rows.length)} rows`);
  }
  if (hideName) told.push(".name = last part of path, not shown");
  const said = told.length ? `(${told.join("; ")})` : "";
  if (notes.length) lines.push(said ? `${notes.join(", ")} ${said}` : notes.join(", "));
  else if (said) lines.push(said);
  return lines.join("\n");
}

function renderRecordBlock(r: RecordV, width: number, o: Opts): string {
  if (r.fields.size === 0) return "{}";
  const keys: string[] = [];
  const vals: Value[] = [];
  for (const [k, v] of r.fields) {
    if (keys.length >= o.maxRows) break;
    keys.push(renderKey(k));
    vals.push(v);
  }
  const kw = Math.min(Math.max(...keys.map(cpLen)), 30);
  const lines = keys.map((k, i) => {
    const key = fitCell(k, kw, false);
    return `${key}: ${renderInlineBounded(vals[i], Math.max(width * LINE_WIDTHS - kw - 2, 8), o)}`;
  });
  if (r.fields.size > keys.length) {
    const left = r.fields.size - keys.length;
    lines.push(
      o.more({ unit: "fields", path: o.path, shown: keys.length, left, next: keys.length }),
    );
  }
  return lines.join("\n");
}

/**
 * An item whose inline form hides what it holds: an outcome's output, a table's rows, or a list
 * too long for its line (cut there with `…`, no count and no way to page; as a block it is one
 * item a line, counted, with the `… N more items` line that pages it).
 */
function wantsBlock(v: Value, width: number, o: Opts): boolean {
  if (typeof v === "string") return v.includes("\n");
  if (v === null || typeof v !== "object") return false;
  if (v.t === "outcome" || v.t === "table") return true;
  if (v.t !== "list" || v.items.length === 0) return false;
  if (v.items.every((x) => x instanceof RecordV)) return true;
  const line = width * LINE_WIDTHS;
  return cpLen(renderInlineBounded(v, line + 1, o)) > line;
}

/** A list of mixed results as numbered sections: `[i] value`, or `[i]` and an indented block. */
function renderSections(items: readonly Value[], width: number, o: Opts): string {
  const shown = Math.min(items.length, o.maxRows);
  const lines: string[] = [];
  for (let i = 0; i < shown; i++) {
    const b = block(items[i], Math.max(width - 2, 20), { ...o, path: `${o.path}[${i}]` });
    if (!b.includes("\n")) lines.push(`[${i}] ${b}`);
    else lines.push(`[${i}]`, ...b.split("\n").map((l) => (l === "" ? l : "  " + l)));
  }
  if (items.length > shown) {
    const left = items.length - shown;
    lines.push(o.more({ unit: "items", path: o.path, shown, left, next: shown }));
  }
  return lines.join("\n");
}

function renderListBlock(items: readonly Value[], width: number, o: Opts): string {
  if (items.length === 0) return "[]";
  let allRecords = true;
  for (let i = 0; i < Math.min(items.length, o.maxRows); i++) {
    if (!(items[i] instanceof RecordV)) {
      allRecords = false;
      break;
    }
  }
  if (allRecords) return renderTable(items, width, o);
  // `[n, (ls), (git log)]` — several results asked for in one go: each its own block.
  if (items.slice(0, o.maxRows).some((x) => wantsBlock(x, width, o))) {
    return renderSections(items, width, o);
  }
  const inline = renderInlineBounded(new ListV(items as Value[]), width + 1, o);
  if (cpLen(inline) <= width) return inline;
  const shown = Math.min(items.length, o.maxRows);
  const lines: string[] = [];
  // An item is its own line, cut only far past the width: a terminal wraps it, and a reader of
  // text (an agent) must not lose the end of a log line to an 80-column cut.
  for (let i = 0; i < shown; i++) {
    lines.push(renderInlineBounded(items[i], width * LINE_WIDTHS, o));
  }
  if (items.length > shown) {
    const left = items.length - shown;
    lines.push(o.more({ unit: "items", path: o.path, shown, left, next: shown }));
  } else if (o.forText && items.length >= COUNTED) lines.push(`(${grouped(items.length)} items)`);
  return lines.join("\n");
}

/** Count `\n` in at most `LINE_SCAN` bytes of `b`; null when the scan stopped early. */
function countNewlines(b: Uint8Array): number | null {
  const end = Math.min(b.length, LINE_SCAN);
  let n = 0;
  for (let i = b.indexOf(10); i >= 0 && i < end; i = b.indexOf(10, i + 1)) n++;
  return end < b.length ? null : n;
}

/** UTF-8 bytes of `s`. */
function utf8Len(s: string): number {
  return new TextEncoder().encode(s).length;
}

/** Unicode scalars in `s`. */
function scalars(s: string): number {
  return cpLen(s);
}

/**
 * A text body: at most `maxRows` lines and `maxChars` characters of `text`, which is the start
 * of a text of `bytes` bytes (`totalLines` lines when known, null when not counted). A cut text
 * ends with the `more` line.
 */
function renderText(
  text: string,
  o: Opts,
  bytes: number | undefined,
  totalLines: number | null,
  whole: boolean,
  byteOffsets = false,
): string {
  let body = text.length > o.maxChars ? text.slice(0, o.maxChars) : text;
  const cutChars = body.length < text.length || !whole;
  const endsInNewline = !cutChars && body.endsWith("\n");
  if (endsInNewline) body = body.slice(0, -1);
  const lines = body.split("\n");
  const cutLines = lines.length > o.maxRows;
  if (!cutLines && !cutChars) {
    // Shown as lines, a text hides whether it ends in a newline (BlockOptions.textEnds).
    if (!o.textEnds || lines.length < 2) return body;
    const end = endsInNewline ? "ending in a newline" : "no newline at the end";
    return `${body}\n(${grouped(lines.length)} lines, ${end})`;
  }
  const shownLines = cutLines ? lines.slice(0, o.maxRows) : lines;
  // A character cut shows whole lines only, so the next page starts at a line start; a first
  // line longer than the cut is shown cut, and the rest counted in characters.
  const partial = !cutLines && cutChars && shownLines.length === 1;
  if (!cutLines && cutChars && !partial) shownLines.pop();
  const shown = shownLines.join("\n");
  // Bytes slice by byte, strings by character.
  const next = (byteOffsets ? utf8Len(shown) : scalars(shown)) + (partial ? 0 : 1);
  const left = totalLines === null || partial ? null : Math.max(0, totalLines - shownLines.length);
  const unit = partial ? "chars" : "lines";
  const cut: Cut = { unit, path: o.path, shown: shownLines.length, left, next };
  if (bytes !== undefined) cut.bytes = bytes;
  return `${shown}\n${o.more(cut)}`;
}

/** Lines in `text` (a trailing newline ends the last line); null when longer than the scan. */
function textLines(text: string): number | null {
  if (text.length > LINE_SCAN) return null;
  let n = 0;
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) n++;
  return text.endsWith("\n") || text === "" ? n : n + 1;
}

const lossy = new TextDecoder("utf-8");
const strict = new TextDecoder("utf-8", { fatal: true });

/** Decode a prefix of `b` strictly, tolerating a multi-byte character cut at its end. */
function utf8Prefix(b: Uint8Array, max: number): string | null {
  try {
    return strict.decode(b.subarray(0, max), { stream: true });
  } catch {
    return null;
  } finally {
    strict.decode(); // reset the streaming state
  }
}

/** Bytes: their text when they are UTF-8, else their size and first bytes in hex. */
function renderBytesBlock(b: BytesV, o: Opts): string {
  const max = o.maxChars * 4;
  const text = b.data.length === 0 ? null : utf8Prefix(b.data, max);
  if (text === null) {
    const head = [...b.data.subarray(0, 16)].map((x) => x.toString(16).padStart(2, "0"));
    const dots = b.size > 16 ? " …" : "";
    const what = b.data.length === 0 ? "empty" : `not UTF-8: ${head.join(" ")}${dots}`;
    return `${renderBytes(b)} (${what})`;
  }
  const all = b.size === b.data.length;
  const whole = all && b.data.length <= max;
  const lines = all ? countNewlines(b.data) : null;
  const total = lines === null ? null : b.data.at(-1) === 10 ? lines : lines + 1;
  const body = renderText(text, o, b.size, total, whole, true);
  // Content-store bytes end with their true size and content ref (protocol §8.3).
  return b.ref === null ? body : `${body}\n${renderBytes(b)}`;
}

/** The first `n` lines of stderr bytes, indented, with a count of the rest. */
function stderrBlock(err: Uint8Array, n: number): string {
  const text = lossy.decode(err.subarray(0, 64 * 1024)).replace(/\n$/, "");
  const lines = text.split("\n");
  const shown = lines.slice(0, n).map((l) => `  ${truncateText(l, 200)}`);
  if (lines.length > n) shown.push(`  … ${lines.length - n} more lines of stderr`);
  return shown.join("\n");
}

function renderOutcomeBlock(v: OutcomeV, width: number, o: Opts): string {
  const at = (f: string) => ({ ...o, path: o.path === "" ? f : `${o.path}.${f}` });
  let body = "";
  if (v.parsed !== undefined) {
    body = v.parsed === null ? "" : block(v.parsed, width, at("out"));
  } else if (v.stdout.length > 0) {
    // Raw output pages as `.stdout` (bytes, by byte): `.out` may be parsed JSON.
    // A command's output ending in a newline is the rule, not news: no end note here.
    const inner = { ...at("stdout"), textEnds: false };
    const cut = v.stdout.length > o.maxChars * 4;
    const text = lossy.decode(cut ? v.stdout.subarray(0, o.maxChars * 4) : v.stdout, {
      stream: cut,
    });
    if (cut) lossy.decode(); // reset the streaming state
    const all = !v.stdoutTruncated && v.stdoutRef === null;
    const whole = !cut && all;
    const lines = all ? countNewlines(v.stdout) : null;
    const total = lines === null ? null : v.stdout.at(-1) === 10 ? lines : lines + 1;
    body = renderText(text, inner, v.stdoutSize, total, whole, true);
  }
  const err = o.stderrLines > 0 && v.stderr.length > 0 ? stderrBlock(v.stderr, o.stderrLines) : "";
  // A command that worked shows its output; with none, what it said on stderr (git does).
  if (v.ok) {
    if (body !== "") return body;
    return err === "" ? renderOutcome(v) : `${renderOutcome(v)}; stderr:\n${err}`;
  }
  const how = v.signal !== null ? `killed by ${v.signal}` : `exit status ${v.status ?? -1}`;
  const status = err === "" ? `failed: ${how}` : `failed: ${how}; stderr:\n${err}`;
  return body === "" ? status : `${body}\n${status}`;
}

/** A string: quoted when it is one short line, else its text. */
function renderStrBlock(s: string, width: number, o: Opts): string {
  if (!s.includes("\n") && s.length <= width * 2) return renderInlineBounded(s, o.maxChars);
  const bytes = s.length > LINE_SCAN ? undefined : new TextEncoder().encode(s).length;
  return renderText(s, o, bytes, textLines(s), s.length <= o.maxChars);
}

function block(v: Value, width: number, o: Opts): string {
  if (v !== null && typeof v === "object") {
    switch (v.t) {
      case "table":
        return renderTable(v.rows, width, o);
      case "list":
        return renderListBlock(v.items, width, o);
      case "record":
        return renderRecordBlock(v, width, o);
      case "outcome":
        return renderOutcomeBlock(v, width, o);
      case "bytes":
        return renderBytesBlock(v, o);
      case "path":
        // A path on its own is shown whole (`pwd` must not say "."); inside rows it is relative.
        return renderPath(v.path);
      case "error":
        return v.hint ? `${renderInline(v)}\nhint: ${v.hint}` : renderInline(v);
    }
  }
  if (typeof v === "string") return renderStrBlock(v, width, o);
  return renderInlineBounded(v, o.maxChars, o);
}

/**
 * The human rendering of a value at `width` columns (§8.3 of the protocol), for people (REPL,
 * CLI) and for agents that read only text (the kernel's `render`): tables as aligned columns
 * under a header (cells cut with `…`), lists of records as tables, other long lists one item per
 * line, records as `key: value` lines, outcomes as their output followed — when they failed — by
 * their status and the first lines of stderr, text (multi-line strings, UTF-8 bytes) as its
 * lines, scalars inline; paths relative to `opts.cwd` when they lie under it. At most `maxRows`
 * rows/items/fields/lines are shown, followed by the `opts.more` line (`… N more rows`).
 */
export function renderBlock(v: Value, width = 80, opts: BlockOptions = {}): string {
  return block(v, width, {
    maxRows: opts.maxRows ?? DEFAULT_MAX_ROWS,
    maxChars: opts.maxChars ?? DEFAULT_MAX_CHARS,
    cwd: opts.cwd,
    stderrLines: opts.stderrLines ?? DEFAULT_STDERR_LINES,
    more: opts.more ?? moreLine,
    path: "",
    forText: opts.forText ?? false,
    exactSizes: opts.forText ?? false,
    textEnds: opts.textEnds ?? opts.forText ?? false,
  });
}
