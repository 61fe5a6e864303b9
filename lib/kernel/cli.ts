/**
 * `shoal kernel [--socket PATH] [--session NAME] [--state-dir DIR] [--ephemeral] [--policy FILE]
 * [--token-store FILE] [--require-token] …`: resolve the
 * socket (protocol §2.1), start the kernel, print `shoal-kernel: ready <path>` on stderr once
 * it accepts connections, and shut down cleanly on SIGINT/SIGTERM (work cancelled, children
 * ended, socket removed). Runnable directly: `deno run -A lib/kernel/cli.ts …`.
 *
 * @module
 */

import { PolicyLoadError } from "../leash/mod.ts";
import { configuredStateDir, loadConfig, type ShoalConfig } from "../config/mod.ts";
import { defaultStateDir, socketPath, validSocketSession } from "../client/discovery.ts";
import { closeInheritedFds } from "../exec/mod.ts";
import { ListenError } from "./listen.ts";
import { startKernel, StateDirError } from "./server.ts";
import { parseQuota, type QuotaLimits } from "./quotas.ts";

/** Usage text. */
export const KERNEL_USAGE =
  "usage: shoal kernel [--socket PATH] [--session NAME] [--state-dir DIR] [--ephemeral] " +
  "[--no-journal] [--no-lane] [--session-memory MIB] [--policy FILE] [--token-store FILE] [--require-token] " +
  "[--quota NAME=N]…";

/** Parsed command line. */
export interface KernelArgs {
  socket: string | null;
  session: string;
  stateDir: string | null;
  ephemeral: boolean;
  /** `--no-journal`: keep no journal at all (benchmarks isolate its cost). */
  noJournal: boolean;
  /** `--no-lane`: every exec through the kernel (no session exec lanes). */
  noLane: boolean;
  /** `--policy FILE`: the Leash policy (missing or malformed: the kernel does not start). */
  policy: string | null;
  /** `--token-store FILE`: overrides `$SHOAL_TOKEN_STORE` and `<state>/tokens.json`. */
  tokenStore: string | null;
  /** `--require-token`: refuse attachments without a bearer token (D-15). */
  requireToken: boolean;
  /** `--session-memory MIB`: heap limit of each session process (null: the default). */
  sessionMemoryMb: number | null;
  /** `--quota NAME=N` (repeatable): per-principal quotas (D-31). */
  quotas: Partial<QuotaLimits>;
  help: boolean;
}

/** Parse arguments; throws Error with a usage message on bad input. */
export function parseKernelArgs(args: string[]): KernelArgs {
  const out: KernelArgs = {
    socket: null,
    session: "default",
    stateDir: null,
    ephemeral: false,
    noJournal: false,
    noLane: false,
    policy: null,
    tokenStore: null,
    requireToken: false,
    sessionMemoryMb: null,
    quotas: {},
    help: false,
  };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const [flag, inline] = a.startsWith("--") && a.includes("=")
      ? [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)]
      : [a, undefined];
    const value = () => {
      const v = inline ?? args[++i];
      if (v === undefined || v === "") throw new Error(`${flag} needs a value\n${KERNEL_USAGE}`);
      return v;
    };
    switch (flag) {
      case "--socket":
        out.socket = value();
        break;
      case "--session":
        out.session = value();
        if (!validSocketSession(out.session)) {
          throw new Error(`invalid session name ${JSON.stringify(out.session)}\n${KERNEL_USAGE}`);
        }
        break;
      case "--state-dir":
        out.stateDir = value();
        break;
      case "--ephemeral":
        out.ephemeral = true;
        break;
      case "--no-journal":
        out.noJournal = true;
        break;
      case "--no-lane":
        out.noLane = true;
        break;
      case "--policy":
        out.policy = value();
        break;
      case "--token-store":
        out.tokenStore = value();
        break;
      case "--require-token":
        out.requireToken = true;
        break;
      case "--session-memory": {
        const v = value();
        const n = Number(v);
        if (!/^[0-9]+$/.test(v) || n < 64 || n > 1_048_576) {
          throw new Error(
            `--session-memory takes a heap limit in MiB from 64 to 1048576 (got ${v})\n` +
              KERNEL_USAGE,
          );
        }
        out.sessionMemoryMb = n;
        break;
      }
      case "--quota": {
        try {
          const [name, n] = parseQuota(value());
          out.quotas[name] = n;
        } catch (e) {
          throw new Error(`${(e as Error).message}\n${KERNEL_USAGE}`);
        }
        break;
      }
      case "-h":
      case "--help":
        out.help = true;
        break;
      default:
        throw new Error(`unknown argument ${JSON.stringify(a)}\n${KERNEL_USAGE}`);
    }
  }
  return out;
}

export { defaultStateDir };

/** The resolved configuration as the kernel reads it (warnings go to stderr). */
function kernelConfig(): ShoalConfig {
  const { config, warnings } = loadConfig({ cwd: Deno.cwd(), env: Deno.env.toObject() });
  for (const w of warnings) console.error(`shoal-kernel: warning: ${w}`);
  return config;
}

/** Run the kernel until a signal; returns the process exit code. */
export async function kernelMain(args: string[]): Promise<number> {
  let a: KernelArgs;
  try {
    a = parseKernelArgs(args);
  } catch (e) {
    console.error(`shoal-kernel: ${(e as Error).message}`);
    return 2;
  }
  if (a.help) {
    console.log(KERNEL_USAGE);
    return 0;
  }
  closeInheritedFds();
  // shoal.toml (§9): `journal.*` give the defaults of --state-dir / --no-journal, and
  // `leash.policy` the default of --policy (a missing or malformed file is fatal either way).
  let cfg;
  try {
    cfg = kernelConfig();
  } catch (e) {
    console.error(`shoal-kernel: ${(e as Error).message}`);
    return 2;
  }
  const path = socketPath({ explicit: a.socket, session: a.session });
  let kernel;
  try {
    kernel = await startKernel({
      socket: path,
      session: a.session,
      stateDir: a.ephemeral ? null : (a.stateDir ?? configuredStateDir(cfg)),
      ephemeral: a.ephemeral,
      policy: a.policy ?? cfg.leash.policy,
      tokenStore: a.tokenStore,
      requireToken: a.requireToken,
      ...(a.noJournal || !cfg.journal.enabled ? { journal: false } : {}),
      ...(a.noLane ? { lane: false } : {}),
      ...(a.sessionMemoryMb !== null ? { sessionMemoryMb: a.sessionMemoryMb } : {}),
      quotas: a.quotas,
    });
  } catch (e) {
    // One line, no stack trace: what failed and what to do (issue 19).
    const msg =
      e instanceof ListenError || e instanceof StateDirError || e instanceof PolicyLoadError
        ? e.message
        : `cannot start: ${(e as Error)?.message ?? e}`;
    console.error(`shoal-kernel: ${msg.replaceAll("\n", " ")}`);
    return 1;
  }
  const stop = () => void kernel.close();
  const signals: Deno.Signal[] = ["SIGINT", "SIGTERM"];
  for (const s of signals) Deno.addSignalListener(s, stop);
  console.error(`shoal-kernel: ready ${kernel.path}`);
  await kernel.finished;
  await kernel.close();
  for (const s of signals) Deno.removeSignalListener(s, stop);
  return 0;
}

if (import.meta.main) Deno.exit(await kernelMain(Deno.args));
