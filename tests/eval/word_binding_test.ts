import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { Evaluator } from "../../lib/eval/mod.ts";
import { ListV } from "../../lib/value/types.ts";

Deno.test("a word bound to a glob parameter expands against the session cwd", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${dir}/sub`);
    for (const f of ["a.txt", "b.txt", "c.log"]) await Deno.writeTextFile(`${dir}/sub/${f}`, "");
    const ev = new Evaluator({ cwd: dir });
    // The session cwd is `dir/sub` at binding time; the process cwd is elsewhere.
    const v = await ev.evalSource(
      'fn g(p: glob) { p.expand().map(x => x.name) }\ncd sub\ng "*.txt"',
    );
    assertEquals(v, new ListV(["a.txt", "b.txt"]));
    // list<glob> elements get the same origin.
    const w = await ev.evalSource(
      'fn h(ps: list<glob>) { ps.map(p => p.expand().len()) }\nh(["*.log"])',
    );
    assertEquals(w, new ListV([1]));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
