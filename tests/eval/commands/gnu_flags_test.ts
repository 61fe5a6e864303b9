/**
 * Builtins that shadow GNU coreutils take the spellings agents type (issue 13): `head -n 3`,
 * `head -3`, `head -c N`, `ls -la`, `rm -rf`, `cp -r`, … A GNU flag the builtin does not
 * implement runs the system program instead; an unknown flag is an error with a hint, never
 * silently dropped.
 */

import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { error, session, show, withTempDir } from "./_helpers.ts";
import { OutcomeV } from "../../../lib/value/types.ts";

function gone(p: string): boolean {
  try {
    Deno.lstatSync(p);
    return false;
  } catch {
    return true;
  }
}

function fixture(dir: string): void {
  Deno.writeTextFileSync(join(dir, "notes.txt"), "l1\nl2\nl3\nl4\nl5\n");
  Deno.writeTextFileSync(join(dir, ".hidden"), "");
  Deno.mkdirSync(join(dir, "src"));
  Deno.writeTextFileSync(join(dir, "src", "big.ts"), "x".repeat(5000));
  Deno.writeTextFileSync(join(dir, "src", "small.ts"), "x");
  Deno.utimeSync(join(dir, "src", "big.ts"), new Date(2020, 0, 1), new Date(2020, 0, 1));
}

Deno.test("head: -n N, -N, -nN, --lines=N, --lines N, -c N, and the Shoal form", async () => {
  await withTempDir(async (dir) => {
    fixture(dir);
    const ev = session(dir);
    const first3 = '["l1", "l2", "l3"]';
    for (
      const src of [
        "head -n 3 notes.txt",
        "head -3 notes.txt",
        "head -n3 notes.txt",
        "head --lines=3 notes.txt",
        "head --lines 3 notes.txt",
        "head notes.txt -n 3",
        "head notes.txt 3",
      ]
    ) assertEquals(await show(ev, `(${src}).out`), first3, src);
    assertEquals(await show(ev, "(head notes.txt).out.len()"), "5");
    assertEquals(await show(ev, "(head -c 4 notes.txt).out.str()"), '"l1\\nl"');
    assertEquals(await show(ev, "(head --bytes=2 notes.txt).out.len()"), "2");
    assertEquals((await error(ev, "head -n notes.txt")).code, "arg_error");
    assertEquals((await error(ev, "head -n x notes.txt")).code, "arg_error");
    const two = await error(ev, "head -n 1 notes.txt notes.txt");
    assertEquals(two.code, "arg_error");
    assert(two.hint!.includes("sh { head -n 3 a b }"), two.hint!);
  });
});

Deno.test("ls: -a, -la, -lh, -t, -S, -r, -d, --color; -R runs the system ls", async () => {
  await withTempDir(async (dir) => {
    fixture(dir);
    const ev = session(dir);
    assertEquals(await show(ev, "ls.map(.name)"), '["notes.txt", "src"]');
    assertEquals(await show(ev, "(ls -la).map(.name)"), '[".hidden", "notes.txt", "src"]');
    assertEquals(await show(ev, "(ls -lh --color=never).len()"), "2");
    assertEquals(await show(ev, "(ls -S src).map(.name)"), '["big.ts", "small.ts"]');
    assertEquals(await show(ev, "(ls -Sr src).map(.name)"), '["small.ts", "big.ts"]');
    assertEquals(await show(ev, "(ls -t src).map(.name)"), '["small.ts", "big.ts"]');
    assertEquals(await show(ev, "(ls -d src).map(.name)"), '["src"]');
    const r = await ev.evalSource("(ls -R src)");
    assert(r instanceof OutcomeV && r.pid > 0, "ls -R is the system ls");
    assert(new TextDecoder().decode(r.stdout).includes("big.ts"));
  });
});

Deno.test("an unknown flag is an arg_error whose hint lists the real ones", async () => {
  await withTempDir(async (dir) => {
    fixture(dir);
    const ev = session(dir);
    const e = await error(ev, "ls --frobnicate");
    assertEquals([e.code, e.msg], ["arg_error", "ls: unknown flag --frobnicate"]);
    assert(e.hint!.startsWith("ls takes -a -l --color=WHEN -t -S -r -d (help ls lists them)"));
    assert(e.hint!.includes("sh { ls --frobnicate … }"), e.hint!);
    const h = await error(ev, "head -x notes.txt");
    assertEquals(h.msg, "head: unknown flag -x");
    assert(h.hint!.startsWith("head takes -n N -c N"), h.hint!);
    assertEquals((await error(ev, "mkdir -z d")).msg, "mkdir: unknown flag -z");
    assertEquals((await error(ev, "sleep --fast 1")).msg, "sleep: unknown flag --fast");
    assertEquals((await error(ev, "rm --all notes.txt")).msg, "rm: unknown flag --all");
    assertEquals((await error(ev, "ls --all=yes")).msg, "ls: --all takes no value");
    // a prompt nobody can answer is refused, never handed over
    const i = await error(ev, "rm -i notes.txt");
    assert(i.msg.startsWith("rm: -i is not supported: nothing prompts here"), i.msg);
    assert(Deno.statSync(join(dir, "notes.txt")).isFile);
    assertEquals((await error(ev, "cp -i notes.txt n2")).code, "arg_error");
  });
});

Deno.test("rm -rf, rm -f, cp -r/-a/-n, mv -n, mkdir -p/-m, touch -c, ln -sf, sleep 0.1", async () => {
  await withTempDir(async (dir) => {
    fixture(dir);
    const ev = session(dir);
    assertEquals(await show(ev, "(cp -r src s2).out.len()"), "1");
    assertEquals(await show(ev, "(cp -a src s3).out.len()"), "1");
    Deno.writeTextFileSync(join(dir, "keep.txt"), "keep");
    assertEquals(await show(ev, "(cp -n notes.txt keep.txt).out"), "[]");
    assertEquals(Deno.readTextFileSync(join(dir, "keep.txt")), "keep");
    assertEquals(await show(ev, "(mv -n notes.txt keep.txt).out"), "[]");
    assert(Deno.statSync(join(dir, "notes.txt")).isFile, "mv -n left the source");
    assertEquals(await show(ev, "(rm -rf s2 nothere).out.map(.path.name)"), '["s2"]');
    assertEquals(await show(ev, "(rm -f nothere).out"), "[]");
    assertEquals(await show(ev, "(rm -f *.nomatch).out"), "[]");
    await show(ev, "rm --permanent -rf s3");
    assert(gone(join(dir, "s3")), "rm --permanent -rf deleted it");
    await show(ev, "mkdir -p -m 700 a/b");
    assertEquals(Deno.statSync(join(dir, "a", "b")).mode! & 0o777, 0o700);
    assertEquals((await error(ev, "mkdir -m 9z x")).code, "arg_error");
    assertEquals(await show(ev, "(touch -c ghost.txt).out"), "[]");
    assertEquals(await show(ev, "(ln -sf notes.txt link).out.symbolic"), "true");
    assertEquals(await show(ev, "(ln -sf keep.txt link).out.symbolic"), "true");
    assertEquals(Deno.readLinkSync(join(dir, "link")), "keep.txt");
    assertEquals(await show(ev, "(sleep 0.1).ok"), "true");
    // echo: GNU's own flags are accepted; anything else is printed, as GNU echo does
    assertEquals(await show(ev, "(echo -n hi).out"), '"hi"');
    assertEquals(await show(ev, "(echo a -x b).out"), '"a -x b"');
    assertEquals(await show(ev, "(pwd -P) == pwd"), "true");
  });
});

Deno.test("cat -n and env -i hand the call to the system program", async () => {
  await withTempDir(async (dir) => {
    fixture(dir);
    const ev = session(dir);
    assertEquals(await show(ev, "(cat -n notes.txt).out.lines().first().trim()"), '"1\\tl1"');
    assertEquals(await show(ev, "(env -i A=1 env).out"), '"A=1"');
  });
});
