/**
 * Process-layer benchmark. Every ratio is against a baseline measured in the same run.
 *
 *   deno run -A --unstable-worker-options bench/spawn.ts [--quick]
 *
 * 1. Capturing 50 MB of stdout with spawnCapture vs `sh -c 'cat FILE > /dev/null'` (the
 *    bytes never reach us), with the peak RSS growth of each; a bare Deno.Command read loop
 *    that keeps nothing shows what reaching us at all costs. RSS growth is measured from
 *    the RSS before each variant, so memory freed by an earlier variant can hide some.
 * 2. spawnCapture(["true"]) vs a bare `new Deno.Command("true").output()`, on each spawn
 *    backend (lib/exec/child.ts): posix_spawn with a new process group (the default without
 *    a terminal) or a new session (the default with one), and the Deno.Command + setsid(1)
 *    fallback; `detached: true` for reference.
 * 3. Event-loop blocking of those spawn paths: the lag of a 1 ms interval while spawning,
 *    at our RSS as it is and after allocating and touching 500 MB (fork() copies page
 *    tables, posix_spawn does not).
 * 4. `^true` through the evaluator ({@link benchEvaluatorTrue}).
 *
 * @module
 */

import { join } from "node:path";
import { spawnBackend, spawnCapture, tempFileSpill } from "../lib/exec/mod.ts";
import { setSpawnBackend } from "../lib/exec/child.ts";
import { childIsolation, type Isolation, setChildIsolation } from "../lib/exec/posix_spawn.ts";
import { Evaluator } from "../lib/eval/mod.ts";

const MB = 1_000_000;
const MiB = 1024 * 1024;
const ENV = { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" };

/** One measured variant. */
export interface BenchRow {
  name: string;
  /** Median wall time of one operation, ms. */
  medianMs: number;
  /** Largest RSS growth seen while it ran, bytes (when sampled). */
  peakRssGrowth?: number;
}

/** Run `fn` `runs` times; median wall time and peak RSS growth over the RSS before. */
async function measure(
  name: string,
  runs: number,
  fn: () => Promise<unknown>,
  sampleRss = false,
): Promise<BenchRow> {
  const times: number[] = [];
  const before = Deno.memoryUsage().rss;
  let peak = before;
  const sampler = sampleRss
    ? setInterval(() => peak = Math.max(peak, Deno.memoryUsage().rss), 5)
    : undefined;
  try {
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      await fn();
      times.push(performance.now() - t0);
    }
  } finally {
    clearInterval(sampler);
  }
  peak = Math.max(peak, Deno.memoryUsage().rss);
  times.sort((a, b) => a - b);
  const row: BenchRow = { name, medianMs: times[Math.floor(times.length / 2)] };
  if (sampleRss) row.peakRssGrowth = peak - before;
  return row;
}

/** 50 MB of stdout: spawnCapture (all in memory, and with an 8 MiB cap + spill) vs sh/cat. */
export async function benchCapture50MB(runs: number): Promise<BenchRow[]> {
  const dir = await Deno.makeTempDir({ prefix: "shoal-bench-" });
  try {
    const file = join(dir, "50mb.bin");
    const data = new Uint8Array(50 * MB);
    for (let i = 0; i < data.length; i += 4096) data[i] = i & 0xff;
    await Deno.writeFile(file, data);

    const baseline = await measure("sh -c 'cat FILE > /dev/null' (baseline)", runs, async () => {
      const o = await new Deno.Command("sh", {
        args: ["-c", 'cat "$1" > /dev/null', "sh", file],
        stdout: "null",
        stderr: "null",
      }).output();
      if (!o.success) throw new Error("baseline failed");
    }, true);
    const rawRead = await measure("Deno.Command cat FILE, read & drop", runs, async () => {
      const child = new Deno.Command("cat", { args: [file], stdout: "piped", stderr: "null" })
        .spawn();
      let n = 0;
      for await (const chunk of child.stdout) n += chunk.length;
      if (!(await child.status).success || n !== 50 * MB) throw new Error(`read ${n}`);
    }, true);
    const captured = await measure("spawnCapture cat FILE (64 MiB cap)", runs, async () => {
      const r = await spawnCapture({ argv: ["cat", file], cwd: dir, env: ENV });
      if (r.stdout.length !== 50 * MB) throw new Error(`captured ${r.stdout.length}`);
    }, true);
    const spilled = await measure("spawnCapture cat FILE (8 MiB cap + spill)", runs, async () => {
      const r = await spawnCapture({
        argv: ["cat", file],
        cwd: dir,
        env: ENV,
        stdoutCap: 8 * MiB,
        spill: tempFileSpill({ dir }),
      });
      if (r.stdoutBytes !== 50 * MB || !r.stdoutSpill) throw new Error("spill failed");
      await Deno.remove(r.stdoutSpill.path);
    }, true);
    return [baseline, rawRead, spilled, captured];
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** One way of starting `true` and waiting for it (and its output). */
interface Variant {
  name: string;
  run: () => Promise<unknown>;
}

/** spawnCapture on a given backend (and posix_spawn isolation). */
function captureOn(
  backend: "posix_spawn" | "command",
  isolation?: Isolation,
): () => Promise<unknown> {
  return () => {
    setSpawnBackend(backend);
    if (isolation !== undefined) setChildIsolation(isolation);
    return spawnCapture({ argv: ["true"], cwd: "/", env: ENV });
  };
}

const BASELINE: Variant = {
  name: 'new Deno.Command("true").output() (baseline)',
  run: () => new Deno.Command("true").output(),
};

/**
 * The spawn paths compared by {@link benchTrue} and {@link benchBlocking}, in passes that
 * each start with the baseline. `detached: true` gets a pass of its own: after its fork()
 * our pages are copy-on-write, and the faults slow down whatever runs next.
 */
function spawnPasses(): Variant[][] {
  const ours: Variant[] = [BASELINE];
  if (setSpawnBackend("posix_spawn") === "posix_spawn") {
    ours.push(
      { name: "spawnCapture, posix_spawn + new group", run: captureOn("posix_spawn", "group") },
      { name: "spawnCapture, posix_spawn + new session", run: captureOn("posix_spawn", "session") },
    );
  }
  ours.push({ name: "spawnCapture, Deno.Command + setsid(1)", run: captureOn("command") });
  const fork: Variant = {
    name: "Deno.Command detached: true (fork)",
    // .spawn() first: Deno 2.9's Command#output() ignores `detached` (no setsid, no fork).
    run: () =>
      new Deno.Command("true", { detached: true, stdout: "piped", stderr: "piped" }).spawn()
        .output(),
  };
  return [ours, [BASELINE, fork]];
}

/** Run every variant `runs` times in a fresh random order each round; `fn` times one run. */
async function rounds(
  variants: Variant[],
  runs: number,
  measure: (v: Variant) => Promise<number>,
): Promise<number[][]> {
  const backend = spawnBackend();
  const isolation = childIsolation();
  const samples = variants.map(() => [] as number[]);
  try {
    for (const v of variants) await v.run(); // warm every path
    for (let i = 0; i < runs; i++) {
      const order = variants.map((_, j) => j).sort(() => Math.random() - 0.5);
      for (const j of order) samples[j].push(await measure(variants[j]));
    }
  } finally {
    setSpawnBackend(backend);
    setChildIsolation(isolation);
  }
  return samples;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const percentile = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

/** Spawn-and-wait of `true` on every spawn path, interleaved in random order; per pass. */
export async function benchTrue(runs: number): Promise<BenchRow[][]> {
  const out: BenchRow[][] = [];
  for (const variants of spawnPasses()) {
    const samples = await rounds(variants, runs, async (v) => {
      const t0 = performance.now();
      await v.run();
      return performance.now() - t0;
    });
    out.push(variants.map((v, j) => ({ name: v.name, medianMs: median(samples[j]) })));
  }
  return out;
}

/**
 * Event-loop blocking per spawn: while each spawn runs, a 1 ms interval records the gaps
 * between its ticks; the longest gap of each spawn is what the spawn held the loop for
 * (plus scheduling noise, which the baseline shows).
 */
export async function benchBlocking(runs: number): Promise<string[]> {
  const lines: string[] = [];
  for (const [i, variants] of spawnPasses().entries()) {
    const pass = await blockingPass(variants, runs);
    // Later passes start with their own baseline row.
    if (i > 0) pass[0] = pass[0].replace("(baseline)", "(its baseline)");
    lines.push(...pass);
  }
  return lines;
}

async function blockingPass(variants: Variant[], runs: number): Promise<string[]> {
  let worst = 0;
  let last = performance.now();
  const probe = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 1);
  let samples: number[][];
  try {
    samples = await rounds(variants, runs, async (v) => {
      await new Promise((r) => setTimeout(r, 2)); // a tick before: `last` is fresh
      worst = 0;
      last = performance.now();
      await v.run();
      await new Promise((r) => setTimeout(r, 2)); // and one after the spawn
      return worst;
    });
  } finally {
    clearInterval(probe);
  }
  return variants.map((v, j) =>
    `  ${v.name.padEnd(48)} longest 1 ms-tick gap per spawn: median ${
      fmt(median(samples[j]))
    }  p90 ${fmt(percentile(samples[j], 0.9))} ms`
  );
}

const fmt = (ms: number) => ms.toFixed(1).padStart(5);

/**
 * `^true` through the evaluator (parse once, then evaluate the program: dispatch, PATH lookup,
 * spawn, outcome) vs a bare Deno.Command spawn, interleaved, with spawnCapture alone in between
 * so the evaluator's own share is visible. The evaluator is measured with and without a host
 * cancel flag (a kernel session always has one).
 */
export async function benchEvaluatorTrue(runs: number): Promise<BenchRow[] | null> {
  const plain = new Evaluator({ cwd: "/", env: ENV });
  const cancel = new Int32Array(new SharedArrayBuffer(4));
  const withFlag = new Evaluator({ cwd: "/", env: ENV, cancel });
  const p1 = plain.parse("^true");
  const p2 = withFlag.parse("^true");
  // Warm all paths.
  for (let i = 0; i < 5; i++) {
    await new Deno.Command("true").output();
    await plain.evalProgram(p1);
    await withFlag.evalProgram(p2);
  }
  const bare: number[] = [];
  const layer: number[] = [];
  const ev1: number[] = [];
  const ev2: number[] = [];
  for (let i = 0; i < runs; i++) {
    let t0 = performance.now();
    await new Deno.Command("true").output();
    bare.push(performance.now() - t0);
    t0 = performance.now();
    await spawnCapture({ argv: ["true"], cwd: "/", env: ENV });
    layer.push(performance.now() - t0);
    t0 = performance.now();
    await plain.evalProgram(p1);
    ev1.push(performance.now() - t0);
    t0 = performance.now();
    await withFlag.evalProgram(p2);
    ev2.push(performance.now() - t0);
  }
  return [
    { name: 'new Deno.Command("true").output() (baseline)', medianMs: median(bare) },
    { name: 'spawnCapture(["true"]) (the process layer alone)', medianMs: median(layer) },
    { name: "^true through the evaluator", medianMs: median(ev1) },
    { name: "^true through the evaluator (cancel flag)", medianMs: median(ev2) },
  ];
}

const mib = (bytes: number) => (bytes / MiB).toFixed(0);

/** Passes of one measurement: the first in full, later ones without their baseline row. */
function printPasses(title: string, passes: BenchRow[][]): void {
  print(title, passes[0]);
  for (const pass of passes.slice(1)) {
    const base = pass[0].medianMs;
    for (const r of pass.slice(1)) {
      console.log(
        `  ${r.name.padEnd(48)} ${r.medianMs.toFixed(2).padStart(9)} ms  ×${
          (r.medianMs / base).toFixed(2)
        } (own pass, baseline ${base.toFixed(2)} ms)`,
      );
    }
  }
}

function print(title: string, rows: BenchRow[]): void {
  console.log(`\n${title}`);
  const base = rows[0].medianMs;
  for (const r of rows) {
    const rss = r.peakRssGrowth === undefined
      ? ""
      : `  peak RSS +${(r.peakRssGrowth / MiB).toFixed(1)} MiB`;
    console.log(
      `  ${r.name.padEnd(48)} ${r.medianMs.toFixed(2).padStart(9)} ms  ×${
        (r.medianMs / base).toFixed(2)
      }${rss}`,
    );
  }
}

if (import.meta.main) {
  const quick = Deno.args.includes("--quick");
  const load = await Deno.readTextFile("/proc/loadavg").then((s) => s.split(" ")[0], () => "?");
  console.log(`bench/spawn.ts — ${Deno.build.target}, deno ${Deno.version.deno}, load ${load}`);
  print(
    "50 MB of stdout (median of runs; ratio vs baseline)",
    await benchCapture50MB(quick ? 3 : 7),
  );
  printPasses(
    `spawn + wait of \`true\` (median; ratio vs baseline; default backend: ${spawnBackend()}` +
      `, posix_spawn children lead a new ${childIsolation()} here)`,
    await benchTrue(quick ? 50 : 200),
  );
  const evalRows = await benchEvaluatorTrue(quick ? 50 : 200);
  if (evalRows === null) console.log("\n^true through the evaluator: not measured yet (lib/eval)");
  else print("^true through the evaluator (median; ratio vs baseline)", evalRows);
  const blockRuns = quick ? 30 : 100;
  console.log(`\nevent-loop lag while spawning, RSS ${mib(Deno.memoryUsage().rss)} MiB`);
  for (const line of await benchBlocking(blockRuns)) console.log(line);
  const ballast = new Uint8Array(500 * MB);
  for (let i = 0; i < ballast.length; i += 4096) ballast[i] = 1;
  console.log(
    `\nevent-loop lag while spawning, RSS ${mib(Deno.memoryUsage().rss)} MiB (500 MB allocated)`,
  );
  for (const line of await benchBlocking(blockRuns)) console.log(line);
  printPasses(
    "spawn + wait of `true` with 500 MB allocated (median; ratio vs baseline)",
    await benchTrue(quick ? 50 : 100),
  );
  if (ballast[4096] !== 1) throw new Error("ballast was dropped");
}
