/**
 * What one principal's sessions may touch (`SandboxSpec`: the OS-enforceable part of a Leash
 * policy, same keys and vocabulary) and its lowering to what the OS can enforce (protocol
 * §11.6): filesystem globs become Landlock roots (the longest concrete prefix of each glob),
 * `net_connect`/`net_listen` become Landlock TCP port rules plus a socket-family filter, and
 * what cannot be lowered exactly is said, never hidden.
 *
 * @module
 */

import { isAbsolute, normalize } from "node:path";

/**
 * The grants of one principal that the OS sandbox enforces. A Leash `PolicySpec` has these
 * keys with these meanings (protocol §11.4), so a policy is a spec as it is.
 */
export interface SandboxSpec {
  /** Path globs (`/srv/**`, `~/proj/**`): read and run beneath their roots. */
  fs_read: string[];
  /** Path globs: full access beneath their roots. */
  fs_write: string[];
  /** Path globs: remove beneath their roots. */
  fs_delete: string[];
  /** `host-glob:port` or `host-glob:*`. */
  net_connect: string[];
  /** Ports, or `"*"` for any. */
  net_listen: (number | "*")[];
  /** Binary hashes (BLAKE3 hex), argv0s or basenames; empty = no spawn pinning. */
  proc_spawn: string[];
  /** Refuse to run when a dimension this spec needs cannot be enforced here. */
  hermetic: boolean;
}

/** A spec that grants nothing (the runtime's own needs are added by the lowering). */
export function emptySandboxSpec(): SandboxSpec {
  return {
    fs_read: [],
    fs_write: [],
    fs_delete: [],
    net_connect: [],
    net_listen: [],
    proc_spawn: [],
    hermetic: false,
  };
}

/** The network part of a lowered spec. */
export interface LoweredNet {
  /**
   * `open`: every TCP connect and listen granted and so nothing restricted; `tcp`: plain TCP
   * sockets only, connect/bind to the listed ports (null: any port); `none`: no IP socket.
   */
  mode: "open" | "tcp" | "none";
  connect: number[] | null;
  bind: number[] | null;
  /** Grants naming a host: the OS enforces their port only (any host may be reached on it). */
  hostWidened: string[];
}

/** A spec as the OS can enforce it. */
export interface LoweredSpec {
  read: string[];
  write: string[];
  delete: string[];
  /** Filesystem unrestricted (read, write and delete all grant `/`). */
  fsOpen: boolean;
  /** Globs whose root is broader than the glob (`/srv/*.txt` → all of `/srv`). */
  widened: string[];
  /** Globs that lower to no root (relative, `**`-anchored, or a root that does not exist). */
  dropped: string[];
  net: LoweredNet;
  /** Spawn pins (empty: none). */
  pins: string[];
  hermetic: boolean;
}

/** Why a spec is not well formed (a clear message for the operator who wrote it). */
export class SandboxSpecError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SandboxSpecError";
  }
}

const GLOB_CHARS = /[*?[{]/;

/**
 * The root a path glob lowers to: its longest concrete directory prefix (`~/` → `home`), or
 * null when it has none. `exact` is false when the root grants more than the glob.
 */
export function globRoot(glob: string, home: string): { root: string; exact: boolean } | null {
  let g = glob === "~" ? home : glob.startsWith("~/") ? home + glob.slice(1) : glob;
  if (!isAbsolute(g)) return null;
  g = normalize(g);
  const parts = g.split("/");
  const concrete: string[] = [];
  for (const p of parts) {
    if (GLOB_CHARS.test(p)) break;
    concrete.push(p);
  }
  const rest = parts.slice(concrete.length);
  const root = concrete.join("/").replace(/\/+$/, "") || "/";
  // `dir/**` and `dir` are exactly the tree beneath `dir`; anything else beneath is wider.
  const exact = rest.length === 0 || (rest.length === 1 && rest[0] === "**");
  return { root, exact };
}

/** True when `path` exists (any kind of file). */
export function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** `host-glob:port` → host and port; throws {@link SandboxSpecError} on a malformed grant. */
export function parseNetGrant(g: string): { host: string; port: number | "*" } {
  const i = g.lastIndexOf(":");
  if (i <= 0) {
    throw new SandboxSpecError(`net_connect grant ${JSON.stringify(g)} needs host:port or host:*`);
  }
  const host = g.slice(0, i);
  const p = g.slice(i + 1);
  if (p === "*") return { host, port: "*" };
  const port = Number(p);
  if (!/^[0-9]{1,5}$/.test(p) || port > 65535) {
    throw new SandboxSpecError(
      `net_connect grant ${JSON.stringify(g)}: the port must be 0–65535 or *`,
    );
  }
  return { host, port };
}

function lowerNet(spec: SandboxSpec): LoweredNet {
  const hostWidened: string[] = [];
  let anyConnect = false;
  const connect = new Set<number>();
  for (const g of spec.net_connect) {
    const { host, port } = parseNetGrant(g);
    if (host !== "*") hostWidened.push(g);
    if (port === "*") anyConnect = true;
    else connect.add(port);
  }
  let anyBind = false;
  const bind = new Set<number>();
  for (const p of spec.net_listen) {
    if (p === "*") anyBind = true;
    else if (Number.isInteger(p) && p >= 0 && p <= 65535) bind.add(p);
    else throw new SandboxSpecError(`net_listen entry ${JSON.stringify(p)}: a port 0–65535 or "*"`);
  }
  const none = spec.net_connect.length === 0 && spec.net_listen.length === 0;
  const open = anyConnect && anyBind && hostWidened.length === 0;
  return {
    mode: none ? "none" : open ? "open" : "tcp",
    connect: anyConnect ? null : [...connect].sort((a, b) => a - b),
    bind: anyBind ? null : [...bind].sort((a, b) => a - b),
    hostWidened,
  };
}

/** Roots of one glob list, deduplicated, with what had to be widened or dropped. */
function lowerGlobs(
  globs: string[],
  home: string,
  widened: string[],
  dropped: string[],
): string[] {
  const roots = new Set<string>();
  for (const g of globs) {
    if (typeof g !== "string") throw new SandboxSpecError(`a path glob must be a string`);
    const r = globRoot(g, home);
    if (r === null || !exists(r.root)) {
      dropped.push(g);
      continue;
    }
    if (!r.exact) widened.push(g);
    roots.add(r.root);
  }
  return [...roots];
}

/**
 * Lower a spec for this host (`home` expands `~`: the kernel's HOME, never a session's).
 * Throws {@link SandboxSpecError} on a malformed grant.
 */
export function lowerSpec(spec: SandboxSpec, home: string): LoweredSpec {
  const widened: string[] = [];
  const dropped: string[] = [];
  const read = lowerGlobs(spec.fs_read, home, widened, dropped);
  const write = lowerGlobs(spec.fs_write, home, widened, dropped);
  const del = lowerGlobs(spec.fs_delete, home, widened, dropped);
  const pins = spec.proc_spawn ?? [];
  if (!Array.isArray(pins) || pins.some((p) => typeof p !== "string" || p === "")) {
    throw new SandboxSpecError("proc_spawn must list binary hashes, argv0s or basenames");
  }
  return {
    read,
    write,
    delete: del,
    fsOpen: read.includes("/") && write.includes("/") && del.includes("/"),
    widened,
    dropped,
    net: lowerNet(spec),
    pins: [...pins],
    hermetic: spec.hermetic === true,
  };
}

/** True when `path` is `root` or beneath it. */
export function beneath(path: string, root: string): boolean {
  return root === "/" || path === root || path.startsWith(root + "/");
}
