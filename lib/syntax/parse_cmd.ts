/**
 * Commands (language §3.7): env prefixes, `^`, the head, typed argument words, `( … )`
 * substitutions, flags, redirects, background `&`, and `&&`/`||` chains; plus the
 * command-head test used inside parentheses and logical operands (language §2).
 */

import type { CmdArg, CmdExpr, EnvPrefix, Expr, Redirect, Span } from "./ast.ts";
import { ParseError } from "./errors.ts";
import { lexQuoted } from "./lex_string.ts";
import type { Token } from "./lexer.ts";
import { INTERP_HEADS, type Parser, RESERVED } from "./parser.ts";
import { parseExpr, strExpr } from "./parse_expr.ts";
import { langBlockFollows } from "./parse_stmt.ts";

const PIPE_HINT =
  "chain methods instead: ls.where(.size > 1mb); send bytes with .feed(cmd); or use sh { … }";

/** How the hint for a method chained onto a command's last word (`git log.len()`) begins. */
export const GLUED_HINT = "wrap it in parentheses — ";

/**
 * Does a command start at the cursor? `^` or a path head → yes; an identifier that is not a
 * keyword, not an interpreter block, not glued to a postfix opener, not followed by `=>` and
 * not bound as a value → yes; anything else → no. `it`/`out` in a script are an error.
 */
export function atCommandHead(p: Parser): boolean {
  const lx = p.lx;
  const s = p.nextPos();
  const c = lx.ch(s);
  if (c === 94) return true;
  if (p.pathHeadAt(s)) return true;
  const q = lx.identEnd(s);
  if (q < 0) return false;
  const id = p.src.slice(s, q);
  if (RESERVED.has(id) || id === "with" || id === "spawn") return false;
  const n = lx.ch(q);
  if ((id === "re" || id === "t") && n === 34) return false;
  if (INTERP_HEADS.has(id) && langBlockFollows(p, q)) return false;
  if (n === 46 || n === 40 || n === 91 || (n === 63 && lx.ch(q + 1) === 46)) return false;
  const r = lx.skipTrivia(q);
  if (lx.ch(r) === 61 && lx.ch(r + 1) === 62) return false;
  if (p.isValue(id)) return false;
  if (id === "it" || id === "out") throw p.replOnly(id, s);
  return true;
}

/** `exprOrCommand`: a command chain when a command head is at the cursor, else an expression. */
export function parseExprOrCommand(p: Parser): Expr {
  return atCommandHead(p) ? commandChain(p) : parseExpr(p);
}

/** `command (("&&" | "||") exprOrCommand)*`, left-associative. */
export function commandChain(p: Parser): Expr {
  let left: Expr = parseCommand(p);
  for (;;) {
    const t = p.peekC();
    if (t.k !== "AndAnd" && t.k !== "OrOr") return left;
    p.take(t);
    p.skipNl();
    const right = atCommandHead(p) ? parseCommand(p) : parseExpr(p);
    left = {
      kind: "Logical",
      op: t.k === "AndAnd" ? "&&" : "||",
      left,
      right,
      span: [left.span[0], right.span[1]],
    };
  }
}

/** `NAME=value`; a value abutting a quoted string takes the string (`FOO="a b"`). */
function envPrefix(p: Parser, t: Token): EnvPrefix {
  p.take(t);
  let value = t.value!;
  const n = p.lx.ch(t.e);
  if (value === "" && (n === 34 || n === 39)) {
    const st = lexQuoted(p.lx, t.e);
    if (st.holes.length > 0) {
      throw p.fail(
        "an env prefix value cannot interpolate",
        t.s,
        st.end,
        "compute it first: with env: {NAME: value} { cmd }",
      );
    }
    value = st.segs[0];
    p.pos = st.end;
    p.last = st.end;
  }
  return { name: t.text!, value, span: [t.s, p.last] };
}

/** One command: `[NAME=v …] [^]head parts… [&]`. Stops before a trailing `{`. */
export function parseCommand(p: Parser): CmdExpr {
  const start = p.nextPos();
  try {
    return commandAt(p, start);
  } catch (e) {
    // The innermost command names where a bash-shaped rewrite starts (errors.ts).
    if (e instanceof ParseError) e.site.cmd ??= start;
    throw e;
  }
}

function commandAt(p: Parser, start: number): CmdExpr {
  const env: EnvPrefix[] = [];
  let t = p.peekC();
  while (t.k === "EnvAssign") {
    env.push(envPrefix(p, t));
    t = p.peekC();
  }
  let forced = false;
  if (t.k === "Caret") {
    p.take(t);
    forced = true;
    t = p.peekC();
  }
  if (t.k !== "Word" && t.k !== "PathWord") throw p.expected("a command name", t);
  p.take(t);
  const cmd: CmdExpr = {
    kind: "Cmd",
    env,
    forced,
    head: t.text!,
    headKind: t.k === "Word" ? "word" : "path",
    headSpan: [t.s, t.e],
    args: [],
    redirects: [],
    background: false,
    span: [start, t.e],
  };
  for (;;) {
    const a = p.peekC();
    switch (a.k) {
      case "Newline":
      case "Semi":
      case "Eof":
      case "RParen":
      case "RBrace":
      case "LBrace":
      case "AndAnd":
      case "OrOr":
        cmd.span = [start, p.last];
        return cmd;
      case "Amp":
        p.take(a);
        cmd.background = true;
        cmd.span = [start, p.last];
        return cmd;
      case "Pipe":
        throw p.fail("shoal has no pipe operator", a.s, a.e, PIPE_HINT);
      case "RedirOut":
      case "RedirAppend":
      case "RedirIn": {
        p.take(a);
        const op = a.k === "RedirOut" ? ">" : a.k === "RedirAppend" ? ">>" : "<";
        const tt = p.peekC();
        if (!startsPart(tt)) throw p.expected(`a redirect target after \`${op}\``, tt);
        const target = cmdPart(p, tt, cmd);
        const r: Redirect = { op, target, span: [a.s, p.last] };
        cmd.redirects.push(r);
        break;
      }
      default:
        cmd.args.push(cmdPart(p, a, cmd));
    }
  }
}

function startsPart(t: Token): boolean {
  switch (t.k) {
    case "Word":
    case "PathWord":
    case "GlobWord":
    case "Str":
    case "LParen":
    case "FlagLong":
    case "FlagLongEq":
    case "FlagLongPending":
    case "FlagShort":
    case "DashDash":
    case "Dash":
    case "EnvAssign":
    case "Caret":
      return true;
  }
  return false;
}

/** One argument word / string / substitution / flag at token `t`. */
function cmdPart(p: Parser, t: Token, cmd: CmdExpr): CmdArg {
  const span: Span = [t.s, t.e];
  switch (t.k) {
    case "Word":
      p.take(t);
      return { kind: "Word", text: t.text!, span };
    case "EnvAssign":
      p.take(t);
      return { kind: "Word", text: p.src.slice(t.s, t.e), span };
    case "PathWord":
      p.take(t);
      return { kind: "PathWord", text: t.text!, span };
    case "GlobWord":
      p.take(t);
      return { kind: "GlobWord", text: t.text!, span };
    case "Str":
      p.take(t);
      return { kind: "StrArg", value: strExpr(p, t), span };
    case "LParen":
      return substitution(p, t, cmd);
    case "FlagLong":
      p.take(t);
      return { kind: "FlagLong", name: t.text!, raw: t.raw!, span };
    case "FlagLongEq": {
      p.take(t);
      const vs = t.e - t.value!.length;
      return {
        kind: "FlagLong",
        name: t.text!,
        raw: t.raw!,
        value: { kind: "Word", text: t.value!, span: [vs, t.e] },
        span,
      };
    }
    case "FlagLongPending": {
      p.take(t);
      const nt = p.peekC();
      const value: CmdArg = startsPart(nt)
        ? cmdPart(p, nt, cmd)
        : { kind: "Word", text: "", span: [t.e, t.e] };
      return { kind: "FlagLong", name: t.text!, raw: t.raw!, value, span: [t.s, p.last] };
    }
    case "FlagShort":
      p.take(t);
      return { kind: "FlagShort", chars: t.text!, span };
    case "DashDash":
      p.take(t);
      return { kind: "DashDash", span };
    case "Dash":
      p.take(t);
      return { kind: "Dash", span };
    case "Caret": // `grep ^foo`: a caret inside a command is an ordinary word character
      return cmdPart(p, p.lx.word(t.s), cmd);
  }
  throw p.expected("a command argument", t);
}

/**
 * `( exprOrCommand )` as an argument. When glued to a dotted word (`git log.len()`), a failure
 * inside gets a hint to parenthesize the command.
 */
function substitution(p: Parser, open: Token, cmd: CmdExpr): CmdArg {
  const prev = cmd.args[cmd.args.length - 1];
  const glued = prev !== undefined && prev.kind === "Word" && prev.span[1] === open.s &&
    prev.text.includes(".");
  p.take(open);
  try {
    const expr = p.withTrail(false, () => {
      p.enter();
      try {
        p.skipNl();
        const e = parseExprOrCommand(p);
        p.skipNl();
        p.expect("RParen", "`)`");
        return e;
      } finally {
        p.leave();
      }
    });
    return { kind: "Sub", expr, span: [open.s, p.last] };
  } catch (e) {
    if (glued && e instanceof ParseError) {
      // The whole line, with the command in parentheses: source the agent can resend as is.
      const dot = prev.span[0] + prev.text.lastIndexOf(".");
      const from = p.src.lastIndexOf("\n", cmd.span[0] - 1) + 1;
      const nl = p.src.indexOf("\n", dot);
      const to = nl < 0 ? p.src.length : nl;
      e.hint = `${GLUED_HINT}${p.src.slice(from, cmd.span[0])}(${p.src.slice(cmd.span[0], dot)})${
        p.src.slice(dot, to).trimEnd()
      }`;
    }
    throw e;
  }
}
