/**
 * MCP facade benchmark; every ratio is against a baseline measured in the same run.
 *
 *   deno run -A --unstable-worker-options bench/mcp.ts [--quick] [--no-peers]
 *
 * 1. `tools/call shoal_exec "1 + 2"` round trip (both protocol eras) vs the kernel's own
 *    `exec` round trip over the socket (target ≤ 2×).
 * 2. Cold start to the first tool result: spawn `shoal-mcp`, handshake, first `shoal_exec`, with
 *    a kernel already running and from nothing (the facade autostarts the kernel).
 * 3. The same commands (`true`, `echo hi`, ~1 MB of output) through `shoal_exec` and through two
 *    other MCP shell servers, `@wonderwhy-er/desktop-commander` and `mcp-server-commands`,
 *    installed with npm into a temp directory for this run only (never a project dependency);
 *    shoal_exec, the kernel's exec and mcp-server-commands run interleaved (every round in a
 *    fresh, seeded order, so no server always follows the same one), each
 *    through the SDK client a host uses and through a raw JSON-RPC client (the server's own
 *    cost), 300 rounds for a fast command; desktop-commander (~200 ms a call) is timed in a loop
 *    of its own. Medians, ratios (with each quarter of the rounds apart, to show how steady
 *    the ratio is) and what each returns. A quiet
 *    baseline first (shoal_exec vs kernel exec, before any peer starts) shows what MCP adds, and
 *    each server's CPU use while idle is sampled.
 *
 * @module
 */

import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { KernelClient } from "../lib/client/mod.ts";
import { spawnKernel } from "./_kernel.ts";
import { childPids, cpuPerCall, formatSplit } from "./_cpu_split.ts";
import { benchEvaluatorTrue } from "./spawn.ts";

const root = (p: string) => fileURLToPath(new URL(`../${p}`, import.meta.url));
const MCP = root("mcp.ts");
const CONFIG = root("deno.json");
const DENO_RUN = ["run", "-A", "--unstable-worker-options", "--config", CONFIG];

const quick = Deno.args.includes("--quick");
const peers = !Deno.args.includes("--no-peers");
const N = quick ? 100 : 1000;
const ROUNDS = quick ? 5 : 20;
/** Interleaved rounds for a fast command (`true`, `echo hi`): a median of 20 moves ±10 %. */
const FAST_ROUNDS = quick ? 40 : 300;

type Stats = { median: number; p90: number; p99: number };

function stats(xs: number[]): Stats {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))];
  return { median: at(0.5), p90: at(0.9), p99: at(0.99) };
}

const ms = (x: number) => `${x.toFixed(3)} ms`;
const fmt = (s: Stats) => `median ${ms(s.median)}  p90 ${ms(s.p90)}  p99 ${ms(s.p99)}`;

/** A kernel subprocess on `socket`; resolves once it prints its ready line. */
function startKernel(socket: string, cwd: string): Promise<Deno.ChildProcess> {
  return spawnKernel(["--socket", socket, "--ephemeral"], cwd);
}

interface Mcp {
  client: Client;
  stderr: () => string;
  pid: number | null;
}

async function connect(
  command: string,
  args: string[],
  opts: { env?: Record<string, string>; cwd?: string; modern?: boolean } = {},
): Promise<Mcp> {
  let err = "";
  const transport = new StdioClientTransport({
    command,
    args,
    env: { ...Deno.env.toObject(), ...(opts.env ?? {}) },
    stderr: "pipe",
    ...(opts.cwd ? { cwd: opts.cwd } : {}),
  });
  transport.stderr?.on("data", (d: Uint8Array | string) => {
    err += typeof d === "string" ? d : new TextDecoder().decode(d);
  });
  const client = new Client(
    { name: "shoal-bench", version: "1" },
    opts.modern ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {},
  );
  await client.connect(transport);
  return { client, stderr: () => err, pid: transport.pid };
}

const shoalMcp = (socket: string, session: string, modern = false, env = {}, cwd?: string) =>
  connect(Deno.execPath(), [...DENO_RUN, MCP, "--socket", socket, "--session", session], {
    modern,
    env,
    cwd,
  });

async function pidsMentioning(needle: string): Promise<number[]> {
  const out: number[] = [];
  for await (const e of Deno.readDir("/proc")) {
    if (!/^[0-9]+$/.test(e.name) || Number(e.name) === Deno.pid) continue;
    try {
      if ((await Deno.readTextFile(`/proc/${e.name}/cmdline`)).includes(needle)) {
        out.push(Number(e.name));
      }
    } catch { /* gone */ }
  }
  return out;
}

/** A minimal newline-JSON-RPC client over a `shoal-mcp` subprocess (no SDK on our side). */
function rawMcp(socket: string, session: string) {
  return rawServer(Deno.execPath(), [...DENO_RUN, MCP, "--socket", socket, "--session", session]);
}

/** A minimal newline-JSON-RPC client over any stdio MCP server (what it costs, no SDK). */
async function rawServer(
  command: string,
  args: string[],
  opts: { env?: Record<string, string>; cwd?: string } = {},
) {
  const child = new Deno.Command(command, {
    args,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
    ...(opts.env ? { env: opts.env } : {}),
    ...(opts.cwd ? { cwd: opts.cwd } : {}),
  }).spawn();
  const writer = child.stdin.getWriter();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const enc = new TextEncoder();
  let buf = "";
  let id = 0;
  const line = async () => {
    while (!buf.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error("shoal-mcp closed stdout");
      buf += value;
    }
    const i = buf.indexOf("\n");
    const l = buf.slice(0, i);
    buf = buf.slice(i + 1);
    return l;
  };
  const send = (msg: unknown) => writer.write(enc.encode(JSON.stringify(msg) + "\n"));
  const call = async (method: string, params: unknown) => {
    const my = ++id;
    await send({ jsonrpc: "2.0", id: my, method, params });
    for (;;) {
      const m = JSON.parse(await line());
      if (m.id === my) {
        if (m.error) throw new Error(JSON.stringify(m.error));
        return m.result;
      }
    }
  };
  await call("initialize", {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "raw", version: "1" },
  });
  await send({ jsonrpc: "2.0", method: "notifications/initialized" });
  return {
    call,
    pid: child.pid,
    async close() {
      await writer.close();
      await child.status;
    },
  };
}

/**
 * 1b. Where a call's time goes (issue 16: "find where the rest goes"): CPU per call of each
 * process on the path — the facade, the kernel (its main thread apart from its journal Worker and
 * the runtime's threads), the session process and the processes it spawned — for `ping` (the facade and SDK alone), `shoal_exec` and the kernel's own `exec` of
 * the same source on the same session, next to `^true` through an evaluator in this process.
 */
async function whereTheTimeGoes(
  socket: string,
  kernelPid: number,
  cleanups: Array<() => Promise<unknown> | unknown>,
): Promise<void> {
  const before = new Set(childPids(kernelPid));
  const raw = await rawMcp(socket, "bench-split");
  cleanups.push(() => raw.close());
  const exec = (src: string) => raw.call("tools/call", { name: "shoal_exec", arguments: { src } });
  await exec("1");
  const session = childPids(kernelPid).find((p) => !before.has(p));
  if (session === undefined) {
    console.log("\n## 1b. where the time goes: skipped (the session process was not found)");
    return;
  }
  const kc = await KernelClient.connect({ socket, attach: { session: "bench-split" } });
  cleanups.push(() => kc.close());
  const pids = { facade: raw.pid, kernel: kernelPid, session };
  const n = quick ? 300 : 1000;
  const rows: Array<[string, () => Promise<unknown>]> = [
    ["ping (facade + SDK, no kernel)", () => raw.call("ping", {})],
    ['shoal_exec "1 + 2"', () => exec("1 + 2")],
    ['kernel exec "1 + 2" (no MCP)', () => kc.call("exec", { src: "1 + 2", position: "value" })],
    ['shoal_exec "^true"', () => exec("^true")],
    ['kernel exec "^true" (no MCP)', () => kc.call("exec", { src: "^true", position: "value" })],
  ];
  console.log(
    `\n## 1b. where the time goes: CPU per call of each process on the path (${n} calls a row; ` +
      `10 ms clock ticks, so ±${(10_000 / n).toFixed(0)} µs)`,
  );
  for (const [label, fn] of rows) {
    for (let i = 0; i < 100; i++) await fn(); // warm-up
    const split = await cpuPerCall(n, fn, pids, { children: ["session"], threads: ["kernel"] });
    console.log(`${label.padEnd(34)} ${formatSplit(split)}`);
  }
  const inProcess = await benchEvaluatorTrue(quick ? 100 : 300);
  const ev = inProcess?.find((r) => r.name === "^true through the evaluator");
  if (ev) {
    console.log(
      `${"^true, evaluator in this process".padEnd(34)} wall ${(ev.medianMs * 1000).toFixed(0)} ` +
        `µs (median)`,
    );
  }
}

/** Shuffle `xs` in place (Fisher–Yates). */
function shuffle<T>(xs: T[], rnd: () => number): void {
  for (let j = xs.length - 1; j > 0; j--) {
    const r = Math.floor(rnd() * (j + 1));
    [xs[j], xs[r]] = [xs[r], xs[j]];
  }
}

/** A seeded PRNG (mulberry32): every run shuffles its rounds the same way. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The rounds' order (fixed seed: runs are comparable). */
const random = seeded(0x5ea1);

/** A one-line summary of what a tool call returned. */
function describe(r: Record<string, unknown>): string {
  const content = (r.content ?? []) as Array<Record<string, unknown>>;
  const kinds = content.map((c) => c.type).join("+");
  const first = content.find((c) => c.type === "text")?.text as string | undefined;
  const textLen = content.reduce((n, c) => n + (typeof c.text === "string" ? c.text.length : 0), 0);
  const sc = r.structuredContent === undefined
    ? "no structuredContent"
    : `structuredContent keys [${Object.keys(r.structuredContent as object).join(", ")}]`;
  const head = JSON.stringify((first ?? "").slice(0, 80));
  return `${kinds}; ${sc}; text ${textLen} chars, starts ${head}${r.isError ? "; isError" : ""}`;
}

async function main(): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "shoal-bench-mcp-" });
  const socket = join(dir, "run", "k.sock");
  console.log(`# shoal-mcp benchmark (${quick ? "quick" : "full"}: ${N} round trips)`);
  const kernel = await startKernel(socket, dir);
  const cleanups: Array<() => Promise<unknown> | unknown> = [];
  try {
    // 1. Round trips, interleaved (A B C D A B C D …) so load drift hits every variant alike.
    const kc = await KernelClient.connect({ socket, attach: { session: "bench-kernel" } });
    cleanups.push(() => kc.close());
    const raw = await rawMcp(socket, "bench-raw");
    cleanups.push(() => raw.close());
    const legacy = await shoalMcp(socket, "bench-legacy");
    cleanups.push(() => legacy.client.close());
    const modern = await shoalMcp(socket, "bench-modern", true);
    cleanups.push(() => modern.client.close());
    const args = { name: "shoal_exec", arguments: { src: "1 + 2" } };
    const variants: Array<[string, () => Promise<unknown>]> = [
      ["kernel exec (KernelClient)", () => kc.call("exec", { src: "1 + 2", position: "value" })],
      ["tools/call, raw JSON-RPC client", () => raw.call("tools/call", args)],
      ["tools/call, SDK client, 2025 era", () => legacy.client.callTool(args)],
      ["tools/call, SDK client, 2026-07-28", () => modern.client.callTool(args)],
    ];
    const times = variants.map(() => [] as number[]);
    for (let i = 0; i < N + 100; i++) {
      for (let v = 0; v < variants.length; v++) {
        const t = performance.now();
        await variants[v][1]();
        if (i >= 100) times[v].push(performance.now() - t); // the first 100 rounds warm up
      }
    }
    console.log(`\n## 1. round trip of "1 + 2" (${N} interleaved rounds)`);
    const kMedian = stats(times[0]).median;
    for (let v = 0; v < variants.length; v++) {
      const s = stats(times[v]);
      const ratio = s.median / kMedian;
      const note = v === 0
        ? ""
        : `  ${ratio.toFixed(2)}× kernel${
          v === 1 ? (ratio <= 2 ? " (target ≤ 2×: met)" : " (target ≤ 2×: MISSED)") : ""
        }`;
      console.log(`${variants[v][0].padEnd(36)} ${fmt(s)}${note}`);
    }
    console.log(
      "(the raw client measures the facade itself; the SDK rows add the SDK client's own work, " +
        "e.g. validating structuredContent against the output schema)",
    );

    await whereTheTimeGoes(socket, kernel.pid, cleanups);

    // 2. Cold starts.
    console.log(`\n## 2. cold start to the first tool result`);
    const cold = async (env: Record<string, string>, sock: string, cwd?: string) => {
      const t0 = performance.now();
      const m = await connect(Deno.execPath(), [...DENO_RUN, MCP, "--socket", sock], { env, cwd });
      const tHandshake = performance.now() - t0;
      const r = await m.client.callTool({ name: "shoal_exec", arguments: { src: "1 + 2" } });
      const total = performance.now() - t0;
      if ((r.content as Array<{ text?: string }>)[0].text !== "3") throw new Error("bad result");
      await m.client.close();
      return { tHandshake, total, stderr: m.stderr() };
    };
    const warm: number[] = [];
    for (let i = 0; i < (quick ? 2 : 5); i++) warm.push((await cold({}, socket)).total);
    console.log(`kernel running     ${fmt(stats(warm))} (spawn + handshake + first shoal_exec)`);
    const fromNothing: number[] = [];
    for (let i = 0; i < (quick ? 1 : 3); i++) {
      const d = await Deno.makeTempDir({ prefix: "shoal-bench-cold-" });
      try {
        const r = await cold({ XDG_STATE_HOME: join(d, "state") }, join(d, "k.sock"), d);
        fromNothing.push(r.total);
      } finally {
        for (const pid of await pidsMentioning(d)) {
          try {
            Deno.kill(pid, "SIGTERM");
          } catch { /* gone */ }
        }
        await new Promise((r) => setTimeout(r, 300));
        await Deno.remove(d, { recursive: true }).catch(() => {});
      }
    }
    console.log(`from nothing       ${fmt(stats(fromNothing))} (autostarts the kernel)`);

    // 3. Peers.
    console.log(`\n## 3. the same command through shoal_exec and two other MCP shell servers`);
    if (!peers) {
      console.log("skipped (--no-peers)");
      return;
    }
    const peerDir = join(dir, "peers");
    const t0 = performance.now();
    const inst = await new Deno.Command("npm", {
      args: [
        "install",
        "--prefix",
        peerDir,
        "--ignore-scripts",
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
        "@wonderwhy-er/desktop-commander@0.2.52",
        "mcp-server-commands@0.5.0",
      ],
      env: { ...Deno.env.toObject(), PUPPETEER_SKIP_DOWNLOAD: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!inst.success) {
      console.log(`npm install failed: ${new TextDecoder().decode(inst.stderr).slice(0, 500)}`);
      return;
    }
    console.log(`(npm install into ${peerDir}: ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
    const home = join(dir, "home"); // peers write config/telemetry state under HOME
    await Deno.mkdir(home);
    const bin = (name: string) => join(peerDir, "node_modules", ".bin", name);
    const peerEnv = { HOME: home };

    const big = "head -c 1000000 /dev/zero | tr '\\0' a";
    // [label, Shoal source, shell command, whether issue 16's "no slower" target covers it]
    const cases: Array<[string, string, string, boolean]> = [
      ["true", "^true", "true", true],
      ["echo hi (a Shoal builtin: no process)", "echo hi", "echo hi", false],
      ["/bin/echo hi (a process everywhere)", "/bin/echo hi", "/bin/echo hi", true],
      ["~1 MB of output", `sh { ${big} }`, big, false],
    ];
    const sh = await shoalMcp(socket, "bench-peers");
    cleanups.push(() => sh.client.close());
    // Quiet baseline: the facade's own cost per command before any peer server is running.
    console.log(`quiet baseline, before the peers start (${ROUNDS} alternating rounds):`);
    for (const [label, shoalSrc] of cases) {
      const a: number[] = [], b: number[] = [];
      for (let i = 0; i < ROUNDS + 2; i++) {
        let t = performance.now();
        await sh.client.callTool({ name: "shoal_exec", arguments: { src: shoalSrc } });
        if (i >= 2) a.push(performance.now() - t);
        t = performance.now();
        await kc.call("exec", { src: shoalSrc, position: "value" });
        if (i >= 2) b.push(performance.now() - t);
      }
      const [sa, sb] = [stats(a).median, stats(b).median];
      console.log(
        `  ${label.padEnd(40)} shoal_exec ${ms(sa)}  kernel exec ${ms(sb)}  (MCP adds ${
          ms(sa - sb)
        })`,
      );
    }
    const s0 = performance.now();
    const dc = await connect(bin("desktop-commander"), [], { env: peerEnv, cwd: dir });
    const dcTools = (await dc.client.listTools()).tools.map((t) => t.name);
    const dcCold = performance.now() - s0;
    cleanups.push(() => dc.client.close());
    const s1 = performance.now();
    const msc = await connect(bin("mcp-server-commands"), [], { env: peerEnv, cwd: dir });
    const mscTools = (await msc.client.listTools()).tools.map((t) => t.name);
    const mscCold = performance.now() - s1;
    cleanups.push(() => msc.client.close());
    console.log(
      `desktop-commander 0.2.52: cold start to listTools ${ms(dcCold)}, ${dcTools.length} tools`,
    );
    console.log(
      `mcp-server-commands 0.5.0: cold start to listTools ${ms(mscCold)}, ${mscTools.length} tools`,
    );
    // How busy each server process is while nobody calls it (CPU ms over 2 s of idleness).
    const cpu = async (pid: number | null) => {
      if (pid === null) return NaN;
      const f = (await Deno.readTextFile(`/proc/${pid}/stat`)).split(") ")[1].split(" ");
      return (Number(f[11]) + Number(f[12])) * 10; // utime + stime, 100 Hz ticks → ms
    };
    const idle = [dc.pid, msc.pid, sh.pid];
    const before = await Promise.all(idle.map(cpu));
    await new Promise((r) => setTimeout(r, 2000));
    const after = await Promise.all(idle.map(cpu));
    console.log(
      `CPU while idle for 2 s: desktop-commander ${after[0] - before[0]} ms, ` +
        `mcp-server-commands ${after[1] - before[1]} ms, shoal-mcp ${after[2] - before[2]} ms`,
    );

    // The servers a fast command is compared on run interleaved (shuffled rounds) for FAST_ROUNDS;
    // the SDK rows are what a host sees, the raw rows what the server itself costs. A
    // desktop-commander call takes ~200 ms (it waits for output), so it is timed in a loop of
    // its own after them: interleaved, its ROUNDS would leave the others only ROUNDS samples.
    const rawShoal = await rawMcp(socket, "bench-peers-raw");
    cleanups.push(() => rawShoal.close());
    const rawMsc = await rawServer(bin("mcp-server-commands"), [], {
      env: { ...Deno.env.toObject(), ...peerEnv },
      cwd: dir,
    });
    cleanups.push(() => rawMsc.close());
    for (const [label, shoalSrc, shell, target] of cases) {
      const slow = shell === big;
      const fast: Record<string, () => Promise<Record<string, unknown>>> = {
        shoal_exec: () => sh.client.callTool({ name: "shoal_exec", arguments: { src: shoalSrc } }),
        // The same source straight to the kernel: what the facade adds on top of the run itself.
        "(kernel exec, no MCP)": () =>
          kc.call<Record<string, unknown>>("exec", { src: shoalSrc, position: "value" }).then((
            r,
          ) => ({ content: [{ type: "text", text: r.render }], structuredContent: r })),
        "mcp-server-commands run_command": () =>
          msc.client.callTool({ name: "run_command", arguments: { command: shell } }),
        "shoal_exec, raw client": () =>
          rawShoal.call("tools/call", { name: "shoal_exec", arguments: { src: shoalSrc } }),
        "mcp-server-commands, raw client": () =>
          rawMsc.call("tools/call", { name: "run_command", arguments: { command: shell } }),
      };
      const dcRun = () =>
        dc.client.callTool({
          name: "start_process",
          arguments: { command: shell, timeout_ms: 10_000 },
        });
      const rounds = slow ? ROUNDS : FAST_ROUNDS;
      const times: Record<string, number[]> = {};
      const last: Record<string, Record<string, unknown>> = {};
      for (const k of Object.keys(fast)) last[k] = await fast[k](); // warm-up
      const order = Object.entries(fast);
      for (let i = 0; i < rounds; i++) {
        // Every round in a fresh order: in a fixed one each server always follows the same
        // other, whose trailing work may land on its call — in an A/B of two identical
        // checkouts and mcp-server-commands, whichever came first measured 5–10 % slower.
        shuffle(order, random);
        for (const [k, f] of order) {
          const t = performance.now();
          last[k] = await f();
          (times[k] ??= []).push(performance.now() - t);
        }
      }
      const dcKey = "desktop-commander start_process";
      last[dcKey] = await dcRun();
      for (let i = 0; i < ROUNDS; i++) {
        const t = performance.now();
        last[dcKey] = await dcRun();
        (times[dcKey] ??= []).push(performance.now() - t);
      }
      console.log(
        `\n### ${label}  (${rounds} interleaved rounds; desktop-commander ${ROUNDS} on its own)`,
      );
      const base = stats(times.shoal_exec).median;
      const rawBase = stats(times["shoal_exec, raw client"]).median;
      for (const k of Object.keys(times)) {
        const s = stats(times[k]);
        const ref = k.endsWith("raw client") ? rawBase : base;
        const ratio = k === "shoal_exec" || k === "shoal_exec, raw client"
          ? ""
          : `  = ${(s.median / ref).toFixed(2)}× shoal_exec${ref === rawBase ? " (raw)" : ""}`;
        console.log(`${k.padEnd(34)} median ${ms(s.median)}${ratio}`);
        if (!k.endsWith("raw client")) {
          console.log(`${"".padEnd(34)} returns: ${describe(last[k])}`);
        }
      }
      // The target: no slower than mcp-server-commands. Each quarter of the rounds
      // on its own shows how steady the ratio is.
      for (
        const [ours, theirs] of [
          ["shoal_exec", "mcp-server-commands run_command"],
          ["shoal_exec, raw client", "mcp-server-commands, raw client"],
        ]
      ) {
        const q = Math.floor(rounds / 4);
        const quarters = q < 5
          ? []
          : [0, 1, 2, 3].map((j) =>
            stats(times[theirs].slice(j * q, (j + 1) * q)).median /
            stats(times[ours].slice(j * q, (j + 1) * q)).median
          );
        const whole = stats(times[theirs]).median / stats(times[ours]).median;
        console.log(
          `mcp-server-commands ÷ ${ours}: ${whole.toFixed(3)}` +
            (quarters.length ? ` (quarters ${quarters.map((x) => x.toFixed(2)).join(" ")})` : "") +
            (!target ? "" : whole >= 1 ? "  (target ≥ 1: met)" : "  (target ≥ 1: MISSED)"),
        );
      }
    }
  } finally {
    for (const c of cleanups.reverse()) await Promise.resolve(c()).catch(() => {});
    try {
      kernel.kill("SIGTERM");
    } catch { /* gone */ }
    await kernel.status;
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) {
  await main();
  Deno.exit(0);
}
