/**
 * Functions and calls (language §8): closures, expression-call binding (§8.2), command-call
 * binding with word coercion (§8.3), `name(args)` resolution (§7.5) and the recursion limit.
 *
 * @module
 */

import type {
  Arg,
  CallExpr,
  CmdArg,
  CmdExpr,
  Expr,
  FnDecl,
  LambdaExpr,
  Param,
  RestParam,
  Span,
  TypeRef,
} from "../syntax/ast.ts";
import {
  ClosureV,
  CommandV,
  GlobV,
  ListV,
  type ParamInfo,
  typeName,
  type Value,
} from "../value/types.ts";
import { fail } from "../value/errors.ts";
import { coerceListElements, coerceWord } from "../value/coerce.ts";
import { type MaybePromise, then } from "./maybe.ts";
import { Scope } from "./scope.ts";
import { Ctl } from "./ctl.ts";
import type { Evaluator } from "./evaluator.ts";
import {
  at,
  type CE,
  compileCtl,
  compileExpr,
  compileList,
  type CS,
  NO_NAMED,
} from "./expressions.ts";
import { compileBody } from "./statements.ts";
import type { MethodArgs } from "./method_types.ts";
import { recursionLimit } from "./errors.ts";

/** The call-depth limit (language §8.2). */
export const MAX_DEPTH = 10_000;

/** The compiled, shareable part of a user function or lambda. */
export interface FnDef {
  name: string | null;
  params: Param[];
  paramNames: Set<string>;
  defaults: (CE | null)[];
  rest: RestParam | undefined;
  body: CS;
  /** The body's AST (Leash derives a call's effects from it). */
  ast: Expr;
  span: Span;
}

/** `ClosureV.impl` of a user function: its definition and captured scope. */
export interface UserImpl {
  kind: "user";
  def: FnDef;
  env: Scope;
}

/** `ClosureV.impl` of a native function. */
export interface NativeImpl {
  kind: "native";
  call(
    ev: Evaluator,
    pos: Value[],
    named: Map<string, Value>,
    span: Span | null,
  ): MaybePromise<Value>;
}

function typeText(t: TypeRef | undefined): string | undefined {
  if (t === undefined) return undefined;
  const args = t.args.length ? `<${t.args.map((a) => typeText(a)).join(", ")}>` : "";
  return `${t.name}${args}${t.optional ? "?" : ""}`;
}

function paramInfos(params: Param[]): ParamInfo[] {
  return params.map((p) => ({
    name: p.name,
    type: typeText(p.type),
    hasDefault: p.default !== undefined,
  }));
}

function compileDef(
  ev: Evaluator,
  name: string | null,
  params: Param[],
  rest: RestParam | undefined,
  body: Expr,
  span: Span,
): FnDef {
  const compiledBody: CS = body.kind === "Block"
    ? compileBody(ev, body.body, "value")
    : compileCtl(ev, body, false);
  return {
    name,
    params,
    paramNames: new Set(params.map((p) => p.name)),
    defaults: params.map((p) => (p.default === undefined ? null : compileExpr(ev, p.default))),
    rest,
    body: compiledBody,
    ast: body,
    span,
  };
}

/** Compile a `fn` declaration into a closure factory (the closure captures the scope). */
export function compileFnDecl(ev: Evaluator, s: FnDecl): (sc: Scope) => ClosureV {
  const def = compileDef(ev, s.name, s.params, s.rest, s.body, s.span);
  const infos = paramInfos(s.params);
  const restInfo: ParamInfo | null = s.rest
    ? { name: s.rest.name, type: typeText(s.rest.type), hasDefault: false }
    : null;
  return (sc) => new ClosureV(s.name, infos, restInfo, { kind: "user", def, env: sc } as UserImpl);
}

/** Compile a lambda expression. */
export function compileLambda(ev: Evaluator, e: LambdaExpr): CE {
  const def = compileDef(ev, null, e.params, undefined, e.body, e.span);
  const infos = paramInfos(e.params);
  return (sc) => new ClosureV(null, infos, null, { kind: "user", def, env: sc } as UserImpl);
}

/** A native closure. */
export function nativeFn(
  name: string,
  params: string[],
  call: NativeImpl["call"],
): ClosureV {
  return new ClosureV(
    name,
    params.map((p) => ({ name: p, hasDefault: false })),
    null,
    { kind: "native", call } as NativeImpl,
  );
}

/**
 * Coerce a value to a declared parameter type (`list<T>` per element, §6.2). `cwd` is the
 * session cwd, recorded as the origin of a word bound to a `glob` parameter.
 */
export function coerceTo(v: Value, t: TypeRef | undefined, span: Span | null, cwd: string): Value {
  if (t === undefined) return v;
  const coerce = () =>
    t.name === "list" ? coerceListElements(v, t.args[0], cwd) : coerceWord(v, t, cwd);
  return span === null ? coerce() : at(span, coerce);
}

/** Call any callable value (closure, alias command) — language §8. */
export function callValue(
  ev: Evaluator,
  f: Value,
  pos: Value[],
  named: Map<string, Value>,
  span: Span | null,
): MaybePromise<Value> {
  if (f instanceof ClosureV) {
    const impl = f.impl as UserImpl | NativeImpl;
    if (impl.kind === "user") return callUser(ev, impl, pos, named, span);
    ev.checkCancelled();
    return impl.call(ev, pos, named, span);
  }
  if (f instanceof CommandV) return ev.callAlias(f, pos, named, span);
  throw fail("type_error", `cannot call ${typeName(f)}`, null, span);
}

/** Bind arguments (§8.2) and run a user function body. */
export function callUser(
  ev: Evaluator,
  impl: UserImpl,
  pos: Value[],
  named: Map<string, Value>,
  span: Span | null,
): MaybePromise<Value> {
  const def = impl.def;
  const params = def.params;
  const np = params.length;
  if (pos.length > np && def.rest === undefined) {
    throw fail(
      "arg_error",
      `expected ${np} argument${np === 1 ? "" : "s"}, got ${pos.length}`,
      null,
      span,
    );
  }
  if (named.size !== 0) {
    for (const k of named.keys()) {
      if (!def.paramNames.has(k)) throw fail("arg_error", `unknown argument \`${k}\``, null, span);
    }
  }
  const sc = new Scope(impl.env, true);
  for (let i = 0; i < np; i++) {
    const p = params[i];
    let v: Value | undefined = named.size !== 0 ? named.get(p.name) : undefined;
    if (v === undefined && named.size !== 0 && named.has(p.name)) v = null;
    if (v === undefined) {
      if (i < pos.length) v = pos[i];
      else {
        const d = def.defaults[i];
        if (d === null) throw fail("arg_error", `missing argument \`${p.name}\``, null, span);
        const dv = d(sc);
        if (dv instanceof Promise) return bindRestAsync(ev, impl, sc, pos, named, span, i, dv);
        v = dv;
      }
    }
    if (p.type !== undefined && p.type.name === "list") v = coerceTo(v, p.type, span, ev.cwd());
    sc.declare(p.name, v);
  }
  if (def.rest !== undefined) sc.declare(def.rest.name, new ListV(pos.slice(np)));
  return runBody(ev, def, sc, span);
}

/**
 * Every SEGMENT nested calls the next call continues in a microtask: the maybe-async
 * machinery unwinds the JS stack (each caller sees a promise) and the deeper calls start on
 * a fresh one. So the JS stack only ever holds one segment of Shoal calls and deep recursion
 * reaches the language's 10000-call limit in any thread (a Worker's stack is small), at the
 * cost of one promise per segment crossed. Shallow programs never hop.
 */
const SEGMENT_MASK = 255;

function hop(def: FnDef, sc: Scope): Promise<Value | Ctl> {
  return Promise.resolve(sc).then(def.body);
}

function settleAsync(ev: Evaluator, r: Promise<Value | Ctl>, span: Span | null): Promise<Value> {
  return r.then(
    (x) => {
      ev.depth--;
      return finishBody(x, span);
    },
    (e) => {
      ev.depth--;
      throw e;
    },
  );
}

async function bindRestAsync(
  ev: Evaluator,
  impl: UserImpl,
  sc: Scope,
  pos: Value[],
  named: Map<string, Value>,
  span: Span | null,
  at: number,
  pending: Promise<Value>,
): Promise<Value> {
  const def = impl.def;
  const params = def.params;
  for (let i = at; i < params.length; i++) {
    const p = params[i];
    let v: Value;
    if (i === at) v = await pending;
    else if (named.has(p.name)) v = named.get(p.name) ?? null;
    else if (i < pos.length) v = pos[i];
    else {
      const d = def.defaults[i];
      if (d === null) throw fail("arg_error", `missing argument \`${p.name}\``, null, span);
      v = await d(sc);
    }
    if (p.type !== undefined && p.type.name === "list") v = coerceTo(v, p.type, span, ev.cwd());
    sc.declare(p.name, v);
  }
  if (def.rest !== undefined) sc.declare(def.rest.name, new ListV(pos.slice(params.length)));
  return runBody(ev, def, sc, span);
}

function finishBody(r: Value | Ctl, span: Span | null): Value {
  if (r instanceof Ctl) {
    if (r.kind === "return") return r.value;
    throw fail("custom", "loop control outside loop", null, span);
  }
  return r;
}

function runBody(ev: Evaluator, def: FnDef, sc: Scope, span: Span | null): MaybePromise<Value> {
  ev.checkCancelled();
  if (++ev.depth > MAX_DEPTH) {
    ev.depth--;
    throw recursionLimit(span);
  }
  if ((ev.depth & SEGMENT_MASK) === 0) return settleAsync(ev, hop(def, sc), span);
  let r: MaybePromise<Value | Ctl>;
  try {
    r = def.body(sc);
  } catch (e) {
    ev.depth--;
    throw e;
  }
  if (r instanceof Promise) return settleAsync(ev, r, span);
  ev.depth--;
  return finishBody(r, span);
}

/** Compile call arguments into evaluated `MethodArgs`. */
export function compileArgs(
  ev: Evaluator,
  args: Arg[],
  span: Span,
): (sc: Scope) => MaybePromise<MethodArgs> {
  const posC = compileList(ev, args.filter((a) => a.name === undefined).map((a) => a.value));
  const named = args.filter((a) => a.name !== undefined);
  if (named.length === 0) {
    return (sc) => {
      const pos = posC(sc);
      if (pos instanceof Promise) return pos.then((p) => ({ pos: p, named: NO_NAMED, span }));
      return { pos, named: NO_NAMED, span };
    };
  }
  const keys = named.map((a) => a.name as string);
  const namedC = compileList(ev, named.map((a) => a.value));
  return (sc) =>
    then(posC(sc), (pos) =>
      then(namedC(sc), (vals) => {
        const m = new Map<string, Value>();
        for (let i = 0; i < keys.length; i++) m.set(keys[i], vals[i]);
        return { pos, named: m, span };
      }));
}

/** Compile `name(args)` (resolution order of language §7.5). */
export function compileCall(ev: Evaluator, e: CallExpr): CE {
  const name = e.callee;
  const span = e.span;
  const A = compileArgs(ev, e.args, span);
  const form = ev.callForms.get(name);
  if (form !== undefined) return (sc) => then(A(sc), (args) => at(span, () => form(ev, args, sc)));
  if (e.args.every((a) => a.name === undefined)) {
    // Positional-only calls (the hot case): no MethodArgs record.
    const P = compileList(ev, e.args.map((a) => a.value));
    return (sc) => {
      const cell = sc.lookup(name);
      const pos = P(sc);
      if (cell === undefined) {
        return then(
          pos,
          (p) => ev.callCommandByName(name, { pos: p, named: NO_NAMED, span }, sc, span),
        );
      }
      const f = cell.v;
      if (pos instanceof Promise) return pos.then((p) => callValue(ev, f, p, NO_NAMED, span));
      if (f instanceof ClosureV && (f.impl as UserImpl).kind === "user") {
        return callUser(ev, f.impl as UserImpl, pos, NO_NAMED, span);
      }
      return callValue(ev, f, pos, NO_NAMED, span);
    };
  }
  return (sc) => {
    const cell = sc.lookup(name);
    const args = A(sc);
    if (cell !== undefined) {
      const f = cell.v;
      if (args instanceof Promise) return args.then((a) => callValue(ev, f, a.pos, a.named, span));
      return callValue(ev, f, args.pos, args.named, span);
    }
    return then(args, (a) => ev.callCommandByName(name, a, sc, span));
  };
}

/** Words bound to a closure from a command-form call, before coercion. */
interface CmdBinding {
  pos: Value[];
  named: Map<string, Value>;
  help: boolean;
}

/** The declared type of the positional slot `i` (rest element type beyond the params). */
function slotType(def: FnDef | null, i: number): { t: TypeRef | undefined; variadic: boolean } {
  if (def === null) return { t: undefined, variadic: true };
  if (i < def.params.length) return { t: def.params[i].type, variadic: false };
  const rt = def.rest?.type;
  return { t: rt?.name === "list" ? rt.args[0] : rt, variadic: true };
}

/**
 * Command-call binding (§8.3): walk the words, collect named/flag values and positionals
 * (globs expanded unless they land on a `glob` or non-variadic `list<T>` slot), coerce to the
 * declared types, then call.
 */
export function callClosureFromCommand(
  ev: Evaluator,
  f: ClosureV,
  cmd: CmdExpr,
  extra: CmdArg[],
  sc: Scope,
): MaybePromise<Value> {
  const impl = f.impl as UserImpl | NativeImpl;
  const def = impl.kind === "user" ? impl.def : null;
  const args = extra.length ? [...cmd.args, ...extra] : cmd.args;
  const b: CmdBinding = { pos: [], named: new Map(), help: false };
  const typeOf = (name: string): TypeRef | undefined =>
    def?.params.find((p) => p.name === name)?.type;
  // A named value: set now (null), or once it resolves, then go on from word `next`.
  const setNamed = (
    key: string,
    r: MaybePromise<Value>,
    next: number,
  ): Promise<CmdBinding> | null => {
    if (!(r instanceof Promise)) {
      b.named.set(key, r);
      return null;
    }
    return r.then((v) => {
      b.named.set(key, v);
      return step(next);
    });
  };
  const step = (i: number): MaybePromise<CmdBinding> => {
    for (; i < args.length; i++) {
      const a = args[i];
      if (a.kind === "FlagLong") {
        if (a.value !== undefined) {
          const r = setNamed(a.name, ev.wordValue(a.value, sc), i + 1);
          if (r !== null) return r;
          continue;
        }
        if (a.name === "help" && !(def?.paramNames.has("help"))) {
          b.help = true;
          continue;
        }
        const t = typeOf(a.name);
        if (def !== null && def.paramNames.has(a.name) && t !== undefined && t.name !== "bool") {
          const nextArg = args[i + 1];
          if (nextArg === undefined) {
            throw fail("arg_error", `--${a.raw} requires a value`, null, a.span);
          }
          const r = setNamed(a.name, ev.wordValue(nextArg, sc), i + 2);
          if (r !== null) return r;
          i++;
          continue;
        }
        b.named.set(a.name, true);
        continue;
      }
      const slot = slotType(def, b.pos.length);
      const r = ev.wordValue(a, sc);
      const place = (v: Value): MaybePromise<void> => {
        if (v instanceof GlobV) {
          if (slot.t?.name === "glob") {
            b.pos.push(v);
            return;
          }
          return then(ev.expandGlob(v, a.span), (paths) => {
            if (!slot.variadic && slot.t?.name === "list") b.pos.push(new ListV([...paths]));
            else b.pos.push(...paths);
          });
        }
        if (
          !slot.variadic && slot.t?.name === "list" && a.kind !== "Sub" && !(v instanceof ListV)
        ) {
          b.pos.push(new ListV([v]));
          return;
        }
        b.pos.push(v);
      };
      const done = then(r, place);
      if (done instanceof Promise) {
        const next = i + 1;
        return done.then(() => step(next));
      }
    }
    return b;
  };
  return then(step(0), (bound) => {
    if (bound.help) return then(ev.sink(signatureText(f)), () => null);
    if (def !== null) {
      for (let i = 0; i < bound.pos.length; i++) {
        const { t } = slotType(def, i);
        bound.pos[i] = coerceTo(bound.pos[i], t, cmd.span, ev.cwd());
      }
      for (const [k, v] of bound.named) {
        const t = typeOf(k);
        if (t !== undefined) bound.named.set(k, coerceTo(v, t, cmd.span, ev.cwd()));
      }
    }
    return callValue(ev, f, bound.pos, bound.named, cmd.span);
  });
}

/** The synthesized signature of a closure (`--help`). */
export function signatureText(f: ClosureV): string {
  const ps = f.params.map((p) =>
    `${p.name}${p.type ? `: ${p.type}` : ""}${p.hasDefault ? "?" : ""}`
  );
  if (f.rest) ps.push(`...${f.rest.name}${f.rest.type ? `: ${f.rest.type}` : ""}`);
  return `${f.name ?? "closure"}(${ps.join(", ")})`;
}
