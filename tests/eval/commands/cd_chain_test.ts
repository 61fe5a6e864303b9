/**
 * `cd DIR && CMD` — the commonest agent idiom (issue 13) — does what a shell does: CMD runs
 * in DIR, the cd stays (a session is a long-lived shell), a failing cd stops the chain with
 * its error, and the cd itself prints nothing.
 */

import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { error, session, show, withTempDir } from "./_helpers.ts";

Deno.test("cd DIR && CMD runs CMD in DIR and the cd stays", async () => {
  await withTempDir(async (dir) => {
    Deno.mkdirSync(join(dir, "src"));
    Deno.writeTextFileSync(join(dir, "src", "a.ts"), "");
    const ev = session(dir);
    assertEquals(await show(ev, "cd src && ls.map(.name)"), '["a.ts"]');
    assertEquals(await show(ev, "pwd"), join(dir, "src"));
    assertEquals(await show(ev, "cd .. && (sh { pwd }).out"), `"${dir}"`);
    // chains of steps, pushd and a command's outcome after the cd
    assertEquals(await show(ev, "mkdir -p b/c && cd b/c && pwd"), join(dir, "b", "c"));
    assertEquals(await show(ev, `pushd ${dir} && (echo here).out`), '"here"');
    assertEquals(await show(ev, "cd src || echo unreachable"), join(dir, "src"));
  });
});

Deno.test("a failing cd stops the chain with its own error; a false before it still decides", async () => {
  await withTempDir(async (dir) => {
    const ev = session(dir);
    const e = await error(ev, "cd nope && echo ran");
    assertEquals(e.code, "arg_error");
    assert(e.msg.includes("cd: cannot enter"), e.msg);
    assertEquals(await show(ev, "pwd"), dir);
    assertEquals(await show(ev, "false && cd nope"), "false");
    assertEquals(await show(ev, "(false && cd nope) && echo no"), "false");
    // the value of a cd is a path, which is still no condition elsewhere
    assertEquals((await error(ev, "if (cd .) { 1 }")).code, "type_error");
  });
});

Deno.test("in statement position the cd prints nothing; the command's output does", async () => {
  await withTempDir(async (dir) => {
    Deno.mkdirSync(join(dir, "d"));
    const printed: string[] = [];
    const ev = session(dir, { ports: { sink: (v) => void printed.push(String(v)) } });
    await ev.evalSource("cd d && echo hi\n1");
    assertEquals(printed.length, 1);
  });
});
