/**
 * How the CLI shows an error: `error[code]: msg`, the source line with a caret under the span,
 * and `hint: …` (colour at a terminal that wants it).
 *
 * @module
 */

import type { Span } from "../syntax/ast.ts";

const enc = new TextEncoder();

/** Line/column (1-based, columns in characters) of a UTF-8 byte offset. */
function locate(src: string, byteOff: number): { line: number; col: number; text: string } {
  const bytes = enc.encode(src);
  const before = new TextDecoder().decode(bytes.subarray(0, Math.min(byteOff, bytes.length)));
  const lines = before.split("\n");
  const line = lines.length;
  const col = Array.from(lines[lines.length - 1]).length + 1;
  const text = src.split("\n")[line - 1] ?? "";
  return { line, col, text };
}

/** `error[code]: msg`, the source line with a caret under the span, and the hint. */
export function formatDiagnostic(
  code: string,
  msg: string,
  hint: string | null | undefined,
  span: Span | null | undefined,
  src: string,
  file: string,
  color = false,
): string {
  const red = (s: string) => (color ? `\x1b[1;31m${s}\x1b[0m` : s);
  const dim = (s: string) => (color ? `\x1b[2m${s}\x1b[0m` : s);
  let out = `${red(`error[${code}]`)}: ${msg}\n`;
  if (span) {
    const at = locate(src, span[0]);
    const end = locate(src, Math.max(span[0], span[1]));
    const width = end.line === at.line ? Math.max(1, end.col - at.col) : 1;
    const gutter = String(at.line).length;
    out += dim(`${" ".repeat(gutter)}--> ${file}:${at.line}:${at.col}`) + "\n";
    out += `${dim(`${at.line} |`)} ${at.text}\n`;
    out += `${dim(`${" ".repeat(gutter)} |`)} ${" ".repeat(at.col - 1)}${red("^".repeat(width))}\n`;
  }
  if (hint) out += `hint: ${hint}\n`;
  return out;
}
