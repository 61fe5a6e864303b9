/**
 * Presenting parse errors: byte offsets → line/column, and a caret-underlined rendering of the
 * offending line for terminals (CLI, REPL).
 */

import type { Span } from "./ast.ts";
import type { ParseError } from "./errors.ts";

/** A 1-based line and column (the column counts Unicode code points). */
export interface LineCol {
  line: number;
  col: number;
}

/** The UTF-16 index of UTF-8 byte offset `byte` in `src` (clamped to the source). */
function indexOfByte(src: string, byte: number): number {
  let b = 0;
  let i = 0;
  while (i < src.length && b < byte) {
    const cp = src.codePointAt(i)!;
    b += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    i += cp > 0xffff ? 2 : 1;
  }
  return i;
}

/** The line and column of UTF-8 byte offset `byte` in `src`. */
export function lineCol(src: string, byte: number): LineCol {
  const idx = indexOfByte(src, Math.max(0, byte));
  const before = src.slice(0, idx);
  const nl = before.lastIndexOf("\n");
  return { line: before.split("\n").length, col: [...before.slice(nl + 1)].length + 1 };
}

/**
 * Renders `err` against `src`:
 *
 * ```text
 * parse error: shoal variables have no sigil
 *  --> line 1, col 6
 *   |
 * 1 | echo $HOME
 *   |      ^
 *   = hint: write the name directly …
 * ```
 */
export function renderParseError(src: string, err: ParseError, origin = ""): string {
  const span: Span = err.span;
  const start = lineCol(src, span[0]);
  const lines = src.split("\n");
  const text = (lines[start.line - 1] ?? "").replace(/\r$/, "");
  const chars = [...text];
  // underline to the span end when it is on the same line, else to the end of the line
  const endIdx = indexOfByte(src, span[1]);
  const end = src.slice(0, endIdx).split("\n").length === start.line
    ? lineCol(src, span[1]).col
    : chars.length + 1;
  const width = Math.max(1, end - start.col);
  const gutter = String(start.line).length;
  const pad = " ".repeat(gutter);
  const where = origin
    ? `${origin}:${start.line}:${start.col}`
    : `line ${start.line}, col ${start.col}`;
  const caretPad = chars.slice(0, start.col - 1).map((c) => (c === "\t" ? "\t" : " ")).join("");
  const out = [
    `parse error: ${err.msg}`,
    `${pad}--> ${where}`,
    `${pad} |`,
    `${start.line} | ${text}`,
    `${pad} | ${caretPad}${"^".repeat(width)}`,
  ];
  // Continuation lines of a hint (a rewritten source) line up under its first line.
  if (err.hint) out.push(`${pad} = hint: ${err.hint.replaceAll("\n", `\n${pad}   `)}`);
  return out.join("\n");
}
