/** Rendering parse errors against their source. */

import assert from "node:assert/strict";
import { lineCol, parse, ParseError, renderParseError } from "../../lib/syntax/mod.ts";

function errorOf(src: string): ParseError {
  try {
    parse(src);
  } catch (e) {
    if (e instanceof ParseError) return e;
    throw e;
  }
  throw new Error("expected a parse error");
}

Deno.test("lineCol maps byte offsets to 1-based lines and code-point columns", () => {
  const src = "let x = 1\nlet π = 2";
  assert.deepStrictEqual(lineCol(src, 0), { line: 1, col: 1 });
  assert.deepStrictEqual(lineCol(src, 10), { line: 2, col: 1 });
  assert.deepStrictEqual(lineCol(src, 14), { line: 2, col: 5 }); // π
  assert.deepStrictEqual(lineCol(src, 16), { line: 2, col: 6 }); // after π (2 bytes)
  assert.deepStrictEqual(lineCol(src, 999), { line: 2, col: 10 });
});

Deno.test("renderParseError underlines the span and shows the hint", () => {
  const src = "let a = 1\necho $HOME";
  const out = renderParseError(src, errorOf(src));
  assert.equal(
    out,
    [
      "parse error: shoal variables have no sigil",
      " --> line 2, col 6",
      "  |",
      "2 | echo $HOME",
      "  |      ^",
      "  = hint: write the name directly (`name`), or read an environment variable with " +
      "`env.NAME`",
      // the rewrites (issue 13), lined up under the hint
      "    resend as:",
      "        let a = 1",
      "        echo (env.HOME)",
      "    or run it as POSIX sh:",
      "        let a = 1",
      "        sh { echo $HOME }",
    ].join("\n"),
  );
  const multi = '"é" ~ 1';
  const r = renderParseError(multi, errorOf(multi), "x.shl");
  assert.ok(r.includes("--> x.shl:1:5"), r);
  assert.ok(r.endsWith("    ^"), r);
  const eof = renderParseError("let x =", errorOf("let x ="));
  assert.ok(eof.includes("1 | let x ="), eof);
});
