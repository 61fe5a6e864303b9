/**
 * PTY benchmark, every ratio against a baseline measured in the same run.
 *
 *   deno run -A --unstable-worker-options bench/pty.ts
 *
 * 1. Throughput: 32 MB of text through a PTY — read raw by the prototype
 *    (`../shared/prototypes/pty.ts`, poll + read, the baseline), read raw by lib/exec's Pty,
 *    and through the agent PTY into the screen model (what `pty.read` shows).
 * 2. `pty.read` round trip vs `exec "1 + 2"` over the kernel's socket.
 * 3. `wait_for` latency: from the program's write (its own clock) to the answer arriving,
 *    vs the `pty.read` round trip — and vs what polling every 50 ms (the upstream advice)
 *    would cost on average.
 * 4. Idle: CPU time of this process over 2 s with 16 idle PTYs open vs with none.
 *
 * @module
 */

import { join } from "node:path";
import { KernelClient } from "../lib/client/client.ts";
import { openPty } from "../lib/exec/mod.ts";
import { startKernel } from "../lib/kernel/server.ts";
import { AgentPty } from "../lib/kernel/pty_session.ts";

const MB = 1 << 20;
const SIZE = 32 * MB;
const ENV = { PATH: "/usr/local/bin:/usr/bin:/bin", TERM: "xterm-256color" };
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const dir = await Deno.makeTempDir({ prefix: "shoal-bench-pty-" });
const file = join(dir, "text.txt");
{
  const line = "the quick brown fox jumps over the lazy dog 0123456789 ABCDEFGHIJ\n";
  const chunk = line.repeat(Math.ceil(MB / line.length));
  await Deno.writeTextFile(file, chunk.repeat(SIZE / MB).slice(0, SIZE));
}

async function mbps(fn: () => Promise<number>): Promise<number> {
  const rates: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    const bytes = await fn();
    rates.push(bytes / MB / ((performance.now() - t) / 1000));
  }
  return median(rates);
}

// 1. throughput ------------------------------------------------------------------------------
type Proto = {
  Pty: {
    spawn(file: string, argv: string[], o: Record<string, unknown>): {
      readPolled(): AsyncGenerator<Uint8Array>;
      wait(): Promise<unknown>;
      close(): void;
    };
  };
};
let proto: Proto | null = null;
try {
  proto = await import(new URL("../../shared/prototypes/pty.ts", import.meta.url).href) as Proto;
} catch (e) {
  console.log(`(prototype not found beside the repo: ${(e as Error).message}; no baseline)`);
}

const protoRate = proto
  ? await mbps(async () => {
    const p = proto!.Pty.spawn("cat", ["cat", file], { nonblockMaster: true, env: ENV });
    let n = 0;
    for await (const c of p.readPolled()) n += c.length;
    await p.wait();
    p.close();
    return n;
  })
  : NaN;

const rawRate = await mbps(async () => {
  const p = openPty({ argv: ["cat", file], cwd: dir, env: ENV });
  const buf = new Uint8Array(65536);
  let n = 0;
  for (let k = await p.read(buf); k > 0; k = await p.read(buf)) n += k;
  await p.close();
  return n;
});

const screenRate = await mbps(async () => {
  const p = openPty({ argv: ["cat", file], cwd: dir, env: ENV });
  let exited!: () => void;
  const done = new Promise<void>((r) => (exited = r));
  // Done when an agent would see the whole output on the screen: the exit notice comes then.
  const a = new AgentPty(1, p, "cat", 1000, (n) => n.kind === "exit" && exited());
  await done;
  const r = await a.read();
  await a.close();
  return r.output_bytes as number;
});

const waitingRate = await mbps(async () => {
  const p = openPty({ argv: ["cat", file], cwd: dir, env: ENV });
  const a = new AgentPty(1, p, "cat", 1000, () => {});
  // The same with a `wait_for` pending all along (it re-checks output and screen as they come).
  const r = await a.read({ waitFor: /never matches/, timeoutMs: 120_000 });
  await a.close();
  return r.output_bytes as number;
});

const fmt = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : "n/a");
console.log("1. 32 MB of text through a PTY (median of 3)");
console.log(`   prototype raw read (baseline)        ${fmt(protoRate)} MB/s`);
console.log(
  `   lib/exec Pty raw read                 ${fmt(rawRate)} MB/s  ${fmt(rawRate / protoRate)}×`,
);
console.log(
  `   agent PTY into the screen model       ${fmt(screenRate)} MB/s  ${
    fmt(screenRate / protoRate)
  }×`,
);
console.log(
  `   … with a wait_for pending all along   ${fmt(waitingRate)} MB/s  ${
    fmt(waitingRate / protoRate)
  }×`,
);

// 2–3. over the kernel's socket --------------------------------------------------------------
const kernel = await startKernel({
  socket: join(dir, "k.sock"),
  journal: false,
  cwd: dir,
  env: ENV,
  onError: () => {},
});
const c = await KernelClient.connect({ socket: kernel.path, attach: { session: "bench" } });
for (let i = 0; i < 50; i++) await c.call("exec", { src: "1 + 2" });
const o = await c.call<{ pty_id: string }>("pty.open", {
  cmd: "python3",
  args: [
    "-u",
    "-c",
    "import sys, time\nfor l in sys.stdin:\n    print('MARK', time.time_ns(), flush=True)",
  ],
});
await c.call("pty.read", { pty_id: o.pty_id, wait_for: "(?!)", timeout_ms: 300 });

async function rtt(n: number, fn: () => Promise<unknown>): Promise<number> {
  const ts: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    ts.push(performance.now() - t);
  }
  return median(ts);
}
const execMs = await rtt(500, () => c.call("exec", { src: "1 + 2" }));
const readMs = await rtt(500, () => c.call("pty.read", { pty_id: o.pty_id }));
console.log("2. round trips over the socket (median of 500)");
console.log(`   exec "1 + 2" (baseline)               ${(execMs * 1000).toFixed(0)} µs`);
console.log(
  `   pty.read (80x24 screen)               ${(readMs * 1000).toFixed(0)} µs  ${
    (readMs / execMs).toFixed(2)
  }×`,
);

const lat: number[] = [];
for (let i = 0; i < 100; i++) {
  const pending = c.call<{ matched: { text: string } | null }>("pty.read", {
    pty_id: o.pty_id,
    wait_for: "MARK \\d+",
    match: "output",
    timeout_ms: 5000,
  });
  await sleep(5); // the read is waiting before the program writes
  await c.call("pty.send", { pty_id: o.pty_id, input: "\r" });
  const r = await pending;
  const arrived = (performance.timeOrigin + performance.now()) * 1e6;
  const wrote = Number(r.matched!.text.slice(5));
  lat.push((arrived - wrote) / 1e6);
}
const waitMs = median(lat);
console.log("3. wait_for: the program's write → the answer (median of 100)");
console.log(
  `   wait_for latency                      ${(waitMs * 1000).toFixed(0)} µs  ${
    (waitMs / readMs).toFixed(2)
  }× a pty.read round trip`,
);
console.log(
  `   polling every 50 ms would add         ${(25 + readMs).toFixed(1)} ms on average (${
    ((25 + readMs) / waitMs).toFixed(0)
  }× slower), and a call per poll`,
);
c.close();
await kernel.close();

// 4. idle cost ------------------------------------------------------------------------------
function cpuMs(): number {
  const f = Deno.readTextFileSync("/proc/self/stat").split(") ")[1].split(" ");
  const ticks = Number(f[11]) + Number(f[12]); // utime + stime
  return ticks * 10; // USER_HZ = 100
}
async function idleCpu(ms: number): Promise<number> {
  const t = cpuMs();
  await sleep(ms);
  return cpuMs() - t;
}
const base = await idleCpu(2000);
const idle = Array.from({ length: 16 }, (_, i) => {
  const p = openPty({ argv: ["sleep", "30"], cwd: dir, env: ENV });
  return new AgentPty(100 + i, p, "sleep 30", 1000, () => {});
});
await sleep(200);
const withPtys = await idleCpu(2000);
await Promise.all(idle.map((a) => a.close()));
console.log("4. idle: CPU time of this process over 2 s");
console.log(`   no PTYs (baseline)                    ${base} ms`);
console.log(`   16 idle PTYs                          ${withPtys} ms`);

await Deno.remove(dir, { recursive: true });
