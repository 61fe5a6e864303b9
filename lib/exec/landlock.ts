/**
 * Landlock through FFI (Linux ≥ 5.13; ABI 7 here): probe the ABI, build a ruleset from
 * filesystem roots and TCP ports, and restrict the *calling thread*. A Landlock domain covers
 * the thread that installed it and everything it later creates or execs, never threads that
 * already exist — so only a launcher's main thread, right before `execve`, can confine a whole
 * Deno process (`sandbox_launcher.ts`); restricting a thread of a running Deno would confine
 * that thread alone.
 *
 * @module
 */

import { confineErrno as errno, confineLibc as load } from "./confine_libc.ts";

const SYS_CREATE_RULESET = 444n, SYS_ADD_RULE = 445n, SYS_RESTRICT_SELF = 446n;
const LANDLOCK_CREATE_RULESET_VERSION = 1n;
const RULE_PATH_BENEATH = 1n, RULE_NET_PORT = 2n;
const O_PATH = 0o10000000, O_CLOEXEC = 0o2000000;
const PR_SET_NO_NEW_PRIVS = 38;

/** Filesystem access rights (`LANDLOCK_ACCESS_FS_*`). */
export const FS = {
  EXECUTE: 1n << 0n,
  WRITE_FILE: 1n << 1n,
  READ_FILE: 1n << 2n,
  READ_DIR: 1n << 3n,
  REMOVE_DIR: 1n << 4n,
  REMOVE_FILE: 1n << 5n,
  MAKE_CHAR: 1n << 6n,
  MAKE_DIR: 1n << 7n,
  MAKE_REG: 1n << 8n,
  MAKE_SOCK: 1n << 9n,
  MAKE_FIFO: 1n << 10n,
  MAKE_BLOCK: 1n << 11n,
  MAKE_SYM: 1n << 12n,
  /** ABI 2: link or rename across directories. */
  REFER: 1n << 13n,
  /** ABI 3. */
  TRUNCATE: 1n << 14n,
  /** ABI 5: ioctl on character/block devices. */
  IOCTL_DEV: 1n << 15n,
} as const;

/** Rights that apply to a file (not only to a directory); a rule on a file takes these alone. */
export const FILE_RIGHTS = FS.EXECUTE | FS.WRITE_FILE | FS.READ_FILE | FS.TRUNCATE | FS.IOCTL_DEV;
/** Read and run (what a read root gets). */
export const READ_RIGHTS = FS.EXECUTE | FS.READ_FILE | FS.READ_DIR;
/** Remove (what a delete root gets beyond reading the directory). */
export const DELETE_RIGHTS = FS.READ_DIR | FS.REMOVE_FILE | FS.REMOVE_DIR;

const NET_BIND_TCP = 1n << 0n, NET_CONNECT_TCP = 1n << 1n; // ABI 4
const SCOPE_ABSTRACT_UNIX = 1n << 0n, SCOPE_SIGNAL = 1n << 1n; // ABI 6

/** Every filesystem right this ABI knows. */
export function fsRights(abi: number): bigint {
  let all = 0n;
  for (const v of Object.values(FS)) all |= v;
  if (abi < 2) all &= ~FS.REFER;
  if (abi < 3) all &= ~FS.TRUNCATE;
  if (abi < 5) all &= ~FS.IOCTL_DEV;
  return all;
}

let abiCache: number | undefined;

/** The Landlock ABI of this kernel, or 0 when unavailable (not Linux, disabled, no FFI). */
export function landlockAbi(): number {
  if (abiCache !== undefined) return abiCache;
  const l = load();
  const r = l === null
    ? 0
    : Number(l.syscall3(SYS_CREATE_RULESET, null, 0n, LANDLOCK_CREATE_RULESET_VERSION));
  return (abiCache = r > 0 ? r : 0);
}

/** One filesystem rule: `rights` beneath `path` (a directory, or a single file). */
export interface PathRule {
  path: string;
  rights: bigint;
}

/** What one Landlock domain allows; everything it handles and does not allow is denied. */
export interface LandlockRules {
  paths: PathRule[];
  /**
   * Handle TCP (ABI ≥ 4): connect/bind only to these ports (a null list leaves that right
   * unhandled: any port).
   */
  tcp: { connect: number[] | null; bind: number[] | null } | null;
  /** Scope abstract Unix sockets and signals to the domain (ABI ≥ 6). */
  scope: boolean;
}

/** Why a domain could not be installed. */
export class LandlockError extends Error {
  constructor(message: string, readonly errno: number) {
    super(message);
    this.name = "LandlockError";
  }
}

/** What {@link restrictSelf} installed (paths that did not exist are skipped and listed). */
export interface Restricted {
  abi: number;
  skipped: string[];
  tcp: boolean;
  scoped: boolean;
}

/**
 * Set no_new_privs and confine the calling thread (and all it creates or execs from now on) to
 * `rules`. Throws {@link LandlockError} when Landlock is unavailable or a step fails; a path
 * that does not exist is skipped (reported in the result), never widened.
 */
export function restrictSelf(rules: LandlockRules): Restricted {
  const l = load();
  const abi = landlockAbi();
  if (l === null || abi < 1) throw new LandlockError("Landlock is not available on this host", 0);
  const handledFs = fsRights(abi);
  const tcp = rules.tcp !== null && abi >= 4 &&
    (rules.tcp.connect !== null || rules.tcp.bind !== null);
  if (rules.tcp !== null && abi < 4) {
    throw new LandlockError(`Landlock ABI ${abi} cannot restrict TCP (needs ABI 4)`, 0);
  }
  const scoped = rules.scope && abi >= 6;
  const handledNet = !tcp ? 0n : (rules.tcp!.connect !== null ? NET_CONNECT_TCP : 0n) |
    (rules.tcp!.bind !== null ? NET_BIND_TCP : 0n);
  const attr = new BigUint64Array([
    handledFs,
    handledNet,
    scoped ? SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL : 0n,
  ]);
  const size = abi >= 6 ? 24n : abi >= 4 ? 16n : 8n;
  const rs = Number(l.syscall3(SYS_CREATE_RULESET, new Uint8Array(attr.buffer), size, 0n));
  if (rs < 0) throw new LandlockError("landlock_create_ruleset failed", errno(l));
  const skipped: string[] = [];
  try {
    for (const r of rules.paths) {
      const fd = l.open(new TextEncoder().encode(r.path + "\0"), O_PATH | O_CLOEXEC);
      if (fd < 0) {
        skipped.push(r.path);
        continue;
      }
      let isDir = false;
      try {
        isDir = Deno.statSync(r.path).isDirectory;
      } catch { /* raced away: the open fd still names it */ }
      // struct landlock_path_beneath_attr { u64 allowed_access; s32 parent_fd; } __packed
      const b = new Uint8Array(12);
      const dv = new DataView(b.buffer);
      dv.setBigUint64(0, r.rights & handledFs & (isDir ? ~0n : FILE_RIGHTS), true);
      dv.setInt32(8, fd, true);
      const rc = l.syscall4(SYS_ADD_RULE, BigInt(rs), RULE_PATH_BENEATH, b, 0n);
      const e = errno(l);
      l.close(fd);
      if (rc < 0) throw new LandlockError(`landlock_add_rule ${r.path} failed`, e);
    }
    if (tcp) {
      const ports = [
        ...(rules.tcp!.connect ?? []).map((p) => [p, NET_CONNECT_TCP] as const),
        ...(rules.tcp!.bind ?? []).map((p) => [p, NET_BIND_TCP] as const),
      ];
      for (const [port, right] of ports) {
        // struct landlock_net_port_attr { u64 allowed_access; u64 port; } __packed
        const b = new BigUint64Array([right, BigInt(port)]);
        const rc = l.syscall4(
          SYS_ADD_RULE,
          BigInt(rs),
          RULE_NET_PORT,
          new Uint8Array(b.buffer),
          0n,
        );
        if (rc < 0) throw new LandlockError(`landlock_add_rule tcp port ${port} failed`, errno(l));
      }
    }
    if (l.prctl(PR_SET_NO_NEW_PRIVS, 1n, 0n, 0n, 0n) !== 0) {
      throw new LandlockError("prctl(PR_SET_NO_NEW_PRIVS) failed", errno(l));
    }
    if (l.syscall4(SYS_RESTRICT_SELF, BigInt(rs), 0n, null, 0n) < 0) {
      throw new LandlockError("landlock_restrict_self failed", errno(l));
    }
  } finally {
    l.close(rs);
  }
  return { abi, skipped, tcp, scoped };
}

const PR_SET_DUMPABLE = 4;

/**
 * Make this process non-dumpable: a process of the same user (its own children included) can
 * then neither ptrace it nor open its `/proc/PID/fd`, `mem` or `environ` without
 * CAP_SYS_PTRACE. A confined session calls it first thing — Landlock allows ptrace within a
 * domain, and the session's stdout is its voice to the kernel. execve resets it, so each
 * process must ask for itself. False when it could not be set.
 */
export function forbidInspection(): boolean {
  const l = load();
  return l !== null && l.prctl(PR_SET_DUMPABLE, 0n, 0n, 0n, 0n) === 0;
}
