/**
 * Output type hints of adapters (`output.type`, subsystems §7): `table<{hash: str, date:
 * datetime}>`, `list<path>`, `record`, `{user: str, pid: int}`. A hint says what a parser
 * builds and how it types each cell; field names that are not identifiers are quoted
 * (`table<{"%cpu": float}>`). Unknown type names are refused when the catalog loads (a typo
 * would otherwise silently leave a column untyped).
 *
 * @module
 */

/** The cell types a parser can produce from text (see cells.ts). */
export const CELL_TYPES: ReadonlySet<string> = new Set([
  "str",
  "datetime",
  "path",
  "int",
  "float",
  "bool",
  "size",
  "size_kb",
  "size_b",
  "duration",
  "time",
  "pct",
  "epoch",
  "any",
]);

/** A parsed `output.type`. */
export type TypeHint =
  | { k: "cell"; name: string; optional: boolean }
  | { k: "list"; elem: TypeHint; optional: boolean }
  | { k: "table"; fields: FieldHint[] | null; optional: boolean }
  | { k: "record"; fields: FieldHint[] | null; optional: boolean };

/** One named field of a record or table hint. */
export interface FieldHint {
  name: string;
  type: TypeHint;
}

/** A malformed hint (the message names the offending position). */
export class HintError extends Error {}

/** Parse a type hint; throws {@link HintError}. */
export function parseHint(text: string): TypeHint {
  const p = new HintParser(text);
  const t = p.type();
  p.skipWs();
  if (p.i < text.length) throw p.err("unexpected text after the type");
  return t;
}

class HintParser {
  i = 0;
  constructor(readonly s: string) {}

  err(why: string): HintError {
    return new HintError(`${why} at column ${this.i + 1} of \`${this.s}\``);
  }

  skipWs(): void {
    while (this.i < this.s.length && /\s/.test(this.s[this.i])) this.i++;
  }

  eat(c: string): boolean {
    this.skipWs();
    if (this.s[this.i] === c) {
      this.i++;
      return true;
    }
    return false;
  }

  expect(c: string): void {
    if (!this.eat(c)) throw this.err(`expected \`${c}\``);
  }

  ident(): string {
    this.skipWs();
    const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(this.s.slice(this.i));
    if (!m) throw this.err("expected a type name");
    this.i += m[0].length;
    return m[0];
  }

  fieldName(): string {
    this.skipWs();
    if (this.s[this.i] !== '"') return this.ident();
    const end = this.s.indexOf('"', this.i + 1);
    if (end < 0) throw this.err("unterminated field name");
    const name = this.s.slice(this.i + 1, end);
    this.i = end + 1;
    return name;
  }

  fields(): FieldHint[] {
    this.expect("{");
    const out: FieldHint[] = [];
    const seen = new Set<string>();
    if (this.eat("}")) return out;
    for (;;) {
      const name = this.fieldName();
      if (seen.has(name)) throw this.err(`duplicate field \`${name}\``);
      seen.add(name);
      this.expect(":");
      out.push({ name, type: this.type() });
      if (this.eat("}")) return out;
      this.expect(",");
    }
  }

  optional(): boolean {
    return this.eat("?");
  }

  type(): TypeHint {
    this.skipWs();
    if (this.s[this.i] === "{") {
      const fields = this.fields();
      return { k: "record", fields, optional: this.optional() };
    }
    const name = this.ident();
    if (name === "table" || name === "record") {
      let fields: FieldHint[] | null = null;
      if (this.eat("<")) {
        fields = this.fields();
        this.expect(">");
      }
      return { k: name, fields, optional: this.optional() };
    }
    if (name === "list") {
      this.expect("<");
      const elem = this.type();
      this.expect(">");
      // A list of records is a table (the JSON table heuristic says the same).
      if (elem.k === "record") {
        return { k: "table", fields: elem.fields, optional: this.optional() };
      }
      return { k: "list", elem, optional: this.optional() };
    }
    if (!CELL_TYPES.has(name)) throw this.err(`unknown type \`${name}\``);
    return { k: "cell", name, optional: this.optional() };
  }
}

/** The fields of a table/record hint (null when the hint names none). */
export function hintFields(h: TypeHint | null): FieldHint[] | null {
  if (h === null) return null;
  return h.k === "table" || h.k === "record" ? h.fields : null;
}
