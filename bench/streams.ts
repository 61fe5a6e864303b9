/**
 * Stream benchmark: a 1,000,000-item `map`/`where`/`take` pipeline in Shoal against the same
 * pipeline in plain JavaScript in the same run — lazy iterator helpers (the equivalent of a
 * pull-based stream), eager arrays, and a hand-written loop. Every item of the source is pulled (the `take` limit is
 * reached on the last item). Each side reports the CPU time (`process.cpuUsage`, so a loaded
 * machine skews both sides alike) of its best of five runs (the first Shoal run, JIT still cold,
 * is shown too); ratios are Shoal best ÷ JavaScript best.
 *
 * Run: `deno run -A bench/streams.ts`
 *
 * @module
 */

import process from "node:process";
import { Evaluator } from "../lib/eval/mod.ts";
import { renderInline } from "../lib/value/render.ts";

const N = 1_000_000;
const KEEP = N / 2; // x*3 is even for every even x: the 500,000th kept item is the last one

const SHOAL =
  `(0..${N}).stream().map(x => x * 3).where(x => x % 2 == 0).take(${KEEP}).collect().len()`;

function* range(n: number): Generator<number> {
  for (let i = 0; i < n; i++) yield i;
}

/** The same pipeline with lazy iterator helpers. */
function jsIterator(): number {
  return range(N).map((x) => x * 3).filter((x) => x % 2 === 0).take(KEEP).toArray().length;
}

/** The same pipeline with eager arrays. */
function jsArray(): number {
  const xs = Array.from({ length: N }, (_, i) => i);
  return xs.map((x) => x * 3).filter((x) => x % 2 === 0).slice(0, KEEP).length;
}

/** The same pipeline as a plain loop calling the two functions. */
function jsLoop(): number {
  const f = (x: number) => x * 3;
  const g = (x: number) => x % 2 === 0;
  const out: number[] = [];
  for (let i = 0; i < N && out.length < KEEP; i++) {
    const y = f(i);
    if (g(y)) out.push(y);
  }
  return out.length;
}

function best(runs: number, f: () => unknown): { ms: number; first: number; result: unknown } {
  let bestMs = Infinity;
  let first = 0;
  let result: unknown;
  for (let i = 0; i < runs; i++) {
    const t0 = process.cpuUsage();
    result = f();
    const used = process.cpuUsage(t0);
    const ms = (used.user + used.system) / 1000;
    if (i === 0) first = ms;
    bestMs = Math.min(bestMs, ms);
  }
  return { ms: bestMs, first, result };
}

const ev = new Evaluator({ cwd: Deno.cwd(), env: {} });
const program = ev.parse(SHOAL);
const shoal = best(5, () => {
  const r = ev.evalProgram(program);
  if (r instanceof Promise) throw new Error("the in-memory pipeline went async");
  return renderInline(r);
});
const iter = best(5, jsIterator);
const arr = best(5, jsArray);
const loop = best(5, jsLoop);

if (
  String(shoal.result) !== String(KEEP) || iter.result !== KEEP || arr.result !== KEEP ||
  loop.result !== KEEP
) {
  throw new Error(`results differ: ${shoal.result} / ${iter.result} / ${arr.result}`);
}

const f = (ms: number) => ms.toFixed(1).padStart(8) + " ms";
console.log(`stream pipeline over ${N.toLocaleString("en")} items (map → where → take)`);
console.log(`  shoal               ${f(shoal.ms)}  (first run ${f(shoal.first).trim()})`);
console.log(`  js iterator helpers ${f(iter.ms)}  ratio ${(shoal.ms / iter.ms).toFixed(1)}×`);
console.log(`  js arrays           ${f(arr.ms)}  ratio ${(shoal.ms / arr.ms).toFixed(1)}×`);
console.log(`  js plain loop       ${f(loop.ms)}  ratio ${(shoal.ms / loop.ms).toFixed(1)}×`);
