/**
 * Expressions (language §3.1–§3.5): the Pratt operator loop, postfix chains, calls and
 * arguments (named, implicit item lambda, trailing blocks, `.feed(cmd)`), lambdas and the
 * `( … )` speculation, records vs blocks, and the control expressions.
 */

import type {
  Arg,
  BinaryOp,
  BlockExpr,
  CatchExpr,
  Expr,
  IfExpr,
  LambdaExpr,
  MatchArm,
  MatchExpr,
  Param,
  RecordField,
  Span,
  StrInterp,
  StrLit,
  StrText,
  TryExpr,
  TypeRef,
  WithExpr,
  WithSetting,
} from "./ast.ts";
import { ParseError } from "./errors.ts";
import { lexQuoted } from "./lex_string.ts";
import type { Token } from "./lexer.ts";
import { INTERP_HEADS, type Parser, RESERVED } from "./parser.ts";
import { langBlockFollows, stmtList } from "./parse_stmt.ts";
import { atCommandHead, commandChain, parseCommand, parseExprOrCommand } from "./parse_cmd.ts";
import { parseSlot } from "./parse_slot.ts";
import { fieldName, parsePattern, patternBinders } from "./parse_pattern.ts";

const PIPE_HINT =
  "chain methods instead: ls.where(.size > 1mb); send bytes with .feed(cmd); or use sh { … }";

type OpInfo = { bp: number; kind: "bin" | "logic" | "cmp" | "range"; op: string };

function binop(t: Token): OpInfo | null {
  switch (t.k) {
    case "QQ":
      return { bp: 1, kind: "bin", op: "??" };
    case "OrOr":
      return { bp: 2, kind: "logic", op: "||" };
    case "AndAnd":
      return { bp: 3, kind: "logic", op: "&&" };
    case "EqEq":
      return { bp: 4, kind: "cmp", op: "==" };
    case "NotEq":
      return { bp: 4, kind: "cmp", op: "!=" };
    case "Lt":
      return { bp: 4, kind: "cmp", op: "<" };
    case "Le":
      return { bp: 4, kind: "cmp", op: "<=" };
    case "Gt":
      return { bp: 4, kind: "cmp", op: ">" };
    case "Ge":
      return { bp: 4, kind: "cmp", op: ">=" };
    case "Ident":
      return t.text === "in" ? { bp: 4, kind: "cmp", op: "in" } : null;
    case "DotDot":
      return { bp: 5, kind: "range", op: ".." };
    case "DotDotEq":
      return { bp: 5, kind: "range", op: "..=" };
    case "Plus":
      return { bp: 6, kind: "bin", op: "+" };
    case "Minus":
      return { bp: 6, kind: "bin", op: "-" };
    case "Star":
      return { bp: 7, kind: "bin", op: "*" };
    case "Slash":
      return { bp: 7, kind: "bin", op: "/" };
    case "Percent":
      return { bp: 7, kind: "bin", op: "%" };
  }
  return null;
}

/**
 * `expr := unary (BINOP unary)* ("catch" …)*`. `fresh` marks the start of a fresh expression,
 * where `x => e` is a lambda.
 */
export function parseExpr(p: Parser, fresh = true): Expr {
  p.enter();
  try {
    const e = parseBinary(p, 0, fresh);
    return catchTail(p, e);
  } finally {
    p.leave();
  }
}

/** Postfix `catch [binder] handler`, also when `catch` starts the next line. */
export function catchTail(p: Parser, e: Expr): Expr {
  for (;;) {
    const q = p.lx.skipTriviaNl(p.pos);
    if (p.identAt(q) !== "catch") return e;
    p.pos = q + 5;
    p.last = q + 5;
    let binder: string | undefined;
    const t = p.peek();
    // The identifier after `catch` is the binder when a handler follows it. (The reference
    // always takes it, so `x catch false` failed; keywords and a lone name are handlers here.)
    if (t.k === "Ident" && !RESERVED.has(t.text!) && handlerFollows(p, t.e)) {
      p.take(t);
      binder = t.text!;
    }
    p.pushScope();
    let handler: Expr;
    try {
      if (binder) p.bindValue(binder);
      handler = p.peek().k === "LBrace"
        ? parseBlock(p, "`{`")
        : p.withTrail(false, () => parseBinary(p, 0, true));
    } finally {
      p.popScope();
    }
    const c: CatchExpr = { kind: "Catch", expr: e, handler, span: [e.span[0], handler.span[1]] };
    if (binder !== undefined) c.binder = binder;
    e = c;
  }
}

/** Does something other than an end of expression follow offset `e` on this line? */
function handlerFollows(p: Parser, e: number): boolean {
  const c = p.lx.ch(p.lx.skipTrivia(e));
  return !(c === -1 || c === 10 || c === 59 || c === 41 || c === 93 || c === 125 || c === 44);
}

/** Binary operators at binding power ≥ `minBp`. */
function parseBinary(p: Parser, minBp: number, fresh: boolean): Expr {
  return binaryTail(p, parseUnary(p, fresh), minBp);
}

/** The Pratt loop over an already-parsed left operand. */
export function binaryTail(p: Parser, left: Expr, minBp: number): Expr {
  let lastCmp = false;
  for (let links = 1;; links++) {
    const t = p.peek();
    if (t.k === "Pipe") {
      throw p.fail("shoal has no pipe operator", t.s, t.e, PIPE_HINT);
    }
    const info = binop(t);
    if (!info || info.bp < minBp) return left;
    if (info.kind === "cmp" && lastCmp) {
      throw p.fail(
        "comparison operators do not chain",
        t.s,
        t.e,
        "combine comparisons with &&: a < b && b < c",
      );
    }
    p.chainLink(links, t.s);
    p.take(t);
    p.skipNl();
    const s = left.span[0];
    if (info.kind === "logic") {
      const right = atCommandHead(p) ? parseCommand(p) : parseBinary(p, info.bp + 1, false);
      left = {
        kind: "Logical",
        op: info.op as "&&" | "||",
        left,
        right,
        span: [s, right.span[1]],
      };
    } else {
      const right = parseBinary(p, info.bp + 1, false);
      if (info.kind === "range") {
        left = {
          kind: "Range",
          start: left,
          end: right,
          inclusive: info.op === "..=",
          span: [s, right.span[1]],
        };
      } else {
        left = {
          kind: "Binary",
          op: info.op as BinaryOp,
          left,
          right,
          span: [s, right.span[1]],
        };
      }
    }
    lastCmp = info.kind === "cmp";
  }
}

function parseUnary(p: Parser, fresh: boolean): Expr {
  const t = p.peek();
  if (t.k === "Bang" || t.k === "Minus") {
    p.take(t);
    p.enter();
    try {
      const operand = parseUnary(p, false);
      return {
        kind: "Unary",
        op: t.k === "Bang" ? "!" : "-",
        operand,
        span: [t.s, operand.span[1]],
      };
    } finally {
      p.leave();
    }
  }
  return parsePostfix(p, parsePrimary(p, fresh));
}

/** True when a newline continuation to `.`/`?.` follows; moves the cursor there if so. */
function continuesOnNextLine(p: Parser): boolean {
  const lx = p.lx;
  const q = lx.skipTriviaNl(p.pos);
  const c = lx.ch(q), n = lx.ch(q + 1);
  const ok = (c === 46 && n !== 46 && n !== 47) || (c === 63 && n === 46);
  if (ok) p.pos = q;
  return ok;
}

/** Postfix chain: `.name`, `.name(args)`, `?.name`, `[i]`, `(args)`, trailing blocks. */
export function parsePostfix(p: Parser, e: Expr): Expr {
  for (let links = 1;; links++) {
    const t = p.peek();
    if (t.k === "Dot" || t.k === "QuestionDot" || t.k === "LBracket" || t.k === "LParen") {
      p.chainLink(links, t.s);
    }
    switch (t.k) {
      case "Dot":
      case "QuestionDot": {
        p.take(t);
        const optional = t.k === "QuestionDot";
        const nt = p.peek();
        if (nt.k !== "Ident") throw p.expected("a field or method name after `.`", nt);
        p.take(nt);
        const name = nt.text!;
        if (p.peek().k === "LParen") {
          const args = parseArgs(p, name);
          if (!optional) trailingBlock(p, args);
          e = { kind: "MethodCall", target: e, name, args, optional, span: [e.span[0], p.last] };
        } else if (!optional && trailingAllowed(p)) {
          const args: Arg[] = [];
          trailingBlock(p, args);
          e = { kind: "MethodCall", target: e, name, args, optional, span: [e.span[0], p.last] };
        } else {
          e = { kind: "Field", target: e, name, optional, span: [e.span[0], nt.e] };
        }
        continue;
      }
      case "LBracket": {
        p.take(t);
        const index = p.withTrail(false, () => {
          p.skipNl();
          const i = parseExpr(p);
          p.skipNl();
          return i;
        });
        p.expect("RBracket", "`]` to close the index");
        e = { kind: "Index", target: e, index, span: [e.span[0], p.last] };
        continue;
      }
      case "LParen": {
        const args = parseArgs(p, null);
        trailingBlock(p, args);
        const span: Span = [e.span[0], p.last];
        if (e.kind === "Ident") {
          e = { kind: "Call", callee: e.name, args, span };
        } else {
          e = iife(e, args, span);
        }
        continue;
      }
      case "Newline":
        if (continuesOnNextLine(p)) continue;
        return e;
      default:
        return e;
    }
  }
}

/** `{ let __iife = <callee>; __iife(args) }` for a call of anything but a plain name. */
function iife(callee: Expr, args: Arg[], span: Span): BlockExpr {
  return {
    kind: "Block",
    body: [
      {
        kind: "Let",
        mutable: false,
        name: "__iife",
        value: callee,
        exported: false,
        span: [callee.span[0], callee.span[1]],
      },
      {
        kind: "ExprStmt",
        expr: { kind: "Call", callee: "__iife", args, span: [span[0], span[1]] },
        span: [span[0], span[1]],
      },
    ],
    span,
  };
}

function trailingAllowed(p: Parser): boolean {
  return !p.noTrail && p.peek().k === "LBrace";
}

/** Appends a trailing `{ … }` block as a zero-parameter lambda, when allowed here. */
function trailingBlock(p: Parser, args: Arg[]): void {
  if (!trailingAllowed(p)) return;
  const body = parseBlock(p, "`{`");
  const lam: LambdaExpr = {
    kind: "Lambda",
    params: [],
    body,
    implicit: false,
    trailing: true,
    span: [body.span[0], body.span[1]],
  };
  args.push({ value: lam, span: [body.span[0], body.span[1]] });
}

/** `( args )` — positional, named `k: v`, implicit item lambdas, `.feed(cmd)`. */
function parseArgs(p: Parser, method: string | null): Arg[] {
  p.take(p.peek());
  return p.withTrail(false, () => {
    const args: Arg[] = [];
    for (;;) {
      p.skipNl();
      const t = p.peek();
      if (t.k === "RParen") break;
      if (method === "feed" && args.length === 0 && atCommandHead(p)) {
        const value = commandChain(p);
        args.push({ value, span: [value.span[0], value.span[1]] });
      } else if (t.k === "Dot" || (t.k === "Bang" && p.lx.ch(t.e) === 46)) {
        // `.x …` or `!.x …`: an implicit item lambda.
        const value = implicitLambda(p);
        args.push({ value, span: [value.span[0], value.span[1]] });
      } else if (t.k === "Ident" && namedArgColon(p, t.e)) {
        p.take(t);
        p.take(p.peek());
        p.skipNl();
        const value = parseSlot(p, "item");
        args.push({ name: t.text!, value, span: [t.s, value.span[1]] });
      } else {
        const value = parseSlot(p, "item");
        args.push({ value, span: [value.span[0], value.span[1]] });
      }
      p.skipNl();
      const sep = p.peek();
      if (sep.k !== "Comma") break;
      p.take(sep);
    }
    p.expect("RParen", "`,` or `)` in the argument list");
    return args;
  });
}

function namedArgColon(p: Parser, e: number): boolean {
  const r = p.lx.skipTrivia(e);
  return p.lx.ch(r) === 58 && p.lx.ch(r + 1) !== 58;
}

/**
 * `.size > 1mb` as an argument → `__item => __item.size > 1mb`. Every leading `.` of the same
 * argument is the item too: `.where(.ok && !.name.starts_with("_"))`.
 */
function implicitLambda(p: Parser): LambdaExpr {
  const dot = p.peek().s;
  const outer = p.implicitItem;
  p.pushScope();
  try {
    p.bindValue("__item");
    p.implicitItem = "__item";
    // Binary operators only (as before): the argument's leading `.x` is a primary (parsePrimary
    // seeds it with the item), so `!.ok` and `.a && !.b` parse the same way.
    const body = binaryTail(p, parseUnary(p, false), 0);
    return {
      kind: "Lambda",
      params: [{ name: "__item", span: [dot, dot] }],
      body,
      implicit: true,
      trailing: false,
      span: [dot, body.span[1]],
    };
  } finally {
    p.implicitItem = outer;
    p.popScope();
  }
}

/** REPL: a statement starting with `.` continues from `it`. */
export function parseItContinuation(p: Parser): Expr {
  const dot = p.peek().s;
  const seed: Expr = { kind: "Ident", name: "it", span: [dot, dot] };
  return catchTail(p, binaryTail(p, parsePostfix(p, seed), 0));
}

// -------------------------------------------------------------------------------------------
// Primaries

function parsePrimary(p: Parser, fresh: boolean): Expr {
  const t = p.peek();
  const span: Span = [t.s, t.e];
  switch (t.k) {
    case "Int":
      p.take(t);
      return { kind: "Int", value: t.text!, span };
    case "Float":
      p.take(t);
      return { kind: "Float", value: t.num!, span };
    case "Size":
      p.take(t);
      return { kind: "Size", bytes: t.text!, span };
    case "Duration":
      p.take(t);
      return { kind: "Duration", ns: t.text!, span };
    case "Time":
      p.take(t);
      return { kind: "Time", h: t.hms![0], m: t.hms![1], s: t.hms![2], span };
    case "Regex":
      p.take(t);
      return { kind: "Regex", source: t.text!, span };
    case "DateTime":
      p.take(t);
      return { kind: "DateTime", source: t.text!, span };
    case "Str":
      p.take(t);
      return strExpr(p, t);
    case "Ident":
      return identPrimary(p, t, fresh);
    case "LParen":
      return parenPrimary(p);
    case "LBracket":
      return listPrimary(p);
    case "LBrace":
      return recordOrBlock(p);
    case "Dot":
      // Within an implicit item lambda, `.x` is the same item (parsePostfix takes `.x`).
      if (p.implicitItem !== null) return { kind: "Ident", name: p.implicitItem, span: [t.s, t.s] };
      throw p.fail(
        "a leading `.` has no receiver here",
        t.s,
        t.e,
        "an implicit item lambda (.field) works only as a whole call argument: " +
          "xs.where(.a && !.b); elsewhere name the item with a lambda: xs.map(x => {v: x.a})",
      );
    case "Pipe":
      throw p.fail("shoal has no pipe operator", t.s, t.e, PIPE_HINT);
  }
  throw p.expected("expression", t);
}

/** Builds a `Str` or `StrInterp` from a string token, parsing its holes. */
export function strExpr(p: Parser, t: Token): StrLit | StrInterp {
  const st = t.str!;
  const span: Span = [t.s, t.e];
  if (st.holes.length === 0) return { kind: "Str", value: st.segs[0], span };
  const parts: (StrText | Expr)[] = [];
  st.segs.forEach((seg, i) => {
    if (seg !== "") parts.push({ kind: "Text", value: seg, span: st.segSpans[i] });
    if (i < st.holes.length) parts.push(parseHole(p, st.holes[i]));
  });
  return { kind: "StrInterp", parts, span };
}

/** How to write a brace that is not a hole (`curl -w "%{http_code}"` trips over it). */
const LITERAL_BRACE = "a literal brace is \\{ and \\} (or write the text as a raw '…' string)";

/** Parses one interpolation hole as a program with the enclosing scopes. */
function parseHole(p: Parser, [hs, he]: [number, number]): Expr {
  const lx = p.lx;
  const saved = { pos: p.pos, last: p.last, lim: lx.lim, noTrail: p.noTrail };
  lx.lim = he;
  p.pos = hs;
  p.noTrail = false;
  p.enter();
  try {
    const body = stmtList(p, false);
    if (body.length !== 1 || body[0].kind !== "ExprStmt") {
      throw p.fail(
        "interpolation must contain one expression",
        hs - 1,
        he + 1,
        "put statements in a block or a let before the string; " + LITERAL_BRACE,
      );
    }
    if (p.commandStmts.has(body[0])) {
      const head = p.src.slice(body[0].span[0], body[0].span[1]);
      throw p.fail(
        "interpolation must contain one expression, not a command",
        hs - 1,
        he + 1,
        `\`${head}\` runs as a command here; interpolate its output with {(${head}).out}, ` +
          `or bind a value with let first; ${LITERAL_BRACE}`,
      );
    }
    return body[0].expr;
  } finally {
    p.leave();
    lx.lim = saved.lim;
    p.pos = saved.pos;
    p.last = saved.last;
    p.noTrail = saved.noTrail;
  }
}

const STATEMENT_WORDS = new Set([
  "let",
  "var",
  "fn",
  "alias",
  "use",
  "export",
  "return",
  "break",
  "continue",
  "for",
  "while",
  "else",
  "in",
  "catch",
]);

function identPrimary(p: Parser, t: Token, fresh: boolean): Expr {
  const name = t.text!;
  switch (name) {
    case "true":
    case "false":
      p.take(t);
      return { kind: "Bool", value: name === "true", span: [t.s, t.e] };
    case "null":
      p.take(t);
      return { kind: "Null", span: [t.s, t.e] };
    case "if":
      return parseIf(p);
    case "match":
      return parseMatch(p);
    case "try":
      return parseTry(p);
    case "with":
      return parseWith(p);
    case "spawn": {
      p.take(t);
      const body = parseBlock(p, "`{` after `spawn`");
      return { kind: "Spawn", body, span: [t.s, body.span[1]] };
    }
  }
  if (INTERP_HEADS.has(name) && langBlockFollows(p, t.e)) return langBlock(p, t);
  if (fresh) {
    const r = p.lx.skipTrivia(t.e);
    if (p.lx.ch(r) === 61 && p.lx.ch(r + 1) === 62 && !RESERVED.has(name)) {
      p.take(t);
      p.pos = r + 2;
      p.last = r + 2;
      const param: Param = { name, span: [t.s, t.e] };
      return lambdaBody(p, t.s, [param], false);
    }
  }
  if (STATEMENT_WORDS.has(name)) {
    throw p.fail(
      `expected expression, found keyword \`${name}\``,
      t.s,
      t.e,
      name === "return" || name === "break" || name === "continue" || name === "let"
        ? `\`${name}\` is a statement; put it on its own line`
        : null,
    );
  }
  if (p.isReplOnlyName(name) && !p.repl) throw p.replOnly(name, t.s);
  p.take(t);
  return { kind: "Ident", name, span: [t.s, t.e] };
}

/** `sh { … }` or `python3'''…'''` at `t` (the head identifier). */
function langBlock(p: Parser, t: Token): Expr {
  const lx = p.lx;
  p.take(t);
  let src: string;
  let end: number;
  const q = lx.skipTrivia(t.e);
  if (lx.ch(q) === 39) {
    const st = lexQuoted(lx, q);
    src = st.segs[0];
    end = st.end;
  } else {
    const r = lx.rawBlock(q);
    src = r.src;
    end = r.end;
  }
  p.pos = end;
  p.last = end;
  return { kind: "LangBlock", lang: t.text!, src, span: [t.s, end] };
}

/** Parses a lambda body after `=>`, with `params` bound. `blockBody`: `{` means a block. */
function lambdaBody(p: Parser, s: number, params: Param[], blockBody: boolean): LambdaExpr {
  p.skipNl();
  p.pushScope();
  try {
    for (const prm of params) p.bindValue(prm.name);
    const body = p.withTrail(
      false,
      () => blockBody && p.peek().k === "LBrace" ? parseBlock(p, "`{`") : parseExpr(p),
    );
    return {
      kind: "Lambda",
      params,
      body,
      implicit: false,
      trailing: false,
      span: [s, body.span[1]],
    };
  } finally {
    p.popScope();
  }
}

/** Speculatively reads `( IDENT (: type)? , … ) =>`; returns the params or null (rewound). */
function lambdaParams(p: Parser): Param[] | null {
  const saved = { pos: p.pos, last: p.last, depth: p.depth };
  try {
    const params: Param[] = [];
    p.skipNl();
    if (p.peek().k !== "RParen") {
      for (;;) {
        const t = p.peek();
        if (t.k !== "Ident" || RESERVED.has(t.text!)) return restore();
        p.take(t);
        const prm: Param = { name: t.text!, span: [t.s, t.e] };
        if (p.peek().k === "Colon") {
          p.take(p.peek());
          prm.type = parseType(p);
          prm.span = [t.s, p.last];
        }
        params.push(prm);
        p.skipNl();
        const sep = p.peek();
        if (sep.k === "Comma") {
          p.take(sep);
          p.skipNl();
          if (p.peek().k === "RParen") break;
          continue;
        }
        if (sep.k === "RParen") break;
        return restore();
      }
    }
    p.take(p.peek());
    if (p.peek().k !== "FatArrow") return restore();
    p.take(p.peek());
    return params;
  } catch (e) {
    if (e instanceof ParseError) return restore();
    throw e;
  }
  function restore(): null {
    p.pos = saved.pos;
    p.last = saved.last;
    p.depth = saved.depth;
    return null;
  }
}

function parenPrimary(p: Parser): Expr {
  const open = p.take(p.peek());
  const params = lambdaParams(p);
  if (params) return lambdaBody(p, open.s, params, true);
  return p.withTrail(false, () => {
    p.skipNl();
    const e = parseExprOrCommand(p);
    p.skipNl();
    const close = p.peek();
    if (close.k === "Comma") {
      throw p.expected("`)`", close, "parentheses group one expression; write a list as [a, b]");
    }
    p.expect("RParen", "`)`");
    return e;
  });
}

function listPrimary(p: Parser): Expr {
  const open = p.take(p.peek());
  return p.withTrail(false, () => {
    const items: Expr[] = [];
    for (;;) {
      p.skipNl();
      if (p.peek().k === "RBracket") break;
      items.push(parseSlot(p, "item"));
      p.skipNl();
      const sep = p.peek();
      if (sep.k !== "Comma") break;
      p.take(sep);
    }
    p.expect("RBracket", "`,` or `]` in the list");
    return { kind: "List", items, span: [open.s, p.last] };
  });
}

/** After `{`: is this a record (`IDENT|STR :` past newlines)? */
function recordAhead(p: Parser, open: number): boolean {
  const lx = p.lx;
  const q = lx.skipTriviaNl(open + 1);
  const c = lx.ch(q);
  let e = lx.identEnd(q);
  if (e < 0 && (c === 34 || c === 39)) {
    try {
      e = lexQuoted(lx, q).end;
    } catch (err) {
      if (err instanceof ParseError) return false;
      throw err;
    }
  }
  if (e < 0) return false;
  const r = lx.skipTrivia(e);
  return lx.ch(r) === 58 && lx.ch(r + 1) !== 58;
}

function recordOrBlock(p: Parser): Expr {
  const open = p.peek();
  const q = p.lx.skipTriviaNl(open.e);
  if (p.lx.ch(q) === 125) {
    p.pos = q + 1;
    p.last = q + 1;
    return { kind: "Record", fields: [], span: [open.s, q + 1] };
  }
  if (recordAhead(p, open.s)) return parseRecord(p);
  return parseBlock(p, "`{`");
}

function parseRecord(p: Parser): Expr {
  const open = p.take(p.peek());
  return p.withTrail(false, () => {
    const fields: RecordField[] = [];
    for (;;) {
      p.skipNl();
      if (p.peek().k === "RBrace") break;
      const { key, tok: kt } = fieldName(p, "a field name");
      p.expect("Colon", `\`:\` after the field name \`${key}\``);
      p.skipNl();
      const value = parseSlot(p, "item");
      fields.push({ key, value, span: [kt.s, value.span[1]] });
      const c = p.nextChar();
      if (c === 44) {
        p.take(p.peek());
        continue;
      }
      if (c === 10) continue;
      if (c === 125) break;
      throw p.expected("`,` or `}` in the record", p.peek());
    }
    p.skipNl();
    p.expect("RBrace", "`}` to close the record");
    return { kind: "Record", fields, span: [open.s, p.last] };
  });
}

/** `{ stmts }` with its own scope. `what` names the expected `{` in the error. */
export function parseBlock(p: Parser, what: string): BlockExpr {
  const open = p.expect("LBrace", what);
  p.pushScope();
  try {
    return p.withTrail(false, () => {
      const body = stmtList(p, true);
      p.expect("RBrace", "`}`");
      return { kind: "Block", body, span: [open.s, p.last] };
    });
  } finally {
    p.popScope();
  }
}

// -------------------------------------------------------------------------------------------
// Control expressions

function header(p: Parser): Expr {
  return p.withTrail(true, () => parseExpr(p));
}

/**
 * The `{` body after an `if`/`while` condition. A bare unbound name followed by more words is
 * almost always a command meant as the condition, so that error teaches the parentheses.
 */
export function headerBody(p: Parser, cond: Expr, what: string): BlockExpr {
  let head = cond;
  while (head.kind === "Binary" || head.kind === "Logical") head = head.left;
  if (p.peek().k !== "LBrace" && head.kind === "Ident" && !p.isValue(head.name)) {
    throw p.expected(
      what,
      p.peek(),
      `to use a command's success as the condition, wrap it in parentheses: (${head.name} …)`,
    );
  }
  return parseBlock(p, what);
}

function parseIf(p: Parser): IfExpr {
  const kw = p.take(p.peek());
  const cond = header(p);
  const then = headerBody(p, cond, "`{` after the `if` condition");
  const node: IfExpr = { kind: "If", cond, then, span: [kw.s, then.span[1]] };
  const q = p.lx.skipTriviaNl(p.pos);
  if (p.identAt(q) === "else") {
    p.pos = q + 4;
    p.last = q + 4;
    node.else = p.atWord("if") ? parseIf(p) : parseBlock(p, "`{` or `if` after `else`");
    node.span = [kw.s, node.else.span[1]];
  }
  return node;
}

function parseMatch(p: Parser): MatchExpr {
  const kw = p.take(p.peek());
  const subject = header(p);
  p.expect("LBrace", "`{` after the `match` subject");
  const arms: MatchArm[] = p.withTrail(false, () => {
    const out: MatchArm[] = [];
    for (;;) {
      p.skipTerms();
      const t = p.peek();
      if (t.k === "RBrace") break;
      if (t.k === "Pipe") {
        throw p.fail(
          "unexpected `|` at the start of a match arm",
          t.s,
          t.e,
          "alternation is `a | b => …`; drop the leading `|`",
        );
      }
      out.push(matchArm(p));
      const sep = p.peek();
      if (sep.k === "Comma") p.take(sep);
      else if (sep.k !== "Newline" && sep.k !== "Semi" && sep.k !== "RBrace") {
        throw p.expected("newline, `;` or `,` between match arms", sep);
      }
    }
    return out;
  });
  p.expect("RBrace", "`}` to close the match");
  return { kind: "Match", subject, arms, span: [kw.s, p.last] };
}

function matchArm(p: Parser): MatchArm {
  const s = p.nextPos();
  const patterns = [parsePattern(p)];
  for (;;) {
    const t = p.peek();
    if (t.k !== "Pipe") break;
    p.take(t);
    p.skipNl();
    patterns.push(parsePattern(p));
  }
  p.pushScope();
  try {
    for (const pat of patterns) for (const b of patternBinders(pat)) p.bindValue(b);
    let guard: Expr | undefined;
    if (p.atWord("if")) {
      p.take(p.peek());
      guard = parseExpr(p, false);
    }
    p.expect("FatArrow", "`=>` after the match pattern");
    p.skipNl();
    const body = parseExpr(p);
    const arm: MatchArm = { patterns, body, span: [s, body.span[1]] };
    if (guard) arm.guard = guard;
    return arm;
  } finally {
    p.popScope();
  }
}

function parseTry(p: Parser): TryExpr {
  const kw = p.take(p.peek());
  const body = parseBlock(p, "`{` after `try`");
  const q = p.lx.skipTriviaNl(p.pos);
  if (p.identAt(q) !== "catch") {
    p.pos = q;
    throw p.expected("`catch` after the `try` block", p.peek());
  }
  p.pos = q + 5;
  p.last = q + 5;
  let binder: string | undefined;
  const t = p.peek();
  if (t.k === "Ident") {
    p.take(t);
    binder = t.text!;
  }
  p.pushScope();
  try {
    if (binder) p.bindValue(binder);
    const handler = parseBlock(p, "`{` to start the catch handler");
    const node: TryExpr = { kind: "Try", body, handler, span: [kw.s, handler.span[1]] };
    if (binder !== undefined) node.binder = binder;
    return node;
  } finally {
    p.popScope();
  }
}

function parseWith(p: Parser): WithExpr {
  const kw = p.take(p.peek());
  const settings: WithSetting[] = [];
  for (;;) {
    const kt = p.peek();
    if (kt.k !== "Ident") throw p.expected("`cwd:`, `env:` or `reef:` after `with`", kt);
    const key = kt.text!;
    if (key !== "cwd" && key !== "env" && key !== "reef") {
      throw p.fail(
        "with accepts only cwd, env, and reef",
        kt.s,
        kt.e,
        'e.g. with cwd: "sub", env: {K: "v"} { … }',
      );
    }
    p.take(kt);
    p.expect("Colon", `\`:\` after \`${key}\``);
    const value = header(p);
    settings.push({ key, value, span: [kt.s, value.span[1]] });
    const sep = p.peek();
    if (sep.k !== "Comma") break;
    p.take(sep);
    p.skipNl();
  }
  const body = parseBlock(p, "`{` to start the `with` body");
  return { kind: "With", settings, body, span: [kw.s, body.span[1]] };
}

// -------------------------------------------------------------------------------------------
// Types

/** `IDENT ("<" type ("," type)* ">")? "?"?`. */
export function parseType(p: Parser): TypeRef {
  p.enter();
  try {
    const t = p.ident("a type name");
    const ty: TypeRef = { name: t.text!, args: [], optional: false, span: [t.s, t.e] };
    if (p.peek().k === "Lt") {
      p.take(p.peek());
      for (;;) {
        ty.args.push(parseType(p));
        const sep = p.peek();
        if (sep.k === "Comma") {
          p.take(sep);
          continue;
        }
        if (sep.k === "Gt") p.take(sep);
        else if (sep.k === "Ge") { // `list<int>= default`: split `>=`
          p.pos = sep.s + 1;
          p.last = sep.s + 1;
        } else throw p.expected("`>` to close the type arguments", sep);
        break;
      }
    }
    if (p.peek().k === "Question") {
      p.take(p.peek());
      ty.optional = true;
    }
    ty.span = [t.s, p.last];
    return ty;
  } finally {
    p.leave();
  }
}
