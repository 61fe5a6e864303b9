// The ratchet list format and its check against a run.
import assert from "node:assert/strict";
import type { CaseRecord } from "./harness.ts";
import { checkRatchet, parsePassingList, PASSING_LIST } from "./passing_list.ts";

function rec(name: string, status: CaseRecord["status"]): CaseRecord {
  return { suite: "s", name, status, expected: "value 1", got: "value 2", ms: 0, src: "" };
}

Deno.test("passing.txt: names one per line, comments and blanks ignored", async () => {
  assert.deepEqual(parsePassingList("# header\n\n a \nb\n  # note\nc"), ["a", "b", "c"]);
  // The checked-in list parses, and has no duplicate names.
  const listed = parsePassingList(await Deno.readTextFile(PASSING_LIST));
  assert.equal(new Set(listed).size, listed.length);
});

Deno.test("the ratchet flags listed cases that fail, skip or are unknown", () => {
  const results = [rec("ok", "pass"), rec("new", "pass"), rec("bad", "fail"), rec("sk", "skip")];
  const check = checkRatchet(["ok", "bad", "sk", "gone"], results);
  assert.deepEqual(check.problems, [
    "s/bad: fail: expected value 1, got value 2",
    "s/sk: skip: expected value 1, got value 2",
    "gone: not in the corpus (remove it from passing.txt)",
  ]);
  assert.deepEqual(check.unlisted, ["new"]);
  assert.deepEqual(checkRatchet(["ok", "new"], results), { problems: [], unlisted: [] });
});
