/**
 * The agent primer (`docs/agent_primer.md`, the one copy the language's `help` prints too) as
 * the MCP facade serves it: the server `instructions` of both eras, after a short paragraph on
 * the tools, and the resource `shoal://docs/primer`.
 */

/** The primer's resource URI. */
export const PRIMER_URI = "shoal://docs/primer";

const PRIMER_FILE = new URL("../../docs/agent_primer.md", import.meta.url);

let cached: Promise<string> | null = null;

/** The primer text (read once; compile tasks `--include` the file). */
export function primerText(): Promise<string> {
  cached ??= Deno.readTextFile(PRIMER_FILE).catch((e) =>
    `(the Shoal primer could not be read from ${PRIMER_FILE.pathname}: ${(e as Error).message})`
  );
  return cached;
}

/** The server `instructions`: how the tools fit together, then the primer. */
export async function instructions(budgetMs: number): Promise<string> {
  const budget = `${Math.round(budgetMs / 100) / 10} s`;
  return "Tools: shoal_exec {src} runs Shoal source and returns its value; the text of each " +
    "result says what it is and what to call next. A value too big to show comes with a " +
    "shoal_get call that pages it. Work still running after the wait budget " +
    `(${budget}) comes back as a task: shoal_wait {task} waits for it, shoal_cancel stops it; ` +
    "a session runs one exec at a time, so a later exec waits until it ends (a program that " +
    "must run alongside your calls: shoal_pty_open). " +
    `This primer is also the resource ${PRIMER_URI}.\n\n` + await primerText();
}
