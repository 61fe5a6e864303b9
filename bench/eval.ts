/**
 * Evaluator benchmark: the Shoal interpreter vs `python3` running the same algorithms in the
 * same run. Each side times only the work in CPU time (Python with `time.process_time` inside
 * the process, Shoal with `process.cpuUsage` around `evalProgram`, which also counts V8's
 * GC/compiler threads), so a loaded machine skews both sides alike. Shoal's first (cold, JIT
 * warming up) run is reported next to its best of five; Python is best of three. Prints each
 * ratio (Shoal best ÷ Python best).
 *
 * Run: `deno run -A bench/eval.ts`
 *
 * @module
 */

import process from "node:process";
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
  const prog = `import time\nt0 = time.process_time()\n${src}\n` +
    `print((time.process_time() - t0) * 1000)\nprint(r)`;
  const out = await new Deno.Command("python3", { args: ["-c", prog], stdout: "piped" }).output();
  if (!out.success) throw new Error("python3 failed");
  const [ms, result] = new TextDecoder().decode(out.stdout).trim().split("\n");
  return { ms: Number(ms), result };
}

async function timeShoal(src: string): Promise<{ ms: number; result: string }> {
  const ev = new Evaluator();
  const program = ev.parse(src);
  const c0 = process.cpuUsage();
  const v = await ev.evalProgram(program);
  const c = process.cpuUsage(c0);
  return { ms: (c.user + c.system) / 1000, result: renderInline(v) };
}

async function best(f: () => Promise<{ ms: number; result: string }>, runs: number) {
  let b = await f();
  for (let i = 1; i < runs; i++) {
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

console.log(
  `${"case".padEnd(34)} ${"cold ms".padStart(8)} ${"shoal ms".padStart(9)} ${
    "python ms".padStart(10)
  }  ratio`,
);
for (const c of CASES) {
  const cold = await timeShoal(c.shoal);
  const s = await best(() => timeShoal(c.shoal), 5);
  if (!hasPython) {
    console.log(
      `${c.name.padEnd(34)} ${cold.ms.toFixed(1).padStart(8)} ${s.ms.toFixed(1).padStart(9)} ${
        "n/a".padStart(10)
      }`,
    );
    continue;
  }
  const p = await best(() => timePython(c.python), 3);
  const agree = s.result === p.result ? "" : `  (results differ: ${s.result} vs ${p.result})`;
  console.log(
    `${c.name.padEnd(34)} ${cold.ms.toFixed(1).padStart(8)} ${s.ms.toFixed(1).padStart(9)} ${
      p.ms.toFixed(1).padStart(10)
    }  ${(s.ms / p.ms).toFixed(2)}×${agree}`,
  );
}
