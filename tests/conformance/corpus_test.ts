// Checks that the shared corpus loads as spec/conformance.md §1–§2 describes it.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { type Case, loadCorpus, suiteFiles } from "./corpus.ts";
import { DEFAULT_CASES_DIR } from "./harness.ts";

const corpusPresent = existsSync(DEFAULT_CASES_DIR);
if (!corpusPresent) console.log(`corpus check skipped: no corpus at ${DEFAULT_CASES_DIR}`);

function families(c: Case): string[] {
  const f: string[] = [];
  if (c.value !== undefined) f.push("value");
  if (c.error !== undefined) f.push("error");
  if (c.parse_error !== undefined) f.push("parse_error");
  return f;
}

Deno.test({
  name: "the shared corpus loads: 1,310 unique, well-formed cases with one expectation each",
  ignore: !corpusPresent,
  fn() {
    assert.equal(suiteFiles(DEFAULT_CASES_DIR).length, 77);
    const cases = loadCorpus(DEFAULT_CASES_DIR);
    assert.equal(cases.length, 1310);
    assert.equal(new Set(cases.map((c) => c.name)).size, 1310);
    assert.deepEqual(cases.filter((c) => c.duplicateOf !== undefined), []);
    assert.deepEqual(cases.filter((c) => c.invalid !== undefined), []);

    const skipped = cases.filter((c) => c.skip !== undefined);
    assert.deepEqual(skipped.map((c) => c.name).sort(), [
      "errcode-recursion-limit-on-unbounded-native-recursion",
      "io-feed-jq-composition",
      "io-node-block-out",
      "reef-which-full-chain-is-host-dependent",
    ]);
    for (const c of cases) {
      const f = families(c);
      if (c.skip === undefined) assert.equal(f.length, 1, `${c.name} has ${f.join("+") || "none"}`);
      else assert.ok(f.length <= 1, `${c.name} has ${f.join("+")}`);
      if (c.parse_error !== undefined) assert.equal(c.parse_error, true, c.name);
      if (c.error_contains !== undefined) assert.ok(c.error !== undefined, c.name);
      if (c.parse_error_contains !== undefined) assert.ok(c.parse_error, c.name);
    }

    // The totals of spec/conformance.md §1, for runnable cases.
    const runnable = cases.filter((c) => c.skip === undefined);
    const count = (family: string) => runnable.filter((c) => families(c)[0] === family).length;
    assert.deepEqual(
      [runnable.length, count("value"), count("error"), count("parse_error")],
      [1306, 1053, 214, 39],
    );
    // TOML decoding: a basic string's \n is a newline; a literal string keeps backslash-n.
    assert.ok(runnable.some((c) => c.src.includes("\n")));
    assert.ok(runnable.some((c) => c.src.includes("\\n")));
  },
});
