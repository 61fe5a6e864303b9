/**
 * `shoal kernel [--socket PATH] [--session NAME] [--state-dir DIR] [--ephemeral]`: resolve the
 * socket (protocol §2.1), start the kernel, print `shoal-kernel: ready <path>` on stderr once
 * it accepts connections, and shut down cleanly on SIGINT/SIGTERM (work cancelled, children
 * ended, socket removed). Runnable directly: `deno run -A lib/kernel/cli.ts …`.
 *
 * @module
 */

import { join } from "node:path";
import { socketPath, validSocketSession } from "../client/discovery.ts";
import { closeInheritedFds } from "../exec/mod.ts";
import { ListenError } from "./listen.ts";
import { startKernel } from "./server.ts";

/** Usage text. */
export const KERNEL_USAGE =
  "usage: shoal kernel [--socket PATH] [--session NAME] [--state-dir DIR] [--ephemeral] " +
  "[--no-journal] [--session-memory MIB]";

/** Parsed command line. */
export interface KernelArgs {
  socket: string | null;
  session: string;
  stateDir: string | null;
  ephemeral: boolean;
  /** `--no-journal`: keep no journal at all (benchmarks isolate its cost). */
  noJournal: boolean;
  /** `--session-memory MIB`: heap limit of each session process (null: the default). */
  sessionMemoryMb: number | null;
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
    sessionMemoryMb: null,
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

/** The default state directory (protocol §2.3). */
export function defaultStateDir(): string {
  const xdg = Deno.env.get("XDG_STATE_HOME");
  if (xdg) return join(xdg, "shoal");
  const home = Deno.env.get("HOME");
  return home ? join(home, ".local", "state", "shoal") : join(Deno.cwd(), "shoal");
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
  const path = socketPath({ explicit: a.socket, session: a.session });
  let kernel;
  try {
    kernel = await startKernel({
      socket: path,
      session: a.session,
      stateDir: a.ephemeral ? null : (a.stateDir ?? defaultStateDir()),
      ephemeral: a.ephemeral,
      ...(a.noJournal ? { journal: false } : {}),
      ...(a.sessionMemoryMb !== null ? { sessionMemoryMb: a.sessionMemoryMb } : {}),
    });
  } catch (e) {
    if (e instanceof ListenError) {
      console.error(`shoal-kernel: ${e.message}`);
      return 1;
    }
    throw e;
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
