/**
 * The `csv` namespace (language §13.2).
 *
 * `csv.parse(text)`: RFC 4180 with the Rust `csv` crate's defaults — comma separated, `"`
 * quoting with `""` escapes, `\n`/`\r\n`/`\r` line ends, blank lines skipped, a leading BOM
 * dropped. The first record is the header; every cell is a str; a record whose field count
 * differs from the header's is an arg_error.
 *
 * `csv.stringify(rows)`: a table, a list of records or one record. The header comes from the
 * first record's keys (later extra keys are not written, missing cells are empty); str cells are
 * written as they are, other cells in their inline rendering; fields are quoted only when
 * needed; every line ends with `\n`.
 *
 * @module
 */

import { fail } from "../../value/errors.ts";
import { renderInline } from "../../value/render.ts";
import { ListV, RecordV, TableV, typeName, type Value } from "../../value/types.ts";
import type { MethodArgs } from "../method_types.ts";
import { checkArgs, type Namespace, strArg } from "./args.ts";
import { doc } from "../docs.ts";

/** One parsed record and the 1-based line it starts on. */
interface CsvRecord {
  fields: string[];
  line: number;
}

/** Split CSV text into records (see the module doc for the dialect). */
export function parseCsvRecords(text: string): CsvRecord[] {
  const records: CsvRecord[] = [];
  let fields: string[] = [];
  let field = "";
  let line = 1;
  let recordLine = 1;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const n = text.length;
  // A record is "empty" (a blank line, skipped) when nothing at all was read for it.
  let started = false;
  const endRecord = () => {
    if (started) {
      fields.push(field);
      records.push({ fields, line: recordLine });
    }
    fields = [];
    field = "";
    started = false;
  };
  while (i < n) {
    const c = text.charCodeAt(i);
    if (!started) recordLine = line;
    if (c === 34 && field === "") {
      // Quoted field (a quote anywhere else in a field is literal): read to the closing quote; `""` is a literal quote.
      started = true;
      i++;
      let chunk = i;
      for (;;) {
        const q = text.indexOf('"', i);
        if (q < 0) {
          field += text.slice(chunk, n); // unterminated: the field runs to the end (lenient)
          line += countNewlines(text, chunk, n);
          i = n;
          break;
        }
        line += countNewlines(text, i, q);
        if (text.charCodeAt(q + 1) === 34) {
          field += text.slice(chunk, q + 1);
          i = q + 2;
          chunk = i;
          continue;
        }
        field += text.slice(chunk, q);
        i = q + 1;
        break;
      }
      continue;
    }
    if (c === 44) { // ,
      started = true;
      fields.push(field);
      field = "";
      i++;
      continue;
    }
    if (c === 10 || c === 13) {
      endRecord();
      i += c === 13 && text.charCodeAt(i + 1) === 10 ? 2 : 1;
      line++;
      continue;
    }
    // Plain run up to the next separator, quote or line end.
    started = true;
    let j = i + 1;
    for (; j < n; j++) {
      const d = text.charCodeAt(j);
      if (d === 44 || d === 10 || d === 13) break;
    }
    field += text.slice(i, j);
    i = j;
  }
  endRecord();
  return records;
}

function countNewlines(s: string, from: number, to: number): number {
  let k = 0;
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (c === 10 || (c === 13 && s.charCodeAt(i + 1) !== 10)) k++;
  }
  return k;
}

function parse(_ip: unknown, args: MethodArgs): Value {
  checkArgs("csv.parse", args, ["text"]);
  const text = strArg("csv.parse", args, 0, "text");
  const records = parseCsvRecords(text);
  if (records.length === 0) return new TableV([]);
  const header = records[0].fields;
  const rows: RecordV[] = new Array(records.length - 1);
  for (let r = 1; r < records.length; r++) {
    const rec = records[r];
    if (rec.fields.length !== header.length) {
      throw fail(
        "arg_error",
        `csv.parse: record ${r + 1} (line ${rec.line}) has ${rec.fields.length} field${
          rec.fields.length === 1 ? "" : "s"
        }, but the header has ${header.length}`,
        "every row needs one field per header column",
        args.span,
      );
    }
    const m = new Map<string, Value>();
    for (let k = 0; k < header.length; k++) m.set(header[k], rec.fields[k]);
    rows[r - 1] = new RecordV(m);
  }
  return new TableV(rows);
}

const NEEDS_QUOTES = /[",\r\n]/;

/** A field as written: quoted (with `""` escapes) only when it must be. */
function csvField(s: string): string {
  return NEEDS_QUOTES.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/** One line: fields joined by commas; a lone empty field is `""` so the line is not blank. */
function csvLine(fields: string[]): string {
  if (fields.length === 1 && fields[0] === "") return '""\n';
  return fields.map(csvField).join(",") + "\n";
}

/** The records of a table / list of records / record; null for any other shape. */
function rowsOf(v: Value): readonly RecordV[] | null {
  if (v instanceof TableV) return v.rows;
  if (v instanceof RecordV) return [v];
  if (v instanceof ListV) {
    for (const x of v.items) if (!(x instanceof RecordV)) return null;
    return v.items as RecordV[];
  }
  return null;
}

function stringify(_ip: unknown, args: MethodArgs): Value {
  checkArgs("csv.stringify", args, ["rows"]);
  const v = args.pos[0];
  const rows = rowsOf(v);
  if (rows === null) {
    throw fail(
      "type_error",
      `csv.stringify expects a table, a list of records or a record, got ${typeName(v)}`,
      v instanceof ListV ? "every list item must be a record" : null,
      args.span,
    );
  }
  if (rows.length === 0) return "";
  const header = [...rows[0].fields.keys()];
  let out = csvLine(header);
  for (const row of rows) {
    out += csvLine(header.map((k) => {
      const cell = row.fields.get(k);
      if (cell === undefined) return "";
      return typeof cell === "string" ? cell : renderInline(cell);
    }));
  }
  return out;
}

/** The `csv` namespace. */
export const csvNamespace: Namespace = {
  name: "csv",
  functions: new Map([
    [
      "parse",
      doc("csv.parse(text: str) -> table", "CSV text (first row: headers) as a table", parse),
    ],
    ["stringify", doc("csv.stringify(rows: table) -> str", "a table as CSV text", stringify)],
  ]),
};
