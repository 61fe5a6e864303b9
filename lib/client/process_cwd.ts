/**
 * This process's working directory, or null once it no longer exists (`Deno.cwd()` throws
 * then): a kernel, a facade or a terminal can outlive the directory it started in.
 *
 * @module
 */

/** The process's cwd, or null when it no longer exists. */
export function processCwd(): string | null {
  try {
    return Deno.cwd();
  } catch {
    return null;
  }
}
