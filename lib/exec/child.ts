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
import { isExecutableFile } from "./which.ts";
import type { ExitInfo } from "./types.ts";

/** Stdio modes for {@link startChild}. */
export interface StdioModes {
  stdin: "null" | "piped";
  stdout: "null" | "piped";
  /** `"merged"`: fd 2 is the same pipe as fd 1 (ordering between the two is kept). */
  stderr: "null" | "piped" | "merged";
}

let setsidPath: string | null | undefined;

/**
 * The `setsid` utility (util-linux / busybox), or null.
 *
 * Every child must lead its own session and process group, so the whole tree can be
 * signalled with kill(-pid) and never touches our terminal. `detached: true` does that with
 * a `pre_exec` hook, which forces a real fork() of this (large) process: ~20 ms of blocked
 * event loop per spawn here, growing with our memory. Spawning `setsid PROGRAM…` instead
 * keeps Deno on the cheap posix_spawn path; setsid(2) then runs in the child, which is not
 * a group leader, so it does not fork and the pid we got is the program's.
 */
function setsidUtility(): string | null {
  if (setsidPath === undefined) {
    setsidPath = ["/usr/bin/setsid", "/bin/setsid"].find(isExecutableFile) ?? null;
  }
  return setsidPath;
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
  const setsid = setsidUtility();
  if (setsid !== null) {
    // `program` is absolute, so setsid never mistakes it for an option.
    args = [program, ...args];
    program = setsid;
  }
  try {
    return new Deno.Command(program, {
      args,
      cwd: prep.cwd,
      env: prep.env,
      clearEnv: true,
      detached: setsid === null,
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
