/**
 * Delimited tables: `csv` (RFC 4180: quotes, doubled quotes, embedded newlines; the first
 * record is the header), `tsv` (a header line, then tab-separated lines; no quoting — tabs
 * and newlines cannot occur in a cell, as in the IANA text/tab-separated-values format) and
 * `tsv-headerless` (every line is data; the hint gives the columns in order — for tools like
 * `du` whose first line is a result, not a header). Every row must have the header's (or the
 * hint's) number of cells; the hint types the cells it names.
 *
 * @module
 */

import { RecordV, TableV, type Value } from "../../../value/types.ts";
import { parseCsvRecords } from "../../namespaces/csv.ts";
import type { FieldHint, TypeHint } from "../hint.ts";
import { hintFields } from "../hint.ts";
import { cellOrFail, ParseFailure, requiredFields, splitLines, typedRow } from "./common.ts";

/** Rows of a headed table: cells typed by the hint fields of the same name. */
function headed(
  header: string[],
  body: { cells: string[]; line: number }[],
  hint: TypeHint | null,
) {
  const byName = new Map<string, FieldHint>();
  for (const f of hintFields(hint) ?? []) byName.set(f.name, f);
  for (const f of byName.values()) {
    if (!f.type.optional && !header.includes(f.name)) {
      throw new ParseFailure(`the header has no column \`${f.name}\``);
    }
  }
  if (new Set(header).size !== header.length) throw new ParseFailure("duplicate header names");
  const rows: RecordV[] = [];
  for (const { cells, line } of body) {
    if (cells.length !== header.length) {
      throw new ParseFailure(
        `line ${line}: ${cells.length} cells, the header has ${header.length}`,
      );
    }
    const m = new Map<string, Value>();
    for (let i = 0; i < header.length; i++) {
      const f = byName.get(header[i]);
      m.set(header[i], f === undefined ? cells[i] : cellOrFail(cells[i], f, `line ${line}`));
    }
    rows.push(new RecordV(m));
  }
  return new TableV(rows);
}

/** `csv`: RFC 4180 with a header record. */
export function parseCsv(text: string, hint: TypeHint | null): Value {
  const recs = parseCsvRecords(text);
  if (recs.length === 0) return new TableV([]);
  const [head, ...rest] = recs;
  return headed(head.fields, rest.map((r) => ({ cells: r.fields, line: r.line })), hint);
}

/** `tsv`: a header line, then tab-separated lines (blank lines skipped). */
export function parseTsv(text: string, hint: TypeHint | null): Value {
  const lines = splitLines(text).map((l, i) => ({ l, line: i + 1 })).filter((x) => x.l !== "");
  if (lines.length === 0) return new TableV([]);
  const [head, ...rest] = lines;
  return headed(
    head.l.split("\t"),
    rest.map((x) => ({ cells: x.l.split("\t"), line: x.line })),
    hint,
  );
}

/** `tsv-headerless`: tab-separated lines, columns from the hint in order. */
export function parseTsvHeaderless(text: string, hint: TypeHint | null): Value {
  const fields = requiredFields(hint, "tsv-headerless");
  const rows: RecordV[] = [];
  const lines = splitLines(text);
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] === "") continue;
    const cells = lines[i].split("\t");
    if (cells.length > fields.length) {
      throw new ParseFailure(`line ${i + 1}: ${cells.length} cells, expected ${fields.length}`);
    }
    rows.push(typedRow(cells, fields, `line ${i + 1}`));
  }
  return new TableV(rows);
}
