/**
 * `shoal -c SRC`, `shoal FILE` and source on stdin (subsystems §10): configuration, aliases and
 * env are loaded; no history and no init files. Statement-position commands run in the
 * foreground: a PTY when stdout is a terminal, pass-through pipes otherwise.
 *
 * @module
 */

import { resolve } from "node:path";
import { ListV, PathV } from "../value/types.ts";
import { ConfigError, loadConfig, type ShoalConfig } from "../config/mod.ts";
import { echoes, hostEvaluator, printValue, runSource } from "./host.ts";
import { present, presentOptions } from "./present.ts";
import { foregroundFor } from "./foreground.ts";

/** Load the configuration for a CLI host, printing warnings; null (and a message) on error. */
export function cliConfig(cwd: string, env: Record<string, string>): ShoalConfig | null {
  try {
    const { config, warnings } = loadConfig({ cwd, env });
    for (const w of warnings) console.error(`shoal: warning: ${w}`);
    return config;
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(`shoal: error[${e.code}]: ${e.message}`);
      return null;
    }
    throw e;
  }
}

/** Run one non-interactive program; returns the exit status. */
export async function runBatch(
  src: { text: string; file: string; args: string[]; script?: string },
): Promise<number> {
  const cwd = Deno.cwd();
  const env = Deno.env.toObject();
  const config = cliConfig(cwd, env);
  if (config === null) return 2;
  const tty = Deno.stdout.isTerminal();
  const opts = { ...presentOptions(config.render, tty), cwd };
  const show = (v: Parameters<typeof present>[0]) => present(v, opts);
  const echo = echoes(config.render.echo ?? "quiet");
  // Ctrl-C / kill of a script cancels what runs (the children's groups get the kill ladder)
  // instead of leaving captured children behind; the exit status says which signal.
  const cancel = new Int32Array(new SharedArrayBuffer(4));
  let signalled: number | null = null;
  const onSignal: [Deno.Signal, number][] = [["SIGINT", 130], ["SIGTERM", 143], ["SIGHUP", 129]];
  const listeners = onSignal.map(([sig, status]) => {
    const h = () => {
      signalled ??= status;
      Atomics.store(cancel, 0, 1);
    };
    try {
      Deno.addSignalListener(sig, h);
    } catch { /* not here */ }
    return [sig, h] as const;
  });
  const ev = await hostEvaluator({
    cancel,
    config,
    repl: false,
    cwd,
    env,
    sink: (v) => {
      if (echo(v)) printValue(v, show, false);
    },
    foreground: foregroundFor(tty),
    warn: (m) => console.error(`shoal: warning: ${m}`),
  });
  ev.root.declare("args", new ListV(src.args));
  if (src.script !== undefined) ev.root.declare("script", new PathV(resolve(src.script)));
  const status = await runSource(ev, src.text, src.file, show, tty && config.render.color);
  for (const [sig, h] of listeners) {
    try {
      Deno.removeSignalListener(sig, h);
    } catch { /* never added */ }
  }
  return signalled ?? status;
}
