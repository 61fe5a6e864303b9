/**
 * The JSON family: `json` (the whole stdout is one document: an object → record, an array of
 * objects → table) and `ndjson` (one document per non-blank line: all objects → table, else a
 * list). {@link conformJson} then checks and types the fields the hint names — a JSON byte
 * count hinted `size_b` becomes a size — and refuses a document of another shape.
 *
 * @module
 */

import { ListV, RecordV, TableV, type Value } from "../../../value/types.ts";
import { tryParseJson } from "../../../value/json.ts";
import { CellError, jsonCell, typeJsonFields } from "../cells.ts";
import type { TypeHint } from "../hint.ts";
import { emptyOf, ParseFailure, splitLines } from "./common.ts";

/** `json`: the whole output as one JSON document (blank output: the hint's empty value). */
export function parseJson(text: string, hint: TypeHint | null): Value {
  if (text.trim() === "") {
    if (hint !== null && (hint.k === "table" || hint.k === "list")) return emptyOf(hint);
    throw new ParseFailure("no output (expected a JSON document)");
  }
  const v = tryParseJson(text);
  if (v === undefined) throw new ParseFailure("the output is not one JSON document");
  return v;
}

/** `ndjson`: one JSON document per non-blank line. */
export function parseNdjson(text: string, hint: TypeHint | null): Value {
  const items: Value[] = [];
  const lines = splitLines(text);
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() === "") continue;
    const v = tryParseJson(lines[i]);
    if (v === undefined) throw new ParseFailure(`line ${i + 1}: not a JSON document`);
    items.push(v);
  }
  if (items.length === 0) return emptyOf(hint ?? { k: "table", fields: null, optional: false });
  if (items.every((x) => x instanceof RecordV)) return new TableV(items as RecordV[]);
  return new ListV(items);
}

function typed<T>(what: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof CellError) throw new ParseFailure(`${what}: ${e.message}`);
    throw e;
  }
}

/** Check a JSON-derived value against the hint's shape and type the fields it names. */
export function conformJson(v: Value, hint: TypeHint | null): Value {
  if (hint === null) return v;
  if (v === null && hint.optional) return null;
  switch (hint.k) {
    case "table": {
      if (v instanceof ListV && v.items.length === 0) return new TableV([]);
      if (!(v instanceof TableV)) throw new ParseFailure("expected a JSON array of objects");
      const fields = hint.fields;
      if (fields === null) return v;
      return new TableV(
        v.rows.map((r, i) =>
          new RecordV(typed(`row ${i + 1}`, () => typeJsonFields(r.fields, fields)))
        ),
      );
    }
    case "record": {
      if (!(v instanceof RecordV)) throw new ParseFailure("expected a JSON object");
      const fields = hint.fields;
      return fields === null
        ? v
        : new RecordV(typed("object", () => typeJsonFields(v.fields, fields)));
    }
    case "list": {
      const items = v instanceof ListV ? v.items : v instanceof TableV ? v.rows : null;
      if (items === null) throw new ParseFailure("expected a JSON array");
      return new ListV(items.map((x, i) => typed(`item ${i + 1}`, () => jsonCell(x, hint.elem))));
    }
    case "cell":
      return typed("value", () => jsonCell(v, hint));
  }
}
