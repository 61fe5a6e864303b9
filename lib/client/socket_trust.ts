/**
 * Whether a kernel socket path can be trusted (protocol §2.2, issue 19) — one rule for the
 * kernel before it binds and for every client (the facade, the CLI, `KernelClient`) before it
 * connects and sends its attach and its sources. What OpenSSH and the XDG base-directory spec do:
 *
 * - The directories Shoal names itself (`$XDG_RUNTIME_DIR/shoal`, `$TMPDIR/shoal-<euid>`,
 *   `…/shoal-<euid>/shoal`) must be our own: a real directory (`lstat`: not a symlink), owned by
 *   our uid, no group or other bits. Anyone else's — another local user created it first, or
 *   planted a symlink — is refused, never used and never chmodded.
 * - Every directory above the socket must be owned by root or by us and writable by no one else
 *   unless sticky (`/tmp`: others cannot rename or remove what is ours), and a symlink on the way
 *   must be ours or root's: nobody else can move a component aside and put their own in its place.
 * - A client also checks the socket itself: a socket (not a symlink) owned by our uid. In a shared
 *   sticky directory that is what tells our kernel from a stranger's.
 *
 * @module
 */

import { dirname, join, resolve, sep } from "node:path";

/** The socket path is not safe to use; the message says why and what to do. */
export class UntrustedSocket extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UntrustedSocket";
  }
}

/** The longest socket path `sun_path` holds (108 bytes with its NUL). */
export const SUN_PATH_MAX = 107;

const enc = new TextEncoder();

/** Our effective uid (0 where the platform has none). */
export function euid(): number {
  return Deno.uid() ?? 0;
}

/** The directories discovery names for this user, which must be private (see module doc). */
export function privateSocketDirs(env: (n: string) => string | undefined = Deno.env.get): string[] {
  const nonEmpty = (v: string | undefined) => (v && v.length > 0 ? v : undefined);
  const out: string[] = [];
  const xdg = nonEmpty(env("XDG_RUNTIME_DIR"));
  if (xdg) out.push(resolve(xdg, "shoal"));
  for (const base of [nonEmpty(env("TMPDIR")), "/tmp"]) {
    if (!base) continue;
    const own = resolve(base, `shoal-${euid()}`);
    out.push(own, join(own, "shoal"));
  }
  return out;
}

/** A path problem that makes a socket path unusable before any directory is looked at. */
export function socketPathProblem(path: string): string | null {
  if (path.endsWith("/")) {
    return `socket path ${path} ends with '/': name the socket file, e.g. ${path}k.sock`;
  }
  const abs = resolve(path);
  const n = enc.encode(abs).length;
  if (n > SUN_PATH_MAX) {
    return `socket path ${abs} is ${n} bytes; a Unix socket path holds at most ${SUN_PATH_MAX}: ` +
      `choose a shorter --socket path (or a shorter $XDG_RUNTIME_DIR / $TMPDIR)`;
  }
  return null;
}

function modeOf(st: Deno.FileInfo): number {
  return (st.mode ?? 0) & 0o7777;
}

function describe(st: Deno.FileInfo): string {
  return `owner uid ${st.uid}, mode ${modeOf(st).toString(8).padStart(4, "0")}`;
}

/**
 * Check a directory Shoal made (or will make) for itself: a real directory, ours, private.
 * Returns null when it does not exist.
 */
export function checkPrivateDir(dir: string): Deno.FileInfo | null {
  let st: Deno.FileInfo;
  try {
    st = Deno.lstatSync(dir);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw new UntrustedSocket(`cannot inspect socket directory ${dir}: ${(e as Error).message}`);
  }
  const fix = `remove it (it is not safe to use) or set XDG_RUNTIME_DIR / --socket to a ` +
    `directory of your own`;
  if (st.isSymlink) {
    throw new UntrustedSocket(`socket directory ${dir} is a symlink, not a directory: ${fix}`);
  }
  if (!st.isDirectory) {
    throw new UntrustedSocket(`socket directory ${dir} is not a directory: ${fix}`);
  }
  if (st.uid !== euid()) {
    throw new UntrustedSocket(
      `socket directory ${dir} belongs to uid ${st.uid}, not to you (uid ${euid()}): someone ` +
        `else created it; ${fix}`,
    );
  }
  if ((modeOf(st) & 0o077) !== 0) {
    throw new UntrustedSocket(
      `socket directory ${dir} is open to others (${describe(st)}); it must be 0700: ` +
        `chmod 700 ${dir}, or ${fix}`,
    );
  }
  return st;
}

/** Root or us: the owners a directory above a socket may have. */
function trustedOwner(uid: number | null): boolean {
  return uid === 0 || uid === euid();
}

/**
 * Check the directories above (and including) `dir`, as described in the module doc. `dir`
 * must exist. Returns its real path (connect and bind through it: no symlink can be swapped).
 */
export function checkDirChain(dir: string): string {
  const abs = resolve(dir);
  const privates = new Set(privateSocketDirs());
  // Symlinks on the way as written must be ours or root's (a stranger's could point anywhere).
  for (let p = abs;; p = dirname(p)) {
    if (privates.has(p)) checkPrivateDir(p);
    let st: Deno.FileInfo;
    try {
      st = Deno.lstatSync(p);
    } catch (e) {
      throw new UntrustedSocket(`cannot inspect ${p}: ${(e as Error).message}`);
    }
    if (st.isSymlink && !trustedOwner(st.uid)) {
      throw new UntrustedSocket(
        `${p} on the socket path is a symlink owned by uid ${st.uid}: it could point anywhere; ` +
          `use a path without it`,
      );
    }
    if (p === sep || dirname(p) === p) break;
  }
  let real: string;
  try {
    real = Deno.realPathSync(abs);
  } catch (e) {
    throw new UntrustedSocket(`cannot resolve socket directory ${abs}: ${(e as Error).message}`);
  }
  for (let p = real;; p = dirname(p)) {
    const st = Deno.statSync(p);
    if (!st.isDirectory) throw new UntrustedSocket(`${p} on the socket path is not a directory`);
    if (!trustedOwner(st.uid)) {
      throw new UntrustedSocket(
        `${p} on the socket path belongs to uid ${st.uid} (${describe(st)}): that user could ` +
          `replace the socket; use a directory owned by you or root`,
      );
    }
    const m = modeOf(st);
    if ((m & 0o022) !== 0 && (m & 0o1000) === 0) {
      throw new UntrustedSocket(
        `${p} on the socket path is writable by others and not sticky (${describe(st)}): ` +
          `anyone could replace the socket; use a private directory`,
      );
    }
    if (p === sep || dirname(p) === p) break;
  }
  return real;
}

/**
 * Before connecting: the socket's directories pass {@link checkDirChain} and the socket is
 * ours. Returns the path to connect to (through the real directory). Throws
 * {@link UntrustedSocket}; a missing socket is `Deno.errors.NotFound` (nothing listens).
 */
export function trustedSocket(path: string): string {
  const problem = socketPathProblem(path);
  if (problem) throw new UntrustedSocket(problem);
  const abs = resolve(path);
  const dir = dirname(abs);
  try {
    Deno.lstatSync(dir);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new Deno.errors.NotFound(`no kernel socket at ${abs} (its directory does not exist)`);
    }
    throw e;
  }
  const real = join(checkDirChain(dir), abs.slice(dir.length + 1));
  const st = Deno.lstatSync(real); // NotFound: nothing listens
  if (st.isSymlink || !st.isSocket) {
    throw new UntrustedSocket(`${abs} is not a socket (${st.isSymlink ? "a symlink" : "a file"})`);
  }
  if (st.uid !== euid()) {
    throw new UntrustedSocket(
      `the socket ${abs} belongs to uid ${st.uid}, not to you (uid ${euid()}): it is not your ` +
        `kernel; refusing to connect (remove it, or use a socket path of your own)`,
    );
  }
  return real;
}
