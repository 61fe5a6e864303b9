/**
 * Statement compilation (language §7.1–§7.3): bindings, assignments, loops, blocks, the
 * statement-vs-value position of commands and the statement sink.
 *
 * @module
 */

import type {
  AssignStmt,
  BlockExpr,
  EnvAssignStmt,
  ForStmt,
  Span,
  Stmt,
  WhileStmt,
} from "../syntax/ast.ts";
import {
  CommandV,
  GlobV,
  ListV,
  RangeV,
  StreamV,
  TableV,
  typeName,
  type Value,
} from "../value/types.ts";
import { fail } from "../value/errors.ts";
import { arith } from "../value/arith.ts";
import { toArgv } from "../value/coerce.ts";
import { type MaybePromise, then } from "./maybe.ts";
import { Scope } from "./scope.ts";
import { BREAK, CONTINUE, Ctl } from "./ctl.ts";
import type { Evaluator } from "./evaluator.ts";
import { at, compileCtl, compileExpr, cond, type CS, isCommandExpr } from "./expressions.ts";
import { compileFnDecl } from "./calls.ts";

/**
 * How a statement list runs: `top` (session top level: every expression statement in
 * statement position, non-final values to the sink), `top_value` (like `top`, but a final
 * expression statement runs in value position — the kernel's `exec position:"value"`),
 * `value` (a block whose value is used: its final command runs in value position), `discard`
 * (a loop body: every command runs in statement position and goes to the sink).
 */
export type BlockMode = "top" | "top_value" | "value" | "discard";

/**
 * True when statements declare names directly in their own scope. A block that declares
 * nothing can run in its parent's scope: nothing could observe the difference, and skipping
 * the allocation keeps loops and branches cheap.
 */
export function declares(stmts: Stmt[]): boolean {
  return stmts.some((s) =>
    s.kind === "Let" || s.kind === "FnDecl" || s.kind === "Alias" || s.kind === "Use"
  );
}

/** Compile a block: a child scope (when it declares anything), then its statements. */
export function compileBlock(ev: Evaluator, b: BlockExpr, mode: BlockMode): CS {
  const body = compileBody(ev, b.body, mode);
  if (!declares(b.body)) return body;
  return (sc) => body(new Scope(sc));
}

/** Compile statements that run in the scope they are given. */
export function compileBody(ev: Evaluator, stmts: Stmt[], mode: BlockMode): CS {
  const n = stmts.length;
  if (n === 0) return () => null;
  const cs = stmts.map((s, i) => compileStmt(ev, s, mode, i === n - 1));
  if (n === 1) return cs[0];
  const run = (sc: Scope, start: number): MaybePromise<Value | Ctl> => {
    let last: Value | Ctl = null;
    for (let i = start; i < n; i++) {
      const r = cs[i](sc);
      if (r instanceof Promise) {
        return r.then((v) => (v instanceof Ctl || i === n - 1 ? v : run(sc, i + 1)));
      }
      if (r instanceof Ctl) return r;
      last = r;
    }
    return last;
  };
  return (sc) => run(sc, 0);
}

/** Compile one statement. */
function compileStmt(ev: Evaluator, s: Stmt, mode: BlockMode, isLast: boolean): CS {
  switch (s.kind) {
    case "Let": {
      const V = compileExpr(ev, s.value);
      const { name, mutable } = s;
      if (s.exported && (mode === "top" || mode === "top_value")) ev.exportNames.add(name);
      if (name === "_") return (sc) => then(V(sc), () => null);
      return (sc) => {
        const v = V(sc);
        if (v instanceof Promise) {
          return v.then((x) => {
            sc.declare(name, x, mutable);
            return null;
          });
        }
        sc.declare(name, v, mutable);
        return null;
      };
    }
    case "FnDecl": {
      const make = compileFnDecl(ev, s);
      const name = s.name;
      if (s.exported && (mode === "top" || mode === "top_value")) ev.exportNames.add(name);
      return (sc) => {
        sc.declare(name, make(sc));
        return null;
      };
    }
    case "Alias": {
      const v = new CommandV(s.command, s.name);
      const name = s.name;
      return (sc) => {
        sc.declare(name, v);
        return null;
      };
    }
    case "Use": {
      const target = s.target;
      const span = s.span;
      return (sc) => then(ev.useModule(target, sc, span), () => null);
    }
    case "Return": {
      if (s.value === undefined) {
        const ret = new Ctl("return", null);
        return () => ret;
      }
      const V = compileExpr(ev, s.value);
      return (sc) => then(V(sc), (v) => new Ctl("return", v));
    }
    case "Break":
      return () => BREAK;
    case "Continue":
      return () => CONTINUE;
    case "For":
      return compileFor(ev, s);
    case "While":
      return compileWhile(ev, s);
    case "Assign":
      return compileAssign(ev, s);
    case "EnvAssign":
      return compileEnvAssign(ev, s);
    case "ExprStmt": {
      const isCmd = isCommandExpr(s.expr);
      const stmtPos = mode === "top" || (mode === "top_value" && !isLast) ||
        (isCmd && (mode === "discard" || !isLast));
      const C = compileCtl(ev, s.expr, stmtPos);
      const sinks = mode === "top" || mode === "top_value"
        ? !isLast
        : isCmd && (mode === "discard" || !isLast);
      if (!sinks) return C;
      return (sc) =>
        then(C(sc), (v) => {
          if (v instanceof Ctl) return v;
          return then(ev.sink(v), () => v);
        });
    }
  }
}

function compileAssign(ev: Evaluator, s: AssignStmt): CS {
  const V = compileExpr(ev, s.value);
  const { target, op, span } = s;
  const bin = op === "=" ? null : (op[0] as "+" | "-" | "*" | "/");
  const assign = (sc: Scope, v: Value): Value => {
    const cell = assignable(sc, target, span);
    if (bin !== null) {
      const old = cell.v;
      if (typeof old === "number" && typeof v === "number" && bin !== "/") {
        const r = bin === "+" ? old + v : bin === "-" ? old - v : old * v;
        v = Number.isSafeInteger(r) ? r + 0 : at(span, () => arith(bin, old, v));
      } else {
        const x = v;
        v = at(span, () => arith(bin, old, x));
      }
    }
    cell.v = v;
    Scope.changes++; // may retype a root binding (see Scope.changes)
    return v;
  };
  return (sc) => {
    // The target first: `FOO=bar` (a shell assignment) should say how to declare FOO rather
    // than that `bar` is undefined.
    assignable(sc, target, span);
    const v = V(sc);
    if (v instanceof Promise) return v.then((x) => assign(sc, x));
    return assign(sc, v);
  };
}

/** The cell `target` names, if it may be assigned; else a `type_error` that says what to do. */
function assignable(sc: Scope, target: string, span: Span) {
  const cell = sc.lookup(target);
  if (cell === undefined) {
    throw fail(
      "type_error",
      `cannot assign \`${target}\`: no variable \`${target}\` is declared here`,
      `declare it first: \`var ${target} = …\` (or \`let ${target} = …\` if it never changes); ` +
        `an environment variable is \`env.${target} = "…"\``,
      span,
    );
  }
  if (!cell.mut) {
    throw fail(
      "type_error",
      `cannot assign \`${target}\`: it was bound with \`let\`, which cannot change`,
      `declare it with \`var ${target} = …\` to reassign it`,
      span,
    );
  }
  return cell;
}

function compileEnvAssign(ev: Evaluator, s: EnvAssignStmt): CS {
  const V = compileExpr(ev, s.value);
  const { name, op, span } = s;
  return (sc) => {
    ev.requireTopLevel("env.X =", "with env:", span, sc);
    if (op !== "=") {
      throw fail("type_error", `compound assignment \`${op}\` is not supported on env`, null, span);
    }
    return then(V(sc), (v) => {
      const text = at(span, () => toArgv(v));
      ev.env().set(name, typeof text === "string" ? text : new TextDecoder().decode(text));
      return v;
    });
  };
}

/** The items a `for` loop visits (language §7.3). */
export function iterItems(
  ev: Evaluator,
  v: Value,
  span: [number, number],
): MaybePromise<readonly Value[] | RangeV> {
  if (v instanceof ListV) return v.items;
  if (v instanceof TableV) return v.rows;
  if (v instanceof RangeV) return v;
  if (v instanceof GlobV) return ev.expandGlob(v, span);
  if (v instanceof StreamV) return ev.collectStream(v, span);
  throw fail("type_error", `value is not iterable (${typeName(v)})`, null, span);
}

function compileFor(ev: Evaluator, s: ForStmt): CS {
  const I = compileExpr(ev, s.iter);
  const body = compileBody(ev, s.body.body, "discard");
  const binder = s.binder === "_" ? null : s.binder;
  const span = s.span;
  /** Run one iteration; returns a completion or null to go on. */
  const step = (sc: Scope, x: Value): MaybePromise<Value | Ctl> => {
    ev.checkCancelled();
    const it = new Scope(sc);
    if (binder !== null) it.declare(binder, x);
    return body(it);
  };
  const loopList = (sc: Scope, items: readonly Value[], i: number): MaybePromise<Value | Ctl> => {
    for (; i < items.length; i++) {
      const r = step(sc, items[i]);
      if (r instanceof Promise) {
        const next = i + 1;
        return r.then((
          c,
        ) => (c instanceof Ctl && c !== CONTINUE ? loopExit(c) : loopList(sc, items, next)));
      }
      if (r instanceof Ctl && r !== CONTINUE) return loopExit(r);
    }
    return null;
  };
  const loopRange = (sc: Scope, i: number, end: number): MaybePromise<Value | Ctl> => {
    for (; i < end; i++) {
      const r = step(sc, i);
      if (r instanceof Promise) {
        const next = i + 1;
        return r.then((
          c,
        ) => (c instanceof Ctl && c !== CONTINUE ? loopExit(c) : loopRange(sc, next, end)));
      }
      if (r instanceof Ctl && r !== CONTINUE) return loopExit(r);
    }
    return null;
  };
  return (sc) =>
    then(I(sc), (v) =>
      then(iterItems(ev, v, span), (items) => {
        if (items instanceof RangeV) {
          const start = Number(items.start);
          const end = Number(items.end) + (items.inclusive ? 1 : 0);
          return loopRange(sc, start, end);
        }
        return loopList(sc, items, 0);
      }));
}

/** A loop ends with `null` on `break`; `return` passes through. */
function loopExit(c: Ctl): Value | Ctl {
  return c === BREAK ? null : c;
}

function compileWhile(ev: Evaluator, s: WhileStmt): CS {
  const C = compileExpr(ev, s.cond);
  const cspan = s.cond.span;
  const body0 = compileBody(ev, s.body.body, "discard");
  const body: CS = declares(s.body.body) ? (sc) => body0(new Scope(sc)) : body0;
  const loop = (sc: Scope): MaybePromise<Value | Ctl> => {
    for (;;) {
      ev.checkCancelled();
      const c = C(sc);
      if (c instanceof Promise) return c.then((cv) => (cond(cv, cspan) ? afterBody(sc) : null));
      if (!cond(c, cspan)) return null;
      const r = body(sc);
      if (r instanceof Promise) {
        return r.then((x) => (x instanceof Ctl && x !== CONTINUE ? loopExit(x) : loop(sc)));
      }
      if (r instanceof Ctl && r !== CONTINUE) return loopExit(r);
    }
  };
  const afterBody = (sc: Scope): MaybePromise<Value | Ctl> =>
    then(body(sc), (x) => (x instanceof Ctl && x !== CONTINUE ? loopExit(x) : loop(sc)));
  return loop;
}
