import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { boundText, incompleteEscapeAt, stripAnsi, TEXT_CAP } from "../../lib/client/bound_text.ts";

const enc = new TextEncoder();

Deno.test("stripAnsi removes CSI, OSC and two-byte escapes, keeps text", () => {
  assertEquals(stripAnsi("\x1b[1;31mred\x1b[0m plain"), "red plain");
  assertEquals(stripAnsi("\x1b]0;title\x07after"), "after");
  assertEquals(stripAnsi("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\"), "link");
  assertEquals(stripAnsi("a\x1bMb"), "ab");
  assertEquals(stripAnsi("no escapes"), "no escapes");
  // What terminal programs emit besides CSI: charset selection (tput sgr0 is `ESC ( B ESC [m`),
  // cursor save/restore, keypad modes, reset, and DCS strings.
  assertEquals(stripAnsi("\x1b(Bplain\x1b[m"), "plain");
  assertEquals(stripAnsi("\x1b7saved\x1b8 \x1b=k\x1b> \x1bcreset"), "saved k reset");
  assertEquals(stripAnsi("a\x1bP1$r0m\x1b\\b"), "ab");
});

Deno.test("incompleteEscapeAt finds an escape sequence cut off at the end", () => {
  assertEquals(incompleteEscapeAt("plain"), -1);
  assertEquals(incompleteEscapeAt("a\x1b[31mred"), -1);
  assertEquals(incompleteEscapeAt("a\x1b[31"), 1);
  assertEquals(incompleteEscapeAt("ab\x1b"), 2);
  assertEquals(incompleteEscapeAt("ab\x1b]0;tit"), 2);
  assertEquals(incompleteEscapeAt("ab\x1b("), 2);
  assertEquals(incompleteEscapeAt("\x1b[1mab\x1b(B"), -1);
});

Deno.test("boundText keeps escapes for a tty and strips them otherwise", () => {
  assertEquals(boundText("\x1b[32mok\x1b[0m", "shoal://out/1", true), "\x1b[32mok\x1b[0m");
  assertEquals(boundText("\x1b[32mok\x1b[0m", "shoal://out/1", false), "ok");
});

Deno.test("boundText cuts at whole lines within the cap and names the remainder", () => {
  const line = "x".repeat(99);
  const text = Array.from({ length: 2000 }, () => line).join("\n"); // 200 KB
  const out = boundText(text, "shoal://out/7");
  assert(enc.encode(out).length <= TEXT_CAP, "within the 64 KiB wall");
  const m = /…\((\d+) more lines, fetch via shoal:\/\/out\/7\)$/.exec(out);
  assert(m, out.slice(-80));
  const kept = out.split("\n").length - 1;
  assertEquals(kept + Number(m[1]), 2000, "kept + remaining = all lines");
  assert(out.split("\n").slice(0, kept).every((l) => l === line), "only whole lines");
});

Deno.test("boundText hard-cuts a single huge line, never inside a surrogate pair", () => {
  const out = boundText("😀".repeat(40000), "shoal://out/2");
  assert(enc.encode(out).length <= TEXT_CAP);
  assert(!/[\ud800-\udbff](?![\udc00-\udfff])/.test(out), "no lone high surrogate");
  assert(out.endsWith("…(0 more lines, fetch via shoal://out/2)"));
});

Deno.test("boundText leaves small texts alone", () => {
  assertEquals(boundText("a\nb", "u"), "a\nb");
  assertEquals(boundText("", "u"), "");
});
