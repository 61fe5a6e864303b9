/**
 * Shared pieces of the kernel benchmarks (`kernel.ts`, `isolation.ts`): a bare echo server with
 * the kernel's framing as the round-trip baseline, process start-up, timing and reporting.
 *
 *   deno run -A bench/_kernel_bench.ts --echo-server PATH   (started by startEchoServer)
 *
 * @module
 */

import { FrameReader, FrameWriter } from "../lib/client/framing.ts";
import { join } from "node:path";
import { KernelClient } from "../lib/client/client.ts";
import { startReady } from "./_kernel.ts";

/** One request frame as a bench server sees it. */
export interface BenchRequest {
  id: unknown;
  params?: Record<string, unknown>;
}

/**
 * Serve the kernel's framing on `path` (prints `ready` on stderr once listening): `answer`
 * gets each request frame and a `reply` that sends its result.
 */
export async function serveFrames(
  path: string,
  ready: string,
  answer: (m: BenchRequest, reply: (result: unknown) => void) => void,
): Promise<void> {
  const listener = Deno.listen({ transport: "unix", path });
  console.error(ready);
  for await (const conn of listener) {
    (async () => {
      const reader = new FrameReader(conn);
      const writer = new FrameWriter(conn);
      try {
        for (let f = await reader.next(); f; f = await reader.next()) {
          if (f.kind !== "line") continue;
          const m = JSON.parse(f.text) as BenchRequest;
          answer(m, (result) => {
            writer.send({ jsonrpc: "2.0", id: m.id, result }).catch(() => {});
          });
        }
      } catch { /* peer gone */ }
    })();
  }
}

/** `--echo-server PATH`: answer every request frame with `{id, result: params}`. */
export function echoServer(path: string): Promise<void> {
  return serveFrames(path, "echo: ready", (m, reply) => reply(m.params ?? null));
}

/** Run `module` with `flag PATH` as its own process; resolves once it printed `ready`. */
export function startBenchServer(
  module: string,
  flag: string,
  path: string,
  ready: string,
): Promise<Deno.ChildProcess> {
  return startReady(["run", "-A", new URL(module).pathname, flag, path], ready);
}

/** Print one ratio line against its target. */
export function line(label: string, ms: number, base: number, target: number): void {
  const ratio = ms / base;
  console.log(
    `${label.padEnd(46)} ${(ms * 1000).toFixed(0).padStart(8)} µs  ${ratio.toFixed(2)}×  ` +
      `(target ≤ ${target}: ${ratio <= target ? "met" : "MISSED"})`,
  );
}

/** Per-call times (ms) of `n` sequential calls. */
export async function times(n: number, fn: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    out.push(performance.now() - t);
  }
  return out;
}

/** Median. */
export function med(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

type Caller = { call(m: string, p: Record<string, unknown>): Promise<unknown> };

/**
 * Medians (ms) of `exec "1 + 2"` on `k`, of the same frame on each echo server of `echoes` and
 * on each four-hop relay of `floors` (`_hop_floor.ts`), warmed up and interleaved in rounds so
 * all see the same machine load. The echo baseline is the fastest echo server's median: one
 * echo process lands in a fast or a slow mode for its whole life (measured on the 2-core
 * machine: ~35 µs or ~65 µs, run to run, however the others fare), so one instance alone could
 * halve every ratio; the fastest of several is the strict baseline. `echoAll` has each median.
 */
export async function execVsEcho(
  echoes: Caller[],
  k: Caller,
  floors: Caller[] = [],
): Promise<{ echoMs: number; echoAll: number[]; execMs: number; floorMs: number[] }> {
  const once = (c: Caller) => () => c.call("exec", { src: "1 + 2" });
  const all = [k, ...floors, ...echoes];
  for (const c of all) await times(500, once(c));
  const t: number[][] = all.map(() => []);
  for (let r = 0; r < 10; r++) {
    for (let i = 0; i < all.length; i++) t[i].push(...await times(200, once(all[i])));
  }
  const medians = t.map(med);
  const echoAll = medians.slice(1 + floors.length);
  return {
    echoMs: Math.min(...echoAll),
    echoAll,
    execMs: medians[0],
    floorMs: medians.slice(1, 1 + floors.length),
  };
}

/** The echo baseline as its own process on `path`. */
export function startEchoServer(path: string): Promise<Deno.ChildProcess> {
  return startBenchServer(import.meta.url, "--echo-server", path, "echo: ready");
}

/** How many echo servers a round-trip baseline is taken from ({@link execVsEcho}). */
export const ECHO_SERVERS = 4;

/** {@link ECHO_SERVERS} echo servers in `dir`, each its own process, with a client on each. */
export async function startEchoServers(
  dir: string,
): Promise<{ clients: KernelClient[]; stop: () => Promise<void> }> {
  const procs: Deno.ChildProcess[] = [];
  const clients: KernelClient[] = [];
  for (let i = 0; i < ECHO_SERVERS; i++) {
    const path = join(dir, `echo-${i}.sock`);
    procs.push(await startEchoServer(path));
    clients.push(await KernelClient.connect({ socket: path }));
  }
  return {
    clients,
    async stop() {
      for (const c of clients) c.close();
      for (const p of procs) {
        p.kill("SIGTERM");
        await p.status;
      }
    },
  };
}

/** `echo server round trip: 35 µs (fastest of 4 servers: 35, 36, 64, 66 µs)` */
export function echoLine(echoMs: number, echoAll: number[]): string {
  const each = echoAll.map((x) => (x * 1000).toFixed(0)).join(", ");
  return `echo server round trip: ${(echoMs * 1000).toFixed(0)} µs (fastest of ` +
    `${echoAll.length} servers: ${each} µs)`;
}

if (import.meta.main) {
  const i = Deno.args.indexOf("--echo-server");
  if (i >= 0) await echoServer(Deno.args[i + 1]);
}
