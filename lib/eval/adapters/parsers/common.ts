/**
 * What every output parser shares: the failure they raise, the hint's field list, typed rows
 * from text cells, and line splitting.
 *
 * @module
 */

import { ListV, RecordV, TableV, type Value } from "../../../value/types.ts";
import { CellError, textCell } from "../cells.ts";
import { type FieldHint, hintFields, type TypeHint } from "../hint.ts";

/** Output that does not match a parser's contract (the outcome then keeps its raw output). */
export class ParseFailure extends Error {}

/** A parser: stdout text (valid UTF-8) and the adapter's hint → the structured value. */
export type OutputParser = (text: string, hint: TypeHint | null) => Value;

/** The fields a positional parser needs from its hint (a load-time check makes them exist). */
export function requiredFields(hint: TypeHint | null, parser: string): FieldHint[] {
  const f = hintFields(hint);
  if (f === null || f.length === 0) {
    throw new ParseFailure(`the ${parser} parser needs an output.type naming its fields`);
  }
  return f;
}

/** One typed row from cells in field order; `where` prefixes a cell error. */
export function typedRow(cells: readonly string[], fields: readonly FieldHint[], where: string) {
  const m = new Map<string, Value>();
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i];
    const cell = cells[i];
    if (cell === undefined) {
      if (!f.type.optional) throw new ParseFailure(`${where}: missing field \`${f.name}\``);
      m.set(f.name, null);
      continue;
    }
    m.set(f.name, cellOrFail(cell, f, where));
  }
  return new RecordV(m);
}

/** A typed cell, the cell error turned into a parse failure naming the field. */
export function cellOrFail(cell: string, f: FieldHint, where: string): Value {
  try {
    return textCell(cell, f.type);
  } catch (e) {
    if (e instanceof CellError) throw new ParseFailure(`${where}: ${f.name}: ${e.message}`);
    throw e;
  }
}

/** Lines of `text` without their terminators; a final terminator adds no empty line. */
export function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split(/\r?\n/);
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/** The empty result of a hint: an empty table for table hints, else an empty list. */
export function emptyOf(hint: TypeHint | null): Value {
  return hint !== null && hint.k === "table" ? new TableV([]) : new ListV([]);
}
