/**
 * Expression compilation (language §5, §7).
 *
 * The evaluator compiles each AST node once into a JS closure `(scope) => value` and then runs
 * the closures. Literals become constants, operator dispatch is decided at compile time, and
 * every closure stays synchronous while its children are synchronous (maybe-async, see
 * maybe.ts): only nodes that actually wait (processes, timers, streams) produce promises.
 *
 * @module
 */

import type {
  BinaryExpr,
  CmdExpr,
  Expr,
  FieldExpr,
  IndexExpr,
  LogicalExpr,
  MethodCallExpr,
  Span,
  StrInterp,
} from "../syntax/ast.ts";
import {
  type DateTimeV,
  DurationV,
  type ErrorV,
  FloatV,
  isInt,
  ListV,
  mkInt,
  OutcomeV,
  RangeV,
  RecordV,
  RegexV,
  SizeV,
  StreamV,
  TableV,
  TimeV,
  typeName,
  type Value,
} from "../value/types.ts";
import { fail, ShoalError } from "../value/errors.ts";
import { arith, makeRange, membership, negate } from "../value/arith.ts";
import { compareValues, valuesEqual } from "../value/compare.ts";
import { asCondition } from "../value/coerce.ts";
import { interpolate } from "../value/render.ts";
import { parseDateTime } from "../value/datetime.ts";
import { isPromise, type MaybePromise, then } from "./maybe.ts";
import type { Scope } from "./scope.ts";
import { Ctl } from "./ctl.ts";
import type { Evaluator } from "./evaluator.ts";
import { compileBlock, compileBody } from "./statements.ts";
import { compileArgs, compileCall, compileLambda } from "./calls.ts";
import { callMethod, fieldOrMethod } from "./dispatch.ts";
import { compileCmd, compileLangBlock, failIfNotOk } from "./commands.ts";
import { compileMatch } from "./match.ts";
import { asShoalError, withSpan } from "./errors.ts";

/** A compiled expression in value position. */
export type CE = (sc: Scope) => MaybePromise<Value>;
/** A compiled statement-level expression: may complete with a control signal. */
export type CS = (sc: Scope) => MaybePromise<Value | Ctl>;

/** An empty, shared named-argument map (never mutated). */
export const NO_NAMED: Map<string, Value> = new Map();

/** Strip a control completion from a value-position result (language §7.3 quirk). */
export function stripCtl(r: Value | Ctl): Value {
  return r instanceof Ctl ? r.value : r;
}

/** Apply `f` to two child results, synchronously when both are ready. */
function both(
  L: CE,
  R: CE,
  f: (a: Value, b: Value) => MaybePromise<Value>,
  rightConst?: Expr,
): CE {
  const k = rightConst === undefined ? undefined : constValue(rightConst);
  if (k !== undefined) {
    // `x < 2`, `n - 1`: a literal right operand needs no closure call.
    return (sc) => {
      const a = L(sc);
      if (a instanceof Promise) return a.then((av) => f(av, k));
      return f(a, k);
    };
  }
  return (sc) => {
    const a = L(sc);
    if (a instanceof Promise) return a.then((av) => then(R(sc), (bv) => f(av, bv)));
    const b = R(sc);
    if (b instanceof Promise) return b.then((bv) => f(a, bv));
    return f(a, b);
  };
}

/** The value of a literal node whose value is a JS primitive (int, str, bool), else undefined. */
function constValue(e: Expr): Value | undefined {
  if (e.kind === "Int") {
    const v = mkInt(BigInt(e.value));
    return typeof v === "number" ? v : undefined;
  }
  if (e.kind === "Str" || e.kind === "Bool") return e.value;
  return undefined;
}

/** Run `f`, attaching `span` to a language error that has none. */
export function at<T>(span: Span, f: () => T): T {
  try {
    return f();
  } catch (e) {
    throw withSpan(e, span);
  }
}

function arithAt(op: "+" | "-" | "*" | "/" | "%", a: Value, b: Value, span: Span): Value {
  try {
    return arith(op, a, b);
  } catch (e) {
    throw withSpan(e, span);
  }
}

/** `as_condition` with a span on failure; fast for booleans. */
export function cond(v: Value, span: Span): boolean {
  if (v === true) return true;
  if (v === false) return false;
  try {
    return asCondition(v);
  } catch (e) {
    throw withSpan(e, span);
  }
}

/** Structural equality with a fast path for primitives. */
export function eq(a: Value, b: Value): boolean {
  if (typeof a !== "object" && typeof b !== "object") return a === b;
  return valuesEqual(a, b);
}

function cmp(a: Value, b: Value, span: Span): number {
  if (typeof a === "number" && typeof b === "number") return a - b;
  try {
    return compareValues(a, b);
  } catch (e) {
    throw withSpan(e, span);
  }
}

function compileBinary(ev: Evaluator, e: BinaryExpr): CE {
  const L = compileExpr(ev, e.left);
  const R = compileExpr(ev, e.right);
  const span = e.span;
  const rk = e.right;
  switch (e.op) {
    case "+":
      return both(L, R, (a, b) => {
        if (typeof a === "number" && typeof b === "number") {
          const r = a + b;
          if (Number.isSafeInteger(r)) return r;
        } else if (typeof a === "string" && typeof b === "string") return a + b;
        return arithAt("+", a, b, span);
      }, rk);
    case "-":
      return both(L, R, (a, b) => {
        if (typeof a === "number" && typeof b === "number") {
          const r = a - b;
          if (Number.isSafeInteger(r)) return r;
        }
        return arithAt("-", a, b, span);
      }, rk);
    case "*":
      return both(L, R, (a, b) => {
        if (typeof a === "number" && typeof b === "number") {
          const r = a * b;
          if (Number.isSafeInteger(r)) return r + 0;
        }
        return arithAt("*", a, b, span);
      }, rk);
    case "/":
      return both(L, R, (a, b) => {
        if (typeof a === "number" && typeof b === "number" && b !== 0 && (a | 0) === a) {
          return Math.trunc(a / b) + 0;
        }
        return arithAt("/", a, b, span);
      }, rk);
    case "%":
      return both(L, R, (a, b) => {
        if (typeof a === "number" && typeof b === "number" && b !== 0) return (a % b) + 0;
        return arithAt("%", a, b, span);
      }, rk);
    case "==":
      return both(
        L,
        R,
        (
          a,
          b,
        ) => (typeof a === "number" && typeof b === "number" ? a === b : at(span, () => eq(a, b))),
        rk,
      );
    case "!=":
      return both(
        L,
        R,
        (
          a,
          b,
        ) => (typeof a === "number" && typeof b === "number" ? a !== b : at(span, () => !eq(a, b))),
        rk,
      );
    case "<":
      return both(
        L,
        R,
        (a, b) => (typeof a === "number" && typeof b === "number" ? a < b : cmp(a, b, span) < 0),
        rk,
      );
    case "<=":
      return both(
        L,
        R,
        (a, b) => (typeof a === "number" && typeof b === "number" ? a <= b : cmp(a, b, span) <= 0),
        rk,
      );
    case ">":
      return both(
        L,
        R,
        (a, b) => (typeof a === "number" && typeof b === "number" ? a > b : cmp(a, b, span) > 0),
        rk,
      );
    case ">=":
      return both(
        L,
        R,
        (a, b) => (typeof a === "number" && typeof b === "number" ? a >= b : cmp(a, b, span) >= 0),
        rk,
      );
    case "in":
      return both(L, R, (a, b) => at(span, () => membership(a, b)));
    case "??":
      return (sc) => then(L(sc), (a) => (a === null ? R(sc) : a));
  }
}

/**
 * `&&` / `||` (language §5.1): returns an operand, not a bool. In statement position the
 * executed operand that is not returned goes to the sink, and a non-ok outcome result raises.
 */
export function compileLogical(ev: Evaluator, e: LogicalExpr, stmtPos: boolean): CE {
  const L = compileExpr(ev, e.left);
  const R = compileExpr(ev, e.right);
  const isAnd = e.op === "&&";
  const finish = (v: Value): Value => (stmtPos ? failIfNotOk(v, e.span) : v);
  const verb = endsInCwdVerb(e.left);
  return (sc) =>
    then(L(sc), (a) => {
      // `cd DIR && CMD` (issue 13): a cwd verb that returned has succeeded (its failures
      // raise), so the chain goes on — in DIR — and, as in a shell, the verb prints nothing.
      const moved = verb && typeof a !== "boolean" && !(a instanceof OutcomeV);
      const c = moved || cond(a, e.left.span);
      if (c !== isAnd) return finish(a);
      if (stmtPos && !moved) {
        const s = ev.sink(a);
        if (isPromise(s)) return s.then(() => then(R(sc), finish));
      }
      return then(R(sc), finish);
    });
}

/** The session-cwd verbs, whose value (a path or the dir stack) is not a condition. */
const CWD_VERBS = new Set(["cd", "pushd", "popd", "j", "jump"]);

/** True when `e`'s value, if not a short-circuited bool/outcome, is a cwd verb's. */
function endsInCwdVerb(e: Expr): boolean {
  if (e.kind === "Cmd") return e.headKind === "word" && CWD_VERBS.has(e.head) && !e.background;
  return e.kind === "Logical" && endsInCwdVerb(e.right);
}

function compileInterp(ev: Evaluator, e: StrInterp): CE {
  const parts: (string | CE)[] = e.parts.map((p) =>
    p.kind === "Text" ? p.value : compileExpr(ev, p)
  );
  const span = e.span;
  const piece = (v: Value): string => typeof v === "string" ? v : at(span, () => interpolate(v));
  return (sc) => {
    let out = "";
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i];
      if (typeof p === "string") {
        out += p;
        continue;
      }
      const v = p(sc);
      if (v instanceof Promise) return finishInterpAsync(parts, i, out, v, sc, piece);
      out += piece(v);
    }
    return out;
  };
}

async function finishInterpAsync(
  parts: (string | CE)[],
  i: number,
  out: string,
  pending: Promise<Value>,
  sc: Scope,
  piece: (v: Value) => string,
): Promise<Value> {
  out += piece(await pending);
  for (let j = i + 1; j < parts.length; j++) {
    const p = parts[j];
    out += typeof p === "string" ? p : piece(await p(sc));
  }
  return out;
}

/** Compile a list of expressions into a function producing their values in order. */
export function compileList(ev: Evaluator, items: Expr[]): (sc: Scope) => MaybePromise<Value[]> {
  const cs = items.map((x) => compileExpr(ev, x));
  return (sc) => {
    const out: Value[] = new Array(cs.length);
    for (let i = 0; i < cs.length; i++) {
      const v = cs[i](sc);
      if (v instanceof Promise) return finishListAsync(cs, i, out, v, sc);
      out[i] = v;
    }
    return out;
  };
}

async function finishListAsync(
  cs: CE[],
  i: number,
  out: Value[],
  pending: Promise<Value>,
  sc: Scope,
): Promise<Value[]> {
  out[i] = await pending;
  for (let j = i + 1; j < cs.length; j++) out[j] = await cs[j](sc);
  return out;
}

async function finishRecordAsync(
  keys: string[],
  cs: CE[],
  i: number,
  m: Map<string, Value>,
  pending: Promise<Value>,
  sc: Scope,
): Promise<Value> {
  m.set(keys[i], await pending);
  for (let j = i + 1; j < cs.length; j++) m.set(keys[j], await cs[j](sc));
  return new RecordV(m);
}

/** Translate Rust regex syntax to JS where they differ (`(?P<n>` named groups). */
export function compileRegex(source: string, span: Span | null): RegexV {
  const js = source.replace(/\(\?P</g, "(?<");
  try {
    return new RegexV(source, new RegExp(js, "u"));
  } catch (e) {
    throw fail("arg_error", `invalid regex \`${source}\`: ${(e as Error).message}`, null, span);
  }
}

function compileField(ev: Evaluator, e: FieldExpr): CE {
  const name = e.name;
  const span = e.span;
  // Namespace members (`math.pi`, `env.HOME`) when the root name is not shadowed.
  if (e.target.kind === "Ident" && ev.isNamespaceName(e.target.name)) {
    const ns = e.target.name;
    const T = compileExpr(ev, e.target);
    return (sc) => {
      if (sc.lookup(ns) === undefined) return at(span, () => ev.namespaceField(ns, name, span));
      return then(T(sc), (v) => fieldOrMethod(ev, v, name, span));
    };
  }
  const T = compileExpr(ev, e.target);
  if (e.optional) {
    return (sc) => then(T(sc), (v) => (v === null ? null : fieldOrMethod(ev, v, name, span)));
  }
  return (sc) => {
    const v = T(sc);
    if (v instanceof Promise) return v.then((x) => fieldOrMethod(ev, x, name, span));
    return fieldOrMethod(ev, v, name, span);
  };
}

/**
 * A bare command head used as an expression (`sort.feed(x)`, `ls.len()`, `run(x)` with no
 * binding): the zero-argument command node.
 */
export function headCmd(name: string, span: Span): CmdExpr {
  return {
    kind: "Cmd",
    env: [],
    forced: false,
    head: name,
    headKind: "word",
    headSpan: span,
    args: [],
    redirects: [],
    background: false,
    span,
  };
}

const isCmdNode = (x: Expr): boolean => x.kind === "Cmd" || x.kind === "LangBlock";

/**
 * `.feed` (§9.7): `value.feed(cmd)` or `cmd.feed(value)` — the operand that is a command node
 * (a command, an interpreter block, or an unbound bare name) is the command.
 */
function compileFeed(ev: Evaluator, e: MethodCallExpr): CE {
  const span = e.span;
  if (e.args.length !== 1 || e.args[0].name !== undefined) {
    return () => {
      throw fail("arg_error", ".feed expects exactly one command argument", null, span);
    };
  }
  const arg = e.args[0].value;
  if (isCmdNode(arg)) {
    const T = compileExpr(ev, e.target);
    return (sc) => then(T(sc), (v) => ev.feed(v, arg, sc, span));
  }
  const A = compileExpr(ev, arg);
  if (isCmdNode(e.target)) {
    const target = e.target;
    return (sc) => then(A(sc), (v) => ev.feed(v, target, sc, span));
  }
  const T = compileExpr(ev, e.target);
  const bare = e.target.kind === "Ident" ? e.target : null;
  return (sc) => {
    if (bare !== null && sc.lookup(bare.name) === undefined && ev.isCommandName(bare.name)) {
      const cmd = headCmd(bare.name, bare.span);
      return then(A(sc), (v) => ev.feed(v, cmd, sc, span));
    }
    return then(T(sc), (recv) =>
      then(A(sc), (v) => {
        if (recv instanceof StreamV) {
          throw fail(
            "type_error",
            "cannot feed a stream to a command's stdin: streams are not fed incrementally",
            "collect it first: s.collect().feed(cmd)",
            span,
          );
        }
        throw fail(
          "type_error",
          `.feed's argument must be a command (e.g. .feed(sort -r)), found ${typeName(v)}`,
          null,
          span,
        );
      }));
  };
}

function compileMethodCall(ev: Evaluator, e: MethodCallExpr): CE {
  const name = e.name;
  const span = e.span;
  if (name === "feed") return compileFeed(ev, e);
  const evalArgs = compileArgs(ev, e.args, span);
  let T: CE;
  if (e.target.kind === "Ident" && ev.isNamespaceName(e.target.name)) {
    const ns = e.target.name;
    const inner = compileExpr(ev, e.target);
    return (sc) => {
      if (sc.lookup(ns) === undefined) {
        return then(evalArgs(sc), (args) => at(span, () => ev.namespaceCall(ns, name, args)));
      }
      return then(
        inner(sc),
        (recv) => then(evalArgs(sc), (args) => callMethod(ev, recv, name, args)),
      );
    };
  } else T = compileExpr(ev, e.target);
  const optional = e.optional;
  return (sc) => {
    const recv = T(sc);
    if (recv instanceof Promise) {
      return recv.then((r) =>
        optional && r === null ? null : then(evalArgs(sc), (args) => callMethod(ev, r, name, args))
      );
    }
    // `?.` skips argument evaluation on null (operators-safenav).
    if (optional && recv === null) return null;
    const args = evalArgs(sc);
    if (args instanceof Promise) return args.then((a) => callMethod(ev, recv, name, a));
    return callMethod(ev, recv, name, args);
  };
}

/** Indexing (language §15: list/str by int, record by str key). */
export function indexValue(v: Value, i: Value, span: Span): Value {
  if (v instanceof ListV) {
    if (isInt(i)) {
      const n = v.items.length;
      let k = typeof i === "number" ? i : Number(i);
      if (k < 0) k += n;
      if (k < 0 || k >= n || !Number.isSafeInteger(k)) {
        throw fail("index_range", "list index out of range", null, span);
      }
      return v.items[k];
    }
    if (i instanceof RangeV) throw fail("type_error", "cannot index list with range", null, span);
  } else if (typeof v === "string" && isInt(i)) {
    const chars = Array.from(v);
    let k = typeof i === "number" ? i : Number(i);
    if (k < 0) k += chars.length;
    if (k < 0 || k >= chars.length || !Number.isSafeInteger(k)) {
      throw fail("index_range", "string index out of range", null, span);
    }
    return chars[k];
  } else if (v instanceof RecordV && typeof i === "string") {
    const f = v.fields.get(i);
    if (f === undefined && !v.fields.has(i)) {
      throw fail("field_missing", `missing field \`${i}\``, null, span);
    }
    return f ?? null;
  }
  // A table is not indexed itself (corpus-pinned); its rows and columns are.
  const hint = v instanceof TableV
    ? (isInt(i) ? `index its rows: t.rows[${i}]` : "a column is t.NAME; its rows are t.rows")
    : null;
  throw fail("type_error", `cannot index ${typeName(v)} with ${typeName(i)}`, hint, span);
}

function compileIndex(ev: Evaluator, e: IndexExpr): CE {
  const span = e.span;
  return both(
    compileExpr(ev, e.target),
    compileExpr(ev, e.index),
    (v, i) => indexValue(v, i, span),
  );
}

/** Compile an expression in value position. */
export function compileExpr(ev: Evaluator, e: Expr): CE {
  switch (e.kind) {
    case "Int": {
      const v = mkInt(BigInt(e.value));
      return () => v;
    }
    case "Float": {
      const v = new FloatV(e.value);
      return () => v;
    }
    case "Size": {
      const v = new SizeV(BigInt(e.bytes));
      return () => v;
    }
    case "Duration": {
      const v = new DurationV(BigInt(e.ns));
      return () => v;
    }
    case "Time": {
      const v = new TimeV(e.h, e.m, e.s);
      return () => v;
    }
    case "Str": {
      const v = e.value;
      return () => v;
    }
    case "Bool": {
      const v = e.value;
      return () => v;
    }
    case "Null":
      return () => null;
    case "StrInterp":
      return compileInterp(ev, e);
    case "Regex": {
      let cached: RegexV | null = null;
      const span = e.span;
      const src = e.source;
      return () => (cached ??= compileRegex(src, span));
    }
    case "DateTime": {
      let cached: DateTimeV | null = null;
      const span = e.span;
      const src = e.source;
      return () => (cached ??= at(span, () => parseDateTime(src)));
    }
    case "Ident": {
      const name = e.name;
      const span = e.span;
      return (sc) => {
        const c = sc.lookup(name);
        if (c !== undefined) return c.v;
        return ev.resolveFree(name, sc, span);
      };
    }
    case "List": {
      const L = compileList(ev, e.items);
      return (sc) => then(L(sc), (items) => new ListV(items));
    }
    case "Record": {
      const keys = e.fields.map((f) => f.key);
      const cs = e.fields.map((f) => compileExpr(ev, f.value));
      return (sc) => {
        const m = new Map<string, Value>();
        for (let i = 0; i < cs.length; i++) {
          const v = cs[i](sc);
          if (v instanceof Promise) return finishRecordAsync(keys, cs, i, m, v, sc);
          m.set(keys[i], v);
        }
        return new RecordV(m);
      };
    }
    case "Lambda":
      return compileLambda(ev, e);
    case "Unary": {
      const O = compileExpr(ev, e.operand);
      const span = e.span;
      if (e.op === "!") return (sc) => then(O(sc), (v) => !cond(v, span));
      return (sc) =>
        then(O(sc), (v) => {
          if (typeof v === "number" && v !== 0) return -v;
          return at(span, () => negate(v));
        });
    }
    case "Binary":
      return compileBinary(ev, e);
    case "Logical":
      return compileLogical(ev, e, false);
    case "Range": {
      const span = e.span;
      const inc = e.inclusive;
      return both(
        compileExpr(ev, e.start),
        compileExpr(ev, e.end),
        (a, b) => at(span, () => makeRange(a, b, inc)),
      );
    }
    case "Field":
      return compileField(ev, e);
    case "MethodCall":
      return compileMethodCall(ev, e);
    case "Index":
      return compileIndex(ev, e);
    case "Call":
      return compileCall(ev, e);
    case "Cmd":
      return compileCmd(ev, e, false);
    case "LangBlock":
      return compileLangBlock(ev, e, false);
    case "Block":
    case "If":
    case "Match":
    case "Try":
    case "Catch":
    case "With": {
      const C = compileCtl(ev, e, false);
      return (sc) => {
        const r = C(sc);
        if (r instanceof Promise) return r.then(stripCtl);
        return r instanceof Ctl ? r.value : r;
      };
    }
    case "Spawn": {
      const body = compileBlock(ev, e.body, "value");
      const desc = "spawn { … }";
      return (sc) => ev.spawnTask(desc, () => then(body(sc), stripCtl));
    }
  }
}

/** Catch a language error thrown synchronously or by a promise and hand it to `handler`. */
export function catching<T>(
  body: () => MaybePromise<T>,
  handler: (err: ErrorV) => MaybePromise<T>,
  span: Span,
): MaybePromise<T> {
  let r: MaybePromise<T>;
  try {
    r = body();
  } catch (e) {
    return handler(catchable(e, span));
  }
  if (r instanceof Promise) return r.catch((e) => handler(catchable(e, span)));
  return r;
}

/** The error value a `catch` binds, or rethrow what the language must not catch. */
function catchable(e: unknown, span: Span): ErrorV {
  if (e instanceof ShoalError) return e.err;
  if (e instanceof RangeError) return asShoalError(e, span).err;
  throw e;
}

/**
 * Compile a statement-level expression. Control constructs pass `break`/`continue`/`return`
 * through; command nodes run in statement position when `stmtPos` is set.
 */
export function compileCtl(ev: Evaluator, e: Expr, stmtPos: boolean): CS {
  switch (e.kind) {
    case "Block":
      return compileBlock(ev, e, "value");
    case "If": {
      const C = compileExpr(ev, e.cond);
      const cspan = e.cond.span;
      const T = compileBlock(ev, e.then, "value");
      const E: CS | null = e.else === undefined ? null : compileCtl(ev, e.else, false);
      return (sc) => {
        const c = C(sc);
        if (c instanceof Promise) {
          return c.then((cv) => (cond(cv, cspan) ? T(sc) : E === null ? null : E(sc)));
        }
        return cond(c, cspan) ? T(sc) : E === null ? null : E(sc);
      };
    }
    case "Match":
      return compileMatch(ev, e);
    case "Try": {
      const B = compileBlock(ev, e.body, "value");
      const binder = e.binder;
      const H = compileBody(ev, e.handler.body, "value");
      const span = e.span;
      return (sc) =>
        catching<Value | Ctl>(() => B(sc), (err) => {
          const hs = ev.childScope(sc);
          if (binder !== undefined && binder !== "_") hs.declare(binder, err);
          return H(hs);
        }, span);
    }
    case "Catch": {
      const X = compileExpr(ev, e.expr);
      const binder = e.binder;
      const H: CS = e.handler.kind === "Block"
        ? compileBody(ev, e.handler.body, "value")
        : compileCtl(ev, e.handler, false);
      const span = e.span;
      return (sc) =>
        catching<Value | Ctl>(() => X(sc), (err) => {
          const hs = ev.childScope(sc);
          if (binder !== undefined && binder !== "_") hs.declare(binder, err);
          return H(hs);
        }, span);
    }
    case "With":
      return ev.compileWith(e);
    case "Cmd":
      return compileCmd(ev, e, stmtPos);
    case "LangBlock":
      return compileLangBlock(ev, e, stmtPos);
    case "Logical":
      return compileLogical(ev, e, stmtPos);
    default:
      return compileExpr(ev, e);
  }
}

/** True for expressions that are commands for the purposes of statement position (§7.2). */
export function isCommandExpr(e: Expr): boolean {
  return e.kind === "Cmd" || e.kind === "LangBlock" ||
    (e.kind === "Logical" && (isCommandExpr(e.left) || isCommandExpr(e.right)));
}
