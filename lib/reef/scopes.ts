/**
 * Scope discovery (subsystems §6): from the cwd up to `/`, each directory's `.reef.toml`,
 * `mise.toml`, `.mise.toml`, `.tool-versions` (in that order), nearest first; then the user
 * scope (`[reef]` of `$XDG_CONFIG_HOME/shoal/shoal.toml`); `with reef:` layers go in front.
 *
 * Every call checks the files themselves, so a manifest created, edited or removed in the
 * same directory is seen by the next resolution (upstream only re-discovered on `cd`). It
 * stays cheap: a directory whose identity is unchanged (and settled, see watched.ts) is not
 * searched again — one stat per ancestor plus one per existing manifest.
 *
 * @module
 */

import { join } from "node:path";
import { type FileIdentity, fileIdentity, sameIdentity } from "../exec/mod.ts";
import {
  type Manifest,
  type ManifestProblem,
  type ManifestRead,
  parseManifest,
  type ScopeKind,
} from "./manifest.ts";
import { unsettled, WatchedFiles } from "./watched.ts";

/** The manifest names checked in every directory, in precedence order. */
export const MANIFEST_FILES: readonly (readonly [string, ScopeKind])[] = [
  [".reef.toml", "reef"],
  ["mise.toml", "mise"],
  [".mise.toml", "mise"],
  [".tool-versions", "tool-versions"],
];

/** The lock file's name. */
export const LOCK_FILE = "reef.lock";

/** The scopes in force at one cwd. */
export interface ScopeChain {
  /** Nearest first: `with reef:` layers (innermost first), discovered manifests, the user scope. */
  readonly scopes: readonly Manifest[];
  /** Manifests that exist but could not be used (reported, never silently skipped). */
  readonly problems: readonly ManifestProblem[];
  /**
   * Where `reef.lock` lives: beside the nearest `.reef.toml` that declares tools (else the
   * nearest `.reef.toml`, else the first discovered scope, the user `shoal.toml` included);
   * null when nothing was discovered.
   */
  readonly lockPath: string | null;
  /** Any scope says `hermetic = true`. */
  readonly hermetic: boolean;
}

const manifests = new WatchedFiles<ManifestRead>(
  (path, read) => parseManifest(kindOf(path), path, read),
);

function kindOf(path: string): ScopeKind {
  if (path.endsWith("/shoal.toml")) return "user";
  for (const [name, kind] of MANIFEST_FILES) if (path.endsWith("/" + name)) return kind;
  return "reef";
}

interface DirState {
  id: FileIdentity | null;
  settled: boolean;
  /** Full paths of the manifest files present, in precedence order. */
  present: string[];
}

const DIRS_MAX = 4096;
const dirs = new Map<string, DirState>();

/** The manifest files present in `dir` (cached on the directory's identity). */
function presentIn(dir: string, now: number): string[] {
  const id = fileIdentity(dir);
  const st = dirs.get(dir);
  if (st !== undefined && st.settled && sameIdentity(st.id, id)) return st.present;
  const present: string[] = [];
  if (id !== null && id.kind === "dir") {
    for (const [name] of MANIFEST_FILES) {
      const p = dir === "/" ? "/" + name : dir + "/" + name;
      if (fileIdentity(p) !== null) present.push(p);
    }
  }
  if (st === undefined && dirs.size >= DIRS_MAX) dirs.clear();
  dirs.set(dir, { id, settled: !unsettled(id, now), present });
  return present;
}

const userPaths = new Map<string, string | null>();

/** The user manifest path from the session environment, or null. */
export function userManifestPath(env: Readonly<Record<string, string>>): string | null {
  const xdg = env.XDG_CONFIG_HOME ?? "";
  const home = env.HOME ?? "";
  const k = xdg + "\0" + home;
  let p = userPaths.get(k);
  if (p !== undefined) return p;
  if (xdg.startsWith("/")) p = join(xdg, "shoal", "shoal.toml");
  else if (home.startsWith("/")) p = join(home, ".config", "shoal", "shoal.toml");
  else p = null;
  if (userPaths.size >= 64) userPaths.clear();
  userPaths.set(k, p);
  return p;
}

interface Memo {
  dirs: string[];
  user: string | null;
  parts: ManifestRead[];
  chain: ScopeChain | null;
}

const MEMO_MAX = 256;
const memo = new Map<string, Memo>();

function build(parts: ManifestRead[]): ScopeChain {
  const scopes: Manifest[] = [];
  const problems: ManifestProblem[] = [];
  for (const p of parts) {
    if (p.ok) scopes.push(p.manifest);
    else if (!p.missing) problems.push(p.problem);
  }
  // A runner- or option-only .reef.toml (a scope since we fixed upstream's drop) must not
  // move the lock away from the manifest that declares the tools.
  const native = scopes.find((s) => s.kind === "reef" && s.tools.size > 0) ??
    scopes.find((s) => s.kind === "reef") ?? scopes[0];
  const lockPath = native?.path ? join(native.path, "..", LOCK_FILE) : null;
  return { scopes, problems, lockPath, hermetic: scopes.some((s) => s.hermetic) };
}

/**
 * The discovered scopes at `cwd` (absolute) for a session environment (XDG_CONFIG_HOME /
 * HOME locate the user scope). The same object comes back while nothing changed.
 */
export function discoverScopes(cwd: string, env: Readonly<Record<string, string>>): ScopeChain {
  const now = Date.now();
  const user = userManifestPath(env);
  const key = user === null ? cwd : cwd + "\0" + user;
  let m = memo.get(key);
  if (m === undefined) {
    if (memo.size >= MEMO_MAX) memo.clear();
    m = { dirs: ancestors(cwd), user, parts: [], chain: null };
    memo.set(key, m);
  }
  // Compare with the last walk as we go; allocate only when something changed.
  const prev = m.parts;
  let parts: ManifestRead[] | null = null;
  let n = 0;
  const add = (r: ManifestRead) => {
    if (parts === null) {
      if (n < prev.length && prev[n] === r) {
        n++;
        return;
      }
      parts = prev.slice(0, n);
    }
    parts.push(r);
  };
  for (const dir of m.dirs) for (const p of presentIn(dir, now)) add(manifests.get(p));
  if (user !== null) add(manifests.get(user));
  if (parts === null && n === prev.length && m.chain !== null) return m.chain;
  m.parts = parts ?? prev.slice(0, n);
  m.chain = build(m.parts);
  return m.chain;
}

/** `dir` and each of its ancestors up to `/`, nearest first. */
function ancestors(cwd: string): string[] {
  const out: string[] = [];
  let dir = cwd.length > 1 && cwd.endsWith("/") ? cwd.slice(0, -1) : cwd;
  for (;;) {
    out.push(dir);
    if (dir === "/" || dir === "") return out;
    const i = dir.lastIndexOf("/");
    dir = i <= 0 ? "/" : dir.slice(0, i);
  }
}

const layered = new WeakMap<ScopeChain, { layers: readonly Manifest[]; chain: ScopeChain }>();

/** `chain` with `with reef:` layers in front (innermost first). */
export function withLayers(chain: ScopeChain, layers: readonly Manifest[]): ScopeChain {
  if (layers.length === 0) return chain;
  const m = layered.get(chain);
  if (
    m !== undefined && m.layers.length === layers.length &&
    m.layers.every((l, i) => l === layers[i])
  ) {
    return m.chain;
  }
  const out: ScopeChain = { ...chain, scopes: [...layers, ...chain.scopes] };
  layered.set(chain, { layers: [...layers], chain: out });
  return out;
}

/** Forget what is known about a manifest (after `reef add` wrote it). */
export function forgetManifest(path: string): void {
  manifests.forget(path);
  const i = path.lastIndexOf("/");
  dirs.delete(i <= 0 ? "/" : path.slice(0, i));
}
