/**
 * The evaluator: session state (scopes, cwd, env, depth, tasks), the host ports and the
 * services the compiled closures call back into (name resolution §7.4, `name(args)` command
 * fallback §7.5, namespaces §13, `with` §7.6, spawn §7.7, cancellation).
 *
 * @module
 */

import type { CmdExpr, Expr, Program, Span, Stmt, WithExpr } from "../syntax/ast.ts";
import {
  BytesV,
  ClosureV,
  CommandV,
  type DurationV,
  type GlobV,
  ListV,
  PathV,
  RecordV,
  type StreamV,
  TaskV,
  typeName,
  type Value,
} from "../value/types.ts";
import { fail, ShoalError } from "../value/errors.ts";
import { toArgv } from "../value/coerce.ts";
import { dateTimeFromEpochNs, startOfDay } from "../value/datetime.ts";
import { isAbsolute, resolve } from "node:path";
import { isPromise, type MaybePromise } from "./maybe.ts";
import type { Interp, MethodArgs } from "./method_types.ts";
import { Scope } from "./scope.ts";
import { Ctl, ExitSignal } from "./ctl.ts";
import { defaultPorts, type Ports } from "./ports.ts";
import { at, type CE, compileExpr, type CS, headCmd, NO_NAMED } from "./expressions.ts";
import { compileBlock, compileBody } from "./statements.ts";
import { callValue } from "./calls.ts";
import { callMethod, relativeTo } from "./dispatch.ts";
import { callAlias, feedInto, runCmd, valuesToWords, wordValue } from "./commands.ts";
import { expandGlob, type GlobSkips } from "./glob.ts";
import { relPath } from "../value/render.ts";
import { BUILTIN_HEADS, CALL_FORMS, type CallForm, getBuiltin } from "./builtins/registry.ts";
import { isStackOverflow, recursionLimit } from "./errors.ts";
import { which } from "../exec/mod.ts";
import { constrains, reefLayer } from "./resolve_head.ts";
import { isNamespaceName, namespaceMember } from "./namespaces/mod.ts";
import "./builtins/core.ts";
import { checkTaskCancelled, runInTask, TaskControl } from "./tasks.ts";
import type { AdapterCatalog } from "./adapters/catalog.ts";
import { type AdapterSource, resolveCatalog } from "./adapters/host.ts";

/** Hooks other subsystems install (streams, channels, modules, scripts, CAS). */
export interface EvalHooks {
  channelMethod?: (
    ev: Evaluator,
    recv: RecordV,
    name: string,
    args: MethodArgs,
  ) => MaybePromise<Value> | undefined;
  collectStream?: (ev: Evaluator, s: StreamV, span: Span) => MaybePromise<Value[]>;
  useModule?: (ev: Evaluator, target: string, sc: Scope, span: Span) => MaybePromise<void>;
  runScript?: (ev: Evaluator, cmd: CmdExpr, sc: Scope) => MaybePromise<Value>;
  /** True when a path head (not `.shl`) is a script `runScript` should start (scripts module). */
  runsAsScript?: (ev: Evaluator, head: string) => boolean;
  resolveCasRef?: (ev: Evaluator, ref: string, span: Span | null) => MaybePromise<Value>;
  /** Publish a host event on the language channel bus (channels module). */
  injectUserEvent?: (ev: Evaluator, channel: string, payload: Value) => void;
  /** Close the language channel bus (channels module). */
  closeChannels?: (ev: Evaluator) => void;
  /**
   * A policy host's check of a program a nested evaluator is about to run from a file
   * (`.shl` script, `use`, `source` — Leash, protocol D-12): throws a language error to refuse.
   */
  gateProgram?: (ev: Evaluator, program: Program, what: string, span: Span | null) => void;
}

const HOOKS: EvalHooks = {};

/** Install evaluator hooks (process-wide; each hook receives the evaluator). */
export function installHooks(h: EvalHooks): void {
  Object.assign(HOOKS, h);
}

/** Options for a new evaluator. */
export interface EvaluatorOptions {
  /** Initial session cwd (absolute); default: the process cwd. */
  cwd?: string;
  /** Initial environment; default: a copy of the process environment. */
  env?: Record<string, string>;
  /** Host ports (defaults: real clock and processes, sink discarding values). */
  ports?: Partial<Ports>;
  /** Cancel flag: element 0 ≠ 0 means "stop" (an Int32Array over a SharedArrayBuffer). */
  cancel?: Int32Array;
  /** REPL mode: `it`/`out` are bound after each evaluation. */
  repl?: boolean;
  /** The resolved configuration the `config` namespace shows (§13.2; hosts inject it). */
  config?: RecordV | null;
  /**
   * Adapters (subsystems §7): `true` loads, on first use, the bundled catalog, the config's
   * `adapters.dirs` and `SHOAL_ADAPTER_PATH`; a catalog (or a function giving one) is used as
   * is; absent or `false`: none (plain externals, as the conformance corpus runs).
   */
  adapters?: AdapterSource;
  /** `with reef:` layers in force (a child evaluator inherits its parent's), innermost last. */
  reef?: RecordV[];
  /**
   * The host's state directory (kernel `--state-dir`, the CLI's default): `rm`'s trash lives
   * in `<stateDir>/trash`, surviving reboots. Null or absent: a private temp directory.
   */
  stateDir?: string | null;
}

/** State of a spawned task (`TaskV.impl`). */
export interface TaskState {
  promise: Promise<Value>;
  done: boolean;
  value: Value;
  error: ShoalError | null;
  /** Stops the task's work (`task.cancel()`; spawned tasks: see tasks.ts). */
  cancel?: () => void;
  /** Pauses (true) or resumes (false) the task at its next wait (`suspend()`/`resume()`). */
  pause?: (paused: boolean) => void;
  /** Set by `task.suspend()`, cleared by `task.resume()`. */
  suspended?: boolean;
}

let nextTaskId = 1;

/** The session environment: a Map that counts its changes (see `Evaluator.factsVersion`). */
class EnvMap extends Map<string, string> {
  changes = 0;
  override set(k: string, v: string): this {
    this.changes++;
    return super.set(k, v);
  }
  override delete(k: string): boolean {
    this.changes++;
    return super.delete(k);
  }
  override clear(): void {
    this.changes++;
    super.clear();
  }
}

/** Cancel checks between two {@link Evaluator.onBusy} calls (a power of two). */
const SLOW_CHECK_EVERY = 16384;

/** A Shoal session evaluator. */
export class Evaluator implements Interp {
  readonly ports: Ports;
  readonly root: Scope;
  readonly callForms: Map<string, CallForm> = CALL_FORMS;
  readonly hooks: EvalHooks = HOOKS;
  /** Names exported by `export let/fn` at top level (modules). */
  readonly exportNames: Set<string> = new Set();
  /** Nested closure calls in flight (language §8.2 limit; > 0 ⇒ inside a fn body). */
  depth = 0;
  /** Spawned tasks in id order (`jobs`). */
  readonly tasks: TaskV[] = [];
  /** `cd -` target and the `pushd` stack (session state). */
  oldPwd: string | null = null;
  readonly dirStack: string[] = [];
  /** `with reef:` override layers, innermost last (read by tool resolution). */
  readonly reefOverrides: RecordV[] = [];
  /** Pending exit code set by `exit`/`quit`. */
  pendingExit: number | null = null;
  /**
   * Kernel bridge (language → host): called for every language emit on a `user.*` channel.
   * Events the host injects with `injectUserEvent` never come back through it (no echo).
   */
  onUserEmit: ((channel: string, payload: Value) => void) | null = null;
  /**
   * Called every {@link SLOW_CHECK_EVERY} cancel checks: a host whose event loop a busy exec
   * holds still gets to act now and then (a kernel session tells the kernel what runs).
   */
  onBusy: (() => void) | null = null;
  #checks = 0;
  repl: boolean;
  /** The injected configuration snapshot (`config.get/all`), or null. */
  configSnapshot: RecordV | null;
  /** The host's state directory (see `EvaluatorOptions.stateDir`), or null. */
  readonly stateDir: string | null;
  private cwdPath: string;
  private readonly envMap: EnvMap;
  private cancelFlag: Int32Array | null;
  private abort: AbortController | null = null;
  private cancelWaiters = 0;
  private cancelPoll: ReturnType<typeof setInterval> | null = null;
  private readonly cache = new WeakMap<object, CE>();
  private outs: Value[] = [];
  private readonly adapterSource: AdapterSource;
  private adapterCatalog: AdapterCatalog | null = null;

  constructor(opts: EvaluatorOptions = {}) {
    this.ports = defaultPorts(opts.ports);
    this.cwdPath = opts.cwd ?? Deno.cwd();
    this.envMap = new EnvMap(Object.entries(opts.env ?? Deno.env.toObject()));
    this.cancelFlag = opts.cancel ?? null;
    this.repl = opts.repl ?? false;
    this.configSnapshot = opts.config ?? null;
    this.adapterSource = opts.adapters ?? false;
    if (opts.reef) this.reefOverrides.push(...opts.reef);
    this.stateDir = opts.stateDir ?? null;
    this.root = new Scope(null);
    if (this.repl) {
      // `it`/`out` exist from the first line on (null / no results yet).
      this.root.declare("it", null);
      this.root.declare("out", new ListV([]));
    }
  }

  // ---- Interp ----------------------------------------------------------------------------

  /** The configuration snapshot the host injected (`config` namespace). */
  config(): RecordV | null {
    return this.configSnapshot;
  }

  /** The session cwd (absolute). */
  cwd(): string {
    return this.cwdPath;
  }

  /** Change the session cwd (absolute path; the caller validated it). */
  setCwd(path: string): void {
    this.cwdPath = path;
  }

  /** The session environment (mutable: `env.X =`, `with env:`). */
  env(): Map<string, string> {
    return this.envMap;
  }

  /** The session's adapter catalog (built on first use; empty when the host loads none). */
  adapters(): AdapterCatalog {
    return this.adapterCatalog ??= resolveCatalog(this.adapterSource, this, this.ports.stderr);
  }

  /**
   * Replace the cancel flag (element 0 ≠ 0 means "stop"). The kernel gives every task its own
   * shared slot, so cancelling one task can never stop the next one (protocol D-24).
   */
  setCancelFlag(flag: Int32Array | null): void {
    this.cancelFlag = flag;
    this.abort = null;
  }

  /** Raise `cancelled` when the host set the cancel flag. */
  checkCancelled(): void {
    if (this.cancelFlag !== null && this.cancelFlag[0] !== 0) {
      this.abort?.abort();
      throw fail("cancelled", "cancelled");
    }
    if ((++this.#checks & (SLOW_CHECK_EVERY - 1)) === 0) this.onBusy?.();
    // A cancelled spawned task stops at its next check (tasks.ts; one compare when none is).
    checkTaskCancelled();
  }

  /**
   * Run `f` with an abort signal that fires once the host sets the cancel flag (child
   * processes, sleeps). One 50 ms poll serves every concurrent waiter; it stops itself at the
   * first tick that finds no waiter, so an idle session polls nothing. It is not cleared when
   * the last waiter settles: Deno still wakes the event loop at a cleared timer's deadline
   * (measured: 20 timers set and cleared → ~30 extra wake-ups of the thread), so a poll per
   * command was a spurious wake-up per command; back-to-back commands now share one poll.
   * (Replaces a per-call poll that was never cleared unless cancelled — commands engineer.)
   */
  withCancelSignal<T>(f: (signal: AbortSignal | undefined) => Promise<T>): Promise<T> {
    if (this.cancelFlag === null) return f(undefined);
    if (this.abort === null || this.abort.signal.aborted) this.abort = new AbortController();
    this.cancelWaiters++;
    if (this.cancelPoll === null) {
      const poll = setInterval(() => {
        if (this.cancelWaiters === 0) {
          clearInterval(poll);
          this.cancelPoll = null;
        } else if (this.cancelFlag![0] !== 0) this.abort?.abort();
      }, 50);
      // The poll must not keep the process alive on its own.
      Deno.unrefTimer(poll);
      this.cancelPoll = poll;
    }
    const release = () => {
      this.cancelWaiters--;
    };
    let p: Promise<T>;
    try {
      p = f(this.abort.signal);
    } catch (e) {
      release();
      throw e;
    }
    return p.finally(release);
  }

  /**
   * Options for a fresh child evaluator (`run x.shl`, `use` — §9.8): a copy of this session's
   * cwd and env, the same ports and the same cancel flag. (Added for the scripts builtins.)
   */
  childOptions(): EvaluatorOptions {
    return {
      cwd: this.cwdPath,
      env: Object.fromEntries(this.envMap),
      ports: this.ports,
      cancel: this.cancelFlag ?? undefined,
      adapters: () => this.adapters(),
      config: this.configSnapshot,
      reef: [...this.reefOverrides],
      stateDir: this.stateDir,
    };
  }

  /**
   * Kernel bridge (host → language): publish `payload` on the session's channel `channel`
   * (subscribers, `events()`, `take()` and `latest()` see it) without calling `onUserEmit`.
   */
  injectUserEvent(channel: string, payload: Value): void {
    this.hooks.injectUserEvent?.(this, channel, payload);
  }

  /** Close the channel bus: live `events()` streams end, waiting `take()`s fail. */
  closeChannels(): void {
    this.hooks.closeChannels?.(this);
  }

  /** Call a callable value (closure, alias). */
  callValue(fn: Value, args: Value[], named?: Map<string, Value>): MaybePromise<Value> {
    return callValue(this, fn, args, named ?? NO_NAMED, null);
  }

  // ---- running programs ------------------------------------------------------------------

  /** Compile (once) an expression node. */
  compiled(e: Expr): CE {
    let c = this.cache.get(e);
    if (c === undefined) {
      c = compileExpr(this, e);
      this.cache.set(e, c);
    }
    return c;
  }

  /**
   * Evaluate a parsed program in the session's root scope (script or REPL semantics,
   * language §7.1). Synchronous when nothing in it waits. `position: "value"` runs a final
   * bare expression in value position (a failed command outcome is returned, not raised).
   */
  evalProgram(p: Program, position: "stmt" | "value" = "stmt"): MaybePromise<Value> {
    const body: CS = compileBody(this, p.body, position === "value" ? "top_value" : "top");
    this.pendingExit = null;
    let r: MaybePromise<Value | Ctl>;
    try {
      r = body(this.root);
    } catch (e) {
      return this.finishError(e);
    }
    if (isPromise(r)) return r.then((x) => this.finish(x), (e) => this.finishError(e));
    return this.finish(r);
  }

  private finish(r: Value | Ctl): Value {
    if (r instanceof Ctl) {
      throw fail(
        "custom",
        r.kind === "return" ? "return outside function" : "loop control outside loop",
      );
    }
    if (this.repl) {
      this.outs.push(r);
      this.root.declare("it", r);
      this.root.declare("out", new ListV(this.outs.slice()));
    }
    return r;
  }

  private finishError(e: unknown): Value {
    if (e instanceof ExitSignal) {
      this.pendingExit = e.code;
      return null;
    }
    if (isStackOverflow(e)) {
      this.depth = 0;
      throw recursionLimit();
    }
    throw e;
  }

  /** Send a non-final statement value to the sink (nulls are skipped). */
  sink(v: Value, from?: Stmt): MaybePromise<void> {
    if (v === null) return;
    return this.ports.sink(v, from);
  }

  /**
   * A count that moves whenever root bindings, assigned values or the environment may have
   * changed (not the cwd: compare `cwd()`). Equal counts mean the session facts a host reports
   * are unchanged, so it need not walk every binding after every exec.
   */
  factsVersion(): number {
    return Scope.changes + this.envMap.changes;
  }

  #boundNames: { at: number; names: { values: string[]; commands: string[] } } | null = null;

  /** The names bound in the root scope (for the parser's binding context and completion). */
  boundNames(): { values: string[]; commands: string[] } {
    // Re-walked only after a change: every parse asks, and a session may hold many bindings.
    const at = Scope.changes;
    if (this.#boundNames?.at === at) return this.#boundNames.names;
    const names = this.#walkNames();
    this.#boundNames = { at, names };
    return names;
  }

  #walkNames(): { values: string[]; commands: string[] } {
    const values: string[] = [];
    const commands: string[] = [];
    for (const n of this.root.names()) {
      const v = this.root.lookup(n)!.v;
      if (v instanceof ClosureV || v instanceof CommandV) commands.push(n);
      else values.push(n);
    }
    return { values, commands };
  }

  /** Callable binding names visible from `sc` (did-you-mean candidates). */
  callableNames(sc: Scope): string[] {
    return sc.names().filter((n) => {
      const v = sc.lookup(n)?.v;
      return v instanceof ClosureV || v instanceof CommandV;
    });
  }

  /** A child scope (catch handlers, match arms). */
  childScope(sc: Scope): Scope {
    return new Scope(sc);
  }

  // ---- names -----------------------------------------------------------------------------

  /**
   * True when `name` is a command name: a builtin head, an executable on PATH, or a tool a
   * Reef scope constrains (it may live off PATH, e.g. a mise install) (§7.4).
   */
  isCommandName(name: string): boolean {
    if (getBuiltin(name) !== undefined) return true;
    if (name.includes("/") || name.includes(".")) return false;
    if (this.adapters().get(name) !== undefined) return true;
    return which(name, this.envMap.get("PATH"), this.cwdPath) !== null || constrains(this, name);
  }

  /** A free identifier in value position (§7.4). */
  resolveFree(name: string, sc: Scope, span: Span): MaybePromise<Value> {
    if (name === "now") return this.now();
    if (name === "today") return startOfDay(this.now());
    if (this.isCommandName(name)) {
      return runCmd(this, headCmd(name, span), sc, [], false);
    }
    if (name === "env") return new RecordV(new Map(this.envMap));
    throw fail("undefined_var", `undefined variable \`${name}\``, null, span);
  }

  /** `name(args)` with no binding: run the command `name` in value position (§7.5 step 4). */
  callCommandByName(name: string, args: MethodArgs, sc: Scope, span: Span): MaybePromise<Value> {
    if (!this.isCommandName(name)) {
      throw fail("undefined_var", `undefined function \`${name}\``, null, span);
    }
    const words = valuesToWords(args.pos, args.named, span, (g) => this.expandGlob(g, span));
    return runCmd(this, headCmd(name, span), sc, words, false);
  }

  /** The current time in the system zone. */
  now() {
    return dateTimeFromEpochNs(this.ports.clock.nowNs(), this.ports.clock.zone());
  }

  /** `d.ago` / `d.from_now`. */
  relativeTime(d: DurationV, ago: boolean, span: Span): Value {
    return at(span, () => relativeTo(this.now(), d, ago));
  }

  // ---- namespaces ------------------------------------------------------------------------

  /** True for a name intercepted as a namespace when unbound (§13). */
  isNamespaceName(name: string): boolean {
    return name === "env" || isNamespaceName(name);
  }

  /** `ns.member` (no call). */
  namespaceField(ns: string, member: string, span: Span): MaybePromise<Value> {
    if (ns === "env") {
      const v = this.envMap.get(member);
      if (v === undefined) {
        throw fail("field_missing", `environment variable \`${member}\` is not set`, null, span);
      }
      return v;
    }
    return namespaceMember(this, ns, member, null, span);
  }

  /** `ns.member(args)`. */
  namespaceCall(ns: string, member: string, args: MethodArgs): MaybePromise<Value> {
    // `env.keys()`, `env.where(…)`: the environment as a record (what `env` alone is).
    if (ns === "env") return callMethod(this, new RecordV(new Map(this.envMap)), member, args);
    return namespaceMember(this, ns, member, args);
  }

  // ---- services for compiled code ----------------------------------------------------------

  /** The value of a command word (see commands.ts). */
  wordValue(a: CmdExpr["args"][number], sc: Scope): MaybePromise<Value> {
    return wordValue(this, a, sc);
  }

  /**
   * Expand a glob against the filesystem (sorted absolute paths). What the dot-file rule left
   * out is said on stderr (a reader then need not check with `hidden: true` or `find`).
   */
  expandGlob(g: GlobV, _span: Span | null): readonly Value[] {
    if (g.hidden) return expandGlob(g, this.ports.fs);
    const skips: GlobSkips = { names: [], count: 0 };
    const paths = expandGlob(g, this.ports.fs, skips);
    if (skips.count > 0) {
      const named = skips.names.map((p) => relPath(p, this.cwd())).join(", ");
      const more = skips.count > skips.names.length
        ? ` and ${skips.count - skips.names.length} more`
        : "";
      this.ports.stderr(
        `shoal: glob ${g.pattern} left out dot-entries ${named}${more} (hidden: true includes them)\n`,
      );
    }
    return paths;
  }

  /** Materialize a bounded stream (`for x in stream`). */
  collectStream(s: StreamV, span: Span): MaybePromise<readonly Value[]> {
    if (this.hooks.collectStream === undefined) {
      throw fail("type_error", "streams are not available in this evaluator", null, span);
    }
    return this.hooks.collectStream(this, s, span);
  }

  /** Bytes value for outcome `.stdout()`/`.stderr()`. */
  bytesValue(data: Uint8Array): BytesV {
    return new BytesV(data);
  }

  /** A `val:blake3:` reference used as a method receiver (§15 step 1). */
  resolveCasRef(ref: string, span: Span | null): MaybePromise<Value> {
    if (this.hooks.resolveCasRef) return this.hooks.resolveCasRef(this, ref, span);
    throw fail(
      "not_found",
      `cannot resolve \`${ref}\`: this session has no journal/CAS`,
      null,
      span,
    );
  }

  /** `use ./mod` (§9.8). */
  useModule(target: string, sc: Scope, span: Span): MaybePromise<void> {
    if (this.hooks.useModule === undefined) {
      throw fail("custom", "`use` is not available in this evaluator", null, span);
    }
    return this.hooks.useModule(this, target, sc, span);
  }

  /** Let the host's policy check a program read from a file before it runs (see EvalHooks). */
  gateProgram(program: Program, what: string, span: Span | null): void {
    this.hooks.gateProgram?.(this, program, what, span);
  }

  /** A command head ending in `.shl` (§9.8). */
  runScriptCommand(cmd: CmdExpr, sc: Scope): MaybePromise<Value> {
    if (this.hooks.runScript === undefined) {
      throw fail("custom", "running scripts is not available in this evaluator", null, cmd.span);
    }
    return this.hooks.runScript(this, cmd, sc);
  }

  /** Call an alias with expression arguments (§8.4). */
  callAlias(
    f: CommandV,
    pos: Value[],
    named: Map<string, Value>,
    span: Span | null,
  ): MaybePromise<Value> {
    return callAlias(this, f, pos, named, this.root, span);
  }

  /** `.feed` (§9.7). */
  feed(v: Value, cmd: Expr, sc: Scope, span: Span): MaybePromise<Value> {
    return feedInto(this, v, cmd, sc, span);
  }

  /**
   * Session-only verbs (`cd`, `pushd`, `popd`, `jump`, `env.X =`) inside a closure body →
   * custom «… is only allowed at session top level; use `with cwd:` inside a fn body».
   * With the caller's scope the test is exact (a call scope up the chain); without it the
   * call depth is used, which a concurrently suspended task can inflate.
   */
  requireTopLevel(
    verb: string,
    alt: "with cwd:" | "with env:",
    span: Span | null,
    sc?: Scope,
  ): void {
    if (sc !== undefined ? sc.inCallBody() : this.depth > 0) {
      throw fail(
        "custom",
        `${verb} is only allowed at session top level; use \`${alt}\` inside a fn body`,
        null,
        span,
      );
    }
  }

  /** Start a task running `body` concurrently (§7.7). */
  spawnTask(desc: string, body: () => MaybePromise<Value>): TaskV {
    const state: TaskState = {
      promise: null as unknown as Promise<Value>,
      done: false,
      value: null,
      error: null,
    };
    // The body runs in its own task context so cancel/suspend reach it (tasks.ts).
    const ctl = new TaskControl();
    state.cancel = () => ctl.cancel();
    state.pause = (paused) => ctl.pause(paused);
    state.promise = Promise.resolve().then(() => runInTask(ctl, body)).then(
      (v) => {
        ctl.finish();
        state.done = true;
        state.value = v;
        return v;
      },
      (e) => {
        ctl.finish();
        state.done = true;
        state.error = e instanceof ShoalError ? e : new ShoalError(fail("internal", String(e)).err);
        throw state.error;
      },
    );
    // An unawaited failing task must not crash the host.
    state.promise.catch(() => {});
    const t = new TaskV(nextTaskId++, desc, state);
    this.tasks.push(t);
    return t;
  }

  /** Compile `with cwd:/env:/reef: { body }` (§7.6). */
  compileWith(e: WithExpr): CS {
    const settings = e.settings.map((s) => ({
      key: s.key,
      c: compileExpr(this, s.value),
      span: s.span,
    }));
    const body = compileBlock(this, e.body, "value");
    return (sc) => {
      const vals: Value[] = [];
      const step = (i: number): MaybePromise<Value | Ctl> => {
        for (; i < settings.length; i++) {
          const v = settings[i].c(sc);
          if (v instanceof Promise) {
            const next = i + 1;
            return v.then((x) => {
              vals.push(x);
              return step(next);
            });
          }
          vals.push(v);
        }
        return this.runWith(
          settings.map((s, k) => ({ key: s.key, v: vals[k], span: s.span })),
          () => body(sc),
        );
      };
      return step(0);
    };
  }

  private runWith(
    settings: { key: string; v: Value; span: Span }[],
    body: () => MaybePromise<Value | Ctl>,
  ): MaybePromise<Value | Ctl> {
    const savedCwd = this.cwdPath;
    const savedEnv = new Map(this.envMap);
    const savedReef = this.reefOverrides.length;
    const restore = () => {
      this.reefOverrides.length = savedReef;
      this.cwdPath = savedCwd;
      this.envMap.clear();
      for (const [k, v] of savedEnv) this.envMap.set(k, v);
    };
    try {
      for (const s of settings) {
        if (s.key === "cwd") {
          let p: string;
          if (typeof s.v === "string") p = s.v;
          else if (s.v instanceof PathV) p = s.v.path;
          else {throw fail(
              "type_error",
              `with cwd expects path, found ${typeName(s.v)}`,
              null,
              s.span,
            );}
          this.cwdPath = isAbsolute(p) ? p : resolve(this.cwdPath, p);
        } else if (s.key === "env") {
          if (!(s.v instanceof RecordV)) {
            throw fail(
              "type_error",
              `with env expects a record, found ${typeName(s.v)}`,
              null,
              s.span,
            );
          }
          for (const [k, v] of s.v.fields) {
            const t = at(s.span, () => toArgv(v));
            this.envMap.set(k, typeof t === "string" ? t : new TextDecoder().decode(t));
          }
        } else if (s.key === "reef") {
          if (!(s.v instanceof RecordV)) {
            throw fail(
              "type_error",
              `with reef expects a record, found ${typeName(s.v)}`,
              null,
              s.span,
            );
          }
          reefLayer(s.v, s.span); // constraint strings only: type_error here, not at a spawn
          this.reefOverrides.push(s.v);
        }
      }
    } catch (e) {
      restore();
      throw e;
    }
    let r: MaybePromise<Value | Ctl>;
    try {
      r = body();
    } catch (e) {
      restore();
      throw e;
    }
    if (r instanceof Promise) {
      return r.then((x) => {
        restore();
        return x;
      }, (e) => {
        restore();
        throw e;
      });
    }
    restore();
    return r;
  }
}

/** All canonical builtin heads (re-exported for hosts' completion). */
export { BUILTIN_HEADS };
