/**
 * The glibc functions the direct spawn path needs (posix_spawn with POSIX_SPAWN_SETPGROUP
 * or POSIX_SPAWN_SETSID, pipes, pseudo-terminals, epoll, pidfds, statx), loaded once through
 * FFI — or null
 * when this host cannot use them: not Linux/glibc, no `--allow-ffi`, glibc < 2.29 (no
 * `addchdir_np`), glibc < 2.26 (no POSIX_SPAWN_SETSID) or a kernel without `pidfd_open`
 * (< 5.3).
 *
 * @module
 */

/**
 * FFI declarations. `fcntl` and `syscall` are variadic; fixed integer arguments are fine on
 * x86_64/aarch64.
 */
const SYMBOLS = {
  posix_spawn: {
    parameters: ["buffer", "buffer", "buffer", "buffer", "buffer", "buffer"],
    result: "i32",
  },
  posix_spawn_file_actions_init: { parameters: ["buffer"], result: "i32" },
  posix_spawn_file_actions_destroy: { parameters: ["buffer"], result: "i32" },
  posix_spawn_file_actions_addopen: {
    parameters: ["buffer", "i32", "buffer", "i32", "u32"],
    result: "i32",
  },
  posix_spawn_file_actions_adddup2: { parameters: ["buffer", "i32", "i32"], result: "i32" },
  posix_spawn_file_actions_addchdir_np: { parameters: ["buffer", "buffer"], result: "i32" },
  // glibc ≥ 2.34; without it we rely on every fd of ours being close-on-exec.
  posix_spawn_file_actions_addclosefrom_np: {
    parameters: ["buffer", "i32"],
    result: "i32",
    optional: true,
  },
  posix_spawnattr_init: { parameters: ["buffer"], result: "i32" },
  posix_spawnattr_setflags: { parameters: ["buffer", "i16"], result: "i32" },
  posix_spawnattr_setsigmask: { parameters: ["buffer", "buffer"], result: "i32" },
  posix_spawnattr_setsigdefault: { parameters: ["buffer", "buffer"], result: "i32" },
  sigemptyset: { parameters: ["buffer"], result: "i32" },
  sigfillset: { parameters: ["buffer"], result: "i32" },
  pipe2: { parameters: ["buffer", "i32"], result: "i32" },
  // Pseudo-terminals (pty.ts).
  posix_openpt: { parameters: ["i32"], result: "i32" },
  grantpt: { parameters: ["i32"], result: "i32" },
  unlockpt: { parameters: ["i32"], result: "i32" },
  ptsname_r: { parameters: ["i32", "buffer", "usize"], result: "i32" },
  // Variadic like fcntl; a pointer third argument is fine on x86_64/aarch64.
  ioctl: { parameters: ["i32", "u64", "buffer"], result: "i32" },
  fcntl: { parameters: ["i32", "i32", "i64"], result: "i32" },
  read: { parameters: ["i32", "buffer", "usize"], result: "isize" },
  write: { parameters: ["i32", "buffer", "usize"], result: "isize" },
  close: { parameters: ["i32"], result: "i32" },
  syscall: { parameters: ["i64", "i64", "i64"], result: "i64" },
  waitpid: { parameters: ["i32", "buffer", "i32"], result: "i32" },
  epoll_create1: { parameters: ["i32"], result: "i32" },
  epoll_ctl: { parameters: ["i32", "i32", "i32", "buffer"], result: "i32" },
  // Runs on Deno's blocking pool; errno of that thread is not visible to us.
  epoll_wait: { parameters: ["i32", "buffer", "i32", "i32"], result: "i32", nonblocking: true },
  // The same with timeout 0, on our thread: collects what is ready without a thread hop.
  epoll_wait_now: {
    name: "epoll_wait",
    parameters: ["i32", "buffer", "i32", "i32"],
    result: "i32",
  },
  eventfd: { parameters: ["u32", "i32"], result: "i32" },
  // glibc ≥ 2.28. A failed Deno.statSync costs ~20 µs (it throws); PATH lookups fail a lot.
  statx: { parameters: ["i32", "buffer", "i32", "u32", "buffer"], result: "i32", optional: true },
  // Directory watches (dir_watch.ts).
  inotify_init1: { parameters: ["i32"], result: "i32", optional: true },
  inotify_add_watch: { parameters: ["i32", "buffer", "u32"], result: "i32", optional: true },
  __errno_location: { parameters: [], result: "pointer" },
  strerror: { parameters: ["i32"], result: "pointer" },
} as const;

const utf8 = new TextEncoder();

/** `s` as a NUL-terminated C string in an off-heap buffer (its address never moves). */
export function cString(s: string): Uint8Array {
  const buf = new Uint8Array(new ArrayBuffer(s.length * 3 + 1));
  const n = utf8.encodeInto(s, buf).written;
  return buf.subarray(0, n + 1);
}

/** The loaded symbols. */
export type Libc = Deno.DynamicLibrary<typeof SYMBOLS>["symbols"];

/** `O_CLOEXEC` (also `EPOLL_CLOEXEC`, `EFD_CLOEXEC`). */
export const O_CLOEXEC = 0x80000;
/** `O_NONBLOCK` (also `EFD_NONBLOCK`). */
export const O_NONBLOCK = 0x800;
/** `O_RDWR`. */
export const O_RDWR = 0x2;
/** `O_NOCTTY`: opening a terminal does not make it our controlling terminal. */
export const O_NOCTTY = 0x100;
/** errno values we act on. */
export const EINTR = 4,
  ENOEXEC = 8,
  EAGAIN = 11,
  ENOENT = 2,
  EACCES = 13,
  EPERM = 1,
  EIO = 5,
  ENOTDIR = 20;
/** `SYS_pidfd_open` (the same number on every architecture). */
export const SYS_PIDFD_OPEN = 434n;
/** Every child: `POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK`. */
const SIGNAL_FLAGS = 0x04 | 0x08;
/** `POSIX_SPAWN_SETPGROUP` (with pgroup 0: a new group led by the child). */
const SETPGROUP = 0x02;
/** `POSIX_SPAWN_SETSID` (glibc ≥ 2.26): a new session, hence also a new group. */
const SETSID = 0x80;
/** sizeof(posix_spawnattr_t) is 336 on 64-bit glibc; the slack costs nothing. */
const ATTR_SIZE = 512;

/** What {@link loadLibc} returns: symbols, errno access and the shared spawn attributes. */
export interface LibcHandle {
  fn: Libc;
  /** errno of the calling (JS) thread, valid right after a failed synchronous call. */
  errno(): number;
  /** `strerror(n)` in Rust's format: `"No such file or directory (os error 2)"`. */
  osMessage(n: number): string;
  /**
   * posix_spawnattr_t for a child in a new session (pid = pgid = sid) and for one in a new
   * process group only (pid = pgid); both with an empty signal mask and every signal at its
   * default action (Deno ignores SIGPIPE; children must not).
   */
  attr: { session: Uint8Array; group: Uint8Array };
}

/**
 * `dlopen` glibc for `symbols`, or null where it cannot be had: not Linux, no `--allow-ffi`
 * (asked first: without it, dlopen would prompt on a terminal or throw), a missing symbol.
 * Callers cache what it returns.
 */
export function openLibc<S extends Deno.ForeignLibraryInterface>(
  symbols: S,
): Deno.DynamicLibrary<S>["symbols"] | null {
  if (Deno.build.os !== "linux") return null;
  try {
    if (Deno.permissions.querySync({ name: "ffi" }).state !== "granted") return null;
    return Deno.dlopen("libc.so.6", symbols).symbols;
  } catch {
    return null;
  }
}

let loaded: LibcHandle | null | undefined;

/** The libc handle, loaded on first use; null when the direct path is unavailable here. */
export function loadLibc(): LibcHandle | null {
  if (loaded !== undefined) return loaded;
  loaded = null;
  const fn = openLibc(SYMBOLS);
  if (fn === null) return null;
  try {
    const errnoPtr = fn.__errno_location();
    if (errnoPtr === null) return null;
    const errnoView = new Deno.UnsafePointerView(errnoPtr);
    const empty = new Uint8Array(128);
    const all = new Uint8Array(128);
    fn.sigemptyset(empty);
    fn.sigfillset(all);
    const makeAttr = (flags: number): Uint8Array | null => {
      const attr = new Uint8Array(ATTR_SIZE);
      const ok = fn.posix_spawnattr_init(attr) === 0 &&
        fn.posix_spawnattr_setsigmask(attr, empty) === 0 &&
        fn.posix_spawnattr_setsigdefault(attr, all) === 0 &&
        // EINVAL here means glibc < 2.26 (no POSIX_SPAWN_SETSID).
        fn.posix_spawnattr_setflags(attr, SIGNAL_FLAGS | flags) === 0;
      return ok ? attr : null;
    };
    const session = makeAttr(SETSID);
    const group = makeAttr(SETPGROUP);
    if (session === null || group === null) return null;
    // pidfd_open needs Linux ≥ 5.3: try it on ourselves.
    const self = Number(fn.syscall(SYS_PIDFD_OPEN, BigInt(Deno.pid), 0n));
    if (self < 0) return null;
    fn.close(self);
    loaded = {
      fn,
      errno: () => errnoView.getInt32(0),
      osMessage: (n) => {
        const p = fn.strerror(n);
        const text = p === null ? `errno ${n}` : Deno.UnsafePointerView.getCString(p);
        return `${text} (os error ${n})`;
      },
      attr: { session, group },
    };
  } catch {
    loaded = null;
  }
  return loaded;
}
