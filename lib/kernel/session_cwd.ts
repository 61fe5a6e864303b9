/**
 * Where a new session starts (issue 19). A kernel can outlive the directory it was started in
 * (an autostarted kernel inherits its facade's cwd, which may be deleted later): a new session
 * then starts in a directory that exists — the configured one, else `$HOME`, else `/` — and
 * says why, instead of failing every `session.attach`.
 *
 * @module
 */

function isDir(p: string | null | undefined): p is string {
  if (!p) return false;
  try {
    return Deno.statSync(p).isDirectory;
  } catch {
    return false;
  }
}

/** The kernel process's cwd, or null when it no longer exists. */
export function processCwd(): string | null {
  try {
    return Deno.cwd();
  } catch {
    return null;
  }
}

/**
 * The start directory of a new session and, when it is not `wanted` (the configured one, or
 * the kernel's working directory when it started), why.
 */
export function sessionStartCwd(wanted: string | null): { cwd: string; note: string | null } {
  if (isDir(wanted)) return { cwd: wanted, note: null };
  const home = Deno.env.get("HOME");
  const cwd = isDir(home) ? home : "/";
  const what = wanted === null ? "the kernel's directory" : wanted;
  return { cwd, note: `${what} no longer exists; this session starts in ${cwd}` };
}
