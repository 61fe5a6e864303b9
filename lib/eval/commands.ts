/**
 * Command evaluation (language §9): the dispatch order of §9.1, generic argument collection,
 * external processes through lib/exec with outcomes (§10), redirects, env prefixes, aliases
 * and interpreter blocks (§9.5).
 *
 * @module
 */

import type { CmdArg, CmdExpr, Expr, LangBlockExpr, Span } from "../syntax/ast.ts";
import {
  ClosureV,
  CommandV,
  GlobV,
  ListV,
  OutcomeV,
  PathV,
  typeName,
  type Value,
} from "../value/types.ts";
import { fail, ShoalError } from "../value/errors.ts";
import { feedBytes, toArgv } from "../value/coerce.ts";
import { renderInline } from "../value/render.ts";
import { type ArgvItem, type CaptureOptions, isExecError, type StdinSpec } from "../exec/mod.ts";
import { isAbsolute, resolve } from "node:path";
import { type MaybePromise, then } from "./maybe.ts";
import type { Scope } from "./scope.ts";
import type { Evaluator } from "./evaluator.ts";
import { at, type CE } from "./expressions.ts";
import { callClosureFromCommand } from "./calls.ts";
import { builtinOutcome, cmdFailed, valueBytes } from "./outcome.ts";
import { BUILTIN_HEADS, type CmdArgs, getBuiltin } from "./builtins/registry.ts";
import { nearest } from "./errors.ts";
import { journaledWrite } from "./journal_port.ts";
import { adapterAccepts, adapterFor, runAdapted, runAdaptedBlock } from "./adapters/run.ts";
import { resolveHead } from "./resolve_head.ts";
import { readFlags } from "./builtins/flags.ts";
import { helpText } from "./builtins/help.ts";

/** Raise `cmd_failed` for a non-ok outcome (statement position, §7.2). */
export function failIfNotOk(v: Value, span: Span): Value {
  if (v instanceof OutcomeV && !v.ok) throw cmdFailed(v, span);
  return v;
}

/** Compile a command node. */
export function compileCmd(ev: Evaluator, cmd: CmdExpr, stmtPos: boolean): CE {
  const span = cmd.span;
  if (!stmtPos) return (sc) => runCmd(ev, cmd, sc, [], false);
  return (sc) => then(runCmd(ev, cmd, sc, [], true), (v) => failIfNotOk(v, span));
}

/** Expand `~` / `~/…` against the session's HOME. */
function expandTilde(ev: Evaluator, text: string): string {
  if (text !== "~" && !text.startsWith("~/")) return text;
  const home = ev.env().get("HOME") ?? "/";
  return text === "~" ? home : home + text.slice(1);
}

/**
 * The value of one command word before type coercion: `Word` → str, path word → path,
 * glob word → glob (unexpanded), quoted string → str, `(expr)` → its value (value position),
 * `-x`/`--`/`-` → their text, a long flag → its text.
 */
export function wordValue(ev: Evaluator, a: CmdArg, sc: Scope): MaybePromise<Value> {
  switch (a.kind) {
    case "Word":
      return a.text;
    case "PathWord":
      return new PathV(expandTilde(ev, a.text));
    case "GlobWord":
      return new GlobV(expandTilde(ev, a.text), ev.cwd());
    case "StrArg":
      return ev.compiled(a.value)(sc);
    case "Sub":
      return ev.compiled(a.expr)(sc);
    case "FlagShort":
      return "-" + a.chars;
    case "DashDash":
      return "--";
    case "Dash":
      return "-";
    case "FlagLong":
      if (a.value === undefined) return "--" + a.raw;
      return then(
        wordValue(ev, a.value, sc),
        (v) => `--${a.raw}=${typeof v === "string" ? v : renderInline(v)}`,
      );
  }
}

/** Generic argument collection for builtins: flags apart, globs expanded (§14). */
export function collectArgs(ev: Evaluator, cmd: CmdExpr, sc: Scope): MaybePromise<CmdArgs> {
  const out: CmdArgs = { pos: [], flags: new Map(), items: [], span: cmd.span };
  const args = cmd.args;
  const positional = (v: Value) => {
    out.pos.push(v);
    out.items.push({ k: "pos", v });
  };
  const step = (i: number): MaybePromise<CmdArgs> => {
    for (; i < args.length; i++) {
      const a = args[i];
      if (a.kind === "FlagLong") {
        if (a.value === undefined) {
          out.flags.set(a.name, true);
          out.items.push({ k: "long", name: a.name, raw: a.raw });
          continue;
        }
        const key = a.name;
        const raw = a.raw;
        const set = (v: Value) => {
          out.flags.set(key, v);
          out.items.push({ k: "long", name: key, raw, value: v });
        };
        const r = wordValue(ev, a.value, sc);
        if (r instanceof Promise) {
          const next = i + 1;
          return r.then((v) => {
            set(v);
            return step(next);
          });
        }
        set(r);
        continue;
      }
      if (a.kind === "FlagShort") {
        for (const c of a.chars) out.flags.set(c, true);
        out.items.push({ k: "short", chars: a.chars });
        continue;
      }
      const r = then(wordValue(ev, a, sc), (v) => {
        if (v instanceof GlobV && a.kind === "GlobWord") {
          return then(ev.expandGlob(v, a.span), (paths) => {
            if (paths.length === 0) ev.ports.stderr(`shoal: no matches for ${v.pattern}\n`);
            for (const p of paths) positional(p);
          });
        }
        positional(v);
      });
      if (r instanceof Promise) {
        const next = i + 1;
        return r.then(() => step(next));
      }
    }
    return out;
  };
  return step(0);
}

/** argv items for an external program (§9.2, §6.3). */
function externalArgv(ev: Evaluator, args: CmdArg[], sc: Scope): MaybePromise<ArgvItem[]> {
  const out: ArgvItem[] = [];
  const step = (i: number): MaybePromise<ArgvItem[]> => {
    for (; i < args.length; i++) {
      const a = args[i];
      const r = then(wordValue(ev, a, sc), (v) => {
        if (v instanceof GlobV && a.kind === "GlobWord") {
          return then(ev.expandGlob(v, a.span), (paths) => {
            if (paths.length === 0) ev.ports.stderr(`shoal: no matches for ${v.pattern}\n`);
            for (const p of paths) out.push(at(a.span, () => toArgv(p)));
          });
        }
        out.push(at(a.span, () => toArgv(v)));
      });
      if (r instanceof Promise) {
        const next = i + 1;
        return r.then(() => step(next));
      }
    }
    return out;
  };
  return step(0);
}

/** Resolve a redirect target against the session cwd. */
export function redirectPath(ev: Evaluator, v: Value, span: Span): string {
  let p: string;
  if (typeof v === "string") p = v;
  else if (v instanceof PathV) p = v.path;
  else {
    throw fail(
      "arg_error",
      `redirect target must be a path or str, found ${typeName(v)}`,
      null,
      span,
    );
  }
  return isAbsolute(p) ? p : resolve(ev.cwd(), p);
}

/**
 * Run a command node (language §9.1). `extra` are words appended by an alias invocation.
 */
export function runCmd(
  ev: Evaluator,
  cmd: CmdExpr,
  sc: Scope,
  extra: CmdArg[],
  stmtPos: boolean,
): MaybePromise<Value> {
  ev.checkCancelled();
  if (cmd.background) {
    const fg: CmdExpr = { ...cmd, background: false };
    return ev.spawnTask(cmd.head, () => runCmd(ev, fg, sc, extra, false));
  }
  const head = cmd.head;
  if (cmd.headKind === "word") {
    const cell = sc.lookup(head);
    if (cell !== undefined) {
      const v = cell.v;
      if (v instanceof ClosureV) {
        return at(cmd.span, () => callClosureFromCommand(ev, v, cmd, extra, sc));
      }
      if (v instanceof CommandV) return runAlias(ev, v, cmd, extra, sc, stmtPos);
      if (
        !cmd.forced && cmd.args.length === 0 && extra.length === 0 && cmd.redirects.length === 0 &&
        cmd.env.length === 0
      ) return v;
    }
    const b = getBuiltin(head);
    if (b !== undefined) {
      const full = extra.length ? { ...cmd, args: [...cmd.args, ...extra] } : cmd;
      const ctx = { ev, cmd: full, sc, stmtPos };
      const args: MaybePromise<CmdArgs> = b.rawArgs
        ? { pos: [], flags: new Map(), items: [], span: cmd.span }
        : collectArgs(ev, full, sc);
      return then(args, (collected) => {
        let a = collected;
        if (b.flags !== undefined) {
          const r = at(cmd.span, () => readFlags(head, b.flags!, collected.items, cmd.span));
          // A GNU flag the builtin lacks: the external program of that name does the work.
          if (r.k === "external") return runExternal(ev, full, [], sc, stmtPos);
          if (r.k === "help") return builtinOutcome(head, helpText(head), cmd.span);
          a = { ...collected, pos: r.pos, flags: r.flags };
        }
        return then(at(cmd.span, () => b.run(ctx, a)), (v) => {
          // Special heads yield bare values, but `pwd > f` still writes the value's bytes
          // (§9.4). (commands engineer)
          if (!b.structured) {
            return full.redirects.length ? builtinRedirects(ev, full, sc, v, v) : v;
          }
          return builtinRedirects(ev, full, sc, builtinOutcome(head, v, cmd.span), v);
        });
      });
    }
    if (head.endsWith(".shl")) return ev.runScriptCommand(cmd, sc);
    // (7) An adapted head, unless `^`-forced (subsystems §7).
    const adapter = adapterFor(ev, cmd);
    if (adapter !== undefined) {
      if (adapterAccepts(ev, adapter, cmd)) {
        return runAdapted(ev, adapter, cmd, extra.length ? [...cmd.args, ...extra] : cmd.args, sc);
      }
      // A flag the adapter does not know: the plain tool, by its adapter's binary.
      return runExternal(ev, { ...cmd, head: adapter.bin }, extra, sc, stmtPos);
    }
  } else if (head.endsWith(".shl") || ev.hooks.runsAsScript?.(ev, head)) {
    return ev.runScriptCommand(cmd, sc);
  }
  return runExternal(ev, cmd, extra, sc, stmtPos);
}

/** Apply `>`/`>>` to a structured builtin's value: write its bytes, yield null (§9.4). */
function builtinRedirects(
  ev: Evaluator,
  cmd: CmdExpr,
  sc: Scope,
  outcome: Value,
  value: Value,
): MaybePromise<Value> {
  if (cmd.redirects.length === 0) return outcome;
  const step = (i: number): MaybePromise<Value> => {
    if (i >= cmd.redirects.length) return null;
    const r = cmd.redirects[i];
    return then(wordValue(ev, r.target, sc), (t) => {
      const path = redirectPath(ev, t, r.span);
      if (r.op === "<") {
        throw fail("arg_error", `\`${cmd.head}\` does not read stdin`, null, r.span);
      }
      try {
        // Journaled: the prior bytes become a restore inverse (issue 7).
        journaledWrite(
          ev,
          path,
          () => ev.ports.fs.writeFile(path, valueBytes(value), { append: r.op === ">>" }),
        );
      } catch (e) {
        throw fail("custom", `write ${path}: ${(e as Error).message}`, null, r.span);
      }
      return step(i + 1);
    });
  };
  return step(0);
}

/** Invoke an alias from command form: stored command + the new words (§8.4). */
function runAlias(
  ev: Evaluator,
  alias: CommandV,
  call: CmdExpr,
  extra: CmdArg[],
  sc: Scope,
  stmtPos: boolean,
): MaybePromise<Value> {
  const stored = alias.cmd;
  const merged: CmdExpr = {
    ...stored,
    env: [...stored.env, ...call.env],
    redirects: [...stored.redirects, ...call.redirects],
    background: stored.background || call.background,
    span: call.span,
  };
  // Statement position carries over: an alias at a prompt runs in the foreground too.
  return runCmd(ev, merged, sc, [...call.args, ...extra], stmtPos);
}

/** Words for alias arguments given in expression form (§7.5 step 4, §8.4). */
export function valuesToWords(
  pos: Value[],
  named: Map<string, Value>,
  span: Span,
  expand: (g: GlobV) => readonly Value[],
): CmdArg[] {
  const out: CmdArg[] = [];
  // A list is its items, one word each, and a glob its paths, as in a command's words: `rm
  // (paths)` means the same in a `let` (where it is this call form) as it does as a statement.
  const push = (v: Value): void => {
    if (typeof v === "string") out.push({ kind: "Word", text: v, span });
    else if (v instanceof PathV) out.push({ kind: "PathWord", text: v.path, span });
    else if (v instanceof ListV) v.items.forEach(push);
    else if (v instanceof GlobV) expand(v).forEach(push);
    else {
      throw fail(
        "type_error",
        `alias arguments must be strings, paths, globs or lists of them (got ${typeName(v)})`,
        "pass the text: (x.str()), or the paths: (xs.map(.path))",
        span,
      );
    }
  };
  pos.forEach(push);
  for (const [k, v] of named) {
    const raw = k.replaceAll("_", "-");
    if (v === true) out.push({ kind: "FlagLong", name: k, raw, span });
    else {
      const text = typeof v === "string" ? v : v instanceof PathV ? v.path : renderInline(v);
      out.push({ kind: "FlagLong", name: k, raw, value: { kind: "Word", text, span }, span });
    }
  }
  return out;
}

/** Run an alias value with expression-call arguments. */
export function callAlias(
  ev: Evaluator,
  alias: CommandV,
  pos: Value[],
  named: Map<string, Value>,
  sc: Scope,
  span: Span | null,
): MaybePromise<Value> {
  const s = span ?? alias.cmd.span;
  return runCmd(
    ev,
    { ...alias.cmd, span: s },
    sc,
    valuesToWords(pos, named, s, (g) => ev.expandGlob(g, s)),
    false,
  );
}

/** The session env plus this spawn's own assignments (`FOO=1 cmd`, `pty.open` env). */
function spawnEnv(ev: Evaluator, extra: Iterable<[string, string]>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of ev.env()) env[k] = v;
  // Like a shell, children see the session cwd as $PWD (it follows cd and `with cwd:`).
  env.PWD = ev.cwd();
  for (const [k, v] of extra) env[k] = v;
  return env;
}

/**
 * What a spawn of this session starts — the one decision every spawn goes through (captured
 * commands and PTYs alike): the environment (the session's, `$PWD`, then `extraEnv`) and
 * argv with the head resolved by Reef (lib/eval/resolve_head.ts: a constrained head becomes
 * its locked, hash-verified binary and its child's PATH gets the view; an ambient head keeps
 * its name and lib/exec finds it on the same PATH). `blake3` is the verified digest of a
 * Reef-resolved binary (a spawn gate can pin it without reading the file again), else null.
 * May raise Reef's language errors. The spawn gate (D-38) belongs here too.
 */
export async function resolveSpawn(
  ev: Evaluator,
  argv: ArgvItem[],
  extraEnv: Iterable<[string, string]>,
  span: Span,
): Promise<{ argv: ArgvItem[]; env: Record<string, string>; blake3: string | null }> {
  const env = spawnEnv(ev, extraEnv);
  const head = argv[0];
  if (typeof head !== "string") return { argv, env, blake3: null };
  const to = await resolveHead(ev, head, env, span);
  if (to.via === "reef") argv = [to.path!, ...argv.slice(1)];
  if (to.childPath !== undefined) env.PATH = to.childPath;
  return { argv, env, blake3: to.blake3 };
}

/** Spawn through the process port and build the outcome (§9.2). */
export async function spawnOutcome(
  ev: Evaluator,
  argv: ArgvItem[],
  opts: Partial<CaptureOptions>,
  cmd: CmdExpr | null,
  sc: Scope,
  span: Span,
  foreground = false,
): Promise<OutcomeV> {
  const head = typeof argv[0] === "string" ? argv[0] : new TextDecoder().decode(argv[0]);
  const display = argv.map((a) => (typeof a === "string" ? a : new TextDecoder().decode(a)))
    .join(" ");
  let r;
  try {
    const prefix = (cmd?.env ?? []).map((p): [string, string] => [p.name, p.value]);
    let env: Record<string, string>;
    ({ argv, env } = await resolveSpawn(ev, argv, prefix, span));
    // A statement-position command with no redirect runs in the host's foreground, if it
    // has one (the REPL / CLI at a person's terminal; issue 14).
    const fg = foreground && opts.stdin === undefined && opts.stdout === undefined
      ? ev.ports.process.foreground
      : undefined;
    r = await ev.withCancelSignal((signal) =>
      (fg ?? ev.ports.process.capture)({
        argv,
        cwd: ev.cwd(),
        env,
        signal,
        // Nothing reads stdout beyond the in-memory cap until a journal/CAS host plugs in a
        // spill consumer (its process port can set `spill`): count and drop it rather than
        // writing a temp file nobody owns. (commands engineer)
        spill: false,
        ...opts,
      })
    );
  } catch (e) {
    if (e instanceof ShoalError) throw e;
    if (isExecError(e, "not_found")) {
      const cands = [...BUILTIN_HEADS, ...ev.adapters().heads(), ...ev.callableNames(sc)];
      const near = nearest(head, cands);
      throw fail(
        "not_found",
        `${head}: command not found`,
        near === null ? null : `did you mean '${near}'?`,
        span,
      );
    }
    if (isExecError(e, "cancelled")) throw fail("cancelled", "cancelled", null, span);
    throw fail("custom", `${head}: ${(e as Error).message}`, null, span);
  }
  if (r.cancelled) throw fail("cancelled", "cancelled", null, span);
  return new OutcomeV(
    r.status,
    r.status === 0,
    r.signal,
    r.stdout,
    r.stderr,
    r.durNs,
    r.pid,
    display,
    undefined,
    span,
    r.stdoutTruncated,
    r.stderrTruncated,
    // A journaling host stores spilled stdout in its content store (issue 7).
    (r as { stdoutRef?: string }).stdoutRef ?? null,
    (r as { stdoutSize?: number }).stdoutSize ?? r.stdout.length,
  );
}

function runExternal(
  ev: Evaluator,
  cmd: CmdExpr,
  extra: CmdArg[],
  sc: Scope,
  stmtPos: boolean,
): MaybePromise<Value> {
  const args = extra.length ? [...cmd.args, ...extra] : cmd.args;
  const head = cmd.headKind === "path" ? expandTilde(ev, cmd.head) : cmd.head;
  return then(externalArgv(ev, args, sc), async (rest) => {
    const opts: Partial<CaptureOptions> = {};
    for (const r of cmd.redirects) {
      const t = await wordValue(ev, r.target, sc);
      const path = redirectPath(ev, t, r.span);
      if (r.op === "<") opts.stdin = { path };
      else opts.stdout = { path, append: r.op === ">>" };
    }
    const argv0 = cmd.headKind === "path" && !isAbsolute(head) ? resolve(ev.cwd(), head) : head;
    return spawnOutcome(ev, [argv0, ...rest], opts, cmd, sc, cmd.span, stmtPos);
  });
}

/** How an interpreter receives its program (§9.5). */
function langArgv(lang: string, src: string): ArgvItem[] | null {
  switch (lang) {
    case "sh":
    case "bash":
    case "zsh":
    case "fish":
    case "python":
    case "python3":
      return [lang, "-c", src];
    case "node":
    case "ruby":
    case "perl":
    case "lua":
    case "Rscript":
    case "osascript":
      return [lang, "-e", src];
    case "php":
      return [lang, "-r", src];
    case "deno":
      return [lang, "eval", src];
    case "jq":
      return [lang, src];
  }
  return null;
}

/** Run an interpreter block, optionally feeding `stdin` bytes. */
export function runLangBlock(
  ev: Evaluator,
  e: LangBlockExpr,
  sc: Scope,
  stdin: Uint8Array | null,
  stmtPos = false,
): Promise<OutcomeV> {
  const adapter = ev.adapters().get(e.lang);
  if (adapter?.class === "interpreter") {
    return runAdaptedBlock(ev, adapter, e.src, stdin, e.span, sc);
  }
  const argv = langArgv(e.lang, e.src);
  let input: StdinSpec | undefined = stdin ?? undefined;
  if (argv === null) {
    if (stdin !== null) {
      throw fail(
        "type_error",
        `\`${e.lang}\` reads its program from stdin and cannot also be fed`,
        null,
        e.span,
      );
    }
    input = new TextEncoder().encode(e.src);
  }
  return spawnOutcome(
    ev,
    argv ?? [e.lang],
    input === undefined ? {} : { stdin: input },
    null,
    sc,
    e.span,
    stmtPos && argv !== null,
  );
}

/** Compile an interpreter block. */
export function compileLangBlock(ev: Evaluator, e: LangBlockExpr, stmtPos: boolean): CE {
  const span = e.span;
  if (!stmtPos) return (sc) => runLangBlock(ev, e, sc, null);
  return (sc) => runLangBlock(ev, e, sc, null, true).then((v) => failIfNotOk(v, span));
}

/**
 * `.feed` (§9.7): serialize `value` with feed bytes and run `cmd` (always an external
 * process or an interpreter block) with them on stdin.
 */
export function feedInto(
  ev: Evaluator,
  value: Value,
  cmd: Expr,
  sc: Scope,
  span: Span,
): MaybePromise<Value> {
  const bytes = at(span, () => feedBytes(value));
  if (cmd.kind === "LangBlock") return runLangBlock(ev, cmd, sc, bytes);
  if (cmd.kind !== "Cmd") {
    throw fail(
      "type_error",
      ".feed's argument must be a command (e.g. .feed(sort -r))",
      null,
      span,
    );
  }
  const adapter = adapterFor(ev, cmd);
  if (adapter !== undefined && adapterAccepts(ev, adapter, cmd)) {
    return runAdapted(ev, adapter, cmd, cmd.args, sc, bytes);
  }
  const head = adapter !== undefined
    ? adapter.bin
    : cmd.headKind === "path"
    ? expandTilde(ev, cmd.head)
    : cmd.head;
  return then(
    externalArgv(ev, cmd.args, sc),
    (rest) => spawnOutcome(ev, [head, ...rest], { stdin: bytes }, cmd, sc, cmd.span),
  );
}
