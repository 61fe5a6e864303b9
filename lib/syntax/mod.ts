/**
 * The Shoal front end: `parse(src)` turns source text into the AST of `ast.ts` (spans in UTF-8
 * bytes) or throws a `ParseError`.
 */

import type { Node, Program } from "./ast.ts";
import { ParseError } from "./errors.ts";
import { bindingScope, type ParseOptions, Parser } from "./parser.ts";
import { parseProgram } from "./parse_stmt.ts";
import { bashRewrites } from "./bash/mod.ts";
import type { Ctx } from "./bash/native.ts";
import { byteOffsets, convertSpan, convertTree } from "./spans.ts";

export * from "./ast.ts";
export { ParseError, type Rewrite } from "./errors.ts";
export { type LineCol, lineCol, renderParseError } from "./diagnostics.ts";
export { type Binding, bindingScope, type ParseOptions } from "./parser.ts";

/**
 * Parses a whole source unit. Script mode by default; `repl` enables `it`/`out` and the
 * leading-`.` continuation; `valueNames`/`commandNames` pre-seed the root scope with a
 * session's bindings. Throws only `ParseError`.
 */
export function parse(src: string, opts: ParseOptions = {}): Program {
  const map = byteOffsets(src);
  try {
    const program = parseProgram(new Parser(src, opts));
    if (map) convertTree(map, program);
    return program;
  } catch (e) {
    const err = asParseError(e, src);
    // Rewrites work on the source's own (UTF-16) offsets: keep a copy before converting.
    const raw = new ParseError(err.msg, err.span, err.baseHint);
    raw.site = err.site;
    err.setRewriter(() => bashRewrites(src, raw, (s) => rawError(s, opts), boundIn(src, opts)));
    if (map) err.span = convertSpan(map, err.span);
    throw err;
  }
}

/** The error of parsing `src` with UTF-16 spans and no rewrites, or null when it parses. */
function rawError(src: string, opts: ParseOptions): ParseError | null {
  try {
    parseProgram(new Parser(src, opts));
    return null;
  } catch (e) {
    return asParseError(e, src);
  }
}

/** Which names a rewrite may treat as Shoal values (`$x` → `x`): session or source bindings. */
function boundIn(src: string, opts: ParseOptions): Ctx {
  const session = opts.bindings ?? bindingScope(opts);
  return {
    bound: (name) =>
      session.get(name) === "value" ||
      // Shoal's own binders only: `let x`, `var x`, `for x in … {` (not the shell's `for … do`).
      new RegExp(`\\b(let|var)\\s+${name}\\b|\\bfor\\s+${name}\\s+in\\b[^;\\n]*\\s\\{(\\s|$)`).test(
        src,
      ),
  };
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
  // iterative pre-order (children pushed in reverse so they pop in source order)
  const stack: unknown[] = [node];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== "object") continue;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push(v[i]);
      continue;
    }
    const o = v as Record<string, unknown>;
    if (typeof o.kind === "string" && visit(o as unknown as Node) === false) continue;
    const keys = Object.keys(o);
    for (let i = keys.length - 1; i >= 0; i--) {
      const k = keys[i];
      if (k !== "span" && k !== "headSpan") stack.push(o[k]);
    }
  }
}
