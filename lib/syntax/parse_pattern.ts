/** Match patterns (language §3.6). */

import type { ListPattern, Pattern, RecordPatternField } from "./ast.ts";
import type { Parser } from "./parser.ts";
import type { Token } from "./lexer.ts";

/** Take a record field name (an identifier or a string without holes): `expected(what)` else. */
export function fieldName(p: Parser, what: string): { key: string; tok: Token } {
  const tok = p.peek();
  let key: string;
  if (tok.k === "Ident") key = tok.text!;
  else if (tok.k === "Str" && tok.str!.holes.length === 0) key = tok.str!.segs[0];
  else throw p.expected(what, tok);
  p.take(tok);
  return { key, tok };
}

/** Runtime type names usable in `TYPE binder` patterns (language §4). */
export const TYPE_NAMES = new Set([
  "null",
  "bool",
  "int",
  "float",
  "str",
  "path",
  "glob",
  "regex",
  "size",
  "duration",
  "datetime",
  "time",
  "bytes",
  "list",
  "record",
  "table",
  "range",
  "stream",
  "error",
  "outcome",
  "task",
  "closure",
  "command",
  "secret",
]);

/** One pattern at the cursor. */
export function parsePattern(p: Parser): Pattern {
  p.enter();
  try {
    return pattern(p);
  } finally {
    p.leave();
  }
}

function intText(p: Parser): { text: string; s: number; e: number } | null {
  const t = p.peek();
  if (t.k === "Int") {
    p.take(t);
    return { text: t.text!, s: t.s, e: t.e };
  }
  if (t.k === "Minus") {
    const save = p.pos;
    p.take(t);
    const n = p.peek();
    if (n.k === "Int" && n.s === t.e) {
      p.take(n);
      return { text: n.text === "0" ? "0" : `-${n.text}`, s: t.s, e: n.e };
    }
    p.pos = save;
  }
  return null;
}

function pattern(p: Parser): Pattern {
  const t = p.peek();
  if (t.k === "Int" || t.k === "Minus") {
    const a = intText(p);
    if (a) {
      const r = p.peek();
      if (r.k === "DotDot" || r.k === "DotDotEq") {
        p.take(r);
        const b = intText(p);
        if (!b) throw p.expected("an int to end the range pattern", p.peek());
        return {
          kind: "PRange",
          start: a.text,
          end: b.text,
          inclusive: r.k === "DotDotEq",
          span: [a.s, b.e],
        };
      }
      return {
        kind: "PLit",
        value: { kind: "Int", value: a.text, span: [a.s, a.e] },
        span: [a.s, a.e],
      };
    }
  }
  switch (t.k) {
    case "Str": {
      const st = t.str!;
      if (st.holes.length > 0) {
        throw p.fail(
          "a string pattern cannot interpolate",
          t.s,
          t.e,
          'compare in a guard: x if x == "…"',
        );
      }
      p.take(t);
      return {
        kind: "PLit",
        value: { kind: "Str", value: st.segs[0], span: [t.s, t.e] },
        span: [t.s, t.e],
      };
    }
    case "Ident": {
      const name = t.text!;
      p.take(t);
      if (name === "_") return { kind: "PWild", span: [t.s, t.e] };
      if (name === "true" || name === "false") {
        return {
          kind: "PLit",
          value: { kind: "Bool", value: name === "true", span: [t.s, t.e] },
          span: [t.s, t.e],
        };
      }
      if (TYPE_NAMES.has(name)) {
        const b = p.peek();
        if (b.k === "Ident" && b.text !== "if") {
          p.take(b);
          return { kind: "PType", type: name, binder: b.text!, span: [t.s, b.e] };
        }
      }
      return { kind: "PBind", name, span: [t.s, t.e] };
    }
    case "LBrace":
      return recordPattern(p);
    case "LBracket":
      return listPattern(p);
  }
  throw p.expected("a pattern", t);
}

function recordPattern(p: Parser): Pattern {
  const open = p.take(p.peek());
  const fields: RecordPatternField[] = [];
  for (;;) {
    p.skipNl();
    if (p.peek().k === "RBrace") break;
    const { key, tok: kt } = fieldName(p, "a field name in the record pattern");
    const f: RecordPatternField = { key, span: [kt.s, kt.e] };
    if (p.peek().k === "Colon") {
      p.take(p.peek());
      p.skipNl();
      f.pattern = parsePattern(p);
      f.span = [kt.s, p.last];
    } else if (kt.k !== "Ident") {
      throw p.expected("`:` after a quoted field name", p.peek());
    }
    fields.push(f);
    p.skipNl();
    const sep = p.peek();
    if (sep.k !== "Comma") break;
    p.take(sep);
  }
  p.expect("RBrace", "`,` or `}` in the record pattern");
  return { kind: "PRecord", fields, span: [open.s, p.last] };
}

function listPattern(p: Parser): Pattern {
  const open = p.take(p.peek());
  const node: ListPattern = { kind: "PList", items: [], span: [open.s, open.e] };
  for (;;) {
    p.skipNl();
    const t = p.peek();
    if (t.k === "RBracket") break;
    if (t.k === "Ellipsis") {
      p.take(t);
      const n = p.ident("a name after `...` in the list pattern");
      node.rest = n.text!;
      p.skipNl();
      break;
    }
    node.items.push(parsePattern(p));
    p.skipNl();
    const sep = p.peek();
    if (sep.k !== "Comma") break;
    p.take(sep);
  }
  p.expect("RBracket", "`]` to close the list pattern");
  node.span = [open.s, p.last];
  return node;
}

/** The names a pattern binds (for the arm's guard and body scope). */
export function patternBinders(pat: Pattern): string[] {
  const out: string[] = [];
  const go = (q: Pattern) => {
    switch (q.kind) {
      case "PBind":
        out.push(q.name);
        break;
      case "PType":
        out.push(q.binder);
        break;
      case "PRecord":
        for (const f of q.fields) {
          if (f.pattern) go(f.pattern);
          else out.push(f.key);
        }
        break;
      case "PList":
        q.items.forEach(go);
        if (q.rest) out.push(q.rest);
        break;
    }
  };
  go(pat);
  return out;
}
