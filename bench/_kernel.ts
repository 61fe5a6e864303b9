/**
 * A kernel subprocess for benchmarks and the agent trial: `shoal kernel ARGS…` started from
 * this checkout, resolved once it prints its ready line (its stderr is drained afterwards so it
 * never blocks on a full pipe).
 *
 * @module
 */

import { fileURLToPath } from "node:url";

const root = (p: string) => fileURLToPath(new URL(`../${p}`, import.meta.url));
const DENO_RUN = ["run", "-A", "--unstable-worker-options", "--config", root("deno.json")];

/** Start `shoal kernel …args` in `cwd` and wait until it is ready. */
export function spawnKernel(
  args: string[],
  cwd: string,
  env?: Record<string, string>,
): Promise<Deno.ChildProcess> {
  return startReady([...DENO_RUN, root("main.ts"), "kernel", ...args], "shoal-kernel: ready", {
    cwd,
    env,
  });
}

/** Start `deno …args`; resolves once its stderr shows `ready` (then drains the rest). */
export async function startReady(
  args: string[],
  ready: string,
  opts: { cwd?: string; env?: Record<string, string> } = {},
): Promise<Deno.ChildProcess> {
  const child = new Deno.Command(Deno.execPath(), {
    args,
    ...(opts.cwd ? { cwd: opts.cwd } : {}),
    ...(opts.env ? { env: opts.env } : {}),
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  while (!seen.includes(ready)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`process exited before "${ready}": ${seen}`);
    seen += value;
  }
  (async () => {
    while (!(await reader.read()).done) { /* drain */ }
  })().catch(() => {});
  return child;
}
