/**
 * Where a new session starts (issue 19). A kernel can outlive the directory it was started in
 * (an autostarted kernel inherits its facade's cwd, which may be deleted later): a new session
 * then starts in a directory that exists — the configured one, else `$HOME`, else `/` — and
 * says why, instead of failing every `session.attach`.
 *
 * @module
 */

/** True when `p` names an existing directory. */
export function isDir(p: string | null | undefined): p is string {
  if (!p) return false;
  try {
    return Deno.statSync(p).isDirectory;
  } catch {
    return false;
  }
}

export { processCwd } from "../client/process_cwd.ts";

/**
 * The start directory of a new session and, when it is not the one asked for (`asked`, the
 * attaching client's directory) or else `wanted` (the configured one, or the kernel's working
 * directory when it started), why.
 */
export function sessionStartCwd(
  wanted: string | null,
  asked: string | null = null,
): { cwd: string; note: string | null } {
  if (isDir(asked)) return { cwd: asked, note: null };
  if (asked !== null) {
    const fallback = sessionStartCwd(wanted);
    return {
      cwd: fallback.cwd,
      note: `${asked} (the attaching client's directory) is not a directory here; this ` +
        `session starts in ${fallback.cwd}`,
    };
  }
  if (isDir(wanted)) return { cwd: wanted, note: null };
  const home = Deno.env.get("HOME");
  const cwd = isDir(home) ? home : "/";
  const what = wanted === null ? "the kernel's directory" : wanted;
  return { cwd, note: `${what} no longer exists; this session starts in ${cwd}` };
}
