/**
 * PATH lookup, done by us rather than by the spawner, so that the *session's* PATH and cwd
 * decide what a bare name means (never the host process's).
 *
 * @module
 */

import { isAbsolute, join, resolve } from "node:path";
import { dirWatch } from "./dir_watch.ts";
import { isExecutableMode, statMode } from "./statx.ts";

/** Used when neither the caller's env nor the host has a PATH (glibc's execvp default plus sbin). */
export const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/**
 * True when `path` is a regular file (after following symlinks) with at least one execute
 * bit set. Never throws.
 */
export function isExecutableFile(path: string): boolean {
  return isExecutableMode(statMode(path));
}

/**
 * Resolve a command name the way `execvp` would, against an explicit PATH.
 *
 * - A name containing `/` is not searched: it is resolved against `cwd` (when relative)
 *   and returned if it is an executable regular file.
 * - Otherwise each PATH entry is tried in order; an empty entry means the current
 *   directory (`cwd`). Relative entries are resolved against `cwd`; without a `cwd` they
 *   are skipped, because the host process's cwd is never the session's.
 * - `pathEnv` undefined searches {@link DEFAULT_PATH}.
 *
 * Returns the absolute path of the first hit (not canonicalised, so `argv[0]`-sensitive
 * programs see their own name), or `null`.
 *
 * A hit found through absolute PATH entries only is remembered while nothing changes in the
 * directories that decided it ({@link dirWatch}): the next search for it costs one read(2),
 * not a stat per PATH entry, and still sees a binary installed, removed or made executable
 * since. Misses are never remembered.
 */
export function which(name: string, pathEnv: string | undefined, cwd?: string): string | null {
  if (name === "" || name.includes("\0")) return null;
  if (name.includes("/")) {
    let candidate = name;
    if (!isAbsolute(name)) {
      if (cwd === undefined || !isAbsolute(cwd)) return null;
      candidate = resolve(cwd, name);
    }
    return isExecutableFile(candidate) ? candidate : null;
  }
  const search = pathEnv ?? DEFAULT_PATH;
  const watch = dirWatch();
  // Read before looking: a change from here on makes what is seen below stale.
  const generation = watch?.generation() ?? NaN;
  const key = name + "\0" + search;
  const known = hits.get(key);
  if (known !== undefined && known.generation === generation) return known.path;
  let cacheable = watch !== null;
  for (const entry of search.split(":")) {
    let dir = entry === "" ? "." : entry;
    if (!isAbsolute(dir)) {
      cacheable = false; // the answer depends on the cwd
      if (cwd === undefined || !isAbsolute(cwd)) continue;
      dir = resolve(cwd, dir);
    }
    // Watched before it is looked in, so that no change slips between the two.
    if (cacheable && !watch!.watchDir(dir)) cacheable = false;
    const candidate = join(dir, name);
    if (isExecutableFile(candidate)) {
      if (cacheable && watch!.watchFile(candidate)) remember(key, generation, candidate);
      return candidate;
    }
  }
  return null;
}

/** Remembered hits by name and PATH (bounded: cleared when full). */
const hits = new Map<string, { generation: number; path: string }>();
const MAX_HITS = 512;

function remember(key: string, generation: number, path: string): void {
  if (hits.size >= MAX_HITS) hits.clear();
  hits.set(key, { generation, path });
}
