/**
 * Running an adapted command (language §9.1 step 7, subsystems §7): bind the words (refusing
 * bad ones before anything spawns), spawn `bin` with the pinned `invoke` through the same
 * spawn path as every external (so Reef resolves `bin`), judge success by `ok_codes`, and
 * parse stdout into the outcome's value. A parse that fails — or stdout that was cut at the
 * capture cap — keeps the raw outcome and says so on the diagnostics port; there is never a
 * partial table.
 *
 * @module
 */

import type { CmdArg, CmdExpr, EnvPrefix, Span } from "../../syntax/ast.ts";
import { OutcomeV, type Value } from "../../value/types.ts";
import { toArgv } from "../../value/coerce.ts";
import type { ArgvItem, CaptureOptions } from "../../exec/mod.ts";
import type { Scope } from "../scope.ts";
import type { Evaluator } from "../evaluator.ts";
import type { EffectInfo } from "../journal_port.ts";
import { redirectPath, spawnOutcome, wordValue } from "../commands.ts";
import { at, headCmd } from "../expressions.ts";
import { fail } from "../../value/errors.ts";
import { bindCall, type BoundCall, type Piece, UnknownAdapterFlag } from "./bind.ts";
import { instantiateEffects, UNKNOWN } from "./effects.ts";
import { evalTokens, staticTokens, valueTokens } from "./tokens.ts";
import { ParseFailure, parseOutput } from "./parsers/mod.ts";
import type { AdapterSpec, CallSpec } from "./schema.ts";

/**
 * The adapter a command node dispatches to, if any: not `^`-forced, a word head with an
 * adapter, and stdout not redirected (`git log > f` writes the tool's own text, not the
 * pinned machine format).
 */
export function adapterFor(ev: Evaluator, cmd: CmdExpr): AdapterSpec | undefined {
  if (cmd.forced || cmd.headKind !== "word") return undefined;
  if (cmd.redirects.some((r) => r.op !== "<")) return undefined;
  return ev.adapters().get(cmd.head);
}

/**
 * Whether `spec` takes the flags `cmd` spells in its source. A command with a flag its adapter
 * does not declare runs as the plain tool instead (a note goes to stderr): `git log --oneline`
 * gives git's own text, as it would in bash, rather than an `arg_error`. Values of declared
 * flags are still checked when the call binds.
 */
export function adapterAccepts(ev: Evaluator, spec: AdapterSpec, cmd: CmdExpr): boolean {
  try {
    bindCall(spec, staticTokens(cmd.args, ev.cwd(), ev.env().get("HOME") ?? "/"), cmd.span);
    return true;
  } catch (e) {
    if (!(e instanceof UnknownAdapterFlag)) return true; // the real binding reports it
    ev.ports.stderr(
      `shoal: ${e.err.msg} (the adapter's flags: \`help ${cmd.head}\`); ran plain ` +
        `${cmd.head} and kept its text output\n`,
    );
    return false;
  }
}

/** The effects one bound call declares (plus the spawn of its binary). */
function callEffects(ev: Evaluator, b: BoundCall, cwd = ev.cwd()): EffectInfo[] {
  const home = ev.env().get("HOME") ?? "/";
  const switches = new Set<string>();
  for (const [name, p] of b.call.params ?? []) if (p.base === "bool") switches.add(name);
  const declared = instantiateEffects(b.effects, b.values, { cwd, home }, switches);
  return [{ kind: "proc_spawn", bin_hash: "", argv0: b.spec.bin }, ...declared];
}

/**
 * The effects an adapted command would have, from its source alone — for plans (Leash), with
 * paths against `cwd` (where the program will be when it runs; default the session's now).
 * Null when the command does not dispatch to an adapter (the caller derives `opaque`).
 * Throws the `arg_error` the call would fail with before spawning.
 */
export function declaredEffects(
  ev: Evaluator,
  cmd: CmdExpr,
  cwd: string = ev.cwd(),
): EffectInfo[] | null {
  const spec = adapterFor(ev, cmd);
  if (spec === undefined) return null;
  const tokens = staticTokens(cmd.args, cwd, ev.env().get("HOME") ?? "/");
  try {
    return callEffects(ev, bindCall(spec, tokens, cmd.span), cwd);
  } catch (e) {
    // It runs as the plain tool (`adapterAccepts`): an unknown external, so opaque.
    if (e instanceof UnknownAdapterFlag) return null;
    throw e;
  }
}

/** Expand glob pieces in place (zero matches: no words and the usual lint). */
function argvOf(ev: Evaluator, pieces: Piece[]): ArgvItem[] {
  const out: ArgvItem[] = [];
  for (const p of pieces) {
    if (p === UNKNOWN) throw new Error("adapter argv has an unknown value at run time");
    if (typeof p === "string" || p instanceof Uint8Array) {
      out.push(p);
      continue;
    }
    const paths = ev.expandGlob(p.glob, p.span);
    if (paths.length === 0) ev.ports.stderr(`shoal: no matches for ${p.glob.pattern}\n`);
    for (const path of paths) {
      const a = at(p.span, () => toArgv(path));
      out.push(p.prefix === undefined || typeof a !== "string" ? a : p.prefix + a);
    }
  }
  return out;
}

/** The spawn's env prefix: the adapter's pinned variables, then the user's (which win). */
function withAdapterEnv(cmd: CmdExpr, call: CallSpec): CmdExpr {
  if (call.env.length === 0) return cmd;
  const pinned: EnvPrefix[] = call.env.map(([name, value]) => ({ name, value, span: cmd.span }));
  return { ...cmd, env: [...pinned, ...cmd.env] };
}

/** The outcome judged by `ok_codes`, with the parsed value when the output fits. */
function finish(ev: Evaluator, call: CallSpec, o: OutcomeV): OutcomeV {
  const ok = o.status !== null && call.okCodes.includes(o.status);
  let parsed: Value | undefined;
  if (ok && call.output.parse !== "none") {
    if (o.stdoutTruncated || o.stdoutRef !== null) {
      ev.ports.stderr(`shoal: \`${call.label}\`: output exceeded the capture cap; kept raw\n`);
    } else {
      try {
        parsed = parseOutput(call.output, o.stdout);
      } catch (e) {
        if (!(e instanceof ParseFailure)) throw e;
        ev.ports.stderr(
          `shoal: \`${call.label}\`: output did not match the ${call.output.parse} parser ` +
            `(${e.message}); kept raw\n`,
        );
      }
    }
  }
  if (ok === o.ok && parsed === undefined) return o;
  return new OutcomeV(
    o.status,
    ok,
    o.signal,
    o.stdout,
    o.stderr,
    o.durNs,
    o.pid,
    o.cmd,
    parsed,
    o.span,
    o.stdoutTruncated,
    o.stderrTruncated,
    o.stdoutRef,
    o.stdoutSize,
  );
}

/** Report a bound call's declared effects to a journaling host. */
function journalEffects(ev: Evaluator, b: BoundCall): void {
  const port = ev.ports.journal;
  if (port === undefined) return;
  // The spawn itself is recorded by the host's process port.
  for (const e of callEffects(ev, b).slice(1)) port.effect(e);
}

/**
 * Run `cmd` (words `args`) through `spec`. `stdin`: bytes to feed (`.feed`), else a `<`
 * redirect or nothing.
 */
export async function runAdapted(
  ev: Evaluator,
  spec: AdapterSpec,
  cmd: CmdExpr,
  args: readonly CmdArg[],
  sc: Scope,
  stdin: Uint8Array | null = null,
): Promise<Value> {
  const tokens = await evalTokens(ev, args, sc);
  const bound = bindCall(spec, tokens, cmd.span);
  const argv = argvOf(ev, bound.argv);
  const opts: Partial<CaptureOptions> = {};
  if (stdin !== null) opts.stdin = stdin;
  for (const r of cmd.redirects) {
    opts.stdin = { path: redirectPath(ev, await wordValue(ev, r.target, sc), r.span) };
  }
  journalEffects(ev, bound);
  const o = await spawnOutcome(ev, argv, opts, withAdapterEnv(cmd, bound.call), sc, cmd.span);
  return finish(ev, bound.call, o);
}

/**
 * `run NAME args…` for an adapted NAME (§9.8 "run it as an external command"): the same
 * binding, spawn and parse as the command form. Undefined when NAME has no adapter.
 */
export function runAdaptedValues(
  ev: Evaluator,
  head: string,
  args: readonly Value[],
  sc: Scope,
  span: Span,
): Promise<Value> | undefined {
  const spec = head.includes("/") ? undefined : ev.adapters().get(head);
  if (spec === undefined) return undefined;
  const cmd: CmdExpr = headCmd(head, span);
  return (async () => {
    const bound = bindCall(spec, valueTokens(args, span), span);
    const argv = argvOf(ev, bound.argv);
    journalEffects(ev, bound);
    const o = await spawnOutcome(ev, argv, {}, withAdapterEnv(cmd, bound.call), sc, span);
    return finish(ev, bound.call, o);
  })();
}

/**
 * An interpreter block `head { src }` of an `interpreter`-class adapter: `bin`, its top-level
 * `invoke`, then the program as one argument (`invoke_payload = "arg"`) or on stdin.
 */
export async function runAdaptedBlock(
  ev: Evaluator,
  spec: AdapterSpec,
  src: string,
  stdin: Uint8Array | null,
  span: Span,
  sc: Scope,
): Promise<OutcomeV> {
  const call = spec.top;
  const argv: ArgvItem[] = [spec.bin, ...(call.invoke ?? [])];
  const opts: Partial<CaptureOptions> = {};
  if (spec.payload === "arg") {
    argv.push(src);
    if (stdin !== null) opts.stdin = stdin;
  } else {
    if (stdin !== null) {
      throw fail(
        "type_error",
        `\`${spec.head}\` reads its program from stdin and cannot also be fed`,
        null,
        span,
      );
    }
    opts.stdin = new TextEncoder().encode(src);
  }
  const o = await spawnOutcome(
    ev,
    argv,
    opts,
    withAdapterEnv(headCmd(spec.head, span), call),
    sc,
    span,
  );
  return finish(ev, call, o);
}
