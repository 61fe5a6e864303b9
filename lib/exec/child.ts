/**
 * Starting the `Deno.Command` child (own session and process group, explicit cwd and env)
 * with OS errors mapped to {@link ExecError} kinds, and decoding how it ended.
 *
 * @module
 */

import type { Cgroup } from "./cgroup.ts";
import { ExecError, osMessageOf } from "./errors.ts";
import { cwdError, isDirectory, type Prepared } from "./prepare.ts";
import { signalName, signalNumber } from "./signals.ts";
import { trampoline } from "./trampoline.ts";
import type { ExitInfo } from "./types.ts";

/** Stdio modes for {@link startChild}. */
export interface StdioModes {
  stdin: "null" | "piped";
  stdout: "null" | "piped";
  /** `"merged"`: fd 2 is the same pipe as fd 1 (ordering between the two is kept). */
  stderr: "null" | "piped" | "merged";
}

/** Start the prepared program. Throws {@link ExecError} when the OS refuses. */
export function startChild(
  prep: Prepared,
  stdio: StdioModes,
  cgroup: Cgroup | null,
): Deno.ChildProcess {
  let program = prep.program;
  let args = prep.args as string[];
  const merged = stdio.stderr === "merged";
  if (prep.needsByteArgs || cgroup !== null || merged) {
    ({ program, args } = trampoline(prep.program, prep.args, {
      cgroupProcs: cgroup?.procsFile ?? null,
      mergeStderr: merged,
    }));
  }
  try {
    return new Deno.Command(program, {
      args,
      cwd: prep.cwd,
      env: prep.env,
      clearEnv: true,
      // setsid: the child leads a new session and process group, so the whole tree can
      // be signalled with kill(-pid) and it never touches our terminal.
      detached: true,
      stdin: stdio.stdin,
      stdout: stdio.stdout,
      stderr: stdio.stderr === "merged" ? "null" : stdio.stderr,
    }).spawn();
  } catch (e) {
    throw spawnError(prep, e);
  }
}

function spawnError(prep: Prepared, e: unknown): ExecError {
  const os = osMessageOf(e);
  const name = prep.displayArgv[0];
  if (!isDirectory(prep.cwd)) return cwdError(prep.cwd);
  if (e instanceof Deno.errors.NotFound) {
    // The file was found by `which`, so ENOENT here is a missing interpreter (`#!`) or a race.
    return new ExecError("not_found", `${name}: ${os}`, {
      path: prep.program,
      osMessage: os,
      hint: "if it is a script, check the interpreter on its #! line",
      cause: e,
    });
  }
  if (e instanceof Deno.errors.PermissionDenied) {
    return new ExecError("permission_denied", `${name}: ${os}`, {
      path: prep.program,
      osMessage: os,
      cause: e,
    });
  }
  if (e instanceof Deno.errors.NotCapable) {
    return new ExecError("spawn_failed", `${name}: ${os}`, {
      path: prep.program,
      osMessage: os,
      hint: "this host was started without --allow-run for that program",
      cause: e,
    });
  }
  return new ExecError("spawn_failed", `cannot start ${name}: ${os}`, {
    path: prep.program,
    osMessage: os,
    cause: e,
  });
}

/**
 * How the child ended. Deno rejects `status` for signals it has no name for (real-time
 * signals: "Invalid signal: 40"); that case is decoded from the message.
 */
export async function waitExit(child: Deno.ChildProcess): Promise<ExitInfo> {
  try {
    const s = await child.status;
    if (s.signal !== null) {
      const n = signalNumber(s.signal);
      return { status: null, signal: n === null ? s.signal : signalName(n) };
    }
    return { status: s.code, signal: null };
  } catch (e) {
    const m = /Invalid signal: (\d+)/.exec(e instanceof Error ? e.message : String(e));
    if (m) return { status: null, signal: signalName(Number(m[1])) };
    throw new ExecError("spawn_failed", `waiting for pid ${child.pid} failed: ${osMessageOf(e)}`, {
      cause: e,
    });
  }
}
