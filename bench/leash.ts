/**
 * Leash benchmark (issue 15), every ratio against a baseline measured in the same run.
 *
 *   deno run -A --unstable-worker-options bench/leash.ts
 *
 * 1. `exec` of a builtin with policy evaluation vs without: the same `stat ./f` round trip on a
 *    kernel without Leash (baseline) and on one where a token principal's narrow policy is
 *    evaluated on every exec (its token re-checked on every request too); also the person's
 *    permissive policy; and with a new source on every call, so the derivation is done from
 *    scratch each time rather than remembered. Target ≤ 1.1×.
 * 2. `explain` of a 1,000-statement script vs a 500-statement one: derivation is linear
 *    (target: 2,000/1,000 ≈ 2× — at most 2.5×), and the absolute cost per statement.
 *
 * Calls alternate between the kernels one by one so a busy machine slows all alike; medians of
 * the per-call times.
 *
 * @module
 */

import { join } from "node:path";
import { KernelClient } from "../lib/client/client.ts";
import { type KernelHandle, startKernel } from "../lib/kernel/server.ts";
import { TokenStore } from "../lib/leash/mod.ts";

/** Rounds, and calls per kernel and round, interleaved one by one (a load burst hits all). */
const ROUNDS = 5;
const CALLS = 600;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function line(label: string, value: string, ratio: number, target: number): void {
  console.log(
    `${label.padEnd(58)} ${value.padStart(12)}  ${ratio.toFixed(3)}×  ` +
      `(target ≤ ${target}: ${ratio <= target ? "met" : "MISSED"})`,
  );
}

async function perCall(c: KernelClient, src: string, n: number): Promise<number> {
  const t = performance.now();
  for (let i = 0; i < n; i++) await c.call("exec", { src });
  return (performance.now() - t) / n;
}

/**
 * Per-call times of `src(i)` on each client, calls interleaved one by one, in rounds: each
 * client's time is the median of its per-round medians, each ratio to `base` the median of the
 * per-round ratios (a round the machine was busy for moves both sides).
 */
async function interleaved(
  clients: Record<string, KernelClient>,
  src: (i: number) => string,
): Promise<{ ms: Record<string, number>; ratio: Record<string, number> }> {
  const rounds: Record<string, number>[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t: Record<string, number[]> = {};
    for (const k of Object.keys(clients)) t[k] = [];
    for (let i = 0; i < CALLS; i++) {
      for (const [k, c] of Object.entries(clients)) {
        t[k].push(await perCall(c, src(r * CALLS + i), 1));
      }
    }
    rounds.push(Object.fromEntries(Object.entries(t).map(([k, xs]) => [k, median(xs)])));
  }
  const keys = Object.keys(clients);
  return {
    ms: Object.fromEntries(keys.map((k) => [k, median(rounds.map((x) => x[k]))])),
    ratio: Object.fromEntries(keys.map((k) => [k, median(rounds.map((x) => x[k] / x.base))])),
  };
}

const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "shoal-bench-leash-" }));
const state = join(dir, "state");
await Deno.mkdir(state);
await Deno.writeTextFile(join(dir, "f"), "x");
await Deno.writeTextFile(
  join(state, "policy.toml"),
  `[principal."agent:bench"]\nfs.read = ["${dir}/**", "/usr/**"]\nfs.write = ["${dir}/out/**"]\n` +
    `env_read = ["HOME"]\ntime = true\nauto_apply = "in-grant"\nopaque = "deny"\n`,
);
const { bearer } = await new TokenStore(join(state, "tokens.json")).create("agent:bench");

const kernels: KernelHandle[] = [];
async function kernel(name: string, extra: Record<string, unknown>): Promise<KernelHandle> {
  const k = await startKernel({
    socket: join(dir, `${name}.sock`),
    cwd: dir,
    journal: false, // the journal has its own benchmark: measure Leash alone
    onError: () => {},
    ...extra,
  });
  kernels.push(k);
  return k;
}

try {
  const none = await kernel("none", { ephemeral: true, leash: false });
  const none2 = await kernel("none2", { ephemeral: true, leash: false });
  // Leash alone: the principal unconfined here (its OS sandbox has its own measurement in
  // bench/isolation.ts, confined `^true` vs unconfined).
  const withLeash = await kernel("leash", { stateDir: state, confinement: () => null });
  const base = await KernelClient.connect({ socket: none.path, attach: {} });
  // A second kernel without Leash: its ratio to the baseline is the noise of this run.
  const control = await KernelClient.connect({ socket: none2.path, attach: {} });
  const agent = await KernelClient.connect({ socket: withLeash.path, attach: { token: bearer } });
  const person = await KernelClient.connect({ socket: withLeash.path, attach: {} });
  const src = "stat ./f";
  // The narrow policy really is evaluated: a path outside it is refused.
  const refused = await agent.call("exec", { src: "stat /etc/hostname" }).then(
    () => false,
    () => true,
  );
  if (!refused) throw new Error("the bench policy did not refuse a path outside its grant");
  for (const c of [base, control, agent, person]) await perCall(c, src, 100); // warm up
  const us = (ms: number) => `${(ms * 1000).toFixed(0)} µs`;
  // The same source every time: a filesystem-independent derivation is remembered by the
  // session, the verdict is evaluated on every exec.
  const { ms: same, ratio: r1 } = await interleaved({ base, control, agent, person }, () => src);
  console.log(`exec "${src}" without Leash (baseline)`.padEnd(58) + us(same.base).padStart(12));
  console.log(
    `… another kernel without Leash (the noise of this run)`.padEnd(58) +
      `${us(same.control).padStart(12)}  ${r1.control.toFixed(3)}×`,
  );
  line("… token principal, narrow policy evaluated", us(same.agent), r1.agent, 1.1);
  line("… the person, permissive policy", us(same.person), r1.person, 1.1);
  // A new source every time (a comment differs): derived from scratch on every exec.
  const { ms: fresh, ratio: r2 } = await interleaved({ base, agent }, (i) => `${src} # ${i}`);
  console.log(
    `exec "${src} # N" (new source each call), baseline`.padEnd(58) + us(fresh.base).padStart(12),
  );
  line("… token principal, derived + evaluated every exec", us(fresh.agent), r2.agent, 1.1);

  // explain: linear in the statements.
  const script = (n: number) =>
    Array.from(
      { length: n },
      (_, i) =>
        i % 4 === 0
          ? `touch ./out/f${i}`
          : i % 4 === 1
          ? `let v${i} = path("./f").read()`
          : i % 4 === 2
          ? `if true { cat ./f } else { ls }`
          : `fn g${i}(p) { stat (p) }`,
    ).join("\n");
  const explain = async (n: number) => {
    const s = script(n);
    await agent.call("explain", { src: s });
    // The fastest of 15: CPU-bound work (derivation, and the AST JSON it returns through the
    // session pipe and the socket), which a busy machine only ever adds to.
    let best = Infinity;
    for (let r = 0; r < 15; r++) {
      const t0 = performance.now();
      await agent.call("explain", { src: s });
      best = Math.min(best, performance.now() - t0);
    }
    return best;
  };
  const e500 = await explain(500);
  const e1000 = await explain(1000);
  const e2000 = await explain(2000);
  console.log(`explain of a 500-statement script`.padEnd(58) + `${e500.toFixed(1)} ms`);
  console.log(
    `explain of a 1,000-statement script`.padEnd(58) +
      `${e1000.toFixed(1)} ms (${((e1000 / 1000) * 1000).toFixed(0)} µs/statement)`,
  );
  line(`explain 1,000 / 500 statements (linear: 2×)`, `${e1000.toFixed(1)} ms`, e1000 / e500, 2.5);
  line(
    `explain 2,000 / 1,000 statements (linear: 2×)`,
    `${e2000.toFixed(1)} ms`,
    e2000 / e1000,
    2.5,
  );
  for (const c of [base, control, agent, person]) c.close();
} finally {
  for (const k of kernels) await k.close();
  await Deno.remove(dir, { recursive: true }).catch(() => {});
}
