/**
 * Reef and adapters benchmark (issue 18). Every ratio is against a baseline measured in the
 * same run.
 *
 *   deno run -A --unstable-worker-options bench/adapters.ts
 *
 * Reef (target ≤ 2×, cached): resolving a locked tool — scope check of every ancestor
 * directory, lock read, hash-cache check of the binary, view — vs a bare PATH lookup of the
 * same name (`which`). Also the price Reef adds to an unconstrained head inside a project
 * (scope check, then the same PATH lookup).
 *
 * Adapters (target ≤ 1.3×): `git status` through its adapter (words bound, the pinned
 * `--porcelain=v2 -z` spawned, the output parsed into a table) vs `^git status
 * --porcelain=v2` raw through the same evaluator — the section at the end (the adapters half
 * of issue 18).
 *
 * @module
 */

import { join } from "node:path";
import { DEFAULT_PATH, which } from "../lib/exec/mod.ts";
import { type ReefContext, resolveCommand, resolveTool } from "../lib/reef/mod.ts";
import { Evaluator } from "../lib/eval/mod.ts";
import { TableV } from "../lib/value/types.ts";

/** µs per call of `n` sequential awaited calls. */
async function batch(n: number, fn: () => unknown): Promise<number> {
  const t = performance.now();
  for (let i = 0; i < n; i++) await fn();
  return ((performance.now() - t) * 1000) / n;
}

/**
 * `fn` against `base`, interleaved batch by batch (so a load change on this shared machine
 * hits both sides alike): the median of each side and the median of the per-batch ratios.
 */
async function compare(
  n: number,
  batches: number,
  base: () => unknown,
  fn: () => unknown,
): Promise<{ base: number; us: number; ratio: number }> {
  await batch(n, base); // warm-up (JIT, caches)
  await batch(n, fn);
  const b: number[] = [], f: number[] = [], r: number[] = [];
  for (let i = 0; i < batches; i++) {
    const x = await batch(n, base);
    const y = await batch(n, fn);
    b.push(x);
    f.push(y);
    r.push(y / x);
  }
  const med = (a: number[]) => a.sort((p, q) => p - q)[Math.floor(a.length / 2)];
  return { base: med(b), us: med(f), ratio: med(r) };
}

function row(label: string, m: { base: number; us: number; ratio: number }, target?: number) {
  const verdict = target === undefined
    ? ""
    : m.ratio <= target
    ? `  (target ≤ ${target}×: met)`
    : `  (target ≤ ${target}×: MISSED)`;
  console.log(
    `${label.padEnd(54)} ${m.us.toFixed(2).padStart(7)} µs vs ${
      m.base.toFixed(2).padStart(6)
    } µs  ${m.ratio.toFixed(2)}×${verdict}`,
  );
}

// ---- Reef --------------------------------------------------------------------------------

// Under $HOME, where projects live (/tmp changes all the time on a shared machine, which makes
// its directory entry re-checked on every resolution).
const home = Deno.env.get("HOME");
const parent = home !== undefined && isWritableDir(home) ? home : undefined;
const root = Deno.realPathSync(
  Deno.makeTempDirSync({ prefix: ".shoal-bench-reef-", dir: parent }),
);

function isWritableDir(d: string): boolean {
  try {
    return Deno.statSync(d).isDirectory &&
      Deno.permissions.querySync({ name: "write", path: d }).state === "granted";
  } catch {
    return false;
  }
}
try {
  // A project a few levels deep, the lock beside its manifest, a locked `sh`.
  const cwd = join(root, "work", "project", "src", "lib");
  Deno.mkdirSync(cwd, { recursive: true });
  Deno.writeTextFileSync(join(root, "work", "project", ".reef.toml"), '[tools]\nsh = "*"\n');
  const PATH = Deno.env.get("PATH") ?? DEFAULT_PATH;
  const env = { PATH, HOME: join(root, "home"), XDG_RUNTIME_DIR: join(root, "run") };
  const ctx: ReefContext = { cwd, env, policy: "script" };
  const locked = await resolveTool("sh", { ...ctx, policy: "interactive" }); // writes the lock
  // Files and directories older than the racy window (see lib/reef/watched.ts), as real ones are.
  const old = new Date(Date.now() - 60_000);
  for (
    const f of [
      "work/project/.reef.toml",
      "work/project/reef.lock",
      "work/project/src/lib",
      "work/project/src",
      "work/project",
      "work",
      ".",
    ]
  ) {
    Deno.utimeSync(join(root, f), old, old);
  }
  // …and let the parent directory (changed by creating the tree) settle too.
  await new Promise((r) => setTimeout(r, 1100));
  const depth = cwd.split("/").length;
  console.log(
    `cwd ${depth} directories deep; PATH ${PATH.split(":").length} entries; sh locked at ${
      locked!.path
    } (a PATH lookup finds ${which("sh", PATH, cwd)})`,
  );

  const N = 1000, B = 15;
  const sh = () => which("sh", PATH, cwd);
  const cat = () => which("cat", PATH, cwd);
  console.log("each row: the Reef call vs a bare PATH lookup of the same name, interleaved");
  row(
    'resolveCommand("sh"): locked, verified, with its view',
    await compare(N, B, sh, () => resolveCommand("sh", ctx)),
    2,
  );
  row(
    'resolveTool("sh"): locked, verified (no view)',
    await compare(N, B, sh, () => resolveTool("sh", ctx)),
  );
  row(
    'resolveCommand("cat"): unconstrained head in the project',
    await compare(N, B, cat, () => resolveCommand("cat", ctx)),
  );
} finally {
  Deno.removeSync(root, { recursive: true });
}

// ---- Adapters (i18-adapters) ---------------------------------------------------------------
// `git status` through its adapter (bind the words, spawn `git status --porcelain=v2 -z` with
// the adapter's pinned environment, parse the table) vs `^git status --porcelain=v2` raw (the
// same spawn path, stdout kept as bytes), both through one evaluator in a repository with a
// modified, a renamed, an untracked and a unicode-named file. Target ≤ 1.3×.
{
  const repo = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "shoal-bench-adapters-" }));
  try {
    const ev = new Evaluator({ cwd: repo, adapters: true, env: Deno.env.toObject() });
    await ev.evalSource(
      "^git init -q -b main; ^git config user.email b@example.org; ^git config user.name bench",
    );
    for (let i = 0; i < 40; i++) Deno.writeTextFileSync(join(repo, `f${i}.txt`), `${i}\n`);
    Deno.writeTextFileSync(join(repo, "sp ace.txt"), "s\n");
    await ev.evalSource('^git add -A; ^git commit -q -m "base"');
    for (let i = 0; i < 10; i++) Deno.writeTextFileSync(join(repo, `f${i}.txt`), "changed\n");
    await ev.evalSource('^git mv "sp ace.txt" "renamed é.txt"');
    Deno.writeTextFileSync(join(repo, "ünï new.txt"), "n\n");
    const adapted = ev.parse("(git status).out");
    const raw = ev.parse("(^git status --porcelain=v2).out");
    const t = await ev.evalProgram(adapted);
    if (!(t instanceof TableV) || t.rows.length !== 12) {
      throw new Error("git status is not the table");
    }
    console.log("\nadapters: one evaluator, a repository with 12 changed entries, interleaved");
    row(
      "git status (adapter: bind, spawn, parse the table)",
      await compare(10, 9, () => ev.evalProgram(raw), () => ev.evalProgram(adapted)),
      1.3,
    );
  } finally {
    Deno.removeSync(repo, { recursive: true });
  }
}
