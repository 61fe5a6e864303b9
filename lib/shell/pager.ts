/**
 * `render.paging = auto` (subsystems §11): a final value taller than the terminal goes through
 * the pager (`render.pager`, else `$PAGER`, else `less -R`) on a PTY of its own, reading a temp
 * file; a pager that is missing or fails falls back to printing, so nothing is lost.
 *
 * @module
 */

import type { CaptureOptions, CaptureResult } from "../exec/mod.ts";

/** Rows `text` takes at `cols` columns (wrapped lines count as many). */
export function rowsOf(text: string, cols: number): number {
  let rows = 0;
  for (const line of text.split("\n")) rows += Math.max(1, Math.ceil([...line].length / cols));
  return rows;
}

/** The pager command line. */
export function pagerArgv(configured: string | null, env: Record<string, string>): string[] {
  const cmd = configured ?? env.PAGER ?? "less -R";
  const argv = cmd.trim().split(/\s+/).filter((w) => w !== "");
  return argv.length ? argv : ["less", "-R"];
}

/**
 * Show `text` through the pager; false when it could not (the caller prints instead).
 * `run` is the PTY foreground.
 */
export async function page(
  text: string,
  argv: string[],
  run: (o: CaptureOptions) => Promise<CaptureResult>,
  cwd: string,
  env: Record<string, string>,
): Promise<boolean> {
  const file = await Deno.makeTempFile({ prefix: "shoal-page-", suffix: ".txt" });
  try {
    await Deno.writeTextFile(file, text.endsWith("\n") ? text : text + "\n");
    const r = await run({ argv: [...argv, file], cwd, env });
    return r.status === 0;
  } catch {
    return false;
  } finally {
    await Deno.remove(file).catch(() => {});
  }
}
