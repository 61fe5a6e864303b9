/**
 * Session state: cd / cd - / pushd / popd / dirs, `with cwd:`/`with env:` restoring on every
 * exit path, the fn-body restrictions, and the invariant that the process's own cwd and env
 * never change.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { type ListV, PathV } from "../../../lib/value/types.ts";
import { dec, error, run, session, show, withTempDir } from "./_helpers.ts";

Deno.test("cd: canonical target, no arg → HOME, `cd -` returns to the exact path left", async () => {
  await withTempDir(async (dir) => {
    Deno.mkdirSync(join(dir, "real"));
    Deno.symlinkSync(join(dir, "real"), join(dir, "alias"));
    const ev = session(dir, { env: { HOME: join(dir, "real"), PATH: "/usr/bin:/bin" } });
    assert.equal((await error(ev, "cd -")).msg, "cd: OLDPWD not set");
    const p = await run(ev, "cd alias");
    assert.ok(p instanceof PathV);
    assert.equal(p.path, join(dir, "real"), "cd canonicalises");
    assert.equal(ev.cwd(), join(dir, "real"));
    await run(ev, "cd -");
    assert.equal(ev.cwd(), dir);
    await run(ev, "cd -");
    assert.equal(ev.cwd(), join(dir, "real"));
    await run(ev, "cd ..\ncd");
    assert.equal(ev.cwd(), join(dir, "real"), "bare cd goes HOME");
    assert.equal((await error(ev, "cd nowhere")).code, "arg_error");
    Deno.writeTextFileSync(join(dir, "file"), "");
    assert.equal((await error(ev, `cd ${join(dir, "file")}`)).code, "arg_error");
    // A child spawned after cd runs in the new cwd, with $PWD to match.
    assert.equal(await show(ev, "(sh -c pwd).out"), JSON.stringify(join(dir, "real")));
    assert.equal(
      await show(ev, `(sh -c 'printf %s "$PWD"').out`),
      JSON.stringify(join(dir, "real")),
    );
  });
});

Deno.test("pushd / popd / dirs keep [cwd] + stack", async () => {
  await withTempDir(async (dir) => {
    Deno.mkdirSync(join(dir, "a"));
    Deno.mkdirSync(join(dir, "b"));
    const ev = session(dir);
    const paths = (v: unknown) => (v as ListV).items.map((p) => (p as PathV).path);
    assert.deepEqual(paths(await run(ev, "dirs")), [dir]);
    assert.deepEqual(paths(await run(ev, "pushd a")), [join(dir, "a"), dir]);
    assert.deepEqual(paths(await run(ev, "pushd ../b")), [join(dir, "b"), join(dir, "a"), dir]);
    assert.deepEqual(paths(await run(ev, "pushd")), [join(dir, "a"), join(dir, "b"), dir]);
    assert.deepEqual(paths(await run(ev, "popd")), [join(dir, "b"), dir]);
    assert.deepEqual(paths(await run(ev, "popd")), [dir]);
    assert.match((await error(ev, "popd")).msg, /empty/);
    assert.match((await error(ev, "pushd")).msg, /swap/);
  });
});

Deno.test("cwd verbs and env assignment are refused inside fn bodies and lambdas", async () => {
  await withTempDir(async (dir) => {
    Deno.mkdirSync(join(dir, "sub"));
    const ev = session(dir);
    for (const body of ["cd sub", "pushd sub", "popd", "jump sub"]) {
      const e = await error(ev, `fn f() { ${body} }\nf()`);
      assert.equal(e.code, "custom", body);
      assert.match(e.msg, /top level; use `with cwd:`/);
    }
    const e = await error(ev, `let f = () => { env.X = "1" }\nf()`);
    assert.match(e.msg, /use `with env:`/);
    assert.equal(ev.cwd(), dir);
    // `with cwd:` is the allowed form and restores afterwards.
    assert.equal(
      await show(ev, `fn g() { with cwd: "sub" { (sh -c pwd).out } }\ng()`),
      JSON.stringify(join(dir, "sub")),
    );
    assert.equal(ev.cwd(), dir);
  });
});

Deno.test("with cwd:/env: restore on errors, break and return", async () => {
  await withTempDir(async (dir) => {
    Deno.mkdirSync(join(dir, "sub"));
    const ev = session(dir, { env: { PATH: "/usr/bin:/bin", KEEP: "k" } });
    await run(ev, `try { with cwd: "sub", env: {KEEP: "x", NEW: "n"} { 1 / 0 } } catch { null }`);
    assert.equal(ev.cwd(), dir);
    assert.equal(ev.env().get("KEEP"), "k");
    assert.equal(ev.env().has("NEW"), false);
    await run(ev, `for i in [1] { with cwd: "sub" { break } }`);
    assert.equal(ev.cwd(), dir);
    await run(ev, `fn f() { with env: {NEW: "n"} { return 1 } }\nf()`);
    assert.equal(ev.env().has("NEW"), false);
  });
});

Deno.test("the process's own cwd and env never change", async () => {
  await withTempDir(async (dir) => {
    Deno.mkdirSync(join(dir, "sub"));
    const cwd0 = Deno.cwd();
    const env0 = Deno.env.toObject();
    const ev = session(dir);
    await run(
      ev,
      [
        "cd sub",
        "pushd ..",
        "popd",
        "cd -",
        `env.SHOAL_SHOULD_NOT_LEAK = "1"`,
        `with cwd: "sub", env: {SHOAL_ALSO_NOT: "2"} { sh -c 'true' }`,
        `FOO_PREFIX=1 sh -c true`,
        "mkdir made",
        `"x".save("made/f.txt")`,
        `run("made/../made/f.txt") catch { null }`,
      ].join("\n"),
    );
    assert.equal(Deno.cwd(), cwd0);
    assert.deepEqual(Deno.env.toObject(), env0);
    assert.equal(Deno.env.get("SHOAL_SHOULD_NOT_LEAK"), undefined);
    // The relative paths above landed in the session cwd, not the process cwd.
    assert.ok(Deno.statSync(join(dir, "made/f.txt")).isFile);
    const o = await run(ev, "(sh -c 'printf %s \"$SHOAL_SHOULD_NOT_LEAK\"')");
    assert.equal(dec.decode((o as { stdout: Uint8Array }).stdout), "1");
  });
});
