/**
 * Statements and the statement-dispatch rule (language §2, §3): constructs, assignments,
 * expression statements and command statements.
 */

import type {
  AliasStmt,
  AssignOp,
  AssignStmt,
  EnvAssignStmt,
  Expr,
  FnDecl,
  ForStmt,
  LetStmt,
  Param,
  Program,
  RestParam,
  ReturnStmt,
  Stmt,
  TypeRef,
  UseStmt,
  WhileStmt,
} from "./ast.ts";
import { ParseError } from "./errors.ts";
import { lexQuoted } from "./lex_string.ts";
import { INTERP_HEADS, type Parser, RESERVED } from "./parser.ts";
import { headerBody, parseBlock, parseExpr, parseItContinuation, parseType } from "./parse_expr.ts";
import { commandChain, parseCommand } from "./parse_cmd.ts";
import { parseSlot } from "./parse_slot.ts";

/** Parses a whole program (the cursor is at the start). */
export function parseProgram(p: Parser): Program {
  const body = stmtList(p, false);
  return { kind: "Program", ast_version: 2, body, span: [0, p.src.length] };
}

/**
 * Parses statements up to EOF (`inBlock` false) or up to the closing `}` (not consumed),
 * requiring a terminator between statements.
 */
export function stmtList(p: Parser, inBlock: boolean): Stmt[] {
  const out: Stmt[] = [];
  for (;;) {
    p.skipTerms();
    const c = p.lx.ch(p.pos);
    if (c === -1) {
      if (inBlock) throw p.expected("`}`", p.peek());
      return out;
    }
    if (c === 125) {
      if (inBlock) return out;
      throw p.fail("unexpected `}`", p.pos, p.pos + 1, "this `}` closes no block");
    }
    const st = statement(p);
    out.push(st);
    const q = p.nextPos();
    const d = p.lx.ch(q);
    if (d === 10 || d === 59 || d === -1 || d === 125) continue;
    if (st.kind === "ExprStmt" && st.expr.kind !== "Cmd" && assignOpAt(p, q)) {
      throw p.fail(
        "assignment target must be a variable in v0.1",
        st.span[0],
        q + 1,
        "build a new value and rebind it, e.g. r = r.merge({a: 1})",
      );
    }
    let hint: string | null = null;
    if (st.kind === "ExprStmt") {
      // `let ls = …` earlier makes `ls -a dir` read as `ls - a` then a stray `dir`.
      let head = st.expr;
      while (head.kind === "Binary") head = head.left;
      if (head.kind === "Ident") {
        const n = head.name;
        hint = head === st.expr
          ? `\`${n}\` is a variable here; to run the command \`${n}\` write ^${n} …`
          : `\`${n}\` is a variable here, so \`${n} …\` is not the command but arithmetic on ` +
            `it; to run the command write ^${n} …`;
      }
    }
    throw p.fail("expected newline or `;` between statements", q, q + 1, hint);
  }
}

/** One statement at the cursor (language §2 dispatch). */
export function statement(p: Parser): Stmt {
  p.enter();
  const start = p.nextPos();
  try {
    return dispatch(p);
  } catch (e) {
    // The innermost statement names where a bash-shaped rewrite starts (errors.ts).
    if (e instanceof ParseError) e.site.stmt ??= start;
    throw e;
  } finally {
    p.leave();
  }
}

/** A command statement; remembered so interpolation holes can reject one. */
function commandStmt(p: Parser): Stmt {
  const st = exprStmt(commandChain(p));
  p.commandStmts.add(st);
  return st;
}

function exprStmt(e: Expr): Stmt {
  return { kind: "ExprStmt", expr: e, span: [e.span[0], e.span[1]] };
}

/** The binding-aware statement dispatch. */
function dispatch(p: Parser): Stmt {
  const lx = p.lx;
  const s = p.nextPos();
  p.pos = s;
  const c = lx.ch(s);
  // 1. REPL: a leading `.` continues from `it`
  if (p.repl && c === 46 && lx.ch(s + 1) !== 46 && lx.ch(s + 1) !== 47) {
    return exprStmt(parseItContinuation(p));
  }
  // 2. path head → command
  if (p.pathHeadAt(s)) return commandStmt(p);
  const q = lx.identEnd(s);
  if (q > 0) {
    const id = p.src.slice(s, q);
    // 3. statement keywords
    switch (id) {
      case "let":
      case "var":
        return parseLet(p, false);
      case "export":
        return parseExport(p);
      case "fn":
        return parseFn(p, false);
      case "alias":
        return parseAlias(p);
      case "use":
        return parseUse(p);
      case "return":
        return parseReturn(p);
      case "break":
      case "continue": {
        p.pos = q;
        p.last = q;
        return id === "break"
          ? { kind: "Break", span: [s, q] }
          : { kind: "Continue", span: [s, q] };
      }
      case "for":
        return parseFor(p);
      case "while":
        return parseWhile(p);
      // 4. expression keywords
      case "true":
      case "false":
      case "null":
      case "if":
      case "match":
      case "try":
      case "with":
      case "spawn":
        return exprStmt(parseExpr(p));
    }
    // tagged literals re"…" / t"…"
    if ((id === "re" || id === "t") && lx.ch(q) === 34) return exprStmt(parseExpr(p));
    // 5. interpreter head with a raw block
    if (INTERP_HEADS.has(id) && langBlockFollows(p, q)) return exprStmt(parseExpr(p));
    // 6. NAME=value followed by more on the line → command with an env prefix
    if (envPrefixCommand(p, s)) return commandStmt(p);
    // 7. env.NAME op= expr
    if (id === "env" && lx.ch(q) === 46) {
      const q2 = lx.identEnd(q + 1);
      if (q2 > 0) {
        const op = assignOpAt(p, q2);
        if (op) return parseEnvAssign(p, s, p.src.slice(q + 1, q2), op);
      }
    }
    // 8. IDENT op= expr
    const op = assignOpAt(p, q);
    if (op) return parseAssign(p, s, id, op);
    // 9. adjacent postfix opener → expression
    const n = lx.ch(q);
    if (n === 46 || n === 40 || n === 91 || (n === 63 && lx.ch(q + 1) === 46)) {
      return exprStmt(parseExpr(p));
    }
    // a single-parameter lambda
    const r = lx.skipTrivia(q);
    if (lx.ch(r) === 61 && lx.ch(r + 1) === 62) return exprStmt(parseExpr(p));
    // 10. a value binding → expression
    if (p.isValue(id)) return exprStmt(parseExpr(p));
    // 11. REPL-only names
    if (id === "it" || id === "out") throw p.replOnly(id, s);
    // 12. otherwise a command
    return commandStmt(p);
  }
  // 13. forced command
  if (c === 94) return commandStmt(p);
  // 14. anything else is an expression
  return exprStmt(parseExpr(p));
}

/**
 * True when an interpreter block follows the head ending at `q`: `{` (spaces allowed), an
 * abutting `'…'` or `'''…'''`, or a spaced `'''…'''` (the manual's `sh '''…'''` form).
 */
export function langBlockFollows(p: Parser, q: number): boolean {
  const lx = p.lx;
  if (lx.ch(q) === 39) return true;
  const r = lx.skipTrivia(q);
  const c = lx.ch(r);
  return c === 123 || (c === 39 && lx.ch(r + 1) === 39 && lx.ch(r + 2) === 39);
}

/**
 * Rule 6: the head CMD-lexes as `NAME=value` and another token follows on the line. A value
 * abutting a quoted string takes the string (`FOO="a b" cmd`); `x=(…)`, `x=[…]`, `x={…}` stay
 * assignments.
 */
function envPrefixCommand(p: Parser, s: number): boolean {
  const lx = p.lx;
  const t = lx.cmd(s);
  if (t.k !== "EnvAssign") return false;
  let e = t.e;
  if (t.value === "") {
    const n = lx.ch(e);
    if (n === 34 || n === 39) e = lexQuoted(lx, e).end;
    else if (n !== -1 && n !== 32 && n !== 9 && n !== 10 && n !== 13 && n !== 59) return false;
  }
  const d = lx.ch(lx.skipTrivia(e));
  return !(d === -1 || d === 10 || d === 59 || d === 125 || d === 41);
}

/** An assignment operator after horizontal trivia at `q`, with its end offset. */
function assignOpAt(p: Parser, q: number): { op: AssignOp; end: number } | null {
  const lx = p.lx;
  const r = lx.skipTrivia(q);
  const c = lx.ch(r), n = lx.ch(r + 1);
  if (c === 61) return n === 61 || n === 62 ? null : { op: "=", end: r + 1 };
  if (n !== 61) return null;
  switch (c) {
    case 43:
      return { op: "+=", end: r + 2 };
    case 45:
      return { op: "-=", end: r + 2 };
    case 42:
      return { op: "*=", end: r + 2 };
    case 47:
      return { op: "/=", end: r + 2 };
  }
  return null;
}

function parseAssign(
  p: Parser,
  s: number,
  target: string,
  op: { op: AssignOp; end: number },
): AssignStmt {
  p.pos = op.end;
  p.last = op.end;
  p.skipNl();
  const value = parseSlot(p, "stmt");
  return { kind: "Assign", target, op: op.op, value, span: p.spanFrom(s) };
}

function parseEnvAssign(
  p: Parser,
  s: number,
  name: string,
  op: { op: AssignOp; end: number },
): EnvAssignStmt {
  p.pos = op.end;
  p.last = op.end;
  p.skipNl();
  const value = parseSlot(p, "stmt");
  return { kind: "EnvAssign", name, op: op.op, value, span: p.spanFrom(s) };
}

/** A binder name (`IDENT` or `_`), not a reserved word. */
function binder(p: Parser, what: string): string {
  const t = p.peek();
  if (t.k !== "Ident" || RESERVED.has(t.text!)) throw p.expected(what, t);
  p.take(t);
  return t.text!;
}

function parseLet(p: Parser, exported: boolean, s0?: number): LetStmt {
  const kw = p.take(p.peek());
  const s = s0 ?? kw.s;
  const mutable = kw.text === "var";
  const name = binder(p, `a name after \`${kw.text}\``);
  let type: TypeRef | undefined;
  if (p.peek().k === "Colon") {
    p.take(p.peek());
    type = parseType(p);
  }
  p.expect("Eq", `\`=\` after \`${kw.text} ${name}\``);
  p.skipNl();
  const value = parseSlot(p, "stmt");
  p.bindValue(name);
  const st: LetStmt = { kind: "Let", mutable, name, value, exported, span: p.spanFrom(s) };
  if (type) st.type = type;
  return st;
}

function parseExport(p: Parser): Stmt {
  const kw = p.take(p.peek());
  if (p.atWord("let") || p.atWord("var")) return parseLet(p, true, kw.s);
  if (p.atWord("fn")) return parseFn(p, true, kw.s);
  throw p.expected("`let`, `var` or `fn` after `export`", p.peek());
}

function parseFn(p: Parser, exported: boolean, s0?: number): FnDecl {
  const kw = p.take(p.peek());
  const s = s0 ?? kw.s;
  const nameTok = p.peek();
  if (nameTok.k !== "Ident" || RESERVED.has(nameTok.text!)) {
    throw p.expected("a function name after `fn`", nameTok);
  }
  p.take(nameTok);
  const name = nameTok.text!;
  p.expect("LParen", `\`(\` after \`fn ${name}\``);
  p.pushScope();
  try {
    const params: Param[] = [];
    let rest: RestParam | undefined;
    p.skipNl();
    while (p.peek().k !== "RParen") {
      const t = p.peek();
      if (t.k === "Ellipsis") {
        p.take(t);
        const rn = binder(p, "a rest parameter name after `...`");
        const r: RestParam = { name: rn, span: [t.s, p.last] };
        if (p.peek().k === "Colon") {
          p.take(p.peek());
          r.type = parseType(p);
          r.span = [t.s, p.last];
        }
        p.bindValue(rn);
        rest = r;
        p.skipNl();
        if (p.peek().k === "Comma") p.take(p.peek());
        p.skipNl();
        break;
      }
      const pn = binder(p, "a parameter name");
      const param: Param = { name: pn, span: [t.s, p.last] };
      if (p.peek().k === "Colon") {
        p.take(p.peek());
        param.type = parseType(p);
      }
      if (p.peek().k === "Eq") {
        p.take(p.peek());
        p.skipNl();
        param.default = parseExpr(p);
      }
      param.span = [t.s, p.last];
      p.bindValue(pn);
      params.push(param);
      p.skipNl();
      if (p.peek().k !== "Comma") break;
      p.take(p.peek());
      p.skipNl();
    }
    p.expect("RParen", "`,` or `)` in the parameter list");
    let ret: TypeRef | undefined;
    if (p.peek().k === "ThinArrow") {
      p.take(p.peek());
      ret = parseType(p);
    }
    const body = parseBlock(p, `\`{\` to start the body of \`fn ${name}\``);
    const decl: FnDecl = { kind: "FnDecl", name, params, body, exported, span: p.spanFrom(s) };
    if (rest) decl.rest = rest;
    if (ret) decl.ret = ret;
    return decl;
  } finally {
    p.popScope();
    p.bindCommand(name);
  }
}

function parseAlias(p: Parser): AliasStmt {
  const kw = p.take(p.peek());
  const nameTok = p.peek();
  if (nameTok.k !== "Ident" || RESERVED.has(nameTok.text!)) {
    throw p.expected("an alias name after `alias`", nameTok);
  }
  p.take(nameTok);
  p.expect("Eq", `\`=\` after \`alias ${nameTok.text}\``);
  const command = parseCommand(p);
  p.bindCommand(nameTok.text!);
  return { kind: "Alias", name: nameTok.text!, command, span: p.spanFrom(kw.s) };
}

function parseUse(p: Parser): UseStmt {
  const kw = p.take(p.peek());
  const t = p.peekC();
  if (t.k !== "Word" && t.k !== "PathWord") throw p.expected("a module path after `use`", t);
  p.take(t);
  const target = t.text!;
  const base = target.replace(/\/+$/, "").split("/").pop() ?? target;
  const stem = base.endsWith(".shl") ? base.slice(0, -4) : base;
  if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(stem)) p.bindValue(stem);
  return { kind: "Use", target, span: p.spanFrom(kw.s) };
}

function parseReturn(p: Parser): ReturnStmt {
  const kw = p.take(p.peek());
  const c = p.nextChar();
  if (c === -1 || c === 10 || c === 59 || c === 125 || c === 41) {
    return { kind: "Return", span: [kw.s, kw.e] };
  }
  const value = parseSlot(p, "stmt");
  return { kind: "Return", value, span: p.spanFrom(kw.s) };
}

function parseFor(p: Parser): ForStmt {
  const kw = p.take(p.peek());
  const name = binder(p, "a loop variable after `for`");
  if (!p.atWord("in")) throw p.expected("`in` after the loop variable", p.peek());
  p.take(p.peek());
  const iter = p.withTrail(true, () => parseExpr(p));
  p.pushScope();
  try {
    p.bindValue(name);
    const body = parseBlock(p, "`{` to start the loop body");
    return { kind: "For", binder: name, iter, body, span: p.spanFrom(kw.s) };
  } finally {
    p.popScope();
  }
}

function parseWhile(p: Parser): WhileStmt {
  const kw = p.take(p.peek());
  const cond = p.withTrail(true, () => parseExpr(p));
  const body = headerBody(p, cond, "`{` to start the loop body");
  return { kind: "While", cond, body, span: p.spanFrom(kw.s) };
}
