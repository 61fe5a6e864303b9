/**
 * Run every benchmark in `bench/` in sequence (alphabetical), each in its own process so one
 * benchmark's JIT state and heap do not skew the next.
 *
 *   deno run -A --unstable-worker-options bench/mod.ts [name-filter]
 *
 * @module
 */

const here = new URL(".", import.meta.url).pathname;
const filter = Deno.args[0] ?? "";
const files = [...Deno.readDirSync(here)]
  .map((e) => e.name)
  .filter((n) => n.endsWith(".ts") && n !== "mod.ts" && !n.startsWith("_") && n.includes(filter))
  .sort();

let failed = 0;
for (const f of files) {
  console.log(`\n=== bench/${f} ===`);
  const { code } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-worker-options", here + f],
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  if (code !== 0) {
    failed++;
    console.log(`bench/${f} exited with ${code}`);
  }
}
Deno.exit(failed ? 1 : 0);
