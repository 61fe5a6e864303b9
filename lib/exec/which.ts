/**
 * PATH lookup, done by us rather than by the spawner, so that the *session's* PATH and cwd
 * decide what a bare name means (never the host process's).
 *
 * @module
 */

import { isAbsolute, join, resolve } from "node:path";
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
  for (const entry of (pathEnv ?? DEFAULT_PATH).split(":")) {
    let dir = entry === "" ? "." : entry;
    if (!isAbsolute(dir)) {
      if (cwd === undefined || !isAbsolute(cwd)) continue;
      dir = resolve(cwd, dir);
    }
    const candidate = join(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return null;
}
