/**
 * Value-layer benchmark. Every ratio is against a baseline measured in the same run.
 *
 *   deno run -A bench/value.ts
 *
 * 1. `arith("+")` on ints vs a plain JS add loop with the same safe-integer check (the price of
 *    the value layer's dispatch on the hottest path).
 * 2. `renderBlock` of a 100 000-row table vs a 50-row table: bounded rendering must cost
 *    O(shown), so this ratio should stay near 1.
 * 3. `renderInline` of a 10 000-row table vs `JSON.stringify` of the same rows as plain objects.
 *
 * @module
 */

import { arith } from "../lib/value/arith.ts";
import { renderBlock, renderInline } from "../lib/value/render.ts";
import { RecordV, SizeV, TableV, type Value } from "../lib/value/types.ts";

/** Median wall time (ms) of `runs` calls after two warm-up calls. */
function median(runs: number, fn: () => unknown): number {
  fn();
  fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    fn();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

function row(label: string, ms: number, baseMs: number): void {
  console.log(
    `${label.padEnd(44)} ${ms.toFixed(2).padStart(9)} ms  ${(ms / baseMs).toFixed(2)}× baseline`,
  );
}

const N = 2_000_000;
const base1 = median(7, () => {
  let s = 0;
  for (let i = 0; i < N; i++) {
    s = s + 1;
    if (!Number.isSafeInteger(s)) throw new Error("unreachable");
  }
  return s;
});
const arithMs = median(7, () => {
  let s: Value = 0;
  for (let i = 0; i < N; i++) s = arith("+", s, 1);
  return s;
});
console.log(`baseline: plain JS add ×${N}: ${base1.toFixed(2)} ms`);
row(`arith("+") on ints ×${N}`, arithMs, base1);

const mk = (n: number) =>
  new TableV(
    Array.from({ length: n }, (_, i) =>
      new RecordV(
        new Map<string, Value>([["name", `file${i}.txt`], ["size", new SizeV(BigInt(i * 37))], [
          "n",
          i,
        ]]),
      )),
  );
const small = mk(50), big = mk(100_000);
const base2 = median(9, () => renderBlock(small));
console.log(`baseline: renderBlock of a 50-row table: ${base2.toFixed(2)} ms`);
row("renderBlock of a 100000-row table", median(9, () => renderBlock(big)), base2);

const mid = mk(10_000);
const plain = mid.rows.map((r) => ({ name: r.fields.get("name"), size: 1, n: r.fields.get("n") }));
const base3 = median(7, () => JSON.stringify(plain));
console.log(`baseline: JSON.stringify of 10000 plain rows: ${base3.toFixed(2)} ms`);
row("renderInline of a 10000-row table", median(7, () => renderInline(mid)), base3);
