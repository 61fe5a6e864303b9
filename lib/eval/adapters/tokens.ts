/**
 * Command words → binder tokens: {@link evalTokens} evaluates every word (a call about to
 * run), {@link staticTokens} reads only what the source says (a plan derived before running: a
 * `(expr)` or interpolated word is {@link UNKNOWN}), {@link valueTokens} reads evaluated words
 * (`run NAME …`).
 *
 * @module
 */

import type { CmdArg, Expr, Span } from "../../syntax/ast.ts";
import { GlobV, PathV, type Value } from "../../value/types.ts";
import { type MaybePromise, then } from "../maybe.ts";
import type { Scope } from "../scope.ts";
import type { Evaluator } from "../evaluator.ts";
import { wordValue } from "../commands.ts";
import type { Token } from "./bind.ts";
import { type BoundValue, UNKNOWN } from "./effects.ts";

function token(a: CmdArg, v: () => MaybePromise<BoundValue>): MaybePromise<Token> {
  switch (a.kind) {
    case "FlagShort":
      return { k: "short", chars: a.chars, span: a.span };
    case "DashDash":
      return { k: "dd", span: a.span };
    case "FlagLong":
      if (a.value === undefined) return { k: "long", name: a.name, raw: a.raw, span: a.span };
      return then(v(), (value) => ({ k: "long", name: a.name, raw: a.raw, value, span: a.span }));
    case "Dash":
      return { k: "word", v: "-", literal: true, span: a.span };
    case "Word":
      return { k: "word", v: a.text, literal: true, span: a.span };
  }
  return then(v(), (x) => ({ k: "word", v: x, literal: false, span: a.span }));
}

/** Evaluate `args` into tokens (glob words stay unexpanded globs: binding decides). */
export function evalTokens(
  ev: Evaluator,
  args: readonly CmdArg[],
  sc: Scope,
): MaybePromise<Token[]> {
  const out: Token[] = [];
  const step = (i: number): MaybePromise<Token[]> => {
    for (; i < args.length; i++) {
      const a = args[i];
      const src = a.kind === "FlagLong" ? a.value : a;
      const t = token(
        a,
        () => (src === undefined ? null : wordValue(ev, src, sc) as MaybePromise<Value>),
      );
      if (t instanceof Promise) {
        const next = i + 1;
        return t.then((x) => {
          out.push(x);
          return step(next);
        });
      }
      out.push(t);
    }
    return out;
  };
  return step(0);
}

function literalOf(e: Expr): BoundValue {
  return e.kind === "Str" ? e.value : UNKNOWN;
}

/** The value a word has in the source alone (no evaluation). */
function staticValue(a: CmdArg, cwd: string, home: string): BoundValue {
  switch (a.kind) {
    case "Word":
      return a.text;
    case "PathWord":
      return new PathV(
        a.text === "~" ? home : a.text.startsWith("~/") ? home + a.text.slice(1) : a.text,
      );
    case "GlobWord":
      return new GlobV(a.text, cwd);
    case "StrArg":
      return literalOf(a.value);
    case "Dash":
      return "-";
    default:
      return UNKNOWN;
  }
}

/** Tokens of `args` from the source alone. */
export function staticTokens(args: readonly CmdArg[], cwd: string, home: string): Token[] {
  return args.map((a) => {
    const src = a.kind === "FlagLong" ? a.value : a;
    return token(a, () => (src === undefined ? null : staticValue(src, cwd, home))) as Token;
  });
}

const LONG = /^--([A-Za-z0-9][A-Za-z0-9_-]*)(?:=(.*))?$/s;
const SHORT = /^-[A-Za-z0-9]+$/;

/**
 * Tokens of already evaluated words (`run git status --short`): text shaped like a flag is
 * read as one, as the command form's lexer would (`--dry-run` is `dry_run`).
 */
export function valueTokens(values: readonly Value[], span: Span): Token[] {
  return values.map((v): Token => {
    if (typeof v !== "string") return { k: "word", v, literal: false, span };
    if (v === "--") return { k: "dd", span };
    const m = LONG.exec(v);
    if (m) {
      const name = m[1].replaceAll("-", "_");
      return m[2] === undefined
        ? { k: "long", name, raw: m[1], span }
        : { k: "long", name, raw: m[1], value: m[2], span };
    }
    if (SHORT.test(v)) return { k: "short", chars: v.slice(1), span };
    return { k: "word", v, literal: true, span };
  });
}
