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

/** CPU the main thread of a process (its thread whose id is the pid) has used, ms. */
export function mainThreadCpuMs(pid: number): number {
  const f = Deno.readTextFileSync(`/proc/${pid}/task/${pid}/stat`).split(") ")[1].split(" ");
  return (Number(f[11]) + Number(f[12])) * 10;
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

/** How a process's CPU is shown: its children's apart, its main thread apart from the rest. */
export interface SplitOptions {
  /** Processes whose reaped children get a row (`NAME's children`). */
  children?: string[];
  /** Processes shown as `NAME main` and `NAME other threads` (a Worker, the runtime's pool). */
  threads?: string[];
}

/** Run `fn` `n` times in sequence; the wall time and, per named pid, the CPU per call. */
export async function cpuPerCall(
  n: number,
  fn: () => Promise<unknown>,
  pids: Record<string, number>,
  opts: SplitOptions = {},
): Promise<CpuSplit> {
  const read = (p: number) => ({ ...cpuMs(p), main: mainThreadCpuMs(p) });
  const before = Object.fromEntries(Object.entries(pids).map(([k, p]) => [k, read(p)]));
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await fn();
  const wallUs = (performance.now() - t0) / n * 1000;
  const cpuUs: Record<string, number> = {};
  const per = (ms: number) => ms / n * 1000;
  for (const [k, p] of Object.entries(pids)) {
    const now = read(p);
    const self = now.self - before[k].self;
    if (opts.threads?.includes(k)) {
      const main = now.main - before[k].main;
      cpuUs[`${k} main`] = per(main);
      cpuUs[`${k} other threads`] = per(self - main);
    } else cpuUs[k] = per(self);
    if (opts.children?.includes(k)) {
      cpuUs[`${k}'s children`] = per(now.children - before[k].children);
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
