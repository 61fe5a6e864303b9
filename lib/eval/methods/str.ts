/**
 * String methods (language §15.3) with Unicode-scalar semantics: lengths, `take`, `skip` and
 * `reverse` count code points, not UTF-16 units. Whitespace (`words`, `trim`) is Unicode
 * White_Space as in Rust's `char::is_whitespace`. Parsing follows Rust's `str::parse`.
 */

import { parseFloatStrict, parseIntStrict } from "../../value/coerce.ts";
import { fail } from "../../value/errors.ts";
import { renderInline } from "../../value/render.ts";
import { FloatV, ListV, typeName, type Value } from "../../value/types.ts";
import type { MethodArgs, MethodTable } from "../method_types.ts";
import { arity, countArg, guardReceiver, strArg } from "./args.ts";
import { doc } from "../docs.ts";

/** Rust `char::is_whitespace` (Unicode White_Space); JS `\s` differs (U+FEFF in, U+0085 out). */
const WS =
  "\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const WS_RUN = new RegExp(`[${WS}]+`);
const TRIM = new RegExp(`^[${WS}]+|[${WS}]+$`, "g");

/** Number of Unicode scalar values in `s`. */
export function charCount(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      n--;
      i++;
    }
  }
  return n;
}

/** UTF-16 offset of the `n`-th scalar value of `s` (clamped to the end). */
function charOffset(s: string, n: number): number {
  let i = 0;
  for (let k = 0; k < n && i < s.length; k++) {
    const c = s.charCodeAt(i);
    i += c >= 0xd800 && c <= 0xdbff && i + 1 < s.length ? 2 : 1;
  }
  return i;
}

/** Rust `str::lines`: split on `\n`, drop the `\r` of `\r\n`, no empty line after a final `\n`. */
export function splitLines(s: string): string[] {
  if (s === "") return [];
  const parts = s.split("\n");
  if (parts[parts.length - 1] === "") parts.pop();
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i];
    // Only a `\r` that precedes a `\n` is part of a line ending.
    if (p.endsWith("\r") && (i < parts.length - 1 || s.endsWith("\n"))) {
      parts[i] = p.slice(0, -1);
    }
  }
  return parts;
}

/** Rust `str::split_whitespace`. */
export function splitWords(s: string): string[] {
  const out = s.split(WS_RUN);
  if (out.length > 0 && out[0] === "") out.shift();
  if (out.length > 0 && out[out.length - 1] === "") out.pop();
  return out;
}

/** Rust `str::trim`. */
export function trimWs(s: string): string {
  return s.replace(TRIM, "");
}

/** Rust `str::split(sep)` (an empty separator yields `""`, each char, `""`). */
export function splitLiteral(s: string, sep: string): string[] {
  if (sep === "") return ["", ...Array.from(s), ""];
  return s.split(sep);
}

/** A RegExp that finds all matches (the `g` flag), cached per source regex. */
const GLOBAL = new WeakMap<RegExp, RegExp>();
function globalOf(re: RegExp): RegExp {
  let g = GLOBAL.get(re);
  if (g === undefined) {
    g = re.global ? re : new RegExp(re.source, re.flags + "g");
    GLOBAL.set(re, g);
  }
  g.lastIndex = 0;
  return g;
}

const NAME_CHAR = /[0-9A-Za-z_]/;

/**
 * Expand a Rust-regex replacement template for one match: `$$` → `$`, `$1`/`$name`/`${name}` →
 * the group (empty when absent; the longest run of name chars is the name, so `$1a` is group
 * `1a`), any other `$` is literal.
 */
export function expandTemplate(tpl: string, m: RegExpExecArray): string {
  if (!tpl.includes("$")) return tpl;
  let out = "";
  let i = 0;
  while (i < tpl.length) {
    const c = tpl[i];
    if (c !== "$") {
      out += c;
      i++;
      continue;
    }
    if (tpl[i + 1] === "$") {
      out += "$";
      i += 2;
      continue;
    }
    let name: string;
    let end: number;
    if (tpl[i + 1] === "{") {
      const close = tpl.indexOf("}", i + 2);
      if (close < 0) {
        out += "$";
        i++;
        continue;
      }
      name = tpl.slice(i + 2, close);
      end = close + 1;
    } else {
      end = i + 1;
      while (end < tpl.length && NAME_CHAR.test(tpl[end])) end++;
      name = tpl.slice(i + 1, end);
    }
    if (name === "") {
      out += "$";
      i++;
      continue;
    }
    const g = /^[0-9]+$/.test(name) ? m[Number(name)] : m.groups?.[name];
    out += g ?? "";
    i = end;
  }
  return out;
}

function regexArg(name: string, args: MethodArgs): RegExp {
  const v = args.pos[0];
  if (v === undefined) {
    throw fail(
      "arg_error",
      `.${name} requires a regex argument`,
      `e.g. .${name}(re"[0-9]+")`,
      args.span,
    );
  }
  if (v === null || typeof v !== "object" || v.t !== "regex") {
    throw fail(
      "type_error",
      `.${name} expects a regex, found ${typeName(v)}`,
      `write a regex literal: re"…"`,
      args.span,
    );
  }
  return v.re;
}

function unary(name: string, f: (s: string) => Value) {
  return (_ip: unknown, recv: Value, args: MethodArgs): Value => {
    arity(name, args, 0, 0);
    return f(recv as string);
  };
}

function cannotParse(text: string, what: string, span: MethodArgs["span"]): Error {
  return fail("arg_error", `cannot parse ${renderInline(text)} as ${what}`, null, span);
}

/** String methods by name (receiver: str). */
export const STR_METHODS: MethodTable = guardReceiver("str", (v) => typeof v === "string", {
  len: doc(".len() -> int", "number of characters", unary("len", charCount)),
  count: doc(".count() -> int", "number of characters", unary("count", charCount)),
  is_empty: doc(".is_empty() -> bool", 'true for ""', unary("is_empty", (s) => s.length === 0)),
  lines: doc(
    ".lines() -> list<str>",
    "split on newlines (no trailing empty line)",
    unary("lines", (s) => new ListV(splitLines(s))),
  ),
  words: doc(
    ".words() -> list<str>",
    "split on runs of whitespace",
    unary("words", (s) => new ListV(splitWords(s))),
  ),
  chars: doc(
    ".chars() -> list<str>",
    "the characters",
    unary("chars", (s) => new ListV(Array.from(s))),
  ),
  trim: doc(".trim() -> str", "without leading and trailing whitespace", unary("trim", trimWs)),
  upper: doc(".upper() -> str", "in upper case", unary("upper", (s) => s.toUpperCase())),
  lower: doc(".lower() -> str", "in lower case", unary("lower", (s) => s.toLowerCase())),
  reverse: doc(
    ".reverse() -> str",
    "the characters reversed",
    unary("reverse", (s) => Array.from(s).reverse().join("")),
  ),

  split: doc(
    ".split(sep: str) -> list<str>",
    "split on every sep (keeps empty fields)",
    (_ip, recv, args) => {
      arity("split", args, 0, 1);
      return new ListV(splitLiteral(recv as string, strArg("split", args, 0, "separator")));
    },
  ),

  starts_with: doc(
    ".starts_with(prefix: str) -> bool",
    "true if it begins with prefix",
    (_ip, recv, args) => {
      arity("starts_with", args, 0, 1);
      return (recv as string).startsWith(strArg("starts_with", args, 0, "prefix"));
    },
  ),

  ends_with: doc(
    ".ends_with(suffix: str) -> bool",
    "true if it ends with suffix",
    (_ip, recv, args) => {
      arity("ends_with", args, 0, 1);
      return (recv as string).endsWith(strArg("ends_with", args, 0, "suffix"));
    },
  ),

  contains: doc(".contains(sub: str) -> bool", "true if sub occurs in it", (_ip, recv, args) => {
    arity("contains", args, 0, 1);
    return (recv as string).includes(strArg("contains", args, 0, "substring"));
  }),

  replace: doc(
    ".replace(pattern: str | regex, with: str) -> str",
    "every occurrence replaced ($1 for regex groups)",
    (_ip, recv, args) => {
      arity("replace", args, 0, 2);
      const s = recv as string;
      const pat = args.pos[0];
      if (pat === undefined) {
        throw fail("arg_error", ".replace requires a pattern argument", null, args.span);
      }
      const rep = strArg("replace", args, 1, "replacement");
      if (typeof pat === "string") {
        if (pat === "") return ["", ...Array.from(s), ""].join(rep);
        return s.replaceAll(pat, rep.replaceAll("$", "$$$$"));
      }
      if (pat === null || typeof pat !== "object" || pat.t !== "regex") {
        throw fail(
          "type_error",
          `.replace expects a str or regex pattern, found ${typeName(pat)}`,
          null,
          args.span,
        );
      }
      const re = globalOf(pat.re);
      let out = "";
      let last = 0;
      for (const m of s.matchAll(re)) {
        out += s.slice(last, m.index) + expandTemplate(rep, m);
        last = m.index + m[0].length;
      }
      return out + s.slice(last);
    },
  ),

  matches: doc(".matches(re: regex) -> list<str>", "the text of every match", (_ip, recv, args) => {
    arity("matches", args, 0, 1);
    const re = globalOf(regexArg("matches", args));
    return new ListV(Array.from((recv as string).matchAll(re), (m) => m[0]));
  }),

  match: doc(
    ".match(re: regex) -> str | null",
    "the first match's text, or null",
    (_ip, recv, args) => {
      arity("match", args, 0, 1);
      const re = globalOf(regexArg("match", args));
      const m = re.exec(recv as string);
      re.lastIndex = 0;
      return m === null ? null : m[0];
    },
  ),

  parse_int: doc(
    ".parse_int() -> int",
    'the int it spells ("42"), else arg_error',
    (_ip, recv, args) => {
      arity("parse_int", args, 0, 0);
      const v = parseIntStrict(recv as string);
      if (v === null) throw cannotParse(recv as string, "int", args.span);
      return v;
    },
  ),

  parse_float: doc(
    ".parse_float() -> float",
    'the float it spells ("3.5"), else arg_error',
    (_ip, recv, args) => {
      arity("parse_float", args, 0, 0);
      const v = parseFloatStrict(recv as string);
      if (v === null) throw cannotParse(recv as string, "float", args.span);
      return new FloatV(v);
    },
  ),

  take: doc(".take(n: int) -> str", "the first n characters", (_ip, recv, args) => {
    arity("take", args, 1, 1);
    const s = recv as string;
    return s.slice(0, charOffset(s, countArg("take", args.pos[0], args.span)));
  }),

  skip: doc(".skip(n: int) -> str", "all but the first n characters", (_ip, recv, args) => {
    arity("skip", args, 1, 1);
    const s = recv as string;
    return s.slice(charOffset(s, countArg("skip", args.pos[0], args.span)));
  }),
});

/** The str method names (for did-you-mean); `stream` lives in the stream layer. */
export const STR_METHOD_NAMES: readonly string[] = [...Object.keys(STR_METHODS), "stream"];
