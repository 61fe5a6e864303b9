/** Did-you-mean rules (language §15, §9.2) and the field→method fallback. */

import assert from "node:assert/strict";
import { levenshtein, nearest } from "../../lib/eval/errors.ts";
import { methodHint } from "../../lib/eval/dispatch.ts";
import { Evaluator } from "../../lib/eval/mod.ts";
import { ShoalError } from "../../lib/value/errors.ts";
import { renderInline } from "../../lib/value/render.ts";

Deno.test("levenshtein distances", () => {
  assert.equal(levenshtein("kitten", "sitting"), 3);
  assert.equal(levenshtein("", "abc"), 3);
  assert.equal(levenshtein("sortt", "sort"), 1);
});

Deno.test("nearest respects the budget: ≤1 under 5 chars, ≤2 otherwise, < length", () => {
  assert.equal(nearest("wich", ["which", "echo"]), "which");
  assert.equal(nearest("ab", ["abcd"]), null); // distance 2 > 1
  assert.equal(nearest("journl", ["journal", "jump"]), "journal");
  assert.equal(nearest("deployy", ["deploy"]), "deploy");
  assert.equal(nearest("x", ["y"]), null); // distance 1 is not < length 1
  assert.equal(nearest("frobnicate", ["len", "map"]), null);
});

Deno.test("method hints follow the rule order", () => {
  assert.equal(methodHint("list", "length"), "did you mean .len()?");
  assert.match(methodHint("list", "push") ?? "", /list \+ \[item\]/);
  assert.match(methodHint("str", "substring") ?? "", /\.take\(n\)/);
  assert.equal(methodHint("str", "to_upper"), "did you mean .upper()?");
  assert.equal(methodHint("list", "sortt"), "did you mean .sort()?");
  assert.equal(methodHint("list", "frobnicate"), null);
});

async function evalErr(src: string): Promise<ShoalError> {
  try {
    await new Evaluator({ cwd: Deno.makeTempDirSync() }).evalSource(src);
  } catch (e) {
    if (e instanceof ShoalError) return e;
    throw e;
  }
  throw new Error("expected an error");
}

Deno.test("field → method fallback for non-records; records stay strict", async () => {
  const ev = new Evaluator({ cwd: Deno.makeTempDirSync() });
  assert.equal(renderInline(await ev.evalSource('"hi".upper')), '"HI"');
  assert.equal(renderInline(await ev.evalSource("[1, 2, 3].sum")), "6");
  assert.equal(renderInline(await ev.evalSource("{values: 42}.values")), "42");
  const strict = await evalErr("{a: 1}.items");
  assert.equal(strict.err.code, "field_missing");
  assert.match(strict.err.msg, /missing field `items`/);
  const unknown = await evalErr("5.nope");
  assert.equal(unknown.err.code, "field_missing");
  assert.match(unknown.err.msg, /nope/);
  const wrongType = await evalErr("5.len()");
  assert.equal(wrongType.err.code, "type_error");
});

Deno.test("unknown commands suggest builtins and callable bindings", async () => {
  const e = await evalErr("fn deploy() { 42 }\ndeployy");
  assert.equal(e.err.code, "not_found");
  assert.equal(e.err.hint, "did you mean 'deploy'?");
  assert.ok(e.err.span !== null);
});
