/**
 * Kernel autostart (protocol §15.1): when nothing answers on the socket, start a kernel from the
 * same distribution — the sibling `shoal` binary when compiled, the same Deno executable running
 * `main.ts kernel` in development — detached in its own session, and wait until it accepts
 * connections. Racing starts are safe: the kernel's start-up lock makes a second kernel refuse,
 * and both starters then connect to the winner.
 */

import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { socketAnswers } from "./discovery.ts";
import { trustedSocket } from "./socket_trust.ts";

/** How often and how long to poll for the new kernel (Deno start-up dominates). */
const POLL_MS = 50;
/** The readiness window. */
export const AUTOSTART_WINDOW_MS = 15_000;

/** True when something accepts connections on `path`. */
export const kernelAnswers: (path: string) => Promise<boolean> = socketAnswers;

/** The command that starts a kernel on `socket` (and `stateDir`) from this distribution. */
export function kernelCommand(
  socket: string,
  stateDir: string | null = null,
): { cmd: string; args: string[] } {
  const state = stateDir === null ? [] : ["--state-dir", stateDir];
  const exe = Deno.execPath();
  const name = basename(exe).replace(/\.exe$/, "");
  if (name === "deno") {
    // Development: the entry points live next to each other in the checkout.
    const main = fileURLToPath(new URL("../../main.ts", import.meta.url));
    const config = fileURLToPath(new URL("../../deno.json", import.meta.url));
    return {
      cmd: exe,
      args: [
        "run",
        "-A",
        "--unstable-worker-options",
        "--config",
        config,
        main,
        "kernel",
        "--socket",
        socket,
        ...state,
      ],
    };
  }
  // Compiled: `shoal mcp` is the shoal binary itself; `shoal-mcp` has `shoal` beside it.
  const cmd = name === "shoal" ? exe : join(dirname(exe), "shoal");
  return { cmd, args: ["kernel", "--socket", socket, ...state] };
}

/** True when a socket is there and ours; false when none is; throws `UntrustedSocket`. */
function socketTrusted(socket: string): boolean {
  try {
    trustedSocket(socket);
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}

/** The environment an autostarted kernel gets: the facade's, without its secrets. */
export function kernelEnv(env: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (k !== "SHOAL_TOKEN" && !k.startsWith("SHOAL_APPROVER")) out[k] = v;
  }
  return out;
}

/** What `ensureKernel` did. */
export interface EnsureResult {
  /** True when this call started a kernel process. */
  started: boolean;
  /** Its pid (when started). */
  pid?: number;
}

/**
 * Make sure a kernel answers on `socket`. Starts one when allowed; throws an Error whose message
 * says what to do when none can be reached.
 */
export async function ensureKernel(
  socket: string,
  opts: {
    autostart: boolean;
    log: (msg: string) => void;
    windowMs?: number;
    stateDir?: string | null;
  },
): Promise<EnsureResult> {
  // A socket path that is not ours alone is refused here, before a kernel is started for it
  // (that kernel would refuse it too, out of sight) or anything is sent to whoever answers.
  if (socketTrusted(socket) && await kernelAnswers(socket)) return { started: false };
  const { cmd, args } = kernelCommand(socket, opts.stateDir ?? null);
  const manual = `${cmd} ${args.join(" ")}`;
  if (!opts.autostart) {
    throw new Error(
      `no kernel answers on ${socket} and SHOAL_NO_AUTOSTART is set; start one with: ${manual}`,
    );
  }
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(cmd, {
      args,
      // The kernel (and so every session) never inherits the facade's bearer or approver.
      clearEnv: true,
      env: kernelEnv(Deno.env.toObject()),
      stdin: "null",
      stdout: "null",
      stderr: "null",
      detached: true, // its own session: the host's signals to our group do not reach it
    }).spawn();
  } catch (e) {
    throw new Error(`cannot start a kernel (${manual}): ${(e as Error).message}`);
  }
  child.unref();
  let exited: Deno.CommandStatus | null = null;
  child.status.then((s) => (exited = s), () => {});
  opts.log(`started kernel pid ${child.pid} on ${socket}`);
  const deadline = Date.now() + (opts.windowMs ?? AUTOSTART_WINDOW_MS);
  while (Date.now() < deadline) {
    if (await kernelAnswers(socket)) return { started: true, pid: child.pid };
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  const why = exited === null
    ? "it did not start listening"
    : `it exited with status ${(exited as Deno.CommandStatus).code}`;
  throw new Error(
    `started a kernel for ${socket} but ${why} within ${
      opts.windowMs ?? AUTOSTART_WINDOW_MS
    } ms; run it by hand to see why: ${manual}`,
  );
}
