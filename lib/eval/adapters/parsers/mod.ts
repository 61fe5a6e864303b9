/**
 * The twelve output parsers (subsystems §7) by name, and {@link parseOutput}: stdout bytes →
 * the structured value, or a {@link ParseFailure} — never a partial value. Output that is not
 * valid UTF-8 fails too (the raw bytes stay readable on the outcome).
 *
 * @module
 */

import type { Value } from "../../../value/types.ts";
import { RecordV } from "../../../value/types.ts";
import type { TypeHint } from "../hint.ts";
import { type OutputParser, ParseFailure } from "./common.ts";
import { conformJson, parseJson, parseNdjson } from "./json.ts";
import { parseCsv, parseTsv, parseTsvHeaderless } from "./delimited.ts";
import { parseCols, parseCols2 } from "./cols.ts";
import { parseKv, parseLines, parseZRecords } from "./records.ts";
import { parsePorcelainV2 } from "./porcelain_v2.ts";

export { ParseFailure } from "./common.ts";

/** Parser name → implementation; `json` marks the parsers whose value the hint conforms. */
const PARSERS: ReadonlyMap<string, { parse: OutputParser; json: boolean }> = new Map([
  ["json", { parse: parseJson, json: true }],
  ["ndjson", { parse: parseNdjson, json: true }],
  ["csv", { parse: parseCsv, json: false }],
  ["tsv", { parse: parseTsv, json: false }],
  ["tsv-headerless", { parse: parseTsvHeaderless, json: false }],
  ["z-records", { parse: parseZRecords, json: false }],
  ["porcelain-v2", { parse: parsePorcelainV2, json: false }],
  ["cols", { parse: parseCols, json: false }],
  ["cols2", { parse: parseCols2, json: false }],
  ["lines", { parse: parseLines, json: false }],
  ["kv", { parse: parseKv, json: false }],
]);

/** Every parser name (`none` included: it parses nothing). */
export const PARSER_NAMES: readonly string[] = [...PARSERS.keys(), "none"];

/** Parsers that take their columns from the hint and cannot work without one. */
export const NEEDS_FIELDS: ReadonlySet<string> = new Set([
  "tsv-headerless",
  "cols",
  "cols2",
]);

/** How an adapter's output is parsed. */
export interface OutputSpec {
  parse: string;
  hint: TypeHint | null;
  /** JSON parsers: the top-level field to return instead of the whole document. */
  unwrap: string | null;
}

const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Parse `stdout` per `spec`; undefined for `none`. Throws {@link ParseFailure} when the output
 * does not match the contract.
 */
export function parseOutput(spec: OutputSpec, stdout: Uint8Array): Value | undefined {
  const p = PARSERS.get(spec.parse);
  if (p === undefined) return undefined;
  let text: string;
  try {
    text = STRICT_UTF8.decode(stdout);
  } catch {
    throw new ParseFailure("the output is not valid UTF-8");
  }
  if (!p.json) return p.parse(text, spec.hint);
  // No output at all is the hint's empty value, wrapped or not (`findmnt` finding nothing).
  let v = p.parse(text, spec.unwrap === null || text.trim() === "" ? spec.hint : null);
  if (text.trim() === "") return v;
  if (spec.unwrap !== null) {
    if (!(v instanceof RecordV) || !v.fields.has(spec.unwrap)) {
      throw new ParseFailure(`the JSON document has no top-level \`${spec.unwrap}\``);
    }
    v = v.fields.get(spec.unwrap)!;
  }
  return conformJson(v, spec.hint);
}
