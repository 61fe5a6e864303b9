/**
 * Shared helpers for the process-layer tests: real temp dirs, a minimal explicit env,
 * and /proc inspection.
 *
 * @module
 */

import { groupMembers } from "../../lib/exec/mod.ts";

/** The explicit environment tests hand to children. */
export const ENV: Record<string, string> = { PATH: "/usr/local/bin:/usr/bin:/bin" };

export const dec = new TextDecoder();
export const enc = new TextEncoder();

/** Run `fn` with a fresh temp dir that is removed afterwards. */
export async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix: "shoal-exec-test-" });
  try {
    return await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Poll `cond` every 10 ms for at most `ms`; returns whether it became true. */
export async function waitFor(cond: () => boolean, ms = 10_000): Promise<boolean> {
  const deadline = performance.now() + ms;
  while (!cond()) {
    if (performance.now() > deadline) return false;
    await sleep(10);
  }
  return true;
}

/** State letter of `pid` from /proc, or null when it no longer exists. */
export function procState(pid: number): string | null {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
  } catch {
    return null;
  }
}

/** True when `pid` is gone or only a zombie (dead, waiting to be reaped by init). */
export function isDead(pid: number): boolean {
  const s = procState(pid);
  return s === null || s === "Z" || s === "X";
}

/** Live (non-zombie) members of a process group. */
export function liveMembers(pgid: number): number[] {
  return (groupMembers(pgid) ?? []).filter((m) => m.state !== "Z" && m.state !== "X").map((m) =>
    m.pid
  );
}

/** Command line of `pid` as words. */
export function cmdline(pid: number): string[] {
  try {
    return Deno.readTextFileSync(`/proc/${pid}/cmdline`).split("\0").filter((w) => w !== "");
  } catch {
    return [];
  }
}

/**
 * Test cleanup: continue and SIGKILL whatever is left of group `pgid` (a failed assertion
 * must not leave stopped or sleeping processes behind).
 */
export function killGroupQuietly(pgid: number): void {
  for (const sig of ["SIGCONT", "SIGKILL"] as const) {
    try {
      Deno.kill(-pgid, sig);
    } catch {
      return; // group gone
    }
  }
}
