/**
 * Rewrites for bash-shaped source (issue 13): when a parse error comes from shell syntax —
 * a pipe, a `$` sigil, backticks, `2>&1`, a heredoc, `export X=…`, `for … do … done` — the
 * whole source is rewritten into (1) Shoal's native form where the translation is mechanical
 * and (2) the same shell text run by `sh { … }`, which still returns a structured outcome.
 * A rewrite is offered only if the rewritten source parses; later bash-isms in the same
 * source are fixed in further rounds.
 *
 * @module
 */

import type { ParseError, Rewrite } from "../errors.ts";
import { statementEnd } from "./lex.ts";
import {
  assignment,
  commandExpr,
  type Ctx,
  exportStmt,
  forLoop,
  valueExpr,
  valuePipeline,
} from "./native.ts";
import { BashLexer, BashSyntax, type Word } from "./lex.ts";

/** A raw parse: null when `src` parses, else its error (UTF-16 span and site). */
export type Reparse = (src: string) => ParseError | null;

/** Diagnostics that mean "this is shell syntax". */
const BASH_MSG =
  /no pipe operator|variables have no sigil|backtick is not shoal|no heredocs|no here-strings|no stream-merging|no fd-numbered/;

/** Sources longer than this get no rewrites (each round re-parses the whole text). */
const MAX_SRC = 64 * 1024;

/** Rounds of "fix the first bash-ism, re-parse". */
const MAX_ROUNDS = 8;

interface Fix {
  start: number;
  end: number;
  text: string;
}

/** The rewrites for `err` (raised parsing `src`): native first, then sh; [] when none. */
export function bashRewrites(src: string, err: ParseError, reparse: Reparse, ctx: Ctx): Rewrite[] {
  if (src.length > MAX_SRC) return [];
  const out: Rewrite[] = [];
  for (const form of ["native", "sh"] as const) {
    const fixed = rewriteAll(src, err, form, reparse, ctx);
    if (fixed !== null && fixed !== src && !out.some((r) => r.src === fixed)) {
      out.push({ form, src: fixed });
    }
  }
  return out;
}

function rewriteAll(
  src: string,
  err: ParseError,
  form: Rewrite["form"],
  reparse: Reparse,
  ctx: Ctx,
): string | null {
  let cur = src;
  let e: ParseError | null = err;
  for (let round = 0; round < MAX_ROUNDS && e !== null; round++) {
    let fix: Fix | null;
    try {
      fix = fixOne(cur, e, form, ctx);
    } catch (x) {
      if (x instanceof BashSyntax) return null;
      throw x;
    }
    if (fix === null || cur.slice(fix.start, fix.end) === fix.text) return null;
    cur = cur.slice(0, fix.start) + fix.text + cur.slice(fix.end);
    e = reparse(cur);
  }
  return e === null ? cur : null;
}

/** Statement-start words that make a whole statement shell syntax. */
const SHELL_HEADS = /^(for|while|until|if|case|export|function)\b|^[A-Za-z_][A-Za-z0-9_]*=/;

/** `for`/`while`/`if` written the shell way (`do`/`then`), not Shoal's `{ … }`. */
function shellCompound(region: string): boolean {
  if (!/^(for|while|until|if|case)\b/.test(region)) return true;
  return /(^|[;\n])\s*(do|then)\b/.test(region) || /^case\b/.test(region);
}

/** One fix for the first error, or null when it is not shell syntax (or has no `form`). */
function fixOne(src: string, e: ParseError, form: Rewrite["form"], ctx: Ctx): Fix | null {
  const stmt = e.site.stmt ?? lineStart(src, e.span[0]);
  const inCommand = e.site.cmd !== undefined && e.site.cmd >= stmt;
  const start = inCommand ? e.site.cmd! : stmt;
  const bashMsg = BASH_MSG.test(e.msg);
  const rest = src.slice(start, start + 4096);
  const shellStmt = inCommand ? bashMsg : SHELL_HEADS.test(rest) && shellCompound(rest);
  if (shellStmt) return statementFix(src, start, e, form, ctx);
  if (!bashMsg) return null;
  // The shell bit sits inside a Shoal expression: `let n = ls | wc -l`, `let x = $(…)`.
  if (/no pipe operator/.test(e.msg)) return pipeFix(src, stmt, e.span[0], form);
  return form === "native" ? expressionFix(src, e, ctx) : letShFix(src, stmt, ctx);
}

/** The whole shell statement at `start` (a command, a loop, an assignment) rewritten. */
function statementFix(
  src: string,
  start: number,
  e: ParseError,
  form: Rewrite["form"],
  ctx: Ctx,
): Fix | null {
  const end = Math.max(statementEnd(src, start), Math.min(e.span[1], lineEnd(src, start)));
  const region = src.slice(start, end).trimEnd();
  const regionEnd = start + region.length;
  const a = oneWordAssignment(region, ctx);
  let text: string | null;
  if (form === "sh") {
    text = a !== null ? shValue("let", a.name, a.raw, ctx) : shBlock(region);
    if (text !== null && a === null) text = withBound(text, region, ctx);
  } else if (a !== null) text = `let ${a.name} = ${a.value}`;
  else if (/^for\b/.test(region)) text = forLoop(region, ctx);
  else if (/^export\b/.test(region)) text = exportStmt(region, ctx);
  else if (/^(while|until|if|case|function)\b/.test(region)) text = null;
  else text = commandExpr(region, ctx)?.text ?? null;
  return text === null ? null : { start, end: regionEnd, text };
}

const LET_PREFIX = /^(let|var)\s+([A-Za-z_][A-Za-z0-9_]*)\s*=\s*/;

/** `VALUE | filters` where VALUE is Shoal (`ls`, `(git log)`, `xs`): one method chain. */
function pipeFix(src: string, stmt: number, pipe: number, form: Rewrite["form"]): Fix | null {
  const m = LET_PREFIX.exec(src.slice(stmt));
  const vs = m ? stmt + m[0].length : stmt;
  const value = src.slice(vs, pipe).trim();
  const end = statementEnd(src, pipe + 1);
  const stop = pipe + 1 + src.slice(pipe + 1, end).trimEnd().length;
  const filters = src.slice(pipe + 1, stop).trim();
  if (form === "native") {
    const text = valuePipeline(value, filters);
    return text === null ? null : { start: vs, end: stop, text };
  }
  // Only a plain command on the left is shell too (`ls`, `(git log)`), not `xs.map(f)`.
  const cmd = /^\(?\s*([A-Za-z_][\w-]*(\s+[^|(){}]*)?)\)?$/.exec(value);
  if (cmd === null) return null;
  const block = shBlock(`${cmd[1].trim()} | ${filters}`);
  if (block === null) return null;
  return { start: vs, end: stop, text: m ? `${block}.out` : block };
}

/** `NAME=value` alone (a shell variable assignment), with its value in Shoal and as shell. */
function oneWordAssignment(
  region: string,
  ctx: Ctx,
): { name: string; value: string; raw: string } | null {
  const lx = new BashLexer(region, 0);
  const w = lx.next();
  if (w === null || w.k !== "word" || lx.next() !== null) return null;
  const a = assignment(w, ctx);
  if (a === null) return null;
  return { ...a, raw: region.slice(region.indexOf("=") + 1) };
}

/** `sh { region }` (or `sh '''…'''`), multi-line when the region is. */
function shBlock(region: string): string | null {
  if (balanced(region)) return region.includes("\n") ? `sh {\n${region}\n}` : `sh { ${region} }`;
  if (!region.includes("'''") && !region.includes("\n")) return `sh'''${region}'''`;
  return null;
}

/** `let name = sh { cmd }.out` for a shell value (`$(cmd)` or any word, via `echo`). */
function shValue(keyword: string, name: string, raw: string, ctx: Ctx): string | null {
  const v = raw.trim();
  const sub = /^\$\((.*)\)$/s.exec(v) ?? /^`(.*)`$/s.exec(v);
  // A value's shell text: a `$(…)`'s command, a word through `echo`, else a command line.
  const body = sub ? sub[1].trim() : /^\S+$/.test(v) ? `echo ${v}` : v;
  const block = shBlock(body);
  if (block === null) return null;
  const run = withBound(block, body, ctx);
  return `${keyword} ${name} = ${run === block ? block : `(${run})`}.out`;
}

/**
 * `sh` sees environment variables, not Shoal bindings: a `$x` naming a Shoal value is passed
 * in with `with env: {x: x} { … }`.
 */
function withBound(block: string, shell: string, ctx: Ctx): string {
  const names = new Set<string>();
  for (const m of shell.matchAll(/\$\{?([A-Za-z_][A-Za-z0-9_]*)/g)) {
    if (ctx.bound(m[1])) names.add(m[1]);
  }
  if (names.size === 0) return block;
  return `with env: {${[...names].map((n) => `${n}: ${n}`).join(", ")}} { ${block} }`;
}

/** `let x = $(…)` in sh form: the value computed by sh. */
function letShFix(src: string, start: number, ctx: Ctx): Fix | null {
  const m = LET_PREFIX.exec(src.slice(start));
  if (!m) return null;
  const vs = start + m[0].length;
  const end = statementEnd(src, vs);
  const raw = src.slice(vs, end).trimEnd();
  const text = shValue(m[1], m[2], raw, ctx);
  return text === null ? null : { start, end: vs + raw.length, text };
}

/** The `$…` / backtick token at the error as a Shoal value (`env.X`, `x`, `(cmd).out`). */
function expressionFix(src: string, e: ParseError, ctx: Ctx): Fix | null {
  const at = e.span[0];
  if (src[at] !== "$" && src[at] !== "`") return null;
  const lx = new BashLexer(src, at, lineEnd(src, at));
  const t = lx.next();
  if (t === null || t.k !== "word") return null;
  // Only the expansion itself: stop before any Shoal text glued to it (`$x.len()`).
  const w: Word = { ...t, parts: t.parts.slice(0, 1) };
  const p = t.parts[0];
  const len = p.k === "var"
    ? rawLength(src, at)
    : p.k === "sub"
    ? (src[at] === "`" ? src.indexOf("`", at + 1) + 1 - at : closing(src, at))
    : -1;
  if (len <= 0) return null;
  const v = valueExpr(w, ctx);
  return v === null ? null : { start: at, end: at + len, text: v };
}

function rawLength(src: string, at: number): number {
  if (src[at + 1] === "{") return src.indexOf("}", at) + 1 - at;
  const m = /^\$[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(at, at + 256));
  return m ? m[0].length : -1;
}

function closing(src: string, at: number): number {
  let depth = 0;
  for (let i = at + 1; i < src.length; i++) {
    if (src[i] === "(") depth++;
    else if (src[i] === ")" && --depth === 0) return i + 1 - at;
  }
  return -1;
}

/** True when `{`/`}` balance outside quotes (what an interpreter block needs). */
function balanced(s: string): boolean {
  let depth = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '"') {
      i++;
      while (i < s.length && s[i] !== '"') i += s[i] === "\\" ? 2 : 1;
      if (i >= s.length) return false;
    } else if (c === "'") {
      const q = s.indexOf("'", i + 1);
      if (q < 0) return false;
      i = q;
    } else if (c === "{") depth++;
    else if (c === "}" && --depth < 0) return false;
  }
  return depth === 0;
}

function lineStart(src: string, at: number): number {
  return src.lastIndexOf("\n", Math.max(0, at - 1)) + 1;
}

function lineEnd(src: string, at: number): number {
  const n = src.indexOf("\n", at);
  return n < 0 ? src.length : n;
}
