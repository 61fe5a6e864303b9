/**
 * Process-layer benchmark. Every ratio is against a baseline measured in the same run.
 *
 *   deno run -A --unstable-worker-options bench/spawn.ts [--quick]
 *
 * 1. Capturing 50 MB of stdout with spawnCapture vs `sh -c 'cat FILE > /dev/null'` (the
 *    bytes never reach us), with the peak RSS growth of each; a bare Deno.Command read loop
 *    that keeps nothing shows what reaching us at all costs. RSS growth is measured from
 *    the RSS before each variant, so memory freed by an earlier variant can hide some.
 * 2. spawnCapture(["true"]) vs a bare `new Deno.Command("true").output()`.
 * 3. `^true` through the evaluator — filled in by the language team (see
 *    {@link benchEvaluatorTrue}); until then it is reported as not measured.
 *
 * @module
 */

import { join } from "node:path";
import { spawnCapture, tempFileSpill } from "../lib/exec/mod.ts";
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

/** Spawn-and-wait of `true`: spawnCapture vs a bare Deno.Command, interleaved. */
export async function benchTrue(runs: number): Promise<BenchRow[]> {
  // Warm both paths (module code, PATH lookup caches of the OS).
  await new Deno.Command("true").output();
  await spawnCapture({ argv: ["true"], cwd: "/", env: ENV });
  const bare: number[] = [];
  const ours: number[] = [];
  for (let i = 0; i < runs; i++) {
    let t0 = performance.now();
    await new Deno.Command("true").output();
    bare.push(performance.now() - t0);
    t0 = performance.now();
    await spawnCapture({ argv: ["true"], cwd: "/", env: ENV });
    ours.push(performance.now() - t0);
  }
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  return [
    { name: 'new Deno.Command("true").output() (baseline)', medianMs: median(bare) },
    { name: 'spawnCapture(["true"])', medianMs: median(ours) },
  ];
}

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
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  return [
    { name: 'new Deno.Command("true").output() (baseline)', medianMs: median(bare) },
    { name: 'spawnCapture(["true"]) (the process layer alone)', medianMs: median(layer) },
    { name: "^true through the evaluator", medianMs: median(ev1) },
    { name: "^true through the evaluator (cancel flag)", medianMs: median(ev2) },
  ];
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
  print("spawn + wait of `true` (median; ratio vs baseline)", await benchTrue(quick ? 50 : 200));
  const evalRows = await benchEvaluatorTrue(quick ? 50 : 200);
  if (evalRows === null) console.log("\n^true through the evaluator: not measured yet (lib/eval)");
  else print("^true through the evaluator (median; ratio vs baseline)", evalRows);
}
