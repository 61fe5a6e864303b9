/**
 * Scripts and modules (language §9.8): `.shl` in a fresh child evaluator, `source` in the
 * current scope, runners by extension and shebang, `use` evaluated once per session.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { error, session, show, withTempDir } from "./_helpers.ts";

const write = (p: string, s: string) => Deno.writeTextFileSync(p, s);

Deno.test(".shl scripts: fresh scope, args/script bound, value is the last statement", async () => {
  await withTempDir(async (dir) => {
    const ev = session(dir);
    write(join(dir, "s.shl"), `let n = args.len()\n"{script.name}:{n}:{args}"`);
    assert.equal(await show(ev, "run s.shl a --flag *.none"), `"s.shl:2:[\\"a\\", \\"--flag\\"]"`);
    assert.equal(await show(ev, "./s.shl x"), `"s.shl:1:[\\"x\\"]"`);
    assert.equal(await show(ev, `run("s.shl", 1, path("p"))`), `"s.shl:2:[1, p]"`);
    assert.equal((await error(ev, "n")).code, "not_found", "script bindings do not leak");
    // A script's cd does not move the caller.
    Deno.mkdirSync(join(dir, "sub"));
    write(join(dir, "mover.shl"), "cd sub\npwd");
    assert.equal(await show(ev, "(run mover.shl).name"), `"sub"`);
    assert.equal(ev.cwd(), dir);
    // Parse errors and unreadable files.
    write(join(dir, "bad.shl"), "let = 1");
    assert.equal((await error(ev, "run bad.shl")).code, "parse_error");
    assert.equal((await error(ev, "run ./missing.shl")).code, "io_error");
    // A script running itself hits the nesting limit instead of the JS stack.
    write(join(dir, "loop.shl"), "run loop.shl");
    assert.equal((await error(ev, "run loop.shl")).code, "recursion_limit");
  });
});

Deno.test("source evaluates in the current scope", async () => {
  await withTempDir(async (dir) => {
    const ev = session(dir);
    write(join(dir, "lib.shl"), "let k = 41\nfn inc(x) { x + 1 }");
    assert.equal(await show(ev, "source lib.shl\ninc(k)"), "42");
    assert.equal(await show(ev, "let base = 1\nsource lib.shl\nbase + k"), "42");
  });
});

Deno.test("run: runners by extension, shebang, runner_not_found, externals", async () => {
  await withTempDir(async (dir) => {
    const ev = session(dir);
    write(join(dir, "t.sh"), `printf '%s|' "$@"`);
    assert.equal(await show(ev, "(run t.sh a b).out"), `"a|b|"`);
    write(join(dir, "tool.zzz"), "#!/usr/bin/env sh\necho via-shebang\n");
    assert.equal(await show(ev, "(run ./tool.zzz).out"), `"via-shebang"`);
    write(join(dir, "plain.zzz"), "no shebang");
    assert.equal((await error(ev, "run ./plain.zzz")).code, "runner_not_found");
    // Not a script: an external command with the remaining args.
    assert.equal(await show(ev, `(run sh -c "printf ext").out`), `"ext"`);
    assert.equal((await error(ev, "run (5)")).code, "type_error");
    // A failing script run in statement position raises cmd_failed.
    write(join(dir, "fail.sh"), "exit 4");
    assert.equal((await error(ev, "run fail.sh")).code, "cmd_failed");
    assert.equal(await show(ev, "(run fail.sh).status"), "4");
  });
});

Deno.test("use: exported names under the stem, evaluated once, cwd = module dir, cycles", async () => {
  await withTempDir(async (dir) => {
    Deno.mkdirSync(join(dir, "lib"));
    write(join(dir, "lib/counter.txt"), "");
    write(
      join(dir, "lib/mathx.shl"),
      `"x".append("counter.txt")\nexport let two = 2\nexport fn double(n) { n * two }\nlet hidden = 1`,
    );
    const ev = session(dir);
    assert.equal(await show(ev, "use ./lib/mathx\nmathx.double(mathx.two)"), "4");
    assert.equal(await show(ev, "use ./lib/mathx\nmathx.keys()"), `["two", "double"]`);
    assert.equal(Deno.readTextFileSync(join(dir, "lib/counter.txt")), "x", "evaluated once");
    assert.equal((await error(ev, "use ./lib/nope")).code, "not_found");
    write(join(dir, "a.shl"), "use ./b\nexport let x = 1");
    write(join(dir, "b.shl"), "use ./a\nexport let y = 2");
    const e = await error(ev, "use ./a");
    assert.equal(e.code, "custom");
    assert.match(e.msg, /circular `use`: a -> b -> a/);
  });
});
