/**
 * The structured filesystem builtins and path methods against real temp dirs: results,
 * error codes, the trash layout and atomic pre-checks.
 */

import assert from "node:assert/strict";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ListV, type PathV, RecordV, TableV } from "../../../lib/value/types.ts";
import { error, lints, run, session, show, withTempDir } from "./_helpers.ts";

const write = (p: string, s: string) => Deno.writeTextFileSync(p, s);

Deno.test("ls: table rows with absolute paths, dotfiles only with -a, sorted by path", async () => {
  await withTempDir(async (dir) => {
    write(join(dir, "b.txt"), "bb");
    write(join(dir, "a.txt"), "a");
    write(join(dir, ".hidden"), "");
    Deno.mkdirSync(join(dir, "sub"));
    Deno.symlinkSync("a.txt", join(dir, "link"));
    const ev = session(dir);
    const t = await run(ev, "(ls).out");
    assert.ok(t instanceof TableV);
    const names = t.rows.map((r) => r.fields.get("name"));
    assert.deepEqual(names, ["a.txt", "b.txt", "link", "sub"]);
    const types = t.rows.map((r) => r.fields.get("type"));
    assert.deepEqual(types, ["file", "file", "symlink", "dir"]);
    assert.equal((t.rows[0].fields.get("path") as PathV).path, join(dir, "a.txt"));
    assert.equal(await show(ev, `(ls b.txt).first().size`), "2b");
    assert.equal(await show(ev, "(ls -a).len()"), "5");
    assert.equal(await show(ev, "(ls --all).len()"), "5");
    assert.equal(await show(ev, `(ls sub a.txt).len()`), "1");
    assert.equal(await show(ev, `ls.first().modified.year > 2000`), "true");
    assert.equal((await error(ev, "ls nope")).code, "custom");
  });
});

Deno.test("cat, head and stat: values and error codes", async () => {
  await withTempDir(async (dir) => {
    const ev = session(dir);
    write(join(dir, "x.txt"), "one\ntwo\r\nthree\n");
    assert.equal(await show(ev, "(cat x.txt x.txt).out.len()"), "30");
    assert.equal(await show(ev, "(head x.txt 2).out"), `["one", "two"]`);
    assert.equal(await show(ev, `(head x.txt "1").out`), `["one"]`);
    assert.equal(await show(ev, "(head x.txt 0).out"), "[]");
    assert.equal(await show(ev, "(head x.txt).out"), `["one", "two", "three"]`);
    assert.equal((await error(ev, "head x.txt abc")).code, "arg_error");
    assert.equal((await error(ev, "head x.txt (1.5)")).code, "type_error");
    assert.equal((await error(ev, "head nope.txt")).code, "custom");
    // head reads only what it needs: a big file's first line comes back quickly.
    const big = new Uint8Array(50_000_000).fill(0x61);
    big[3] = 10;
    Deno.writeFileSync(join(dir, "big.txt"), big);
    const t0 = performance.now();
    assert.equal(await show(ev, "(head big.txt 1).out"), `["aaa"]`);
    assert.ok(performance.now() - t0 < 500);
    const rec = await run(ev, "(stat x.txt).out");
    assert.ok(rec instanceof RecordV);
    assert.deepEqual([...rec.fields.keys()], ["path", "name", "type", "size", "modified"]);
    const e = await error(ev, "stat nope.txt");
    assert.equal(e.code, "custom");
    assert.match(e.msg, /^stat .*nope\.txt: No such file or directory/);
  });
});

Deno.test("mkdir, touch, cp, mv, ln", async () => {
  await withTempDir(async (dir) => {
    const ev = session(dir);
    const made = await run(ev, "(mkdir d1 d2).out");
    assert.ok(made instanceof ListV);
    assert.deepEqual(made.items.map((p) => (p as PathV).path), [join(dir, "d1"), join(dir, "d2")]);
    assert.equal((await error(ev, "mkdir d1")).code, "custom");
    await run(ev, "mkdir -p d1/x/y\nmkdir -p d1");
    assert.ok(Deno.statSync(join(dir, "d1/x/y")).isDirectory);
    // touch updates the mtime of an existing file.
    write(join(dir, "old.txt"), "keep");
    Deno.utimeSync(join(dir, "old.txt"), new Date(1_000_000), new Date(1_000_000));
    await run(ev, "touch old.txt new.txt");
    assert.ok(Deno.statSync(join(dir, "old.txt")).mtime!.getTime() > 1_000_000);
    assert.equal(Deno.readTextFileSync(join(dir, "old.txt")), "keep");
    assert.equal(Deno.statSync(join(dir, "new.txt")).size, 0);
    Deno.utimeSync(join(dir, "d2"), new Date(1_000_000), new Date(1_000_000));
    await run(ev, "touch d2");
    assert.ok(Deno.statSync(join(dir, "d2")).mtime!.getTime() > 1_000_000);
    // cp into a directory keeps the name; several sources need a directory.
    write(join(dir, "f.txt"), "F");
    assert.equal(
      await show(ev, "(cp f.txt old.txt d2).out.map(.name)"),
      `["f.txt", "old.txt"]`,
    );
    assert.equal((await error(ev, "cp f.txt old.txt nowhere")).code, "arg_error");
    assert.equal((await error(ev, "cp d1 d3")).code, "arg_error");
    await run(ev, "cp -r d1 d3");
    assert.ok(Deno.statSync(join(dir, "d3/x/y")).isDirectory);
    assert.equal((await error(ev, "cp -r d1 d1/x")).code, "custom");
    assert.equal((await error(ev, "cp gone.txt z.txt")).code, "custom");
    // mv renames, overwrites, and `mv a a` is a no-op.
    write(join(dir, "m.txt"), "M");
    await run(ev, "mv m.txt f.txt");
    assert.equal(Deno.readTextFileSync(join(dir, "f.txt")), "M");
    assert.equal(await show(ev, "(mv f.txt f.txt).out.first().name"), `"f.txt"`);
    assert.equal((await error(ev, "mv gone.txt z.txt")).code, "custom");
    // ln -s keeps the target text; a hard link shares the inode.
    const l = await run(ev, "(ln -s f.txt s.txt).out");
    assert.ok(l instanceof RecordV);
    assert.equal((l.fields.get("target") as PathV).path, "f.txt");
    assert.equal(Deno.readLinkSync(join(dir, "s.txt")), "f.txt");
    await run(ev, "ln f.txt h.txt");
    assert.equal(Deno.statSync(join(dir, "h.txt")).ino, Deno.statSync(join(dir, "f.txt")).ino);
    assert.equal((await error(ev, "ln a b c")).code, "arg_error");
  });
});

Deno.test("rm (no state dir) moves into <tmp>/shoal-trash/<pid>/<time>-<seq>-<name>; --permanent deletes", async () => {
  await withTempDir(async (dir) => {
    const ev = session(dir);
    write(join(dir, "x.txt"), "X");
    write(join(dir, "y.txt"), "Y");
    Deno.mkdirSync(join(dir, "d"));
    write(join(dir, "d/in.txt"), "I");
    const out = await run(ev, "(rm x.txt d).out");
    assert.ok(out instanceof ListV);
    const trashRoot = join(tmpdir(), "shoal-trash", String(Deno.pid));
    const seqs: number[] = [];
    for (const [i, name] of ["x.txt", "d"].entries()) {
      const r = out.items[i] as RecordV;
      assert.equal((r.fields.get("path") as PathV).path, join(dir, name));
      const trash = (r.fields.get("trash") as PathV).path;
      const m = new RegExp(`^${trashRoot}/\\d{8}T\\d{9}Z-(\\d+)-${name.replace(".", "\\.")}$`)
        .exec(trash);
      assert.ok(m, `unexpected trash path ${trash}`);
      seqs.push(Number(m[1]));
    }
    assert.ok(seqs[1] > seqs[0], "the trash sequence increases");
    const trashed = ((out.items[0] as RecordV).fields.get("trash") as PathV).path;
    assert.equal(Deno.readTextFileSync(trashed), "X");
    const trashedDir = ((out.items[1] as RecordV).fields.get("trash") as PathV).path;
    assert.equal(Deno.readTextFileSync(join(trashedDir, "in.txt")), "I");
    assert.equal(Deno.statSync(trashRoot).mode! & 0o777, 0o700);
    // A missing path fails before anything is removed.
    assert.equal((await error(ev, "rm y.txt nope.txt")).code, "custom");
    assert.ok(Deno.statSync(join(dir, "y.txt")).isFile);
    // --permanent: dirs need -r; the result is the removed paths.
    Deno.mkdirSync(join(dir, "p"));
    assert.equal((await error(ev, "rm --permanent p")).code, "custom");
    assert.equal(await show(ev, "(rm --permanent -r p y.txt).out.map(.name)"), `["p", "y.txt"]`);
    assert.throws(() => Deno.statSync(join(dir, "p")));
    // Never the root, `.` or `..`.
    for (const bad of ["/", ".", "..", "sub/.."]) {
      assert.equal((await error(ev, `rm --permanent -r ${bad}`)).code, "custom", bad);
    }
    assert.ok(Deno.statSync(dir).isDirectory);
    // No paths (an empty glob) is no_matches.
    assert.equal((await error(ev, "rm *.nothing")).code, "no_matches");
    assert.equal(lints.at(-1), "shoal: no matches for *.nothing\n");
    for (const r of out.items) {
      Deno.removeSync(((r as RecordV).fields.get("trash") as PathV).path, { recursive: true });
    }
  });
});

Deno.test("env, sleep and which", async () => {
  await withTempDir(async (dir) => {
    const ev = session(dir, { env: { PATH: "/usr/bin:/bin", HOME: dir, ONLY: "1" } });
    assert.equal(await show(ev, "(env).out.keys().sort()"), `["HOME", "ONLY", "PATH"]`);
    assert.equal(await show(ev, "(env ONLY).out"), `"1"`);
    assert.equal(await show(ev, "(env NOPE).out"), "null");
    const t0 = performance.now();
    assert.equal(await show(ev, "(sleep 50ms).out"), "null");
    assert.ok(performance.now() - t0 >= 45);
    assert.equal((await error(ev, "sleep (-1s)")).code, "type_error");
    assert.equal((await error(ev, "sleep soon")).code, "type_error");
    // A unit it does not know says which ones it does.
    assert.match((await error(ev, "sleep 30sec")).hint ?? "", /ns us ms s m h d w/);
    const w = await run(ev, `(which sh).out`);
    assert.ok(w instanceof RecordV);
    assert.equal(w.fields.get("scope"), "ambient");
    assert.match((w.fields.get("path") as PathV).path, /\/sh$/);
    assert.equal(await show(ev, "(which zzzz-not-here).out"), "null");
    assert.equal((await error(ev, "which")).code, "arg_error");
    // The session PATH decides, not the process's.
    Deno.mkdirSync(join(dir, "bin"));
    write(join(dir, "bin/mytool"), "#!/bin/sh\necho mine\n");
    Deno.chmodSync(join(dir, "bin/mytool"), 0o755);
    assert.equal(await show(ev, "(which mytool).out"), "null");
    await run(ev, `env.PATH = "${dir}/bin:/usr/bin:/bin"`);
    assert.equal(await show(ev, "(which mytool).out.path.name"), `"mytool"`);
    assert.equal(await show(ev, "(mytool).out"), `"mine"`);
  });
});

Deno.test("a cancelled sleep stops early with `cancelled`", async () => {
  await withTempDir(async (dir) => {
    const cancel = new Int32Array(new SharedArrayBuffer(4));
    const ev = session(dir, { cancel });
    const t0 = performance.now();
    const p = run(ev, "sleep 30s").then(() => null, (e) => e.err?.code);
    setTimeout(() => Atomics.store(cancel, 0, 1), 50);
    assert.equal(await p, "cancelled");
    assert.ok(performance.now() - t0 < 2000);
  });
});

Deno.test("path methods: pure on the text, filesystem against the session cwd", async () => {
  await withTempDir(async (dir) => {
    const ev = session(dir);
    const cases: [string, string][] = [
      [`path("a/b.tar.gz").stem`, `"b.tar"`],
      // the same name as an ls row's column, so glob paths and rows read alike
      [`path("a/b.tar.gz").path`, "a/b.tar.gz"],
      [`path("a/b.tar.gz").ext`, `"gz"`],
      [`path(".bashrc").ext`, "null"],
      [`path(".bashrc").stem`, `".bashrc"`],
      [`path("a/b/").name`, `"b"`],
      [`path("/").parent`, "null"],
      [`path("/a").parent`, "/"],
      [`path("a").join("/abs")`, "/abs"],
      [`path("a/").join("b")`, "a/b"],
    ];
    for (const [src, want] of cases) assert.equal(await show(ev, src), want, src);
    Deno.mkdirSync(join(dir, "sub"));
    write(join(dir, "sub/f.txt"), "hi\n");
    await run(ev, "cd sub");
    assert.equal(await show(ev, `path("f.txt").read()`), `"hi\\n"`);
    assert.equal(await show(ev, `path("f.txt").size`), "3b");
    assert.equal(await show(ev, `path("f.txt").abs().parent.name`), `"sub"`);
    assert.equal(await show(ev, `path("f.txt").read_bytes().len()`), "3");
    Deno.writeFileSync(join(dir, "sub/bin"), new Uint8Array([0xff, 0xfe]));
    assert.equal((await error(ev, `path("bin").read()`)).code, "utf8_error");
    assert.equal((await error(ev, `path("bin").lines`)).code, "utf8_error");
    const nf = await error(ev, `path("nope").modified`);
    assert.equal(nf.code, "not_found");
    assert.ok(nf.msg.startsWith(join(dir, "sub", "nope") + ": "));
    assert.equal((await error(ev, `path(".").read()`)).code, "custom");
    assert.equal((await error(ev, `path("x").name(1)`)).code, "arg_error");
    const hint = await error(ev, `path("x").read_str()`);
    assert.ok(hint.hint!.startsWith("did you mean .read()?; path has .read()"), hint.hint!);
  });
});

Deno.test("a glob says which dot-entries it left out (none said: none left out)", async () => {
  await withTempDir(async (dir) => {
    Deno.mkdirSync(join(dir, "src", ".cache"), { recursive: true });
    for (const f of ["a.ts", ".b.ts", ".cache/c.ts"]) {
      Deno.writeTextFileSync(join(dir, "src", f), "");
    }
    const ev = session(dir);
    const before = lints.length;
    assert.equal(await show(ev, 'glob("src/**/*.ts").len()'), "1");
    assert.equal(
      lints.at(-1),
      "shoal: glob src/**/*.ts left out dot-entries src/.b.ts, src/.cache/ (hidden: true includes them)\n",
    );
    // hidden: true, or nothing left out: no note
    const n = lints.length;
    assert.equal(await show(ev, 'glob("src/**/*.ts", hidden: true).len()'), "3");
    assert.equal(await show(ev, 'glob("src/a*").len()'), "1");
    assert.equal(lints.length, n);
    assert.ok(n > before);
  });
});
