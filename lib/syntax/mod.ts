/**
 * The Shoal front end: `parse(src)` turns source text into the AST of `ast.ts` (spans in UTF-8
 * bytes) or throws a `ParseError`.
 */

import type { Node, Program } from "./ast.ts";
import { ParseError } from "./errors.ts";
import { type ParseOptions, Parser } from "./parser.ts";
import { parseProgram } from "./parse_stmt.ts";
import { byteOffsets, convertSpan, convertTree } from "./spans.ts";

export * from "./ast.ts";
export { ParseError } from "./errors.ts";
export type { ParseOptions } from "./parser.ts";

/**
 * Parses a whole source unit. Script mode by default; `repl` enables `it`/`out` and the
 * leading-`.` continuation; `valueNames`/`commandNames` pre-seed the root scope with a
 * session's bindings. Throws only `ParseError`.
 */
export function parse(src: string, opts: ParseOptions = {}): Program {
  const map = byteOffsets(src);
  let program: Program;
  try {
    program = parseProgram(new Parser(src, opts));
  } catch (e) {
    const err = asParseError(e, src);
    if (map) err.span = convertSpan(map, err.span);
    throw err;
  }
  if (map) convertTree(map, program);
  return program;
}

/** The result of `tryParse`. */
export type ParseResult = { ok: true; program: Program } | { ok: false; error: ParseError };

/** Like `parse`, but returns the error instead of throwing. */
export function tryParse(src: string, opts: ParseOptions = {}): ParseResult {
  try {
    return { ok: true, program: parse(src, opts) };
  } catch (e) {
    return { ok: false, error: e as ParseError };
  }
}

function asParseError(e: unknown, src: string): ParseError {
  if (e instanceof ParseError) return e;
  if (e instanceof RangeError && /call stack/i.test(e.message)) {
    return new ParseError("nesting too deep", [0, src.length], "split the expression with let");
  }
  const msg = e instanceof Error ? e.message : String(e);
  return new ParseError(`internal parser error: ${msg}`, [0, src.length]);
}

/**
 * Visits every node (objects with a `kind`) depth-first, parents before children, including
 * nodes inside args, fields, arms, params and redirects. Return `false` to skip a node's
 * children.
 */
export function walk(node: Node, visit: (n: Node) => boolean | void): void {
  const go = (v: unknown): void => {
    if (v === null || typeof v !== "object") return;
    if (Array.isArray(v)) {
      for (const x of v) go(x);
      return;
    }
    const o = v as Record<string, unknown>;
    if (typeof o.kind === "string" && visit(o as unknown as Node) === false) return;
    for (const k in o) {
      if (k !== "span" && k !== "headSpan") go(o[k]);
    }
  };
  go(node);
}
