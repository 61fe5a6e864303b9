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
import { FrameReader, FrameWriter } from "../lib/client/framing.ts";

const HERE = new URL(".", import.meta.url).pathname;

/** `--echo-server PATH`: answer every request frame with `{id, result: params}`. */
async function echoServer(path: string): Promise<void> {
  const listener = Deno.listen({ transport: "unix", path });
  console.error("echo: ready");
  for await (const conn of listener) {
    (async () => {
      const reader = new FrameReader(conn);
      const writer = new FrameWriter(conn);
      try {
        for (let f = await reader.next(); f; f = await reader.next()) {
          if (f.kind !== "line") continue;
          const m = JSON.parse(f.text);
          writer.send({ jsonrpc: "2.0", id: m.id, result: m.params ?? null }).catch(() => {});
        }
      } catch { /* peer gone */ }
    })();
  }
}

async function startProcess(args: string[], ready: string): Promise<Deno.ChildProcess> {
  const child = new Deno.Command(Deno.execPath(), {
    args,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes(ready)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`process exited before ready: ${text}`);
    text += value;
  }
  (async () => {
    while (!(await reader.read()).done) { /* drain */ }
  })();
  return child;
}

/** Median of `runs` timed async calls (ms) after `warm` warm-up calls. */
async function median(runs: number, warm: number, fn: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < warm; i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await fn();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

function line(label: string, ms: number, base: number, target: number): void {
  const ratio = ms / base;
  console.log(
    `${label.padEnd(46)} ${(ms * 1000).toFixed(0).padStart(8)} µs  ${ratio.toFixed(2)}×  ` +
      `(target ≤ ${target}: ${ratio <= target ? "met" : "MISSED"})`,
  );
}

async function main(): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "shoal-bench-kernel-" });
  const echoPath = join(dir, "echo.sock");
  const kernelPath = join(dir, "k.sock");
  const echo = await startProcess(
    ["run", "-A", join(HERE, "kernel.ts"), "--echo-server", echoPath],
    "echo: ready",
  );
  const kernel = await startProcess(
    [
      "run",
      "-A",
      "--unstable-worker-options",
      join(HERE, "../lib/kernel/cli.ts"),
      "--socket",
      kernelPath,
      "--ephemeral",
    ],
    "shoal-kernel: ready",
  );
  try {
    // 1. Round trip.
    const e = await KernelClient.connect({ socket: echoPath });
    const k = await KernelClient.connect({ socket: kernelPath, attach: { session: "bench" } });
    const echoMs = await median(2000, 500, () => e.call("exec", { src: "1 + 2" }));
    const execMs = await median(2000, 500, () => k.call("exec", { src: "1 + 2" }));
    console.log(`echo server round trip: ${(echoMs * 1000).toFixed(0)} µs`);
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
    const smallMs = await median(30, 5, () => k.call("exec", { src: "small" }));
    const bigMs = await median(30, 5, () => k.call("exec", { src: "big" }));
    console.log(`exec "small" (1,000 rows): ${(smallMs * 1000).toFixed(0)} µs`);
    line('exec "big" (1,000,000 rows) vs exec "small"', bigMs, smallMs, 3);

    // 3. Deep selection must not scale with the index.
    const ref = (await k.call<{ ref: string }>("exec", { src: "big" })).ref;
    const firstMs = await median(
      200,
      20,
      () => k.call("value.get", { ref, path: ".rows[0].name" }),
    );
    const lastMs = await median(
      200,
      20,
      () => k.call("value.get", { ref, path: ".rows[999999].name" }),
    );
    console.log(`value.get .rows[0].name: ${(firstMs * 1000).toFixed(0)} µs`);
    line("value.get .rows[999999].name vs .rows[0].name", lastMs, firstMs, 2);

    // 4. Throughput with 8 concurrent clients (one session each).
    const clients = await Promise.all(
      Array.from(
        { length: 8 },
        (_, i) => KernelClient.connect({ socket: kernelPath, attach: { session: `c${i}` } }),
      ),
    );
    for (const c of clients) for (let i = 0; i < 50; i++) await c.call("exec", { src: "1 + 2" });
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
    e.close();
    k.close();
  } finally {
    echo.kill("SIGTERM");
    kernel.kill("SIGTERM");
    await Promise.all([echo.status, kernel.status]);
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) {
  const i = Deno.args.indexOf("--echo-server");
  if (i >= 0) await echoServer(Deno.args[i + 1]);
  else await main();
}
