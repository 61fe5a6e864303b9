/**
 * Effect derivation (protocol §11.1): what a program will do, read from its AST under the
 * session's current state, without running it.
 *
 * The walk is a small abstract interpretation. Values it can know — literals, path words,
 * `let` bindings of them, the session's root bindings, `env.NAME`, `path("…")` — stay known,
 * so a builtin's paths come out concrete (resolved against the session cwd, which `cd` and
 * `with cwd:` move as the walk goes). Builtins contribute their concrete effects
 * (`derive_builtins.ts`); calls of functions and aliases contribute their bodies' effects
 * (recursion-guarded); `spawn`, `parallel`, `retry`, `on` handlers, lambdas handed to methods
 * and `.shl` scripts (read from disk) contribute theirs. Unknown external commands, `sh { … }`
 * and other interpreter blocks contribute `proc_spawn` + `opaque`; so do dynamic calls and
 * anything whose target is not known (a path method on an unknown value, a builtin whose path
 * is computed). Both branches of every conditional count.
 *
 * Linear in the size of the program (plus bodies of called functions, each derived once per
 * call site up to a depth bound); bounded by {@link MAX_NODES}.
 *
 * @module
 */

import { basename, dirname, isAbsolute, resolve } from "node:path";
import type { Arg, BlockExpr, CmdArg, CmdExpr, Expr, Param, Program, Stmt } from "../syntax/ast.ts";
import { parse, ParseError } from "../syntax/mod.ts";
import { ClosureV, CommandV, ListV, PathV, RecordV, type Value } from "../value/types.ts";
import { CALL_FORMS } from "../eval/builtins/registry.ts";
import { isNamespaceName } from "../eval/namespaces/mod.ts";
import { headCmd } from "../eval/expressions.ts";
import { canonicalEffects, type Effect } from "./effects.ts";
import { type Reversibility, reversibilityOf, worse } from "./reversibility.ts";
import type { DeriveHost } from "./derive_host.ts";
import { BUILTIN_EFFECTS, type BuiltinArgs } from "./derive_builtins.ts";
import { FS_METHODS, isKnownMethod } from "./derive_methods.ts";

/** Nodes one derivation visits at most (beyond: `opaque`). */
export const MAX_NODES = 1_000_000;
/** Nested function calls / scripts a derivation follows (beyond: `opaque`). */
export const MAX_CALL_DEPTH = 32;

/** Namespaces whose functions only compute (language §13): no effects. */
const PURE_NAMESPACES = new Set(["json", "yaml", "toml", "csv", "math", "os", "config"]);

/** A derivation's result. */
export interface Derivation {
  effects: Effect[];
  reversibility: Reversibility;
}

/** A statically known value, a program-local function or alias, or "unknown". */
export type SV =
  | { k: "v"; v: Value }
  | { k: "fn"; params: Param[]; body: Expr; scope: StaticScope }
  | { k: "alias"; cmd: CmdExpr }
  | { k: "?"; maybePath: boolean };

const UNKNOWN: SV = { k: "?", maybePath: true };
const NOT_PATH: SV = { k: "?", maybePath: false };
const known = (v: Value): SV => ({ k: "v", v });

/** Names bound by the program being derived (a chain of block scopes). */
export class StaticScope {
  readonly #names = new Map<string, SV>();
  /** `root`: names not found here fall through to the session's root bindings. */
  constructor(readonly parent: StaticScope | null, readonly root: boolean) {}
  set(name: string, v: SV): void {
    if (name !== "_") this.#names.set(name, v);
  }
  /** Update the nearest binding of `name` (an assignment), or bind it here. */
  assign(name: string, v: SV): void {
    if (!this.#rebind(name, v)) this.#names.set(name, v);
  }
  #rebind(name: string, v: SV): boolean {
    if (this.#names.has(name)) {
      this.#names.set(name, v);
      return true;
    }
    return this.parent !== null && this.parent.#rebind(name, v);
  }
  local(name: string): SV | undefined {
    return this.#names.get(name) ?? this.parent?.local(name);
  }
  /** Do lookups that miss reach the session's root bindings? */
  get seesRoot(): boolean {
    return this.parent ? this.parent.seesRoot : this.root;
  }
}

/** Derive the effects of `program` in the session `host`. */
export function deriveEffects(program: Program, host: DeriveHost): Derivation {
  const w = new Walk(host);
  try {
    w.block(program.body, new StaticScope(null, true));
  } catch (e) {
    if (!(e instanceof Budget)) throw e;
    w.add({ kind: "opaque" });
  }
  return w.result();
}

class Budget extends Error {}

/** One derivation in progress. */
export class Walk {
  readonly #effects: Effect[] = [];
  #rev: Reversibility = "reversible";
  /** The cwd the program will be in at this point (null: unknown). */
  cwd: string | null;
  #nodes = 0;
  #depth = 0;
  readonly #active = new Set<Expr | CmdExpr>();

  constructor(readonly host: DeriveHost) {
    this.cwd = host.cwd();
  }

  /** Record an effect. */
  add(e: Effect): void {
    this.#effects.push(e);
  }

  /** Record a reversibility worse than the effects imply (`rm --permanent`). */
  rev(r: Reversibility): void {
    this.#rev = worse(this.#rev, r);
  }

  result(): Derivation {
    const effects = canonicalEffects(this.#effects);
    return { effects, reversibility: worse(this.#rev, reversibilityOf(effects)) };
  }

  #tick(): void {
    if (++this.#nodes > MAX_NODES) throw new Budget();
  }

  /** An absolute path for a known path/str value (tilde and cwd resolved), else null. */
  pathOf(sv: SV): string | null {
    if (sv.k !== "v") return null;
    const v = sv.v;
    const text = typeof v === "string" ? v : v instanceof PathV ? v.path : null;
    if (text === null) return null;
    const t = this.tilde(text);
    if (isAbsolute(t)) return resolve(t);
    return this.cwd === null ? null : resolve(this.cwd, t);
  }

  /** `~` / `~/…` against the session HOME. */
  tilde(text: string): string {
    if (text !== "~" && !text.startsWith("~/")) return text;
    const home = this.host.env("HOME") ?? "/";
    return text === "~" ? home : home + text.slice(1);
  }

  // ---- statements -----------------------------------------------------------------------------

  block(body: Stmt[], sc: StaticScope): SV {
    let last: SV = known(null);
    for (const s of body) last = this.stmt(s, sc);
    return last;
  }

  stmt(s: Stmt, sc: StaticScope): SV {
    this.#tick();
    switch (s.kind) {
      case "Let":
        sc.set(s.name, this.expr(s.value, sc));
        return known(null);
      case "FnDecl":
        for (const p of s.params) if (p.default) this.expr(p.default, sc);
        sc.set(s.name, { k: "fn", params: s.params, body: s.body, scope: sc });
        return known(null);
      case "Alias":
        sc.set(s.name, { k: "alias", cmd: s.command });
        return known(null);
      case "Use":
        this.useModule(s.target);
        return known(null);
      case "Return":
        return s.value ? this.expr(s.value, sc) : known(null);
      case "Break":
      case "Continue":
        return known(null);
      case "For": {
        this.expr(s.iter, sc);
        const inner = new StaticScope(sc, false);
        inner.set(s.binder, UNKNOWN);
        this.loop(() => this.blockExpr(s.body, inner));
        return known(null);
      }
      case "While":
        this.loop(() => {
          this.expr(s.cond, sc);
          this.blockExpr(s.body, sc);
        });
        return known(null);
      case "Assign":
        this.expr(s.value, sc);
        sc.assign(s.target, UNKNOWN);
        return known(null);
      case "EnvAssign":
        this.expr(s.value, sc);
        this.add({ kind: "env_write", names: [s.name] });
        return known(null);
      case "ExprStmt":
        return this.expr(s.expr, sc);
      default: // a node this walker does not know (a hand-made AST): anything may happen
        this.add({ kind: "opaque" });
        return UNKNOWN;
    }
  }

  /** A loop body: whatever cwd it leaves is unknown (it may run 0..n times). */
  loop(body: () => void): void {
    const before = this.cwd;
    body();
    if (this.cwd !== before) this.cwd = null;
  }

  blockExpr(b: BlockExpr, sc: StaticScope): SV {
    return this.block(b.body, new StaticScope(sc, false));
  }

  /** Alternatives (if/match/try): each starts from the same cwd; a difference makes it unknown. */
  branches(arms: (() => SV)[]): SV {
    const before = this.cwd;
    let after: string | null | undefined;
    for (const arm of arms) {
      this.cwd = before;
      arm();
      after = after === undefined || after === this.cwd ? this.cwd : null;
    }
    this.cwd = after === undefined ? before : after;
    return UNKNOWN;
  }

  // ---- expressions ----------------------------------------------------------------------------

  expr(e: Expr, sc: StaticScope): SV {
    this.#tick();
    switch (e.kind) {
      case "Int":
        return known(BigInt(e.value));
      case "Float":
        return known(e.value);
      case "Str":
        return known(e.value);
      case "Bool":
        return known(e.value);
      case "Null":
        return known(null);
      case "Size":
      case "Duration":
      case "Time":
      case "Regex":
        return NOT_PATH;
      case "DateTime":
        return NOT_PATH;
      case "StrInterp": {
        let text = "";
        let ok = true;
        for (const p of e.parts) {
          if (p.kind === "Text") text += p.value;
          else {
            const v = this.expr(p, sc);
            const s = v.k === "v" ? plainText(v.v) : null;
            if (s === null) ok = false;
            else text += s;
          }
        }
        return ok ? known(text) : NOT_PATH;
      }
      case "Ident":
        return this.ident(e.name, sc, e);
      case "List": {
        const items = e.items.map((x) => this.expr(x, sc));
        return items.every((x) => x.k === "v")
          ? known(new ListV(items.map((x) => (x as { v: Value }).v)))
          : NOT_PATH;
      }
      case "Record": {
        const fields = new Map<string, Value>();
        let ok = true;
        for (const f of e.fields) {
          const v = this.expr(f.value, sc);
          if (v.k === "v") fields.set(f.key, v.v);
          else ok = false;
        }
        return ok ? known(new RecordV(fields)) : NOT_PATH;
      }
      case "Block":
        return this.blockExpr(e, sc);
      case "Lambda":
        return { k: "fn", params: e.params, body: e.body, scope: sc };
      case "Unary":
        this.expr(e.operand, sc);
        return NOT_PATH;
      case "Binary": {
        const l = this.expr(e.left, sc);
        const r = this.expr(e.right, sc);
        if (
          e.op === "+" && l.k === "v" && r.k === "v" && typeof l.v === "string" &&
          typeof r.v === "string"
        ) return known(l.v + r.v);
        return e.op === "??" ? UNKNOWN : NOT_PATH;
      }
      case "Logical":
        this.expr(e.left, sc);
        this.expr(e.right, sc);
        return UNKNOWN;
      case "Range":
        this.expr(e.start, sc);
        this.expr(e.end, sc);
        return NOT_PATH;
      case "Field":
        return this.field(e.target, e.name, sc);
      case "MethodCall":
        return this.method(e.target, e.name, e.args, sc);
      case "Index":
        this.expr(e.target, sc);
        this.expr(e.index, sc);
        return UNKNOWN;
      case "Call":
        return this.call(e.callee, e.args, sc, e);
      case "If": {
        this.expr(e.cond, sc);
        const arms: (() => SV)[] = [() => this.blockExpr(e.then, sc)];
        arms.push(e.else ? () => this.expr(e.else!, sc) : () => known(null));
        return this.branches(arms);
      }
      case "Match": {
        this.expr(e.subject, sc);
        return this.branches(e.arms.map((a) => () => {
          const inner = new StaticScope(sc, false);
          for (const p of a.patterns) for (const n of patternNames(p)) inner.set(n, UNKNOWN);
          if (a.guard) this.expr(a.guard, inner);
          return this.expr(a.body, inner);
        }));
      }
      case "Try":
        return this.branches([
          () => this.blockExpr(e.body, sc),
          () => {
            const inner = new StaticScope(sc, false);
            if (e.binder) inner.set(e.binder, NOT_PATH);
            return this.blockExpr(e.handler, inner);
          },
        ]);
      case "Catch":
        return this.branches([
          () => this.expr(e.expr, sc),
          () => {
            const inner = new StaticScope(sc, false);
            if (e.binder) inner.set(e.binder, NOT_PATH);
            return this.expr(e.handler, inner);
          },
        ]);
      case "With":
        return this.with(e, sc);
      case "Spawn":
        this.blockExpr(e.body, sc);
        return NOT_PATH;
      case "LangBlock":
        this.add({ kind: "proc_spawn", bin_hash: "", argv0: e.lang });
        this.add({ kind: "opaque" });
        return NOT_PATH;
      case "Cmd":
        return this.cmd(e, sc, []);
      default:
        this.add({ kind: "opaque" });
        return UNKNOWN;
    }
  }

  ident(name: string, sc: StaticScope, node: Expr): SV {
    const local = sc.local(name);
    if (local !== undefined) return local;
    const rooted = sc.seesRoot ? this.host.lookup(name) : undefined;
    if (rooted !== undefined) return fromValue(rooted);
    if (name === "now" || name === "today") {
      this.add({ kind: "time" });
      return NOT_PATH;
    }
    if (name === "env") {
      this.add({ kind: "env_read", names: ["*"] });
      return NOT_PATH;
    }
    if (this.host.isCommand(name)) return this.cmd(headCmd(name, node.span), sc, []);
    return UNKNOWN;
  }

  field(target: Expr, name: string, sc: StaticScope): SV {
    if (target.kind === "Ident" && target.name === "env" && this.unbound("env", sc)) {
      this.add({ kind: "env_read", names: [name] });
      const v = this.host.env(name);
      return v === undefined ? NOT_PATH : known(v);
    }
    if (target.kind === "Ident" && isNamespaceName(target.name) && this.unbound(target.name, sc)) {
      return UNKNOWN;
    }
    const t = this.expr(target, sc);
    if (t.k === "v" && t.v instanceof RecordV) {
      const f = t.v.fields.get(name);
      return f === undefined ? UNKNOWN : fromValue(f);
    }
    // `v.name` may also call a zero-argument method (language §15): a path's `.read`.
    if (FS_METHODS.has(name)) this.fsMethod(t, name);
    return UNKNOWN;
  }

  /** Is `name` unbound (so namespaces and special names apply)? */
  unbound(name: string, sc: StaticScope): boolean {
    return sc.local(name) === undefined && (!sc.seesRoot || this.host.lookup(name) === undefined);
  }

  /** A path method on `recv`: fs_read of a known path; opaque when it may be a path. */
  fsMethod(recv: SV, name: string): void {
    if (recv.k === "v") {
      if (recv.v instanceof PathV) {
        const p = this.pathOf(recv);
        if (p === null) this.add({ kind: "opaque" });
        else this.add({ kind: "fs_read", paths: [p] });
      }
      return;
    }
    if (recv.k === "?" && recv.maybePath) this.add({ kind: "opaque" });
    void name;
  }

  method(target: Expr, name: string, args: Arg[], sc: StaticScope): SV {
    if (target.kind === "Ident" && target.name === "secret" && this.unbound("secret", sc)) {
      const vals = this.args(args, sc);
      const n = vals[0]?.k === "v" && typeof vals[0].v === "string" ? vals[0].v : null;
      if (name === "get" && n !== null) this.add({ kind: "secret_use", names: [n] });
      else this.add({ kind: "secret_use", names: ["*"] });
      return NOT_PATH;
    }
    if (target.kind === "Ident" && isNamespaceName(target.name) && this.unbound(target.name, sc)) {
      this.args(args, sc);
      // A namespace added later (an `http`, say) may act on the world: opaque until named here.
      if (!PURE_NAMESPACES.has(target.name)) this.add({ kind: "opaque" });
      return UNKNOWN;
    }
    const recv = this.expr(target, sc);
    if (name === "feed" && args.length === 1) {
      const c = args[0].value;
      if (c.kind === "Cmd") this.cmd(c, sc, []);
      else this.expr(c, sc);
      return NOT_PATH;
    }
    const vals = this.args(args, sc);
    if ((name === "save" || name === "append") && vals.length >= 1) {
      const p = this.pathOf(vals[0]);
      if (p === null) this.add({ kind: "opaque" });
      else this.add({ kind: "fs_write", paths: [p] });
      return recv;
    }
    if (FS_METHODS.has(name)) this.fsMethod(recv, name);
    if (name === "expand" && recv.k === "?" && recv.maybePath) this.add({ kind: "opaque" });
    // A record field holding a function is called like a method.
    if (recv.k === "v" && recv.v instanceof RecordV) {
      const f = recv.v.fields.get(name);
      if (f !== undefined && (f instanceof ClosureV || f instanceof CommandV)) {
        return this.callValue(fromValue(f), vals, sc);
      }
    } else if (recv.k === "?" && !isKnownMethod(name)) {
      // An unknown receiver and a name no method has: a function field of some record.
      this.add({ kind: "opaque" });
    }
    // Functions handed to a method (map, where, each, tap…) may be called by it.
    for (const v of vals) if (v.k === "fn" || isCallable(v)) this.callValue(v, [], sc);
    return UNKNOWN;
  }

  /** Argument values in order (named ones included). */
  args(args: Arg[], sc: StaticScope): SV[] {
    return args.map((a) => this.expr(a.value, sc));
  }

  call(callee: string, args: Arg[], sc: StaticScope, node: Expr): SV {
    const bound = sc.local(callee) ??
      (sc.seesRoot ? maybe(this.host.lookup(callee)) : undefined);
    const vals = () => this.args(args, sc);
    if (bound !== undefined) return this.callValue(bound, vals(), sc);
    if (CALL_FORMS.has(callee)) return this.callForm(callee, args, vals(), sc);
    if (this.host.isCommand(callee)) {
      const v = vals();
      return this.builtinOrExternal(callee, "word", v, new Set(), sc, node.span);
    }
    vals();
    return UNKNOWN; // undefined function: it raises at run time, doing nothing
  }

  callForm(name: string, args: Arg[], vals: SV[], sc: StaticScope): SV {
    const first = vals[0];
    switch (name) {
      case "path":
        return first?.k === "v" && typeof first.v === "string"
          ? known(new PathV(first.v))
          : UNKNOWN;
      case "now":
      case "today":
      case "every":
        this.add({ kind: "time" });
        return NOT_PATH;
      case "watch":
      case "tail": {
        const p = first ? this.pathOf(first) : null;
        if (p === null) this.add({ kind: "opaque" });
        else this.add({ kind: "fs_read", paths: [p] });
        return NOT_PATH;
      }
      case "save": {
        const p = first ? this.pathOf(first) : null;
        if (p === null) this.add({ kind: "opaque" });
        else this.add({ kind: "fs_write", paths: [p] });
        return vals[1] ?? UNKNOWN;
      }
      case "open":
        this.add({ kind: "opaque" });
        return known(null);
      case "run":
        return this.runTarget(first, sc);
      case "retry":
      case "parallel":
      case "on":
        for (const v of vals) if (v.k === "fn" || isCallable(v)) this.callValue(v, [UNKNOWN], sc);
        return UNKNOWN;
      case "glob":
      case "regex":
      case "channel":
      case "assert":
        return NOT_PATH;
    }
    // A call form Leash does not know: it may do anything.
    void args;
    this.add({ kind: "opaque" });
    return UNKNOWN;
  }

  /** Call a function value with (static) arguments: derive its body. */
  callValue(f: SV, args: SV[], _sc: StaticScope): SV {
    if (f.k === "alias") return this.cmd(f.cmd, new StaticScope(null, true), []);
    if (f.k === "fn") return this.body(f.body, f.params, args, f.scope);
    if (f.k === "v" && f.v instanceof ClosureV) {
      const impl = f.v.impl as { kind?: string; def?: { ast?: Expr; params?: Param[] } };
      if (impl?.kind === "user" && impl.def?.ast) {
        return this.body(impl.def.ast, impl.def.params ?? [], args, new StaticScope(null, true));
      }
      this.add({ kind: "opaque" }); // a native function: nothing to read
      return UNKNOWN;
    }
    if (f.k === "v" && f.v instanceof CommandV) {
      return this.cmd(f.v.cmd, new StaticScope(null, true), []);
    }
    if (f.k === "?") this.add({ kind: "opaque" }); // a dynamic call
    return UNKNOWN;
  }

  body(body: Expr, params: Param[], args: SV[], scope: StaticScope): SV {
    if (this.#active.has(body)) return UNKNOWN; // recursion: its effects are being collected
    if (this.#depth >= MAX_CALL_DEPTH) {
      this.add({ kind: "opaque" });
      return UNKNOWN;
    }
    const inner = new StaticScope(scope, false);
    params.forEach((p, i) => inner.set(p.name, coerceParam(args[i] ?? UNKNOWN, p)));
    this.#active.add(body);
    this.#depth++;
    const cwd = this.cwd;
    try {
      return body.kind === "Block" ? this.block(body.body, inner) : this.expr(body, inner);
    } finally {
      this.cwd = cwd; // session-only verbs (`cd`) are refused inside function bodies
      this.#depth--;
      this.#active.delete(body);
    }
  }

  with(e: Extract<Expr, { kind: "With" }>, sc: StaticScope): SV {
    const before = this.cwd;
    for (const s of e.settings) {
      const v = this.expr(s.value, sc);
      if (s.key === "cwd") this.cwd = this.pathOf(v);
      else if (s.key === "env") {
        const names = s.value.kind === "Record" ? s.value.fields.map((f) => f.key) : ["*"];
        this.add({ kind: "env_write", names });
      }
    }
    try {
      return this.blockExpr(e.body, sc);
    } finally {
      this.cwd = before;
    }
  }

  // ---- commands -------------------------------------------------------------------------------

  /** A command node (language §9.1 dispatch order). */
  cmd(c: CmdExpr, sc: StaticScope, extra: CmdArg[]): SV {
    this.#tick();
    const args = extra.length ? [...c.args, ...extra] : c.args;
    this.redirects(c, sc);
    if (c.headKind === "word") {
      const bound = sc.local(c.head) ?? (sc.seesRoot ? maybe(this.host.lookup(c.head)) : undefined);
      if (bound !== undefined && (bound.k === "fn" || bound.k === "alias" || isCallable(bound))) {
        if (bound.k === "alias" || (bound.k === "v" && bound.v instanceof CommandV)) {
          const stored = bound.k === "alias" ? bound.cmd : (bound.v as CommandV).cmd;
          if (this.#active.has(stored)) return UNKNOWN;
          this.#active.add(stored);
          try {
            return this.cmd(stored, new StaticScope(null, true), args);
          } finally {
            this.#active.delete(stored);
          }
        }
        const { pos } = this.words(args, sc);
        return this.callValue(bound, pos, sc);
      }
      if (bound !== undefined && args.length === 0 && !c.forced) return bound;
      if (this.host.isBuiltin(c.head)) {
        const { pos, flags } = this.words(args, sc);
        return this.builtinOrExternal(c.head, "word", pos, flags, sc, c.span);
      }
    }
    if (c.head.endsWith(".shl")) {
      const { pos } = this.words(args, sc);
      void pos;
      return this.script(this.pathOf(known(c.head)), "run");
    }
    // An adapted command declares what it does (issue 18).
    if (c.headKind === "word" && !c.forced) {
      const declared = this.host.adapterEffects?.(extra.length ? { ...c, args } : c, this.cwd);
      if (declared) {
        for (const e of declared) this.add(e);
        this.rev("unknown");
        return NOT_PATH;
      }
    }
    const { pos } = this.words(args, sc);
    return this.builtinOrExternal(c.head, c.headKind, pos, new Set(), sc, c.span);
  }

  redirects(c: CmdExpr, sc: StaticScope): void {
    for (const r of c.redirects) {
      const p = this.pathOf(this.word(r.target, sc));
      if (p === null) this.add({ kind: "opaque" });
      else this.add({ kind: r.op === "<" ? "fs_read" : "fs_write", paths: [p] });
    }
  }

  /** One command word's value (language §9: word → str, path word → path, `(e)` → e). */
  word(a: CmdArg, sc: StaticScope): SV {
    switch (a.kind) {
      case "Word":
        return known(a.text);
      case "PathWord":
        return known(new PathV(this.tilde(a.text)));
      case "GlobWord":
        return known(a.text);
      case "StrArg":
        return this.expr(a.value, sc);
      case "Sub":
        return this.expr(a.expr, sc);
      case "FlagLong":
        if (a.value) this.word(a.value, sc);
        return known("--" + a.raw);
      case "FlagShort":
        return known("-" + a.chars);
      case "DashDash":
        return known("--");
      case "Dash":
        return known("-");
    }
  }

  /** Positional words (globs expanded) and flag names, like the builtins' collector. */
  words(args: CmdArg[], sc: StaticScope): { pos: SV[]; flags: Set<string> } {
    const pos: SV[] = [];
    const flags = new Set<string>();
    for (const a of args) {
      if (a.kind === "FlagLong") {
        flags.add(a.name);
        if (a.value) this.word(a.value, sc);
        continue;
      }
      if (a.kind === "FlagShort") {
        for (const ch of a.chars) flags.add(ch);
        continue;
      }
      if (a.kind === "GlobWord") {
        pos.push(...this.glob(this.tilde(a.text)));
        continue;
      }
      pos.push(this.word(a, sc));
    }
    return { pos, flags };
  }

  /** A glob word's matches now (a huge match set plans as the pattern itself). */
  glob(pattern: string): SV[] {
    if (this.cwd === null && !isAbsolute(pattern)) return [UNKNOWN];
    const cwd = this.cwd ?? "/";
    const hits = this.host.expandGlob(pattern, cwd);
    if (hits === null) return [known(new PathV(resolve(cwd, pattern)))];
    return hits.map((h) => known(new PathV(h)));
  }

  builtinOrExternal(
    head: string,
    headKind: "word" | "path",
    pos: SV[],
    flags: Set<string>,
    sc: StaticScope,
    _span: unknown,
  ): SV {
    if (headKind === "word" && this.host.isBuiltin(head)) {
      const f = BUILTIN_EFFECTS.get(head);
      if (f === undefined) {
        this.add({ kind: "opaque" }); // a builtin Leash has no table entry for
        return UNKNOWN;
      }
      const a: BuiltinArgs = { pos, flags, walk: this, scope: sc };
      return f(a);
    }
    // An unknown external (adapted commands are planned in `cmd`).
    const argv0 = headKind === "path" ? this.pathOf(known(head)) ?? head : head;
    this.add({ kind: "proc_spawn", bin_hash: "", argv0 });
    this.add({ kind: "opaque" });
    return NOT_PATH;
  }

  /** A known value as argv text, else null. */
  textOf(sv: SV): string | null {
    return sv.k === "v" ? plainText(sv.v) : null;
  }

  // ---- scripts --------------------------------------------------------------------------------

  /** `run TARGET` / `run(target)`: a Shoal script, another script's runner, or a program. */
  runTarget(target: SV | undefined, sc: StaticScope): SV {
    const text = target ? this.textOf(target) : null;
    if (text === null) {
      this.add({ kind: "opaque" });
      return UNKNOWN;
    }
    const pathLike = text.includes("/") || text.startsWith(".") || text.startsWith("~");
    const abs = this.pathOf(known(text));
    const ext = /\.([A-Za-z0-9]+)$/.exec(basename(text))?.[1] ?? null;
    if (ext === "shl" || (pathLike && ext === null)) return this.script(abs, "run");
    if (abs !== null && (pathLike || ext !== null)) this.add({ kind: "fs_read", paths: [abs] });
    return this.builtinOrExternal(pathLike ? (abs ?? text) : text, "word", [], new Set(), sc, null);
  }

  /**
   * A Shoal script read now: `run` (fresh root, this cwd), `source` (the caller's scope `sc`
   * and cwd), `use` (fresh root, the module's directory). Unreadable: `opaque` (it would
   * raise, but a file can appear before it runs).
   */
  script(abs: string | null, how: "run" | "use" | "source", sc?: StaticScope): SV {
    if (abs === null) {
      this.add({ kind: "opaque" });
      return UNKNOWN;
    }
    this.add({ kind: "fs_read", paths: [abs] });
    if (this.#depth >= MAX_CALL_DEPTH) {
      this.add({ kind: "opaque" });
      return UNKNOWN;
    }
    const src = this.host.readScript(abs);
    if (src === null) {
      this.add({ kind: "opaque" });
      return UNKNOWN;
    }
    let program: Program;
    try {
      program = parse(src, {
        repl: false,
        valueNames: how === "run" ? ["args", "script"] : [],
        commandNames: [],
      });
    } catch (e) {
      if (e instanceof ParseError) return UNKNOWN; // it raises parse_error before doing anything
      throw e;
    }
    const cwd = this.cwd;
    this.#depth++;
    try {
      if (how === "use") this.cwd = dirname(abs);
      const scope = sc ?? new StaticScope(null, false);
      if (how === "run") {
        scope.set("args", UNKNOWN);
        scope.set("script", known(new PathV(abs)));
      }
      this.block(program.body, scope);
    } finally {
      this.#depth--;
      if (how !== "source") this.cwd = cwd; // only `source` runs in the caller's session state
    }
    return UNKNOWN;
  }

  useModule(target: string): void {
    const base = this.pathOf(known(target));
    if (base === null) return void this.add({ kind: "opaque" });
    const file = base.endsWith(".shl") ? base : base + ".shl";
    this.script(this.host.readScript(file) !== null ? file : base, "use");
  }
}

/** A root binding's value as a static value (functions and aliases stay callable). */
function fromValue(v: Value): SV {
  return known(v);
}

function maybe(v: Value | undefined): SV | undefined {
  return v === undefined ? undefined : fromValue(v);
}

function isCallable(sv: SV): boolean {
  return sv.k === "v" && (sv.v instanceof ClosureV || sv.v instanceof CommandV);
}

/** Text of a str/path/int known value (what interpolation and argv would show), else null. */
export function plainText(v: Value): string | null {
  if (typeof v === "string") return v;
  if (v instanceof PathV) return v.path;
  if (typeof v === "bigint" || typeof v === "number" || typeof v === "boolean") return String(v);
  return null;
}

/** A `path`-typed parameter turns a known str argument into a path (word binding, §6.2). */
function coerceParam(a: SV, p: Param): SV {
  if (p.type?.name === "path" && a.k === "v" && typeof a.v === "string") {
    return known(new PathV(a.v));
  }
  return a;
}

/** Names a pattern binds. */
function patternNames(p: import("../syntax/ast.ts").Pattern): string[] {
  switch (p.kind) {
    case "PBind":
      return [p.name];
    case "PType":
      return [p.binder];
    case "PRecord":
      return p.fields.flatMap((f) => (f.pattern ? patternNames(f.pattern) : [f.key]));
    case "PList":
      return [...p.items.flatMap(patternNames), ...(p.rest ? [p.rest] : [])];
    default:
      return [];
  }
}
