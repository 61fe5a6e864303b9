/**
 * Whitespace columns: `cols` drops one header line, `cols2` a two-line preamble (procps
 * `vmstat`); each later non-blank line is split on runs of blanks into the hint's fields in
 * order, and the last field takes the rest of the line as written (a command line or a mount
 * point with spaces survives). The header's own spelling is ignored — the hint names the
 * columns. Trailing optional fields may be missing (a column a newer tool version added).
 *
 * @module
 */

import { type RecordV, TableV, type Value } from "../../../value/types.ts";
import type { TypeHint } from "../hint.ts";
import { ParseFailure, requiredFields, splitLines, typedRow } from "./common.ts";

/** Split `line` into at most `n` cells; the last takes the rest of the line. */
export function splitColumns(line: string, n: number): string[] {
  const cells: string[] = [];
  const re = /\S+/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(line)) !== null) {
    if (cells.length === n - 1) {
      cells.push(line.slice(m.index).trimEnd());
      break;
    }
    cells.push(m[0]);
  }
  return cells;
}

function columns(text: string, hint: TypeHint | null, skip: number, name: string): Value {
  const fields = requiredFields(hint, name);
  const lines = splitLines(text);
  const rows: RecordV[] = [];
  for (let i = skip; i < lines.length; i++) {
    if (lines[i].trim() === "") continue;
    const cells = splitColumns(lines[i], fields.length);
    const need = fields.findLastIndex((f) => !f.type.optional) + 1;
    if (cells.length < need) {
      throw new ParseFailure(`line ${i + 1}: ${cells.length} columns, expected ${fields.length}`);
    }
    rows.push(typedRow(cells, fields, `line ${i + 1}`));
  }
  return new TableV(rows);
}

/** `cols`: one header line, then whitespace columns. */
export function parseCols(text: string, hint: TypeHint | null): Value {
  return columns(text, hint, 1, "cols");
}

/** `cols2`: a two-line preamble, then whitespace columns. */
export function parseCols2(text: string, hint: TypeHint | null): Value {
  return columns(text, hint, 2, "cols2");
}
