/**
 * The direct spawn path: glibc `posix_spawn` through FFI, the child leading a new process
 * group — and a new session too while we have a controlling terminal (see
 * {@link childIsolation}).
 *
 * glibc spawns with clone(CLONE_VM | CLONE_VFORK), so the cost does not grow with our
 * memory (unlike `detached: true`, which makes Deno fork()), and the group/session is made
 * in the child before exec — one program start per child, where `setsid PROGRAM` needs
 * two. Errors from chdir or execve come back synchronously as an errno.
 *
 * The child gets exactly fds 0–2 (dup2 of pipe ends or /dev/null, then closefrom(3)),
 * argv as bytes (no shim needed for non-UTF-8 arguments), the given env only, an empty
 * signal mask and default dispositions. We keep the other pipe ends non-blocking and read
 * them synchronously when the epoll reactor says they are ready; the exit is seen on a
 * pidfd and reaped with waitpid(WNOHANG). Deno's own child reaper only waits for its own
 * pids, so it never takes our status.
 *
 * @module
 */

import type { Cgroup } from "./cgroup.ts";
import type { Child, StdioModes } from "./child.ts";
import { ExecError } from "./errors.ts";
import { type FdReactor, reactorFor } from "./fd_reactor.ts";
import { fdReadable, fdWritable } from "./fd_stream.ts";
import {
  cString,
  EACCES,
  EINTR,
  ENOENT,
  ENOEXEC,
  EPERM,
  type LibcHandle,
  O_CLOEXEC,
  O_NONBLOCK,
  O_RDWR,
  SYS_PIDFD_OPEN,
} from "./libc.ts";
import type { Prepared } from "./prepare.ts";
import { type SigchldWaiter, sigchldWaiter } from "./sigchld.ts";
import { signalName } from "./signals.ts";
import { trampoline } from "./trampoline.ts";
import type { ExitInfo } from "./types.ts";

const O_RDONLY = 0;
const O_WRONLY = 1;
const F_SETFL = 4;
const F_DUPFD_CLOEXEC = 1030;
const WNOHANG = 1;
const WUNTRACED = 2;
const WCONTINUED = 8;
/** sizeof(posix_spawn_file_actions_t) is 80 on 64-bit glibc. */
const FILE_ACTIONS_SIZE = 128;
/** What execvp does with a file the kernel cannot execute (no `#!`): run it with sh. */
const SHELL = "/bin/sh";

/** What a child leads besides its process group; see {@link childIsolation}. */
export type Isolation = "session" | "group";

let isolation: Isolation | undefined;

/** True unless /proc says we have no controlling terminal (unreadable ⇒ assume we do). */
function hasControllingTerminal(): boolean {
  try {
    if (Deno.permissions.querySync({ name: "read", path: "/proc/self/stat" }).state !== "granted") {
      return true;
    }
    const stat = Deno.readTextFileSync("/proc/self/stat");
    // "pid (comm) state ppid pgrp session tty_nr …"
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[4]) !== 0;
  } catch {
    return true;
  }
}

/**
 * `"session"` while we have a controlling terminal (the REPL): the child must never be able
 * to open it, read from it and be stopped by SIGTTIN. Without one (the kernel daemon runs
 * in its own session, scripts and agents usually do too) a new process group gives the
 * same isolation and the same group kill, and spares a setsid(2), which also creates a
 * scheduler autogroup per child. Spawn + wait of `true` against a bare Deno.Command on 2
 * cores: raw posix_spawn at load ~10, ×0.88–1.00 with a new group and ×1.10–1.43 with a
 * new session; spawnCapture at load 4–6, ×1.01–1.07 and ×1.01–1.25.
 */
export function childIsolation(): Isolation {
  return isolation ??= hasControllingTerminal() ? "session" : "group";
}

/** Override {@link childIsolation} (`"auto"`: decide again); tests and benchmarks only. */
export function setChildIsolation(mode: Isolation | "auto"): Isolation {
  isolation = mode === "auto" ? undefined : mode;
  return childIsolation();
}

const utf8 = new TextEncoder();
const DEV_NULL = cString("/dev/null");

/** A NULL-terminated `char *[]` of `items`, with the one buffer holding their bytes. */
function cStringArray(
  items: readonly (string | Uint8Array)[],
  prefix?: readonly string[],
): { ptrs: BigUint64Array; bytes: Uint8Array } {
  let size = 0;
  for (const s of items) size += (typeof s === "string" ? s.length * 3 : s.length) + 1;
  for (const s of prefix ?? []) size += s.length * 3 + 1;
  const bytes = new Uint8Array(new ArrayBuffer(size));
  const count = items.length + (prefix?.length ?? 0);
  const offsets = new Array<number>(count);
  let off = 0;
  let i = 0;
  const put = (s: string | Uint8Array) => {
    offsets[i++] = off;
    if (typeof s === "string") off += utf8.encodeInto(s, bytes.subarray(off)).written;
    else {
      bytes.set(s, off);
      off += s.length;
    }
    bytes[off++] = 0;
  };
  for (const s of prefix ?? []) put(s);
  for (const s of items) put(s);
  const base = BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(bytes)));
  const ptrs = new BigUint64Array(count + 1); // last entry stays 0 (NULL)
  for (let j = 0; j < count; j++) ptrs[j] = base + BigInt(offsets[j]);
  return { ptrs, bytes };
}

type CArray = { ptrs: BigUint64Array; bytes: Uint8Array };

/**
 * The environment last made into C strings, and what it became: a session spawns with the same
 * environment almost every time, and comparing it (a property read each) costs a fraction of
 * encoding 40-odd strings again. The arrays are never written after they are built.
 */
let lastEnv: { env: Record<string, string>; size: number; c: CArray } | null = null;

/** `KEY=value` C strings of `env`. */
function envArray(env: Record<string, string>): CArray {
  if (lastEnv !== null && sameEnv(lastEnv.env, lastEnv.size, env)) return lastEnv.c;
  const items: string[] = [];
  for (const k in env) items.push(k + "=" + env[k]);
  const c = cStringArray(items);
  lastEnv = { env: { ...env }, size: items.length, c };
  return c;
}

function sameEnv(prev: Record<string, string>, size: number, env: Record<string, string>) {
  let n = 0;
  for (const k in env) {
    if (prev[k] !== env[k]) return false; // values are strings: an inherited member never equals one
    n++;
  }
  return n === size;
}

/** The Deno error class Deno.Command would throw for this errno (see child.ts spawnError). */
function errnoError(c: LibcHandle, errno: number): Error {
  const msg = c.osMessage(errno);
  if (errno === ENOENT) return new Deno.errors.NotFound(msg);
  if (errno === EACCES || errno === EPERM) return new Deno.errors.PermissionDenied(msg);
  return new Error(msg);
}

/** Decode the wait status of an exited or killed child. */
export function exitInfo(status: number): ExitInfo {
  const sig = status & 0x7f;
  return sig === 0
    ? { status: (status >> 8) & 0xff, signal: null }
    : { status: null, signal: signalName(sig) };
}

function notPiped(which: string): never {
  throw new TypeError(`${which} is not piped`);
}

/**
 * Start `prep` as the leader of a new process group (and session, see
 * {@link childIsolation}). Throws the Deno error class matching the errno (`NotFound`,
 * `PermissionDenied`, `Error`) when nothing could be started.
 */
export function spawnDirect(
  c: LibcHandle,
  prep: Prepared,
  stdio: StdioModes,
  cgroup: Cgroup | null,
): Child {
  const L = c.fn;
  const reactor = reactorFor(c);
  const fds: number[] = []; // every fd we opened; closed on failure
  const pipe = (): [number, number] => {
    const pair = new Int32Array(2);
    if (L.pipe2(pair, O_CLOEXEC) !== 0) throw errnoError(c, c.errno());
    fds.push(pair[0], pair[1]);
    return [aboveStdio(c, pair[0], fds), aboveStdio(c, pair[1], fds)];
  };
  const closeAll = () => {
    for (const fd of fds) L.close(fd);
    fds.length = 0;
  };

  let parent: { stdin: number; stdout: number; stderr: number };
  let pid: number;
  try {
    const stdin = stdio.stdin === "piped" ? pipe() : null;
    const stdout = stdio.stdout === "piped" ? pipe() : null;
    const stderr = stdio.stderr === "piped" ? pipe() : null;
    const attr = childIsolation() === "session" ? c.attr.session : c.attr.group;
    pid = launch(c, prep, cgroup, attr, (fa) => {
      let rc = 0;
      rc ||= stdin
        ? L.posix_spawn_file_actions_adddup2(fa, stdin[0], 0)
        : L.posix_spawn_file_actions_addopen(fa, 0, DEV_NULL, O_RDONLY, 0);
      rc ||= stdout
        ? L.posix_spawn_file_actions_adddup2(fa, stdout[1], 1)
        : L.posix_spawn_file_actions_addopen(fa, 1, DEV_NULL, O_WRONLY, 0);
      rc ||= stderr
        ? L.posix_spawn_file_actions_adddup2(fa, stderr[1], 2)
        : stdio.stderr === "merged"
        ? L.posix_spawn_file_actions_adddup2(fa, 1, 2)
        : L.posix_spawn_file_actions_addopen(fa, 2, DEV_NULL, O_WRONLY, 0);
      return rc;
    });
    // The child has its copies; ours of its ends must go, or EOF would never come.
    for (const end of [stdin?.[0], stdout?.[1], stderr?.[1]]) {
      if (end === undefined) continue;
      L.close(end);
      fds.splice(fds.indexOf(end), 1);
    }
    parent = { stdin: stdin?.[1] ?? -1, stdout: stdout?.[0] ?? -1, stderr: stderr?.[0] ?? -1 };
    for (const fd of [parent.stdin, parent.stdout, parent.stderr]) {
      if (fd >= 0) L.fcntl(fd, F_SETFL, BigInt(O_NONBLOCK));
    }
  } catch (e) {
    closeAll();
    throw e;
  }

  const pidfd = watchPid(c, pid, closeAll);
  const stdinStream = parent.stdin >= 0 ? fdWritable(parent.stdin, c, reactor) : null;
  const stdoutStream = parent.stdout >= 0 ? fdReadable(parent.stdout, c, reactor) : null;
  const stderrStream = parent.stderr >= 0 ? fdReadable(parent.stderr, c, reactor) : null;
  return {
    pid,
    get stdin() {
      return stdinStream ?? notPiped("stdin");
    },
    get stdout() {
      return stdoutStream ?? notPiped("stdout");
    },
    get stderr() {
      return stderrStream ?? notPiped("stderr");
    },
    exit: reap(c, reactor, pid, pidfd),
  };
}

/**
 * Start `prep` as the leader of a new session whose controlling terminal is the terminal
 * `slavePath` (opened on fd 0 after setsid, then copied to 1 and 2). Returns its pid and a
 * pidfd watching it; throws like {@link spawnDirect}.
 */
export function spawnOnTerminal(
  c: LibcHandle,
  prep: Prepared,
  slavePath: string,
  cgroup: Cgroup | null,
): { pid: number; pidfd: number } {
  const L = c.fn;
  const slave = cString(slavePath);
  // glibc runs setsid before the file actions, so this open acquires the controlling tty.
  const pid = launch(
    c,
    prep,
    cgroup,
    c.attr.session,
    (fa) =>
      L.posix_spawn_file_actions_addopen(fa, 0, slave, O_RDWR, 0) ||
      L.posix_spawn_file_actions_adddup2(fa, 0, 1) ||
      L.posix_spawn_file_actions_adddup2(fa, 0, 2),
  );
  void slave; // referenced until the spawn is done
  return { pid, pidfd: watchPid(c, pid, () => {}) };
}

/**
 * posix_spawn `prep` with `attr`: the stdio file actions `stdio` adds, then closefrom(3) and
 * chdir; a program without `#!` runs with sh (what execvp does); in a cgroup through the
 * sh shim that joins it first. Returns the pid; throws the errno's Deno error.
 */
function launch(
  c: LibcHandle,
  prep: Prepared,
  cgroup: Cgroup | null,
  attr: Uint8Array,
  stdio: (fa: Uint8Array) => number,
): number {
  const L = c.fn;
  let program = prep.program;
  let args: readonly (string | Uint8Array)[] = prep.args;
  if (cgroup !== null) {
    // The child must join the cgroup before it runs any code: that needs the sh shim.
    ({ program, args } = trampoline(program, args, {
      cgroupProcs: cgroup.procsFile,
      mergeStderr: false,
    }));
  }
  const fa = new Uint8Array(FILE_ACTIONS_SIZE);
  if (L.posix_spawn_file_actions_init(fa) !== 0) throw errnoError(c, c.errno());
  try {
    let rc = stdio(fa);
    if (L.posix_spawn_file_actions_addclosefrom_np !== null) {
      rc ||= L.posix_spawn_file_actions_addclosefrom_np(fa, 3);
    }
    const cwd = cString(prep.cwd);
    rc ||= L.posix_spawn_file_actions_addchdir_np(fa, cwd);
    if (rc !== 0) throw errnoError(c, rc);
    const env = envArray(prep.env);
    const pidOut = new Int32Array(1);
    let argv = cStringArray(args, [program]);
    rc = L.posix_spawn(pidOut, cString(program), fa, attr, argv.ptrs, env.ptrs);
    if (rc === ENOEXEC) {
      // No `#!` line: what execvp, Deno.Command and shells do — run it with sh.
      argv = cStringArray(args, [SHELL, program]);
      rc = L.posix_spawn(pidOut, cString(SHELL), fa, attr, argv.ptrs, env.ptrs);
    }
    void cwd; // referenced until the spawn is done
    if (rc !== 0) throw errnoError(c, rc);
    return pidOut[0];
  } finally {
    L.posix_spawn_file_actions_destroy(fa);
  }
}

/**
 * A pidfd for the fresh child `pid`. Out of fds we could not watch it, so it is killed and
 * reaped (after `cleanup`) and the failure thrown.
 */
function watchPid(c: LibcHandle, pid: number, cleanup: () => void): number {
  const pidfd = Number(c.fn.syscall(SYS_PIDFD_OPEN, BigInt(pid), 0n));
  if (pidfd >= 0) return pidfd;
  const msg = c.osMessage(c.errno());
  Deno.kill(-pid, "SIGKILL");
  c.fn.waitpid(pid, new Int32Array(1), 0);
  cleanup();
  throw new Error(`cannot watch the child: ${msg}`);
}

/**
 * Move `fd` (listed in `fds`) to a number ≥ 3, so that dup2 onto 0–2 in the child is real;
 * only needed when we run with one of 0–2 closed.
 */
function aboveStdio(c: LibcHandle, fd: number, fds: number[]): number {
  if (fd > 2) return fd;
  const moved = c.fn.fcntl(fd, F_DUPFD_CLOEXEC, 3n);
  if (moved < 0) throw errnoError(c, c.errno());
  fds[fds.indexOf(fd)] = moved;
  c.fn.close(fd);
  return moved;
}

/** What a job-control reaper reports besides the exit. */
export interface JobWatch {
  /** The child stopped (SIGTSTP, SIGSTOP, SIGTTIN, SIGTTOU). */
  onStop(signal: string): void;
  /** The child continued (SIGCONT). */
  onContinue(): void;
}

/**
 * Wait (off-thread, on the pidfd) for `pid` to exit, then reap it. With `jobs`, stops and
 * continues are reported too (waitpid WUNTRACED | WCONTINUED, woken by SIGCHLD, since a pidfd
 * only signals the exit).
 */
export async function reap(
  c: LibcHandle,
  reactor: FdReactor,
  pid: number,
  pidfd: number,
  jobs?: JobWatch,
): Promise<ExitInfo> {
  const status = new Int32Array(1);
  const flags = jobs ? WNOHANG | WUNTRACED | WCONTINUED : WNOHANG;
  let exited: Promise<void> | null = null;
  let chld: SigchldWaiter | null = null;
  try {
    for (;;) {
      // Listen before looking, so that a SIGCHLD between the two is not missed.
      chld?.cancel();
      chld = jobs ? sigchldWaiter() : null;
      const r = c.fn.waitpid(pid, status, flags);
      if (r === pid) {
        const st = status[0];
        if ((st & 0xff) === 0x7f) {
          jobs?.onStop(signalName((st >> 8) & 0xff));
          continue;
        }
        if (st === 0xffff) {
          jobs?.onContinue();
          continue;
        }
        return exitInfo(st);
      }
      if (r < 0) {
        const e = c.errno();
        if (e === EINTR) continue;
        throw new ExecError("spawn_failed", `waiting for pid ${pid} failed: ${c.osMessage(e)}`);
      }
      exited ??= reactor.readable(pidfd).then(() => {
        exited = null;
      });
      await (chld ? Promise.race([exited, chld.promise]) : exited);
    }
  } finally {
    chld?.cancel();
    reactor.forget(pidfd);
    c.fn.close(pidfd);
  }
}
