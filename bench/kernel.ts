/**
 * Kernel benchmark, every ratio against a baseline measured in the same run. The kernel runs
 * as its own process (`lib/kernel/cli.ts`), like in production; the client is the typed
 * `KernelClient` for every measurement.
 *
 *   deno run -A --unstable-worker-options bench/kernel.ts
 *
 * 1. `exec "1 + 2"` round trip vs a bare echo server with the same framing (target ≤ 3).
 * 2. `exec "big"` (1,000,000-row table) vs `exec "small"` (1,000 rows), both built once in
 *    setup: elision must not scale with the value (target ≤ 3).
 * 3. `value.get` of `.rows[999999].name` vs `.rows[0].name` on the big table (target ≤ 2).
 * 4. requests/s with 8 concurrent clients (8 sessions, `exec "1 + 2"`).
 *
 * @module
 */

import { join } from "node:path";
import { KernelClient } from "../lib/client/client.ts";
import { spawnKernel } from "./_kernel.ts";
import { echoLine, execVsEcho, line, med, startEchoServers, times } from "./_kernel_bench.ts";

/** One kernel process; `full` also runs the value.get and throughput parts. */
async function measure(dir: string, echoes: KernelClient[], extra: string[], full: boolean) {
  const kernelPath = join(dir, `k${extra.length}.sock`);
  const kernel = await spawnKernel(
    [
      "--socket",
      kernelPath,
      ...extra,
    ],
    dir,
  );
  try {
    // 1. Round trip, echo and exec interleaved in rounds so both see the same machine load.
    const k = await KernelClient.connect({ socket: kernelPath, attach: { session: "bench" } });
    const { echoMs, echoAll, execMs } = await execVsEcho(echoes, k);
    console.log(echoLine(echoMs, echoAll));
    line("exec `1 + 2` vs echo round trip", execMs, echoMs, 3);

    // 2. Elision must not scale with the value.
    const t0 = performance.now();
    await k.call("exec", {
      src: 'let big = csv.parse("name,i\\n" + (0..1000000).map(i => "n{i},{i}").join("\\n"))\n' +
        'let small = csv.parse("name,i\\n" + (0..1000).map(i => "n{i},{i}").join("\\n"))\n' +
        "big.len()",
    });
    console.log(
      `setup: built the 1,000,000-row and 1,000-row tables in ${
        ((performance.now() - t0) / 1000).toFixed(1)
      } s`,
    );
    const smallT: number[] = [];
    const bigT: number[] = [];
    for (let r = 0; r < 5; r++) {
      smallT.push(...await times(8, () => k.call("exec", { src: "small" })));
      bigT.push(...await times(8, () => k.call("exec", { src: "big" })));
    }
    console.log(`exec "small" (1,000 rows): ${(med(smallT) * 1000).toFixed(0)} µs`);
    line('exec "big" (1,000,000 rows) vs exec "small"', med(bigT), med(smallT), 3);
    if (!full) {
      k.close();
      return;
    }

    // 3. Deep selection must not scale with the index.
    const ref = (await k.call<{ ref: string }>("exec", { src: "big" })).ref;
    const firstT: number[] = [];
    const lastT: number[] = [];
    for (let r = 0; r < 10; r++) {
      firstT.push(...await times(30, () => k.call("value.get", { ref, path: ".rows[0].name" })));
      lastT.push(
        ...await times(30, () => k.call("value.get", { ref, path: ".rows[999999].name" })),
      );
    }
    console.log(`value.get .rows[0].name: ${(med(firstT) * 1000).toFixed(0)} µs`);
    line("value.get .rows[999999].name vs .rows[0].name", med(lastT), med(firstT), 2);
    k.close();

    // 4. Throughput with 8 concurrent clients (one session each).
    const clients = await Promise.all(
      Array.from(
        { length: 8 },
        (_, i) => KernelClient.connect({ socket: kernelPath, attach: { session: `c${i}` } }),
      ),
    );
    await Promise.all(clients.map((c) => times(200, () => c.call("exec", { src: "1 + 2" }))));
    let count = 0;
    const end = performance.now() + 3000;
    const t1 = performance.now();
    await Promise.all(clients.map(async (c) => {
      while (performance.now() < end) {
        await c.call("exec", { src: "1 + 2" });
        count++;
      }
    }));
    const secs = (performance.now() - t1) / 1000;
    console.log(`8 concurrent clients, exec "1 + 2": ${(count / secs).toFixed(0)} requests/s`);
    for (const c of clients) c.close();
  } finally {
    kernel.kill("SIGTERM");
    await kernel.status;
  }
}

async function main(): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "shoal-bench-kernel-" });
  const echoes = await startEchoServers(dir);
  try {
    console.log("-- kernel core (--ephemeral --no-journal): the targets --");
    await measure(dir, echoes.clients, ["--ephemeral", "--no-journal"], true);
    console.log("-- with the in-memory journal (--ephemeral): journaling cost, for reference --");
    await measure(dir, echoes.clients, ["--ephemeral"], false);
  } finally {
    await echoes.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) await main();
