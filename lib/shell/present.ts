/**
 * Values for people at a terminal: the block rendering (lib/value/render.ts) at the
 * terminal's width (or `render.width`), a bold table header when colour is on, and the rows a
 * pager can take when `render.paging = auto`. Structured command results (`ls`) show their
 * value, raw commands their bytes.
 *
 * @module
 */

import { relative } from "node:path";
import { renderBlock } from "../value/render.ts";
import { dateTimeFromEpochNs, dateTimeParts } from "../value/datetime.ts";
import { DateTimeV, ListV, OutcomeV, PathV, RecordV, TableV, type Value } from "../value/types.ts";

/** How to present values. */
export interface PresentOptions {
  /** Columns available. */
  width: number;
  /** ANSI styling allowed. */
  color: boolean;
  /** Most rows of a table or list (more when a pager will take them). */
  maxRows: number;
  /** The session cwd: paths under it are shown relative to it. */
  cwd?: string;
  /** "Now" in ns since the epoch (times within six months show the time of day, like `ls`). */
  nowNs?: bigint;
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const HALF_YEAR_NS = 183n * 86_400n * 1_000_000_000n;

/** `Dec  1 21:25` (recent) or `Dec  1  2025` (older / future), in the value's zone. */
function humanTime(dt: DateTimeV, nowNs: bigint): string {
  // People read times in their own zone.
  const p = dateTimeParts(dateTimeFromEpochNs(dt.ns));
  const day = String(p.day).padStart(2, " ");
  const recent = dt.ns <= nowNs && nowNs - dt.ns < HALF_YEAR_NS;
  const tail = recent
    ? `${String(p.hour).padStart(2, "0")}:${String(p.minute).padStart(2, "0")}`
    : ` ${p.year}`;
  return `${MONTHS[p.month - 1]} ${day} ${tail}`;
}

/** A cell for people: times in the `ls -l` style, paths relative to the cwd when shorter. */
function humanCell(v: Value, o: PresentOptions): Value {
  if (v instanceof DateTimeV) return humanTime(v, o.nowNs ?? BigInt(Date.now()) * 1_000_000n);
  if (v instanceof PathV && o.cwd !== undefined && v.path.startsWith("/")) {
    const rel = relative(o.cwd, v.path);
    if (rel !== "" && rel.length < v.path.length) return new PathV(rel);
  }
  return v;
}

/** The shown rows of a table or list of records with their cells made human. */
function humanRows(rows: readonly Value[], o: PresentOptions): Value[] | null {
  if (rows.length === 0 || !rows.every((r, i) => i >= o.maxRows || r instanceof RecordV)) {
    return null;
  }
  const out = rows.slice(0, o.maxRows).map((r) => {
    const f = new Map<string, Value>();
    for (const [k, x] of (r as RecordV).fields) f.set(k, humanCell(x, o));
    return new RecordV(f) as Value;
  });
  // The hidden rest keeps its count for the `… N more rows` line.
  return rows.length > o.maxRows ? [...out, ...rows.slice(o.maxRows)] : out;
}

/** The value as people read it (tables and lists of records only; O(shown rows)). */
function humanize(v: Value, o: PresentOptions): Value {
  if (v instanceof TableV) {
    const rows = humanRows(v.rows, o);
    return rows === null ? v : new ListV(rows);
  }
  if (v instanceof ListV) {
    const rows = humanRows(v.items, o);
    return rows === null ? v : new ListV(rows);
  }
  return v;
}

/** The terminal's width, or `fallback` when stdout is not one. */
export function terminalWidth(fallback = 80): number {
  try {
    if (Deno.stdout.isTerminal()) return Deno.consoleSize().columns || fallback;
  } catch { /* no console */ }
  return fallback;
}

/** The presentation options a configuration gives (`render.width` wins over the terminal). */
export function presentOptions(
  render: { width: number | null; color: boolean; paging: string },
  tty: boolean,
): PresentOptions {
  return {
    width: render.width ?? (tty ? terminalWidth() : 80),
    color: tty && render.color,
    maxRows: render.paging === "auto" && tty ? 10_000 : 50,
  };
}

/** Bold the header line of a block table (its second line is the `─` rule). */
function styleTable(text: string): string {
  const nl = text.indexOf("\n");
  if (nl < 0 || !text.startsWith("─", nl + 1)) return text;
  const end = text.indexOf("\n", nl + 1);
  const rule = end < 0 ? text.slice(nl + 1) : text.slice(nl + 1, end);
  const rest = end < 0 ? "" : text.slice(end);
  return `\x1b[1m${text.slice(0, nl)}\x1b[0m\n\x1b[2m${rule}\x1b[0m${rest}`;
}

/** True for a builtin result people read as a table or a record (`ls`, `stat`), not bytes. */
export function isStructured(v: Value): boolean {
  return v instanceof OutcomeV && v.ok &&
    (v.parsed instanceof ListV || v.parsed instanceof TableV || v.parsed instanceof RecordV);
}

/** A value as text for the terminal (no trailing newline). */
export function present(v: Value, o: PresentOptions): string {
  const shown = v instanceof OutcomeV && v.parsed !== undefined && v.ok ? v.parsed : v;
  const text = renderBlock(humanize(shown, o), o.width, { maxRows: o.maxRows });
  return o.color ? styleTable(text) : text;
}
