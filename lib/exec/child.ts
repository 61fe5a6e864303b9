/**
 * Starting a child as the leader of its own process group (so the whole tree can be
 * signalled with kill(-pid)) that can never reach our terminal, with explicit cwd and env,
 * OS errors mapped to {@link ExecError} kinds.
 *
 * Two backends. Measured with bench/spawn.ts on 2 cores at load 4–6 (spawn + wait of
 * `true`, median of 200, each run against a bare `new Deno.Command("true").output()` in
 * the same run, variants interleaved in random order; three runs):
 *
 * - `"posix_spawn"` (default; posix_spawn.ts): glibc posix_spawn through FFI. One program
 *   start, clone(CLONE_VM|CLONE_VFORK) whatever our size. ×1.01–1.07 of the bare spawn
 *   (×0.91–0.96 with 500 MB allocated); `^true` through the evaluator ×0.93–1.02. The child
 *   leads a new process group, and a new session only while we have a controlling terminal
 *   (see childIsolation in posix_spawn.ts: setsid(2) also makes a scheduler autogroup per
 *   child, ×1.01–1.25 here and up to ×1.4 under heavier load).
 * - `"command"` (fallback): `Deno.Command` running `setsid PROGRAM…`. Deno stays on its own
 *   posix_spawn path, but every child is two program starts and a new session: ×1.96–2.08
 *   (×1.79–2.02 with 500 MB). Used when FFI is not granted, libc is not glibc ≥ 2.29, the
 *   kernel lacks pidfds (< 5.3), the program is outside `--allow-run` (FFI would bypass
 *   that list), or `SHOAL_SPAWN_BACKEND=command` is in our environment. Byte arguments,
 *   `&>` and cgroups go through the sh trampoline there.
 *
 * Not used: `detached: true` makes Deno fork() this process (a `pre_exec` hook that calls
 * setsid), holding the event loop while our page tables are copied: longest stall per
 * spawn 25–36 ms at ~150–230 MB of RSS and 32–46 ms at ~600 MB (the bare spawn: 3–6 ms,
 * mostly scheduling noise), and ×2.9–3.6 / ×4.7–5.5 of its latency; it also leaves our
 * pages copy-on-write, slowing whatever runs next. It remains the last resort when the
 * setsid utility is missing too. (Deno 2.9's `Command#output()` ignores `detached`; only
 * `spawn()` honours it.)
 *
 * @module
 */

import type { Cgroup } from "./cgroup.ts";
import { ExecError, osMessageOf } from "./errors.ts";
import { loadLibc } from "./libc.ts";
import { spawnDirect } from "./posix_spawn.ts";
import { badInterpreter, cwdError, isDirectory, type Prepared } from "./prepare.ts";
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

/** A started child, whichever backend started it. */
export interface Child {
  /** Process id, also its process group and session id. */
  readonly pid: number;
  /** Its stdin (only when piped; throws otherwise). */
  readonly stdin: WritableStream<Uint8Array>;
  /** Its stdout (only when piped; throws otherwise). */
  readonly stdout: ReadableStream<Uint8Array>;
  /** Its stderr (only when piped; throws otherwise). */
  readonly stderr: ReadableStream<Uint8Array>;
  /** How it ended, once reaped; rejects (spawn_failed) only if waiting itself failed. */
  readonly exit: Promise<ExitInfo>;
}

/** How children are started; see the module doc. */
export type SpawnBackend = "posix_spawn" | "command";

let forced: SpawnBackend | undefined;

/** `SHOAL_SPAWN_BACKEND` from our environment, read without ever prompting. */
function backendFromEnv(): string | undefined {
  try {
    const q = Deno.permissions.querySync({ name: "env", variable: "SHOAL_SPAWN_BACKEND" });
    return q.state === "granted" ? Deno.env.get("SHOAL_SPAWN_BACKEND") : undefined;
  } catch {
    return undefined;
  }
}

/** The backend new children get. */
export function spawnBackend(): SpawnBackend {
  forced ??= backendFromEnv() === "command" || loadLibc() === null ? "command" : "posix_spawn";
  return forced;
}

/**
 * Choose the backend for later spawns (tests and benchmarks compare both). Returns the one
 * in force: asking for `"posix_spawn"` where it is unavailable keeps `"command"`.
 */
export function setSpawnBackend(backend: SpawnBackend): SpawnBackend {
  forced = backend === "posix_spawn" && loadLibc() === null ? "command" : backend;
  return forced;
}

/** Start the prepared program. Throws {@link ExecError} when the OS refuses. */
export function startChild(prep: Prepared, stdio: StdioModes, cgroup: Cgroup | null): Child {
  const libc = spawnBackend() === "posix_spawn" && runGranted(prep.program) ? loadLibc() : null;
  if (libc === null) return startCommand(prep, stdio, cgroup);
  if (cgroup !== null) throwIfBadInterpreter(prep); // the sh shim would only exit 127
  try {
    return spawnDirect(libc, prep, stdio, cgroup);
  } catch (e) {
    throw spawnError(prep, e);
  }
}

let runAll: Deno.PermissionStatus | null | undefined;

/**
 * FFI bypasses Deno's `--allow-run` list; a program it does not allow goes through
 * Deno.Command, which prompts or refuses as usual. (The status object of `--allow-run`
 * as a whole is live: a later revoke shows in its `state`.)
 */
function runGranted(program: string): boolean {
  try {
    runAll ??= Deno.permissions.querySync({ name: "run" });
    if (runAll.state === "granted") return true;
    return Deno.permissions.querySync({ name: "run", command: program }).state === "granted";
  } catch {
    runAll = null;
    return false;
  }
}

let setsidPath: string | null | undefined;

/** The `setsid` utility (util-linux / busybox), or null. */
function setsidUtility(): string | null {
  if (setsidPath === undefined) {
    setsidPath = ["/usr/bin/setsid", "/bin/setsid"].find(isExecutableFile) ?? null;
  }
  return setsidPath;
}

function throwIfBadInterpreter(prep: Prepared): void {
  const bad = badInterpreter(prep.program, prep.displayArgv[0]);
  if (bad !== null) throw bad;
}

/**
 * The fallback: `Deno.Command` running `setsid PROGRAM…`. setsid(2) runs in the child,
 * which is not a group leader, so it does not fork and the pid we get is the program's.
 */
function startCommand(prep: Prepared, stdio: StdioModes, cgroup: Cgroup | null): Child {
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
  if (program !== prep.program) throwIfBadInterpreter(prep); // a shim would only exit 127
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(program, {
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
  return {
    pid: child.pid,
    get stdin() {
      return child.stdin;
    },
    get stdout() {
      return child.stdout;
    },
    get stderr() {
      return child.stderr;
    },
    exit: waitCommand(child),
  };
}

/** The {@link ExecError} for a failed start of `prep` (a missing cwd, `#!` interpreter…). */
export function spawnError(prep: Prepared, e: unknown): ExecError {
  if (e instanceof ExecError) return e;
  const os = osMessageOf(e);
  const name = prep.displayArgv[0];
  if (!isDirectory(prep.cwd)) return cwdError(prep.cwd);
  if (e instanceof Deno.errors.NotFound) {
    // The file was found by `which`, so ENOENT here is a missing interpreter (`#!`) or a race.
    return badInterpreter(prep.program, name) ??
      new ExecError("not_found", `${name}: ${os}`, {
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
 * How a `Deno.Command` child ended. Deno rejects `status` for signals it has no name for
 * (real-time signals: "Invalid signal: 40"); that case is decoded from the message.
 */
async function waitCommand(child: Deno.ChildProcess): Promise<ExitInfo> {
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
