// The conformance ratchet: every case listed in passing.txt must still pass on the default
// engine. Add cases with `deno task conformance --list-passing`.
import { existsSync } from "node:fs";
import { DEFAULT_CASES_DIR, runConformance } from "./harness.ts";
import { checkRatchet, parsePassingList, PASSING_LIST } from "./passing_list.ts";

const corpusPresent = existsSync(DEFAULT_CASES_DIR);
if (!corpusPresent) {
  console.log(`conformance ratchet skipped: no corpus at ${DEFAULT_CASES_DIR}`);
}

Deno.test({
  name: "conformance ratchet: every case in passing.txt still passes",
  ignore: !corpusPresent,
  async fn() {
    const listed = parsePassingList(await Deno.readTextFile(PASSING_LIST));
    const { problems, unlisted } = checkRatchet(listed, (await runConformance()).results);
    console.log(`${unlisted.length} passing cases are not in passing.txt yet`);
    if (problems.length) {
      throw new Error(
        `${problems.length} case(s) in passing.txt do not pass:\n  ${problems.join("\n  ")}`,
      );
    }
  },
});
