/**
 * Parse diagnostics. The teaching text lives in `msg` (the conformance corpus matches needles
 * against the message), optional advice in `hint`, and `span` is a byte range into the UTF-8
 * source.
 */

import type { Span } from "./ast.ts";

/** A syntax error: the only exception the lexer and parser ever throw. */
export class ParseError extends Error {
  /** The diagnostic text (also the `Error.message`). */
  msg: string;
  /** Advice on how to fix it, or null. */
  hint: string | null;
  /** Byte offsets `[start, end)` into the UTF-8 source. */
  span: Span;

  /** Builds an error; `span` is in source offsets (converted to bytes by `parse`). */
  constructor(msg: string, span: Span, hint: string | null = null) {
    super(msg);
    this.name = "ParseError";
    this.msg = msg;
    this.hint = hint;
    this.span = span;
  }
}
