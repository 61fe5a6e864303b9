/**
 * Evaluator benchmark: the Shoal interpreter vs `python3` running the same algorithms in the
 * same run. Each side times only the work (Python with `time.perf_counter` inside the
 * process, Shoal around `evalProgram`), best of three. Prints each ratio (Shoal ÷ Python).
 *
 * Run: `deno run -A bench/eval.ts`
 *
 * @module
 */

import { Evaluator } from "../lib/eval/mod.ts";
import { renderInline } from "../lib/value/render.ts";

interface Case {
  name: string;
  shoal: string;
  python: string;
}

const CASES: Case[] = [
  {
    name: "while loop, 1e6 int additions",
    shoal: "var i = 0\nvar s = 0\nwhile i < 1000000 { s = s + i\n i = i + 1 }\ns",
    python: "i = 0\ns = 0\nwhile i < 1000000:\n    s = s + i\n    i = i + 1\nr = s",
  },
  {
    name: "recursive fib(25)",
    shoal: "fn fib(n) { if n < 2 { n } else { fib(n - 1) + fib(n - 2) } }\nfib(25)",
    python: "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\nr = fib(25)",
  },
  {
    name: "build + filter 100k records",
    shoal: "let xs = (0..100000).map(i => {id: i, v: i % 7})\nxs.where(r => r.v == 3).len()",
    python:
      "xs = [{'id': i, 'v': i % 7} for i in range(100000)]\nr = len([x for x in xs if x['v'] == 3])",
  },
  {
    name: "string building, 100k appends",
    shoal: 'var s = ""\nfor i in 0..100000 { s = s + "x" }\ns.len()',
    python: "s = ''\nfor i in range(100000):\n    s = s + 'x'\nr = len(s)",
  },
];

async function timePython(src: string): Promise<{ ms: number; result: string }> {
  const prog = `import time\nt0 = time.perf_counter()\n${src}\n` +
    `print((time.perf_counter() - t0) * 1000)\nprint(r)`;
  const out = await new Deno.Command("python3", { args: ["-c", prog], stdout: "piped" }).output();
  if (!out.success) throw new Error("python3 failed");
  const [ms, result] = new TextDecoder().decode(out.stdout).trim().split("\n");
  return { ms: Number(ms), result };
}

async function timeShoal(src: string): Promise<{ ms: number; result: string }> {
  const ev = new Evaluator();
  const program = ev.parse(src);
  const t0 = performance.now();
  const v = await ev.evalProgram(program);
  return { ms: performance.now() - t0, result: renderInline(v) };
}

async function best(f: () => Promise<{ ms: number; result: string }>) {
  let b = await f();
  for (let i = 0; i < 2; i++) {
    const r = await f();
    if (r.ms < b.ms) b = r;
  }
  return b;
}

let hasPython = true;
try {
  await new Deno.Command("python3", { args: ["-c", "pass"] }).output();
} catch {
  hasPython = false;
}

console.log(`${"case".padEnd(34)} ${"shoal ms".padStart(9)} ${"python ms".padStart(10)}  ratio`);
for (const c of CASES) {
  const s = await best(() => timeShoal(c.shoal));
  if (!hasPython) {
    console.log(`${c.name.padEnd(34)} ${s.ms.toFixed(1).padStart(9)} ${"n/a".padStart(10)}`);
    continue;
  }
  const p = await best(() => timePython(c.python));
  const agree = s.result === p.result ? "" : `  (results differ: ${s.result} vs ${p.result})`;
  console.log(
    `${c.name.padEnd(34)} ${s.ms.toFixed(1).padStart(9)} ${p.ms.toFixed(1).padStart(10)}  ${
      (s.ms / p.ms).toFixed(2)
    }×${agree}`,
  );
}
