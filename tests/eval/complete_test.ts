import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { complete, completeAt, prefixAtByte } from "../../lib/eval/complete.ts";

Deno.test("the byte cursor is clamped to the length and down to a character boundary", () => {
  assertEquals(prefixAtByte("héllo", 2), "h"); // byte 2 is inside é
  assertEquals(prefixAtByte("héllo", 3), "hé");
  assertEquals(prefixAtByte("héllo", 999), "héllo");
  assertEquals(prefixAtByte("😀x", 1), "");
  assertEquals(prefixAtByte("😀x", 5), "😀x");
  assertEquals(prefixAtByte("abc", undefined), "abc");
});

Deno.test("words: keywords, builtins, namespaces, declared and session names", () => {
  assert(complete("wh", undefined, null).includes("while"));
  assert(complete("ec", undefined, null).includes("echo"));
  assert(complete("js", undefined, null).includes("json"));
  assert(complete("let total = 1\ntot", undefined, null).includes("total"));
  assert(complete("my", undefined, { my_var: "int" }).includes("my_var"));
  const all = complete("", undefined, null);
  assertEquals(all, [...new Set(all)].sort(), "sorted, no duplicates");
});

Deno.test("after a dot: methods of the bound receiver's type, else every method", () => {
  const strM = complete("s.up", undefined, { s: "str" });
  assert(strM.includes("upper"), strM.join(","));
  const listM = complete("xs.fir", undefined, { xs: "list" });
  assertEquals(listM, ["first"]);
  assert(complete("(ls .).whe", 10, null).includes("where"));
  assertEquals(complete("xs.zzz", undefined, { xs: "list" }), []);
});

Deno.test("completeAt: paths in a temp dir, directories with a slash, dot files on request", () => {
  const dir = Deno.makeTempDirSync();
  try {
    Deno.mkdirSync(`${dir}/src/lib`, { recursive: true });
    Deno.writeTextFileSync(`${dir}/README.md`, "");
    Deno.writeTextFileSync(`${dir}/.hidden`, "");
    const ctx = { names: null, cwd: dir, env: { HOME: dir, PATH: "" } };
    assertEquals(completeAt("cat REA", undefined, ctx), {
      from: 4,
      candidates: ["README.md"],
      kind: "path",
    });
    assertEquals(completeAt("ls src/l", undefined, ctx).candidates, ["src/lib/"]);
    assertEquals(completeAt("ls src/l", undefined, ctx).from, 3);
    assertEquals(completeAt("ls ~/s", undefined, ctx).candidates, ["~/src/"]);
    assertEquals(completeAt("ls ", undefined, ctx).candidates, ["README.md", "src/"]);
    assertEquals(completeAt("ls .h", undefined, ctx).candidates, [".hidden"]);
    assertEquals(completeAt(`ls ${dir}/R`, undefined, ctx).candidates, [`${dir}/README.md`]);
    // `let x = …` is an expression, not a command argument.
    assert(!completeAt("let x = REA", undefined, ctx).candidates.includes("README.md"));
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("completeAt: PATH executables in head position only, cached listing", () => {
  const dir = Deno.makeTempDirSync();
  try {
    Deno.writeTextFileSync(`${dir}/zzshoaltool`, "#!/bin/sh\n");
    Deno.chmodSync(`${dir}/zzshoaltool`, 0o755);
    Deno.writeTextFileSync(`${dir}/zzshoalplain`, "");
    const ctx = { names: null, cwd: dir, env: { PATH: dir } };
    assertEquals(completeAt("zzsh", undefined, ctx).candidates, ["zzshoaltool"]);
    assertEquals(completeAt("echo 1; zzsh", undefined, ctx).candidates, ["zzshoaltool"]);
    assertEquals(completeAt("let a = zzsh", undefined, ctx).candidates, []);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("completeAt: literal receivers, namespaces, env members, fuzzy and case folding", () => {
  const ctx = { names: { xs: "list" }, env: { HOME: "/h", HOSTNAME: "x" } };
  assert(completeAt('"abc".up', undefined, ctx).candidates.includes("upper"));
  assertEquals(completeAt("[1, 2].fir", undefined, ctx).candidates, ["first"]);
  assert(completeAt("json.par", undefined, ctx).candidates.includes("parse"));
  assertEquals(completeAt("env.HO", undefined, ctx).candidates, ["HOME", "HOSTNAME"]);
  const r = completeAt("xs.srt", undefined, { ...ctx, fuzzy: true });
  assert(r.candidates.includes("sort"), r.candidates.join(","));
  assertEquals(r.from, 3);
  assert(
    completeAt("WHI", undefined, { ...ctx, caseInsensitive: true }).candidates.includes("while"),
  );
  assertEquals(completeAt("wh", undefined, { ...ctx, maxResults: 1 }).candidates.length, 1);
  // The byte offset counts UTF-8 bytes.
  assertEquals(completeAt("let é = 1; xs.fi", undefined, ctx).from, 15);
});
