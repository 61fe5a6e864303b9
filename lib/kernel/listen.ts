/**
 * Preparing and binding the kernel socket (protocol §2.2, D-39).
 *
 * - The parent directory is created 0700 (and tightened if we own it).
 * - Start-up is serialised with an exclusive `flock` on `<socket>.lock`, held for the kernel's
 *   lifetime: two racing kernels cannot both decide a socket is stale and unlink it.
 * - An existing path is replaced only if it is our own socket and nothing answers on it.
 * - No bind→chmod window: we bind inside a fresh private 0700 directory, chmod the socket 0600,
 *   then rename it into place atomically.
 */

import { basename, dirname, join } from "node:path";
import { socketAnswers } from "../client/discovery.ts";

/** Why the kernel refused to start (exit 1 with this message). */
export class ListenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ListenError";
  }
}

const libc = (() => {
  try {
    return Deno.dlopen("libc.so.6", {
      open: { parameters: ["buffer", "i32", "u32"], result: "i32" },
      flock: { parameters: ["i32", "i32"], result: "i32" },
      close: { parameters: ["i32"], result: "i32" },
    }).symbols;
  } catch {
    return null;
  }
})();

const O_RDWR = 2, O_CREAT = 0o100, O_CLOEXEC = 0x80000, LOCK_EX = 2, LOCK_NB = 4;

/** Take the start-up lock or throw if another kernel holds it. Returns a release function. */
function lockStartup(lockPath: string): () => void {
  if (!libc) return () => {}; // no FFI: fall back to the liveness check alone
  const fd = libc.open(
    new TextEncoder().encode(lockPath + "\0"),
    O_RDWR | O_CREAT | O_CLOEXEC,
    0o600,
  );
  if (fd < 0) throw new ListenError(`cannot open lock file ${lockPath}`);
  if (libc.flock(fd, LOCK_EX | LOCK_NB) !== 0) {
    libc.close(fd);
    throw new ListenError(`kernel already listening (another kernel holds ${lockPath})`);
  }
  return () => libc.close(fd);
}

/** True when something accepts connections at `path`. */
export const isLive: (path: string) => Promise<boolean> = socketAnswers;

async function prepareDir(dir: string): Promise<void> {
  try {
    await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (e) {
    throw new ListenError(
      `cannot create socket directory ${dir}: ${
        (e as Error).message
      }; choose a directory you own with --socket`,
    );
  }
  const st = await Deno.stat(dir);
  if (st.uid === Deno.uid()) await Deno.chmod(dir, 0o700);
}

async function clearStale(path: string): Promise<void> {
  let st: Deno.FileInfo;
  try {
    st = await Deno.lstat(path);
  } catch {
    return; // nothing there
  }
  if (!st.isSocket) throw new ListenError(`refusing to remove unowned non-socket path ${path}`);
  if (st.uid !== Deno.uid()) {
    throw new ListenError(`refusing to remove another user's socket ${path}`);
  }
  if (await isLive(path)) throw new ListenError(`kernel already listening on ${path}`);
  await Deno.remove(path);
}

/** A bound kernel listener and how to tear it down. */
export interface BoundSocket {
  listener: Deno.Listener<Deno.UnixConn, Deno.UnixAddr>;
  path: string;
  /** Close the listener, remove the socket file, release the start-up lock. */
  close(): void;
}

/** Prepare the directory, take the lock, clear a stale socket and bind privately. */
export async function bindKernelSocket(path: string): Promise<BoundSocket> {
  const dir = dirname(path);
  await prepareDir(dir);
  const release = lockStartup(join(dir, `.${basename(path)}.lock`));
  try {
    await clearStale(path);
    const priv = await Deno.makeTempDir({ dir, prefix: ".bind-" });
    await Deno.chmod(priv, 0o700);
    const tmpPath = join(priv, "s");
    const listener = Deno.listen({ transport: "unix", path: tmpPath });
    await Deno.chmod(tmpPath, 0o600);
    await Deno.rename(tmpPath, path);
    await Deno.remove(priv);
    let closed = false;
    return {
      listener,
      path,
      close() {
        if (closed) return;
        closed = true;
        try {
          listener.close();
        } catch { /* already closed */ }
        try {
          Deno.removeSync(path);
        } catch { /* already gone */ }
        release();
      },
    };
  } catch (e) {
    release();
    throw e;
  }
}
