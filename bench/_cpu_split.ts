/**
 * Where a round trip's time goes, process by process, for `mcp.ts`: the CPU each process of the
 * path (MCP facade, kernel, session process, the session's own children) spends per call, read
 * from `/proc/PID/stat` around a run of sequential calls. On a two-core machine the path's
 * processes mostly run one after another, so CPU per call adds up to most of the wall time, and
 * the split says which hop to cut. The kernel's clock ticks are 10 ms: over n calls the
 * resolution is 10/n ms a call (10 µs at n = 1000).
 *
 * @module
 */

/** CPU a process has used, ms: its own, and that of its children it has reaped. */
export function cpuMs(pid: number): { self: number; children: number } {
  // Fields after the ") " that ends the command name: utime is the 12th, cstime the 15th.
  const f = Deno.readTextFileSync(`/proc/${pid}/stat`).split(") ")[1].split(" ");
  const tick = 10; // USER_HZ is 100 on Linux
  return {
    self: (Number(f[11]) + Number(f[12])) * tick,
    children: (Number(f[13]) + Number(f[14])) * tick,
  };
}

/** The pids of a process's children now. */
export function childPids(pid: number): number[] {
  try {
    const text = Deno.readTextFileSync(`/proc/${pid}/task/${pid}/children`);
    return text.trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** One row: wall time and CPU per call (µs) of each named process. */
export interface CpuSplit {
  wallUs: number;
  cpuUs: Record<string, number>;
}

/**
 * Run `fn` `n` times in sequence; the wall time per call and, per named pid, the CPU per call
 * (`NAME+children` rows for the reaped children of pids listed in `withChildren`).
 */
export async function cpuPerCall(
  n: number,
  fn: () => Promise<unknown>,
  pids: Record<string, number>,
  withChildren: string[] = [],
): Promise<CpuSplit> {
  const before = Object.fromEntries(Object.entries(pids).map(([k, p]) => [k, cpuMs(p)]));
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await fn();
  const wallUs = (performance.now() - t0) / n * 1000;
  const cpuUs: Record<string, number> = {};
  for (const [k, p] of Object.entries(pids)) {
    const now = cpuMs(p);
    cpuUs[k] = (now.self - before[k].self) / n * 1000;
    if (withChildren.includes(k)) {
      cpuUs[`${k}'s children`] = (now.children - before[k].children) / n * 1000;
    }
  }
  return { wallUs, cpuUs };
}

/** `wall 466 µs  cpu: facade 200, kernel 170, session 90` */
export function formatSplit(s: CpuSplit): string {
  const parts = Object.entries(s.cpuUs).map(([k, v]) => `${k} ${v.toFixed(0)}`);
  const sum = Object.values(s.cpuUs).reduce((a, b) => a + b, 0);
  return `wall ${s.wallUs.toFixed(0).padStart(5)} µs  cpu µs: ${parts.join(", ")} ` +
    `(sum ${sum.toFixed(0)})`;
}
