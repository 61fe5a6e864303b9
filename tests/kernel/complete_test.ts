import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { complete, prefixAtByte } from "../../lib/kernel/complete.ts";

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
