/**
 * What a statement's value adds to an exec's output (the evaluator's sink), as a terminal
 * would show it: a command's output text; a list, record or table (a builtin's, like `ls` on
 * the way, or a plain value) as the block a final value would get, not one long inline line.
 * For a reader of text (not a tty) `rm`'s rows are one line of what moved (`trashText`) — a
 * loop of `rm`s is otherwise a table per file, each with a long `restore` command.
 *
 * @module
 */

import { dirname } from "node:path";
import { hasAdaptedValue } from "../eval/adapters/mod.ts";
import { isCommandExpr } from "../eval/expressions.ts";
import type { Stmt } from "../syntax/ast.ts";
import { displayTop, readerWidth, relPath, renderBlock } from "../value/render.ts";
import { ListV, OutcomeV, PathV, RecordV, TableV, type Value } from "../value/types.ts";

const lossy = new TextDecoder();

/** Paths named in one trash line; the rest are counted. */
const TRASH_NAMED = 20;

/** Who reads the exec's output. */
export interface StatementReader {
  /** The session's directory (paths under it are shown relative). */
  cwd: string;
  /** A terminal (else a reader of text: an agent, a pipe). */
  tty: boolean;
}

/** Characters of a statement's source its label shows. */
const LABEL_CHARS = 72;

/** A builtin's outcome (`rm f` as a statement) is its value. */
function builtinValue(v: Value): Value {
  return v instanceof OutcomeV && v.pid === 0 && v.parsed !== undefined ? v.parsed : v;
}

/** The text `v` (a statement's value) adds to the exec's output; ends in a newline or is "". */
export function statementText(v: Value, reader: StatementReader): string {
  const shown = builtinValue(v);
  let text: string;
  const moved = reader.tty ? null : trashText(shown, reader.cwd);
  if (moved !== null) text = moved;
  else if (
    hasAdaptedValue(v) || shown instanceof ListV || shown instanceof RecordV ||
    shown instanceof TableV
  ) {
    text = renderBlock(shown, readerWidth(reader.tty), { cwd: reader.cwd, forText: !reader.tty });
  } else if (v instanceof OutcomeV) text = lossy.decode(v.stdout);
  else text = displayTop(v);
  return text === "" || text.endsWith("\n") ? text : text + "\n";
}

/** A top-level statement and the exec's source it was parsed from. */
export interface StatementSource {
  stmt: Stmt;
  src: string;
}

/**
 * `› SOURCE` and a newline for a top-level expression statement read as text ("" for a tty, a
 * command or another statement): its value comes under its source, `› "…".save("f")` — a
 * `.save` and a read-back of the same text otherwise look like one file written twice. The
 * final value gets one too once an earlier one had it.
 */
export function statementLabel(from: StatementSource, reader: StatementReader): string {
  const st = from.stmt;
  if (reader.tty || st.kind !== "ExprStmt" || isCommandExpr(st.expr)) return "";
  // A statement's span starts at its expression, inside any parentheses it opens with.
  let s = st.span[0];
  while (s > 0 && /[(\s]/.test(from.src[s - 1]) && from.src[s - 1] !== "\n") s--;
  return `› ${label(from.src.slice(s, st.span[1]))}\n`;
}

function label(src: string): string {
  const line = src.split("\n", 1)[0].trim();
  const more = line.length < src.trim().length;
  return line.length > LABEL_CHARS
    ? line.slice(0, LABEL_CHARS - 1) + "…"
    : more
    ? `${line} …`
    : line;
}

/** `rm`'s rows (records of exactly path, trash, restore), as [original, trash]; else null. */
function trashedPaths(v: Value): Array<[string, string]> | null {
  if (!(v instanceof ListV) || v.items.length === 0) return null;
  const out: Array<[string, string]> = [];
  for (const r of v.items) {
    if (!(r instanceof RecordV) || r.fields.size !== 3) return null;
    const p = r.fields.get("path");
    const t = r.fields.get("trash");
    if (!(p instanceof PathV) || !(t instanceof PathV)) return null;
    if (typeof r.fields.get("restore") !== "string") return null;
    out.push([p.path, t.path]);
  }
  return out;
}

/**
 * What `rm` did, for a reader of text — as a statement on the way or as the exec's value: one
 * line naming what moved (relative to `cwd`) and the trash directory, once; `undo` brings them
 * back. Null for other values. (A table of `rm`'s rows repeats two absolute paths and a
 * restore command per file: 120 characters a file, for nothing the agent acts on.)
 */
export function trashText(v: Value, cwd: string): string | null {
  const moved = trashedPaths(builtinValue(v));
  if (moved === null) return null;
  const named = moved.slice(0, TRASH_NAMED).map(([p]) => relPath(p, cwd)).join(", ");
  const more = moved.length > TRASH_NAMED ? ` … ${moved.length - TRASH_NAMED} more` : "";
  const dirs = [...new Set(moved.map(([, t]) => dirname(t)))].slice(0, 3).join(", ");
  return `moved to the trash in ${dirs} (undo puts back): ${named}${more}`;
}
