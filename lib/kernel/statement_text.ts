/**
 * What a statement's value adds to an exec's output (the evaluator's sink), as a terminal
 * would show it: a command's output text; a list, record or table (a builtin's, like `ls` on
 * the way, or a plain value) as the block a final value would get, not one long inline line.
 * For a reader of text (not a tty) `rm`'s rows are one line of what moved — a loop of `rm`s is
 * otherwise a table per file, each with a long `restore` command the final value repeats.
 *
 * @module
 */

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

/** The text `v` (a statement's value) adds to the exec's output; ends in a newline or is "". */
export function statementText(v: Value, reader: StatementReader): string {
  const shown = v instanceof OutcomeV && v.pid === 0 && v.parsed !== undefined ? v.parsed : v;
  let text: string;
  const moved = reader.tty ? null : trashedPaths(shown);
  if (moved !== null) text = trashLine(moved, reader.cwd);
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

/** The original paths of `rm`'s rows (records of exactly path, trash, restore); else null. */
function trashedPaths(v: Value): string[] | null {
  if (!(v instanceof ListV) || v.items.length === 0) return null;
  const out: string[] = [];
  for (const r of v.items) {
    if (!(r instanceof RecordV) || r.fields.size !== 3) return null;
    const p = r.fields.get("path");
    if (!(p instanceof PathV) || !(r.fields.get("trash") instanceof PathV)) return null;
    if (typeof r.fields.get("restore") !== "string") return null;
    out.push(p.path);
  }
  return out;
}

function trashLine(paths: string[], cwd: string): string {
  const named = paths.slice(0, TRASH_NAMED).map((p) => relPath(p, cwd)).join(", ");
  const more = paths.length > TRASH_NAMED ? ` … ${paths.length - TRASH_NAMED} more` : "";
  return `moved to the trash (undo puts back): ${named}${more}`;
}
