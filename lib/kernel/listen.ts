/**
 * Preparing and binding the kernel socket (protocol §2.2, D-39, issue 19).
 *
 * - The path is checked first: no trailing `/`, and short enough for `sun_path` — refused
 *   before anything is created, never a socket nobody can connect to.
 * - Missing directories are created one by one with `mkdir(0700)`; the whole chain must then pass
 *   `lib/client/socket_trust.ts` (the rule every client applies too). A directory we did not
 *   create is never chmodded: one that is not safe is refused with a message that says why.
 * - Start-up is serialised with an exclusive `flock` on `.<socket>.lock`, opened with
 *   `O_NOFOLLOW` (created with `O_EXCL`), owned by us, held for the kernel's lifetime and removed
 *   at shutdown: two racing kernels cannot both decide a socket is stale and unlink it.
 * - An existing path is replaced only if it is our own socket and nothing answers on it.
 * - No bind→chmod window: we bind under umask 077 inside a fresh private 0700 directory, then
 *   rename the socket into place atomically; the private directory never outlives the attempt.
 *
 * {@link prepareKernelSocket} does everything but the bind, so the kernel can open its state
 * directory in between and fail before any socket exists.
 */

import { basename, dirname, join, resolve } from "node:path";
import { openLibc } from "../exec/libc.ts";
import { socketAnswers } from "../client/discovery.ts";
import {
  checkDirChain,
  checkPrivateDir,
  euid,
  socketPathProblem,
  UntrustedSocket,
} from "../client/socket_trust.ts";

/** Why the kernel refused to start (exit 1 with this message). */
export class ListenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ListenError";
  }
}

const libc = openLibc({
  open: { parameters: ["buffer", "i32", "u32"], result: "i32" },
  flock: { parameters: ["i32", "i32"], result: "i32" },
  close: { parameters: ["i32"], result: "i32" },
});

const O_RDWR = 2, O_CREAT = 0o100, O_EXCL = 0o200, O_NOFOLLOW = 0o400000, O_CLOEXEC = 0o2000000;
const LOCK_EX = 2, LOCK_NB = 4;

const enc = new TextEncoder();

/** The start-up lock: held until `release` (which removes the file first). */
interface StartupLock {
  release(): void;
}

/**
 * Take the start-up lock or throw. The file is created with `O_EXCL | O_NOFOLLOW` (a planted
 * symlink is never followed), an existing one reopened with `O_NOFOLLOW` and accepted only when
 * it is a regular file of ours; after locking, the path must still name the file we locked (a
 * kernel that removed it at shutdown meanwhile makes us try again).
 */
function lockStartup(lockPath: string): StartupLock {
  if (!libc) return { release: () => {} }; // no FFI: the liveness check alone
  const cpath = enc.encode(lockPath + "\0");
  for (let attempt = 0; attempt < 8; attempt++) {
    let fd = libc.open(cpath, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600);
    if (fd < 0) fd = libc.open(cpath, O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0);
    if (fd < 0) {
      let why = "it cannot be opened";
      try {
        if (Deno.lstatSync(lockPath).isSymlink) why = "it is a symlink (never followed)";
      } catch (e) {
        if (e instanceof Deno.errors.NotFound) continue; // removed meanwhile: create it again
      }
      throw new ListenError(`refusing the lock file ${lockPath}: ${why}; remove it`);
    }
    const st = Deno.statSync(`/proc/self/fd/${fd}`);
    if (!st.isFile || st.uid !== euid()) {
      libc.close(fd);
      throw new ListenError(
        `refusing the lock file ${lockPath}: it is not a regular file of yours (uid ${st.uid}); ` +
          `remove it`,
      );
    }
    if (libc.flock(fd, LOCK_EX | LOCK_NB) !== 0) {
      libc.close(fd);
      throw new ListenError(`kernel already listening (another kernel holds ${lockPath})`);
    }
    let same = false;
    try {
      const now = Deno.lstatSync(lockPath);
      same = now.ino === st.ino && now.dev === st.dev;
    } catch { /* removed by a kernel shutting down: try again */ }
    if (!same) {
      libc.close(fd);
      continue;
    }
    return {
      release() {
        // Removed while still locked: a kernel that opened it meanwhile sees it gone and retries.
        try {
          Deno.removeSync(lockPath);
        } catch { /* already gone */ }
        libc.close(fd);
      },
    };
  }
  throw new ListenError(`could not take the lock file ${lockPath} (it keeps changing)`);
}

/** True when something accepts connections at `path`. */
export const isLive: (path: string) => Promise<boolean> = socketAnswers;

/** Create the missing directories of `dir` one by one (mode 0700, each one ours). */
function makeDirs(dir: string): void {
  const missing: string[] = [];
  for (let p = dir;; p = dirname(p)) {
    try {
      Deno.lstatSync(p);
      break;
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
      missing.push(p);
      if (dirname(p) === p) break;
    }
  }
  for (const p of missing.reverse()) {
    try {
      Deno.mkdirSync(p, { mode: 0o700 });
    } catch (e) {
      if (!(e instanceof Deno.errors.AlreadyExists)) {
        throw new ListenError(
          `cannot create socket directory ${p}: ${(e as Error).message}; choose a directory you ` +
            `own with --socket`,
        );
      }
    }
    // What is there now must be the private directory we meant (not one raced in by another).
    checkPrivateDir(p);
  }
}

function prepareDir(dir: string): string {
  try {
    makeDirs(dir);
    // Includes the strict check of Shoal's own named directories, new or already there.
    return checkDirChain(dir);
  } catch (e) {
    if (e instanceof UntrustedSocket) throw new ListenError(e.message);
    throw e;
  }
}

async function clearStale(path: string): Promise<void> {
  let st: Deno.FileInfo;
  try {
    st = await Deno.lstat(path);
  } catch {
    return; // nothing there
  }
  if (!st.isSocket) throw new ListenError(`refusing to remove unowned non-socket path ${path}`);
  if (st.uid !== euid()) {
    throw new ListenError(`refusing to remove another user's socket ${path}`);
  }
  if (await isLive(path)) throw new ListenError(`kernel already listening on ${path}`);
  await Deno.remove(path);
}

/** A bound kernel listener and how to tear it down. */
export interface BoundSocket {
  listener: Deno.Listener<Deno.UnixConn, Deno.UnixAddr>;
  path: string;
  /** Close the listener, remove the socket file, release (and remove) the start-up lock. */
  close(): void;
}

/** A socket path made ready (directories checked, lock held, stale socket gone), not bound. */
export interface PreparedSocket {
  /** The absolute socket path. */
  path: string;
  /** Bind it (once). */
  bind(): Promise<BoundSocket>;
  /** Give up without binding: release the lock. */
  abandon(): void;
}

/** Check the path, prepare its directory, take the lock and clear a stale socket. */
export async function prepareKernelSocket(socket: string): Promise<PreparedSocket> {
  const problem = socketPathProblem(socket);
  if (problem) throw new ListenError(problem);
  const path = resolve(socket);
  const dir = prepareDir(dirname(path));
  const real = join(dir, basename(path));
  const lock = lockStartup(join(dir, `.${basename(path)}.lock`));
  try {
    await clearStale(real);
  } catch (e) {
    lock.release();
    throw e;
  }
  let used = false;
  return {
    path,
    abandon() {
      if (used) return;
      used = true;
      lock.release();
    },
    async bind() {
      if (used) throw new Error("socket already bound or abandoned");
      used = true;
      try {
        return await bindPrivately(real, path, lock);
      } catch (e) {
        lock.release();
        throw e;
      }
    },
  };
}

async function bindPrivately(real: string, path: string, lock: StartupLock): Promise<BoundSocket> {
  const priv = await Deno.makeTempDir({ dir: dirname(real), prefix: ".bind-" });
  let listener: Deno.Listener<Deno.UnixConn, Deno.UnixAddr> | null = null;
  try {
    await Deno.chmod(priv, 0o700); // our own fresh directory
    const tmpPath = join(priv, "s");
    // umask 077 while binding (D-39): the socket is never open to others, not even briefly.
    // Nothing else runs yet (no session exists), so no child inherits it.
    const old = Deno.umask(0o077);
    try {
      listener = Deno.listen({ transport: "unix", path: tmpPath });
    } finally {
      Deno.umask(old);
    }
    await Deno.chmod(tmpPath, 0o600);
    await Deno.rename(tmpPath, real);
  } catch (e) {
    listener?.close();
    throw e;
  } finally {
    await Deno.remove(priv, { recursive: true }).catch(() => {});
  }
  const bound = listener;
  let closed = false;
  return {
    listener: bound,
    path,
    close() {
      if (closed) return;
      closed = true;
      try {
        bound.close();
      } catch { /* already closed */ }
      try {
        Deno.removeSync(real);
      } catch { /* already gone */ }
      lock.release();
    },
  };
}

/** Prepare and bind in one step. */
export async function bindKernelSocket(path: string): Promise<BoundSocket> {
  return await (await prepareKernelSocket(path)).bind();
}
