/**
 * Line- and NUL-framed output: `lines` (one item per line, typed by a `list<T>` hint — a
 * `list<path>` of file names), `kv` (`key=value` or `key: value` entries → one record, the
 * first `=` or `:` splits; entries are lines, or NUL-terminated when the output has a NUL) and `z-records` (NUL-separated fields, a fixed number per record taken
 * from the hint: `git log -z`, `git ls-files -z`; one trailing NUL is a terminator).
 *
 * @module
 */

import { ListV, RecordV, TableV, type Value } from "../../../value/types.ts";
import type { FieldHint, TypeHint } from "../hint.ts";
import { hintFields } from "../hint.ts";
import {
  cellOrFail,
  emptyOf,
  ParseFailure,
  requiredFields,
  splitLines,
  typedRow,
} from "./common.ts";

/** The element field of a `list<T>` hint (a str element without one). */
function elementField(hint: TypeHint | null): FieldHint {
  const elem = hint !== null && hint.k === "list" ? hint.elem : null;
  return { name: "item", type: elem ?? { k: "cell", name: "str", optional: false } };
}

/** `lines`: one (typed) item per line. */
export function parseLines(text: string, hint: TypeHint | null): Value {
  const f = elementField(hint);
  const lines = splitLines(text);
  return new ListV(lines.map((l, i) => cellOrFail(l, f, `line ${i + 1}`)));
}

/** `kv`: `key=value` / `key: value` lines into one record (blank lines skipped). */
export function parseKv(text: string, hint: TypeHint | null): Value {
  const fields = new Map<string, Value>();
  const typed = new Map<string, FieldHint>();
  for (const f of hintFields(hint) ?? []) typed.set(f.name, f);
  // NUL-terminated entries (`env -0`) may hold newlines; otherwise one entry per line.
  const lines = text.includes("\0") ? text.split("\0") : splitLines(text);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.trim() === "") continue;
    const eq = line.indexOf("=");
    const colon = line.indexOf(":");
    let key: string;
    let value: string;
    if (eq > 0 && (colon < 0 || eq < colon)) {
      key = line.slice(0, eq);
      value = line.slice(eq + 1);
    } else if (colon > 0) {
      key = line.slice(0, colon).trim();
      value = line.slice(colon + 1).trim();
    } else {
      throw new ParseFailure(`entry ${i + 1}: neither \`key=value\` nor \`key: value\``);
    }
    const f = typed.get(key);
    fields.set(key, f === undefined ? value : cellOrFail(value, f, `line ${i + 1}`));
  }
  return new RecordV(fields);
}

/** `z-records`: NUL-separated fields, `n` per record (the hint's fields, or 1 for a list). */
export function parseZRecords(text: string, hint: TypeHint | null): Value {
  if (text === "") return emptyOf(hint);
  const tokens = text.split("\0");
  if (tokens[tokens.length - 1] === "") tokens.pop();
  if (hint !== null && hint.k === "list") {
    const f = elementField(hint);
    return new ListV(tokens.map((t, i) => cellOrFail(t, f, `record ${i + 1}`)));
  }
  const fields = requiredFields(hint, "z-records");
  const n = fields.length;
  if (tokens.length % n !== 0) {
    throw new ParseFailure(`${tokens.length} NUL-separated fields do not make records of ${n}`);
  }
  const rows: RecordV[] = [];
  for (let i = 0; i < tokens.length; i += n) {
    rows.push(typedRow(tokens.slice(i, i + n), fields, `record ${i / n + 1}`));
  }
  return new TableV(rows);
}
