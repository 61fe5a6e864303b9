/**
 * The `toml` namespace (language §13.2): `toml.parse(text)` and `toml.stringify(v)`.
 *
 * Parsing uses smol-toml in big-int mode (so `1` is an int and `1.0` a float); date-times
 * become their TOML text. Writing is done here, through the JSON model, in the layout of Rust's
 * `toml` crate: plain keys first, then `[table]` and `[[array.of.tables]]` sections separated
 * by blank lines, inline arrays as `[1, 2]`, whole floats as `1.0`. TOML has no null and needs
 * a record at the top level; both are arg_error.
 *
 * @module
 */

import { parse as parseToml, TomlError } from "smol-toml";
import { fail } from "../../value/errors.ts";
import { jsonToValue, toJsonModel } from "../../value/json.ts";
import { formatFloat } from "../../value/render.ts";
import { ListV, RecordV, typeName, type Value } from "../../value/types.ts";
import type { MethodArgs } from "../method_types.ts";
import { checkArgs, firstLine, type Namespace, strArg } from "./args.ts";
import { doc } from "../docs.ts";

function parse(_ip: unknown, args: MethodArgs): Value {
  checkArgs("toml.parse", args, ["text"]);
  const text = strArg("toml.parse", args, 0, "text");
  let data: unknown;
  try {
    data = parseToml(text, { integersAsBigInt: true });
  } catch (e) {
    const msg = firstLine(e).replace(/^Invalid TOML document: /, "");
    const where = e instanceof TomlError ? ` at line ${e.line} column ${e.column}` : "";
    throw fail("arg_error", `toml.parse: ${msg}${where}`, null, args.span);
  }
  return jsonToValue(data, { bigintInts: true });
}

const BARE_KEY = /^[A-Za-z0-9_-]+$/;

/** A TOML basic string. */
function basicString(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0) as number;
    if (ch === '"') out += '\\"';
    else if (ch === "\\") out += "\\\\";
    else if (ch === "\n") out += "\\n";
    else if (ch === "\t") out += "\\t";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\b") out += "\\b";
    else if (ch === "\f") out += "\\f";
    else if (c < 0x20 || c === 0x7f) out += "\\u" + c.toString(16).toUpperCase().padStart(4, "0");
    else out += ch;
  }
  return out + '"';
}

function key(k: string): string {
  return BARE_KEY.test(k) ? k : basicString(k);
}

/** A finite-or-not float in TOML syntax: always with a `.`/exponent, `nan`, `inf`, `-inf`. */
function floatText(n: number): string {
  const s = formatFloat(n);
  return /[.ein]/.test(s) ? s : s + ".0";
}

/** True for a non-empty list whose items are all records (written as `[[key]]` sections). */
function isArrayOfTables(v: Value): v is ListV {
  return v instanceof ListV && v.items.length > 0 && v.items.every((x) => x instanceof RecordV);
}

/** Serializes one JSON-model value tree. */
class TomlWriter {
  out = "";

  noNull(path: readonly string[]): never {
    throw fail(
      "arg_error",
      `toml.stringify: toml has no null (at \`${path.join(".")}\`)`,
      "drop the key or give it a value",
    );
  }

  inline(v: Value, path: readonly string[]): string {
    if (v === null) this.noNull(path);
    switch (typeof v) {
      case "boolean":
        return v ? "true" : "false";
      case "number":
      case "bigint":
        return String(v);
      case "string":
        return basicString(v);
    }
    switch (v.t) {
      case "float":
        return floatText(v.v);
      case "list":
        return "[" + v.items.map((x, i) => this.inline(x, [...path, String(i)])).join(", ") + "]";
      case "record": {
        if (v.fields.size === 0) return "{}";
        const parts: string[] = [];
        for (const [k, x] of v.fields) parts.push(`${key(k)} = ${this.inline(x, [...path, k])}`);
        return "{ " + parts.join(", ") + " }";
      }
    }
    throw fail("arg_error", `toml.stringify: cannot write a ${typeName(v)}`);
  }

  /**
   * Write the body of the table at `path`: its plain keys, then its sub-tables. `header` is the
   * table's own `[…]`/`[[…]]` line (null at the top level).
   */
  table(r: RecordV, path: readonly string[], header: string | null): void {
    const subs: [string, Value][] = [];
    let body = "";
    for (const [k, x] of r.fields) {
      if (x instanceof RecordV || isArrayOfTables(x)) subs.push([k, x]);
      else body += `${key(k)} = ${this.inline(x, [...path, k])}\n`;
    }
    // A table with only sub-tables needs no header of its own (it is implied), unless it is
    // an array element or empty.
    const needsHeader = header !== null &&
      (body !== "" || subs.length === 0 || header.startsWith("[["));
    if (needsHeader) {
      if (this.out !== "") this.out += "\n";
      this.out += header + "\n";
    }
    this.out += body;
    for (const [k, x] of subs) {
      const p = [...path, k];
      const dotted = p.map(key).join(".");
      if (x instanceof RecordV) this.table(x, p, `[${dotted}]`);
      else for (const row of (x as ListV).items) this.table(row as RecordV, p, `[[${dotted}]]`);
    }
  }
}

function stringify(_ip: unknown, args: MethodArgs): Value {
  checkArgs("toml.stringify", args, ["value"]);
  const v = args.pos[0];
  const model = toJsonModel(v);
  if (!(model instanceof RecordV)) {
    const what = typeName(v);
    throw fail(
      "arg_error",
      `toml.stringify: got ${what} (toml needs a record/table at the top level)`,
      what === "table" || what === "list"
        ? "wrap it in a record, e.g. toml.stringify({items: rows})"
        : null,
      args.span,
    );
  }
  const w = new TomlWriter();
  w.table(model, [], null);
  return w.out;
}

/** The `toml` namespace. */
export const tomlNamespace: Namespace = {
  name: "toml",
  functions: new Map([
    ["parse", doc("toml.parse(text: str) -> record", "TOML text as a record", parse)],
    ["stringify", doc("toml.stringify(r: record) -> str", "a record as TOML text", stringify)],
  ]),
};
