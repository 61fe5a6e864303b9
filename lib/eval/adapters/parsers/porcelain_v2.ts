/**
 * `porcelain-v2`: `git status --porcelain=v2` (with `-z`: NUL-terminated entries and raw
 * paths; without: one entry per line, special paths C-quoted, a rename's two paths split by a
 * tab) as a table of `{status, state, path, orig}` — per git-status(1) "Porcelain Format
 * Version 2": ordinary (`1`), renamed/copied (`2`), unmerged (`u`), untracked (`?`) and
 * ignored (`!`) entries; `#` header lines are skipped. `status` is the two-letter `XY` code
 * (index, worktree; `.` = unchanged) or `?`/`!`; `state` one word for it: modified, added,
 * deleted, renamed, copied, typechange, unmerged, untracked, ignored. Paths are relative to
 * the repository root, as git prints them. Any other line fails the whole parse.
 *
 * @module
 */

import { PathV, RecordV, TableV, type Value } from "../../../value/types.ts";
import { ParseFailure } from "./common.ts";

const STATE: Record<string, string> = {
  M: "modified",
  T: "typechange",
  A: "added",
  D: "deleted",
  R: "renamed",
  C: "copied",
  U: "unmerged",
};

/** The one-word state of an ordinary or renamed entry's `XY`. */
function stateOf(xy: string): string {
  if (xy.includes("R")) return "renamed";
  if (xy.includes("C")) return "copied";
  const c = xy[0] !== "." ? xy[0] : xy[1];
  const s = STATE[c];
  if (s === undefined) throw new ParseFailure(`unknown status code \`${xy}\``);
  return s;
}

const XY = /^[.MTADRCU]{2}$/;

/** Undo git's C-style quoting of a path (`"a\tb\303\251"`), which it uses without `-z`. */
export function unquoteCPath(p: string): string {
  if (!(p.length >= 2 && p.startsWith('"') && p.endsWith('"'))) return p;
  const bytes: number[] = [];
  const enc = new TextEncoder();
  const esc: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13 };
  for (let i = 1; i < p.length - 1; i++) {
    const c = p[i];
    if (c !== "\\") {
      bytes.push(...enc.encode(c));
      continue;
    }
    const d = p[++i];
    if (d === undefined) throw new ParseFailure("a quoted path ends in `\\`");
    if (/[0-7]/.test(d)) {
      const oct = p.slice(i, i + 3);
      if (!/^[0-7]{3}$/.test(oct)) throw new ParseFailure(`bad octal escape in ${p}`);
      bytes.push(parseInt(oct, 8));
      i += 2;
    } else if (esc[d] !== undefined) bytes.push(esc[d]);
    else bytes.push(...enc.encode(d));
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(new Uint8Array(bytes));
  } catch {
    throw new ParseFailure(`a quoted path is not UTF-8: ${p}`);
  }
}

function row(status: string, state: string, path: string, orig: string | null): RecordV {
  return new RecordV(
    new Map<string, Value>([
      ["status", status],
      ["state", state],
      ["path", new PathV(path)],
      ["orig", orig === null ? null : new PathV(orig)],
    ]),
  );
}

/** Everything after the `n`th space of `s` (a path may itself contain spaces). */
function afterFields(s: string, n: number, what: string): string {
  let at = -1;
  for (let k = 0; k < n; k++) {
    at = s.indexOf(" ", at + 1);
    if (at < 0) throw new ParseFailure(`short ${what} entry: ${s.slice(0, 60)}`);
  }
  const rest = s.slice(at + 1);
  if (rest === "") throw new ParseFailure(`${what} entry without a path`);
  return rest;
}

/** Parse porcelain v2 status output. */
export function parsePorcelainV2(text: string): Value {
  const z = text.includes("\0");
  const entries = z ? text.split("\0") : text.split("\n");
  if (entries[entries.length - 1] === "") entries.pop();
  const rows: RecordV[] = [];
  const path = (p: string) => (z ? p : unquoteCPath(p));
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i];
    const kind = e.slice(0, 2);
    if (e.startsWith("# ")) continue;
    if (kind === "? " || kind === "! ") {
      const p = e.slice(2);
      if (p === "") throw new ParseFailure("untracked entry without a path");
      rows.push(row(e[0], e[0] === "?" ? "untracked" : "ignored", path(p), null));
      continue;
    }
    const xy = e.slice(2, 4);
    if (!XY.test(xy) || e[4] !== " ") {
      throw new ParseFailure(`entry ${i + 1} is not porcelain v2: ${e.slice(0, 60)}`);
    }
    if (kind === "1 ") {
      rows.push(row(xy, stateOf(xy), path(afterFields(e, 8, "ordinary")), null));
    } else if (kind === "2 ") {
      let p = afterFields(e, 9, "rename");
      let orig: string;
      if (z) {
        const next = entries[++i];
        if (next === undefined || next === "") throw new ParseFailure("rename without its source");
        orig = next;
      } else {
        const tab = p.indexOf("\t");
        if (tab < 0) throw new ParseFailure("rename without its source");
        orig = unquoteCPath(p.slice(tab + 1));
        p = p.slice(0, tab);
      }
      rows.push(row(xy, stateOf(xy), path(p), orig));
    } else if (kind === "u ") {
      rows.push(row(xy, "unmerged", path(afterFields(e, 10, "unmerged")), null));
    } else {
      throw new ParseFailure(`entry ${i + 1} is not porcelain v2: ${e.slice(0, 60)}`);
    }
  }
  return new TableV(rows);
}
