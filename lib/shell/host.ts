/**
 * The `shoal` command line as a host of the evaluator: an evaluator seeded from the resolved
 * configuration (environment, aliases, the `config` snapshot), and running a piece of source
 * with the exit statuses of subsystems §10 (0 ok; an uncaught `cmd_failed` → the child's status
 * 1–255; another error → 1; a parse error → 2; `exit N` → N).
 *
 * @module
 */

import { ParseError } from "../syntax/errors.ts";
import { OutcomeV, type Value } from "../value/types.ts";
import { Evaluator, toErrorValue } from "../eval/mod.ts";
import { type CaptureOptions, type CaptureResult, spawnCapture } from "../exec/mod.ts";
import { configRecord, configuredStateDir, type ShoalConfig } from "../config/mod.ts";
import { formatDiagnostic } from "./diagnostic.ts";
import { wasStreamed } from "./streamed.ts";
import { isStructured } from "./present.ts";
import { writeFd } from "./foreground_pipe.ts";

const enc = new TextEncoder();

/** What a CLI evaluator needs from its host. */
export interface HostOptions {
  config: ShoalConfig;
  repl: boolean;
  cwd: string;
  /** The process environment (config `env` entries are laid over it). */
  env: Record<string, string>;
  /** Prints a value that is not the last one of a submission. */
  sink: (v: Value) => void | Promise<void>;
  /** Statement-position externals (a PTY at a terminal, pass-through pipes otherwise). */
  foreground?: (opts: CaptureOptions) => Promise<CaptureResult>;
  /** Captured children (default: spawnCapture; the REPL tracks their groups for SIGHUP). */
  capture?: (opts: CaptureOptions) => Promise<CaptureResult>;
  /** Cancel flag (element 0 ≠ 0 = stop), set by Ctrl-C in the REPL. */
  cancel?: Int32Array;
  /** Start-up warnings (a bad alias). */
  warn: (msg: string) => void;
}

/** An evaluator for the CLI, seeded from the configuration. */
export async function hostEvaluator(o: HostOptions): Promise<Evaluator> {
  const ev = new Evaluator({
    // The adapter catalog (issue 18): `git status` and friends as tables.
    adapters: true,
    repl: o.repl,
    cwd: o.cwd,
    env: { ...o.env, ...o.config.env },
    config: configRecord(o.config),
    // `rm`'s trash and other durable state live under the configured state directory.
    stateDir: configuredStateDir(o.config),
    cancel: o.cancel,
    ports: {
      sink: o.sink,
      process: {
        capture: o.capture ?? spawnCapture,
        ...(o.foreground ? { foreground: o.foreground } : {}),
      },
    },
  });
  // Aliases are Shoal source (`alias gs = git status`), parsed like any other line.
  for (const [name, body] of Object.entries(o.config.aliases)) {
    try {
      await ev.evalSource(`alias ${name} = ${body}`);
    } catch (e) {
      const err = e instanceof ParseError ? { msg: e.msg } : toErrorValue(e);
      o.warn(`aliases.${name}: ${err.msg}`);
    }
  }
  if (o.repl) {
    // Seeding aliases must not leave transcript entries behind.
    ev.root.declare("it", null);
  }
  return ev;
}

/** The exit status §10 gives an error escaping a program. */
export function exitStatusOf(e: unknown): number {
  if (e instanceof ParseError) return 2;
  const err = toErrorValue(e);
  if (err.code === "cmd_failed" && err.status !== null && err.status >= 1 && err.status <= 255) {
    return err.status;
  }
  return 1;
}

/** Print an error as a diagnostic on stderr. */
export function reportError(e: unknown, src: string, file: string, color: boolean): void {
  let text: string;
  if (e instanceof ParseError) {
    text = formatDiagnostic("parse", e.msg, e.hint, e.span, src, file, color);
  } else {
    const err = toErrorValue(e);
    text = formatDiagnostic(err.code, err.msg, err.hint, err.span, src, file, color);
    if (err.code === "internal" && e instanceof Error && e.stack) text += e.stack + "\n";
  }
  writeFd(Deno.stderr, enc.encode(text));
}

/**
 * Print a value the way the CLI does: a command's bytes as they are (unless they were shown
 * as they were produced), a structured result (`ls`) and any other value through `show`;
 * `final` false (a statement's value, not the submission's) prints strings bare.
 */
export function printValue(v: Value, show: (v: Value) => string, final = true): void {
  if (v === null) return;
  if (v instanceof OutcomeV && !isStructured(v)) {
    if (!wasStreamed(v.stdout)) writeFd(Deno.stdout, v.stdout);
    return;
  }
  writeFd(Deno.stdout, enc.encode((!final && typeof v === "string" ? v : show(v)) + "\n"));
}

/**
 * Which statement values (not a submission's last) are printed, by `render.echo`: `all` of
 * them (the REPL's default), only `commands`' results, or only command output (`quiet`, the
 * default for scripts and `-c`: what `echo` and external programs print).
 */
export function echoes(mode: "quiet" | "commands" | "all"): (v: Value) => boolean {
  if (mode === "all") return () => true;
  if (mode === "commands") return (v) => v instanceof OutcomeV;
  return (v) => v instanceof OutcomeV && !isStructured(v);
}

/** Evaluate `src`, print the final value, return the exit status. */
export async function runSource(
  ev: Evaluator,
  src: string,
  file: string,
  show: (v: Value) => string,
  color = false,
): Promise<number> {
  try {
    const v = await ev.evalSource(src);
    if (ev.pendingExit !== null) return ev.pendingExit;
    printValue(v, show);
    return 0;
  } catch (e) {
    reportError(e, src, file, color);
    return exitStatusOf(e);
  }
}
