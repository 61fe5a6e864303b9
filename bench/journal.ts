/**
 * Storage benchmarks (issue 7), each against a baseline measured in the same run:
 *
 * 1. CAS ingest (`putFile`) of a 64 MB file vs `b3sum` of the same file
 *    (Debian package `b3sum`; without it, the WASM hashing-only baseline).
 * 2. Journal write throughput: begin+finish pairs (3 statements each) per
 *    second, Worker vs inline connection, vs the same loop with no journal,
 *    with the largest main-thread stall seen during each run.
 * 3. `exec` throughput with the journal on vs off, real kernel sessions (one client
 *    sequential, and 8 sessions with 8 in flight), see {@link measureExecThroughput}.
 *
 * Run: deno run -A --unstable-worker-options bench/journal.ts [--size-mb 64] [--pairs 2000] [--runs 3] [--exec-only]
 *
 * @module
 */

import { join } from "node:path";
import { cpuUsage } from "node:process";
import { KernelClient } from "../lib/client/client.ts";
import { startKernel } from "../lib/kernel/server.ts";
import {
  acquireHasher,
  getBlake3Backend,
  IntakeWriter,
  openStore,
  releaseHasher,
  type StatementInput,
  type Store,
} from "../lib/store/mod.ts";
import { intakeExtent } from "../lib/store/intake_map.ts";

function arg(name: string, def: number): number {
  const i = Deno.args.indexOf(`--${name}`);
  if (i < 0) return def;
  const v = Number(Deno.args[i + 1]);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`--${name} needs a positive number`);
  return v;
}

const SIZE_MB = arg("size-mb", 64);
const PAIRS = arg("pairs", 2000);
const RUNS = arg("runs", 3);
const SIZE = SIZE_MB * 1024 * 1024;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const mbps = (bytes: number, ms: number) => bytes / 1e6 / (ms / 1000);
const fmt = (n: number, d = 0) => n.toFixed(d);

/** Gaps between 1 ms timer ticks while `fn` runs: how long the calling thread was blocked. */
async function withStallProbe<T>(
  fn: () => Promise<T>,
): Promise<{ value: T; p99: number; max: number }> {
  let last = performance.now();
  const gaps: number[] = [];
  const id = setInterval(() => {
    const now = performance.now();
    gaps.push(now - last);
    last = now;
  }, 1);
  try {
    const value = await fn();
    gaps.push(performance.now() - last);
    gaps.sort((a, b) => a - b);
    return { value, p99: gaps[Math.floor(gaps.length * 0.99)], max: gaps[gaps.length - 1] };
  } finally {
    clearInterval(id);
  }
}

async function b3sumAvailable(): Promise<boolean> {
  try {
    const o = await new Deno.Command("b3sum", {
      args: ["--version"],
      stdout: "null",
      stderr: "null",
    })
      .output();
    return o.success;
  } catch {
    return false;
  }
}

async function b3sum(path: string, threads: number | null): Promise<string> {
  const args = [
    "--no-names",
    ...(threads === null ? [] : ["--num-threads", String(threads)]),
    path,
  ];
  const o = await new Deno.Command("b3sum", { args, stdout: "piped" }).output();
  if (!o.success) throw new Error("b3sum failed");
  return new TextDecoder().decode(o.stdout).trim();
}

async function hashOnly(path: string): Promise<string> {
  const h = await acquireHasher();
  try {
    const f = await Deno.open(path);
    const buf = new Uint8Array(1 << 20);
    for (;;) {
      const n = await f.read(buf);
      if (n === null) break;
      h.update(buf.subarray(0, n));
    }
    f.close();
    return h.digestHex();
  } finally {
    releaseHasher(h);
  }
}

async function casIngest(tmp: string): Promise<void> {
  console.log(`\n## CAS ingest of a ${SIZE_MB} MiB file (median of ${RUNS})`);
  console.log(`hash backend: ${getBlake3Backend().name}`);
  const files: Array<[string, string]> = [];
  // Random bytes (incompressible: `auto` stores them raw) and log-like text (zstd).
  const rnd = join(tmp, "random.bin");
  {
    const f = await Deno.open(rnd, { write: true, create: true });
    const chunk = new Uint8Array(1 << 20);
    for (let o = 0; o < SIZE; o += chunk.length) {
      for (let i = 0; i < chunk.length; i += 65536) {
        crypto.getRandomValues(chunk.subarray(i, i + 65536));
      }
      await f.write(chunk);
    }
    f.close();
  }
  files.push(["random", rnd]);
  const txt = join(tmp, "text.log");
  {
    const line = new TextEncoder().encode(
      "2026-01-01T00:00:00Z INFO request handled path=/api/v1/items status=200 ms=12\n",
    );
    const block = new Uint8Array(1 << 20);
    for (let i = 0; i + line.length <= block.length; i += line.length) block.set(line, i);
    const f = await Deno.open(txt, { write: true, create: true });
    for (let o = 0; o < SIZE; o += block.length) await f.write(block);
    f.close();
  }
  files.push(["text", txt]);

  const haveB3 = await b3sumAvailable();
  if (!haveB3) {
    console.log(
      "b3sum NOT INSTALLED (apt-get install -y b3sum): the baseline below is hashing-only with the WASM backend, not b3sum",
    );
  }
  for (const [label, path] of files) {
    await Deno.readFile(path); // page cache warm for every contender
    const expect = await hashOnly(path);
    const variants: Array<[string, { fsync: boolean }]> = [
      ["putFile (auto compression, default: no fsync)", { fsync: false }],
      ["putFile (auto compression, fsync: true)", { fsync: true }],
    ];
    const results: Array<[string, number]> = [];
    for (const [name, o] of variants) {
      const times: number[] = [];
      let codec = "";
      for (let r = 0; r < RUNS; r++) {
        const state = await Deno.makeTempDir({ dir: tmp, prefix: "cas-" });
        const store = await openStore(state, { journalMode: "inline", fsync: o.fsync });
        const t0 = performance.now();
        const res = await store.cas.putFile(path);
        times.push(performance.now() - t0);
        codec = `${res.codec}, stored ${fmt(res.storedSize / 1e6, 1)} MB`;
        if (res.hash !== expect) throw new Error(`hash mismatch for ${label}`);
        await store.close();
        await Deno.remove(state, { recursive: true });
      }
      results.push([`${name} [${codec}]`, mbps(SIZE, median(times))]);
    }
    const hashTimes: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      const t0 = performance.now();
      await hashOnly(path);
      hashTimes.push(performance.now() - t0);
    }
    results.push(["hashing only (WASM, streamed from file)", mbps(SIZE, median(hashTimes))]);
    let baseline: [string, number] = results[results.length - 1];
    if (haveB3) {
      for (const threads of [1, null]) {
        const ts: number[] = [];
        for (let r = 0; r < RUNS; r++) {
          const t0 = performance.now();
          const got = await b3sum(path, threads);
          ts.push(performance.now() - t0);
          if (got !== expect) throw new Error("b3sum disagrees with our BLAKE3");
        }
        const row: [string, number] = [
          `b3sum 1 file, ${threads === null ? "default threads" : "1 thread"} (subprocess)`,
          mbps(SIZE, median(ts)),
        ];
        results.push(row);
        if (threads === 1) baseline = row;
      }
    }
    console.log(`\n${label} (${SIZE_MB} MiB): baseline = ${baseline[0]}`);
    for (const [name, v] of results) {
      console.log(
        `  ${name.padEnd(62)} ${fmt(v).padStart(6)} MB/s   ratio ${fmt(v / baseline[1], 2)}`,
      );
    }
  }
}

function statements(i: number): StatementInput[] {
  return ["ls", "where size > 1kb", "sort-by name"].map((s, k) => ({
    source: `${s} ${i}`,
    ast: { kind: "cmd", words: [s, String(i)] },
    effects: [{ kind: "fs_read", paths: ["/tmp"] }],
    status: "ok" as const,
    durationNs: 1000 + k,
    outputs: [{ kind: "render", len: 20, preview: `row ${i}` }],
  }));
}

function beginInput(i: number) {
  return {
    session: "bench",
    principal: "agent:bench",
    source: `ls ${i} | where size > 1kb | sort-by name`,
    cwd: "/tmp",
    ast: { kind: "Program", stmts: 3 },
    effects: [{ kind: "fs_read", paths: ["/tmp"] }],
  };
}

/** Synchronous time spent inside each journal call on the calling thread (ms). */
const callCost: number[] = [];

/** Call `f` and charge its synchronous part (argument cloning, queueing) to `callCost`. */
function timed<T>(f: () => Promise<T>): Promise<T> {
  const t = performance.now();
  const p = f();
  callCost.push(performance.now() - t);
  return p;
}

/** `PAIRS` begin+finish pairs, `concurrency` at a time. `store === null` runs the loop alone. */
async function pairs(store: Store | null, concurrency: number): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  const worker = async () => {
    while (next < PAIRS) {
      const i = next++;
      const input = beginInput(i);
      const st = statements(i);
      const result = { status: "ok" as const, durationNs: 5000 };
      if (store) {
        const id = await timed(() => store.journal.beginRequest(input));
        await timed(() => store.journal.finishRequest(id, result, st));
      } else {
        // Same objects, same awaits, no journal.
        await Promise.resolve(input);
        await Promise.resolve([result, st]);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return performance.now() - t0;
}

async function journalWrites(tmp: string): Promise<void> {
  console.log(
    `\n## Journal writes: ${PAIRS} begin+finish pairs, 3 statement rows each (median of ${RUNS})`,
  );
  console.log(
    "caller = synchronous time inside the journal calls on the calling thread (per pair; p99 per call);",
  );
  console.log(
    "batch = longest one batch held the journal's thread (inline: the caller's thread; worker: its own);",
  );
  console.log(
    "stall = gaps of a 1 ms timer on the calling thread (p99 / max); 'idle' = the same probe while only sleeping",
  );
  type Row = { name: string; rate: number; base: number; p99: number; max: number; extra: string };
  const rows: Row[] = [];
  for (const concurrency of [1, 16]) {
    const base: number[] = [];
    for (let r = 0; r < RUNS; r++) base.push(await pairs(null, concurrency));
    const baseRate = PAIRS / (median(base) / 1000);
    rows.push({
      name: `no journal, ${concurrency} in flight`,
      rate: baseRate,
      base: baseRate,
      p99: NaN,
      max: NaN,
      extra: "",
    });
    let wall = 0;
    for (const mode of ["worker", "inline"] as const) {
      const ms: number[] = [];
      const p99s: number[] = [];
      const maxes: number[] = [];
      let batching = "";
      for (let r = 0; r < RUNS; r++) {
        const state = await Deno.makeTempDir({ dir: tmp, prefix: "journal-" });
        const store = await openStore(state, { journalMode: mode });
        callCost.length = 0;
        const { value, p99, max } = await withStallProbe(() => pairs(store, concurrency));
        ms.push(value);
        p99s.push(p99);
        maxes.push(max);
        const st = await store.journalClient.stats();
        if (st) {
          const sorted = [...callCost].sort((a, b) => a - b);
          const total = callCost.reduce((a, b) => a + b, 0);
          batching = `caller ${fmt((total / PAIRS) * 1000)} µs/pair (call p99 ${
            fmt(sorted[Math.floor(sorted.length * 0.99)] * 1000)
          } µs); batch avg ${fmt(st.ops / st.batches, 1)} ops, longest ${fmt(st.maxFlushMs, 1)} ms`;
        }
        await store.close();
        await Deno.remove(state, { recursive: true });
      }
      wall = Math.max(wall, median(ms));
      rows.push({
        name: `journal ${mode}, ${concurrency} in flight`,
        rate: PAIRS / (median(ms) / 1000),
        base: baseRate,
        p99: median(p99s),
        max: median(maxes),
        extra: batching,
      });
    }
    const idle = await withStallProbe(() => new Promise((r) => setTimeout(r, wall)));
    rows.push({
      name: `idle ${fmt(wall)} ms (noise floor)`,
      rate: NaN,
      base: NaN,
      p99: idle.p99,
      max: idle.max,
      extra: "",
    });
  }
  for (const r of rows) {
    const rate = Number.isNaN(r.rate)
      ? "".padStart(36)
      : `${fmt(r.rate).padStart(9)} pairs/s  ratio ${fmt(r.rate / r.base, 4).padStart(7)}`;
    const stall = Number.isNaN(r.p99)
      ? ""
      : `stall p99 ${fmt(r.p99, 1).padStart(5)} ms, max ${fmt(r.max, 1).padStart(5)} ms`;
    console.log(`  ${r.name.padEnd(30)} ${rate}  ${stall}  ${r.extra}`);
  }
}

/** Something that runs Shoal source the way the kernel's `exec` does. */
export interface ExecRunner {
  /** Run one request to completion. */
  exec(source: string): Promise<void>;
  /** Release everything. */
  close(): Promise<void>;
}

/**
 * Exec throughput with the journal on vs off (issue 7's acceptance number).
 *
 * FOR THE KERNEL ENGINEER: pass a factory that starts a kernel session with
 * the journal enabled (`journal: true`) or disabled, and returns an
 * {@link ExecRunner}; everything else (warm-up, timing, ratio) is here. Until
 * `lib/kernel` can run `exec`, `main` prints that it was not measured.
 */
export async function measureExecThroughput(
  makeRunner: (journal: boolean) => Promise<ExecRunner>,
  n = 500,
  source = "echo hi",
): Promise<{ on: number; off: number; ratio: number; cpuOn: number; cpuOff: number }> {
  const rate = async (journal: boolean) => {
    const runner = await makeRunner(journal);
    try {
      for (let i = 0; i < Math.min(50, n); i++) await runner.exec(source); // warm-up
      return await timedExecs(n, async () => {
        for (let i = 0; i < n; i++) await runner.exec(source);
      });
    } finally {
      await runner.close();
    }
  };
  const off = await rate(false);
  const on = await rate(true);
  return { on: on.rate, off: off.rate, ratio: on.rate / off.rate, cpuOn: on.cpu, cpuOff: off.cpu };
}

/** Run `fn` (`n` execs): execs/s, and CPU µs per exec of this whole process (every thread). */
async function timedExecs(
  n: number,
  fn: () => Promise<unknown>,
): Promise<{ rate: number; cpu: number }> {
  const c0 = cpuUsage();
  const t0 = performance.now();
  await fn();
  const ms = performance.now() - t0;
  const c = cpuUsage(c0);
  return { rate: n / (ms / 1000), cpu: (c.user + c.system) / n };
}

/**
 * Real kernel sessions (issue 7): an in-process kernel (`startKernel`) on a temp socket, its
 * session in a Worker, driven through `KernelClient` like any client. Journal on = a state
 * directory (SQLite journal in the store's Worker + CAS); off = `journal: false`. `clients`
 * sessions run concurrently (each `exec` goes to the next one round-robin).
 */
function kernelRunners(clients: number): (journal: boolean) => Promise<ExecRunner> {
  return async (journal) => {
    const dir = await Deno.makeTempDir({ prefix: "shoal-bench-exec-" });
    const k = await startKernel({
      socket: join(dir, "k.sock"),
      stateDir: journal ? join(dir, "state") : null,
      journal,
      cwd: dir,
      onError: () => {},
    });
    const cs = await Promise.all(
      Array.from(
        { length: clients },
        (_, i) => KernelClient.connect({ socket: k.path, attach: { session: `b${i}` } }),
      ),
    );
    let next = 0;
    return {
      async exec(source: string) {
        await cs[next++ % cs.length].call("exec", { src: source });
      },
      async close() {
        for (const c of cs) c.close();
        await k.close();
        await Deno.remove(dir, { recursive: true });
      },
    };
  };
}

const KERNEL_RUNNER_FACTORY: ((journal: boolean) => Promise<ExecRunner>) | null = kernelRunners(1);

/** `n` execs of `source` with `inFlight` outstanding at a time; execs/s. */
async function concurrentRate(
  makeRunner: (journal: boolean) => Promise<ExecRunner>,
  journal: boolean,
  source: string,
  n: number,
  inFlight: number,
): Promise<{ rate: number; cpu: number }> {
  const runner = await makeRunner(journal);
  try {
    for (let i = 0; i < 50; i++) await runner.exec(source);
    let left = n;
    return await timedExecs(n, () =>
      Promise.all(Array.from({ length: inFlight }, async () => {
        while (left-- > 0) await runner.exec(source);
      })));
  } finally {
    await runner.close();
  }
}

/**
 * The journal work every exec of `source` requires, each part measured alone on one thread
 * (warm, no other thread competing): its intake lines appended, then folded into its request
 * and statement rows with its two durable events (`session.transcript`, `journal`), which the
 * fold stores in the same transaction. On a
 * machine whose cores are all busy running execs, journaling costs at least this much CPU per
 * exec, so `cpuOff / (cpuOff + floor)` bounds the on/off throughput ratio from above.
 */
async function journalFloor(
  source: string,
): Promise<{ append: number; fold: number }> {
  const dir = await Deno.makeTempDir({ prefix: "shoal-bench-floor-" });
  try {
    // A real intake line of this exec, as a session worker wrote it.
    const k = await startKernel({
      socket: join(dir, "k.sock"),
      stateDir: join(dir, "state"),
      journal: true,
      cwd: dir,
      onError: () => {},
    });
    // Its lines: one whole-exec line, or a begin and a finish line (an exec with effects).
    const lines: Array<Record<string, unknown>> = [];
    try {
      const c = await KernelClient.connect({ socket: k.path, attach: { session: "floor" } });
      await c.call("exec", { src: source });
      const intake = join(dir, "state", "intake");
      for (const e of Deno.readDirSync(intake)) {
        const f = Deno.openSync(join(intake, e.name));
        const x = intakeExtent(f); // a mapped segment's lines lie past its header
        f.close();
        const text = new TextDecoder().decode(
          Deno.readFileSync(join(intake, e.name)).subarray(x.start, x.end),
        );
        for (const l of text.split("\n")) {
          if (/^\{"t":"[xbf]"/.test(l)) lines.push(JSON.parse(l));
        }
      }
      c.close();
    } finally {
      await k.close();
    }
    if (lines.length === 0) throw new Error(`no intake line was written for ${source}`);
    const store = await openStore(join(dir, "floor"), { journalMode: "inline" });
    try {
      const w = new IntakeWriter(store.intakeDir, store.openInfo.intakeToken!, 1);
      const N = 4000, B = 100;
      let append = 0, fold = 0, seq = 0;
      for (let round = 0; round < 2; round++) { // the first round warms up
        append = fold = 0;
        for (let i = 0; i < N / B; i++) {
          let t0 = performance.now();
          for (let j = 0; j < B; j++) {
            for (const line of lines) {
              // A transcript event rides in the finish line; each exec's gets the next seq.
              const ev = line.ev ? { ev: { ...(line.ev as object), seq: seq++ } } : {};
              w.append({ ...line, k: i * B + j, ...ev } as never);
            }
          }
          append += performance.now() - t0;
          t0 = performance.now();
          await store.journal.intakeTake();
          fold += performance.now() - t0;
        }
      }
      const us = (ms: number) => ms * 1000 / N;
      return { append: us(append), fold: us(fold) };
    } finally {
      await store.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function execThroughput(): Promise<void> {
  console.log(`\n## exec throughput, journal on vs off (median of ${RUNS}, runs interleaved)`);
  console.log("  target: journaling costs <= 20 % (ratio on/off >= 0.80)");
  console.log(
    "  a result is delivered once its exec is in the journal intake (crash-safe); rows fold in behind",
  );
  // Expression execs (the kernel's own overhead, where journaling weighs most) and one that
  // spawns a process (`^true`: what most agent commands do), with fewer execs since it is slower.
  const sources: Array<[string, number]> = [
    ["1 + 2", 1000],
    ["echo hi", 1000],
    ["let x = [1, 2, 3]\nx.len()", 1000],
    ["^true", 300],
  ];
  for (const [source, n] of sources) {
    {
      // CPU per exec with the journal off, one session: what the floor below is set against.
      let cpuOffOne = 0;
      for (const [clients, inFlight] of [[1, 1], [8, 8]]) {
        const on: number[] = [];
        const off: number[] = [];
        const cpuOn: number[] = [];
        const cpuOff: number[] = [];
        for (let r = 0; r < RUNS; r++) {
          if (clients === 1) {
            const m = await measureExecThroughput(kernelRunners(1), n, source);
            on.push(m.on);
            off.push(m.off);
            cpuOn.push(m.cpuOn);
            cpuOff.push(m.cpuOff);
          } else {
            const mk = kernelRunners(clients);
            const a = await concurrentRate(mk, false, source, 2 * n, inFlight);
            const b = await concurrentRate(mk, true, source, 2 * n, inFlight);
            off.push(a.rate);
            on.push(b.rate);
            cpuOff.push(a.cpu);
            cpuOn.push(b.cpu);
          }
        }
        const a = median(off);
        const b = median(on);
        if (clients === 1) cpuOffOne = median(cpuOff);
        console.log(
          `  ${JSON.stringify(source).padEnd(28)} ${clients} ` +
            `session(s), ${inFlight} in flight: off ${fmt(a).padStart(6)} exec/s, on ${
              fmt(b).padStart(6)
            } exec/s, ratio ${fmt(b / a, 3)}${
              b / a >= 0.8 ? "" : "  (over the 20 % target)"
            }; CPU µs/exec off ${fmt(median(cpuOff))}, on ${fmt(median(cpuOn))}`,
        );
      }
      const f = await journalFloor(source);
      const floor = f.append + f.fold;
      const off = cpuOffOne;
      console.log(
        `    required journal work alone, one thread: intake line ${fmt(f.append, 1)} + rows and ` +
          `their 2 events ${fmt(f.fold, 1)} = ${fmt(floor, 1)} µs/exec (${
            fmt(100 * floor / off)
          } % of the exec's own CPU ${fmt(off)} µs): all cores busy, ratio <= ${
            fmt(off / (off + floor), 2)
          }`,
      );
    }
  }
}

if (import.meta.main) {
  const tmp = await Deno.makeTempDir({ prefix: "shoal-bench-journal-" });
  try {
    console.log(
      `# bench/journal.ts — Deno ${Deno.version.deno}, ${navigator.hardwareConcurrency} CPUs`,
    );
    if (!Deno.args.includes("--exec-only")) {
      await casIngest(tmp);
      await journalWrites(tmp);
    }
    if (KERNEL_RUNNER_FACTORY !== null) await execThroughput();
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
}
