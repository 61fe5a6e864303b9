/**
 * Every conformance case through the front end: `parse_error` cases must fail with their
 * needle in the message; every other runnable case must parse (its expectation is a value or an
 * evaluation error, so a parse failure there is a parser bug).
 */

import { parse as parseToml } from "smol-toml";
import { parse, ParseError } from "../../lib/syntax/mod.ts";

const CASES_DIR = "/work/shared/conformance/cases";

interface Case {
  name: string;
  src: string;
  skip?: string;
  parse_error?: boolean;
  parse_error_contains?: string;
}

function loadCases(): Case[] | null {
  let names: string[];
  try {
    names = [...Deno.readDirSync(CASES_DIR)].map((e) => e.name).filter((n) => n.endsWith(".toml"))
      .sort();
  } catch {
    return null;
  }
  const out: Case[] = [];
  for (const n of names) {
    const doc = parseToml(Deno.readTextFileSync(`${CASES_DIR}/${n}`)) as { case?: Case[] };
    out.push(...(doc.case ?? []));
  }
  return out;
}

const cases = loadCases();

Deno.test({
  name: "corpus: parse outcomes match every runnable case",
  ignore: cases === null,
  fn() {
    const failures: string[] = [];
    let passed = 0, skipped = 0, parseErrorCases = 0;
    for (const c of cases!) {
      if (c.skip !== undefined) {
        skipped++;
        continue;
      }
      let err: unknown = null;
      try {
        parse(c.src);
      } catch (e) {
        err = e;
      }
      if (err !== null && !(err instanceof ParseError)) {
        failures.push(`${c.name}: threw a non-ParseError: ${err}`);
        continue;
      }
      if (c.parse_error) {
        parseErrorCases++;
        const needle = c.parse_error_contains;
        if (!(err instanceof ParseError)) failures.push(`${c.name}: expected a parse error`);
        else if (needle !== undefined && !err.msg.includes(needle)) {
          failures.push(`${c.name}: message ${JSON.stringify(err.msg)} lacks ${needle}`);
        } else passed++;
      } else if (err instanceof ParseError) {
        failures.push(`${c.name}: unexpected parse error ${JSON.stringify(err.msg)}`);
      } else passed++;
    }
    console.log(
      `corpus parse: ${passed} passed, ${failures.length} failed, ${skipped} skipped ` +
        `(${parseErrorCases} parse_error cases)`,
    );
    if (failures.length) throw new Error(failures.join("\n"));
    if (passed < 1000) throw new Error(`only ${passed} cases ran`);
  },
});

if (cases === null) console.log(`corpus folder ${CASES_DIR} is missing; corpus test skipped`);
