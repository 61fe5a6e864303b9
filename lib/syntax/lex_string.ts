/**
 * Quoted strings (language §1.5): `"…"` with escapes and `{expr}` holes, raw `'…'`, and the
 * multi-line `"""…"""` / `'''…'''` forms with dedent.
 */

import type { Lexer } from "./lexer.ts";

/** A lexed string: literal segments around interpolation holes. */
export interface StrToken {
  /** Offset just past the closing quote(s). */
  end: number;
  /** Literal text runs (unescaped, dedented); always `holes.length + 1` entries. */
  segs: string[];
  /** Source ranges of the raw segments. */
  segSpans: [number, number][];
  /** Source ranges of the hole texts (between the braces). */
  holes: [number, number][];
}

const ESCAPE_HINT = 'escapes: \\n \\t \\r \\0 \\\\ \\" \\{ \\} \\u{…}';
const HOLE_HINT = "use a raw string '…' for literal braces, or escape the brace as \\{";

/**
 * Decodes the escape whose backslash is at `i` in `s`: the produced text and the escape length,
 * or null when it is not a valid escape.
 */
function decodeEscape(s: string, i: number): { text: string; len: number } | null {
  const c = s[i + 1];
  switch (c) {
    case "n":
      return { text: "\n", len: 2 };
    case "t":
      return { text: "\t", len: 2 };
    case "r":
      return { text: "\r", len: 2 };
    case "0":
      return { text: "\0", len: 2 };
    case "\\":
    case '"':
    case "{":
    case "}":
      return { text: c, len: 2 };
    case "u": {
      if (s[i + 2] !== "{") return null;
      const close = s.indexOf("}", i + 3);
      if (close < 0 || close - (i + 3) < 1 || close - (i + 3) > 6) return null;
      const hex = s.slice(i + 3, close);
      if (!/^[0-9A-Fa-f]+$/.test(hex)) return null;
      const cp = parseInt(hex, 16);
      if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return null;
      return { text: String.fromCodePoint(cp), len: close + 1 - i };
    }
  }
  return null;
}

/** Unescapes a segment already validated by the scanner. */
function unescape(raw: string): string {
  if (!raw.includes("\\")) return raw;
  let out = "";
  let i = 0;
  while (i < raw.length) {
    const j = raw.indexOf("\\", i);
    if (j < 0) {
      out += raw.slice(i);
      break;
    }
    out += raw.slice(i, j);
    const d = decodeEscape(raw, j);
    if (!d) { // unreachable after validation; keep the text rather than fail
      out += raw[j];
      i = j + 1;
      continue;
    }
    out += d.text;
    i = j + d.len;
  }
  return out;
}

/** Lexes the string whose opening quote is at `p`. */
export function lexQuoted(lx: Lexer, p: number): StrToken {
  const q = lx.src.charCodeAt(p);
  const triple = lx.ch(p + 1) === q && lx.ch(p + 2) === q;
  if (q === 39) return triple ? rawTriple(lx, p) : rawSingle(lx, p);
  return interpolating(lx, p, triple);
}

function rawSingle(lx: Lexer, p: number): StrToken {
  let q = p + 1;
  for (;;) {
    const c = lx.ch(q);
    if (c === -1) throw lx.err("unterminated raw string", p, q, "close it with '");
    if (c === 10) {
      throw lx.err(
        "unterminated string (newline)",
        p,
        q,
        "strings are single-line; use '''…''' for multi-line text",
      );
    }
    if (c === 39) break;
    q++;
  }
  return { end: q + 1, segs: [lx.src.slice(p + 1, q)], segSpans: [[p + 1, q]], holes: [] };
}

function rawTriple(lx: Lexer, p: number): StrToken {
  const close = lx.src.indexOf("'''", p + 3);
  if (close < 0 || close + 3 > lx.lim) {
    throw lx.err("unterminated raw string", p, lx.lim, "close it with '''");
  }
  const segs = dedent([lx.src.slice(p + 3, close)]);
  return { end: close + 3, segs, segSpans: [[p + 3, close]], holes: [] };
}

function interpolating(lx: Lexer, p: number, triple: boolean): StrToken {
  const src = lx.src;
  let q = p + (triple ? 3 : 1);
  let segStart = q;
  const raws: string[] = [];
  const segSpans: [number, number][] = [];
  const holes: [number, number][] = [];
  for (;;) {
    const c = lx.ch(q);
    if (c === -1) {
      throw lx.err("unterminated string", p, q, triple ? 'close it with """' : 'close it with "');
    }
    if (c === 10 && !triple) {
      throw lx.err(
        "unterminated string (newline)",
        p,
        q,
        'strings are single-line; use """…""" for multi-line text, or \\n',
      );
    }
    if (c === 34 && (!triple || (lx.ch(q + 1) === 34 && lx.ch(q + 2) === 34))) break;
    if (c === 92) {
      const d = decodeEscape(src.slice(q, Math.min(q + 12, lx.lim)), 0);
      if (!d) {
        const n = lx.ch(q + 1);
        if (n === -1) throw lx.err("unterminated string", p, q + 1);
        const esc = String.fromCodePoint(src.codePointAt(q + 1) ?? n);
        const shown = esc === "\n" ? "\\n (a backslash before a newline)" : `\\${esc}`;
        throw lx.err(
          esc === "u" ? "invalid unicode escape `\\u`" : `unknown escape \`${shown}\``,
          q,
          q + 1 + esc.length,
          ESCAPE_HINT,
        );
      }
      q += d.len;
      continue;
    }
    if (c === 123) {
      raws.push(src.slice(segStart, q));
      segSpans.push([segStart, q]);
      const close = holeEnd(lx, p, q + 1, !triple);
      holes.push([q + 1, close]);
      q = close + 1;
      segStart = q;
      continue;
    }
    q++;
  }
  raws.push(src.slice(segStart, q));
  segSpans.push([segStart, q]);
  const segs = (triple ? dedent(raws) : raws).map(unescape);
  return { end: q + (triple ? 3 : 1), segs, segSpans, holes };
}

/**
 * Finds the `}` closing the hole that starts at `q`: counts nested braces and skips quoted
 * spans (`"…"` with escapes, `'…'`).
 */
function holeEnd(lx: Lexer, strStart: number, q: number, singleLine: boolean): number {
  let depth = 1;
  const fail = () => lx.err("unterminated `{expr}` in string", strStart, q, HOLE_HINT);
  for (;;) {
    const c = lx.ch(q);
    if (c === -1 || (c === 10 && singleLine)) throw fail();
    if (c === 123) depth++;
    else if (c === 125) {
      if (--depth === 0) return q;
    } else if (c === 34 || c === 39) {
      q++;
      for (;;) {
        const d = lx.ch(q);
        if (d === -1 || (d === 10 && singleLine)) throw fail();
        if (d === c) break;
        q += d === 92 && c === 34 ? 2 : 1;
      }
    }
    q++;
  }
}

interface Frag {
  seg: number;
  text: string;
}

interface Line {
  frags: Frag[];
  hasHole: boolean;
}

function leadingWs(s: string): number {
  let i = 0;
  while (i < s.length && (s[i] === " " || s[i] === "\t")) i++;
  return i;
}

/**
 * Multi-line dedent over raw segments separated by opaque holes: drop one leading newline,
 * drop a whitespace-only last line, strip the minimum indentation of the non-blank lines.
 * CRLF line endings become LF.
 */
export function dedent(segs: string[]): string[] {
  const lines: Line[] = [{ frags: [], hasHole: false }];
  segs.forEach((s, i) => {
    if (i > 0) lines[lines.length - 1].hasHole = true;
    const parts = s.split("\n");
    parts.forEach((part, j) => {
      if (j > 0) lines.push({ frags: [], hasHole: false });
      // CRLF line endings read as LF
      const text = j < parts.length - 1 && part.endsWith("\r") ? part.slice(0, -1) : part;
      lines[lines.length - 1].frags.push({ seg: i, text });
    });
  });
  const blank = (l: Line) => !l.hasHole && leadingWs(l.frags[0].text) === l.frags[0].text.length;
  if (lines.length > 1 && !lines[0].hasHole) {
    if (lines[0].frags[0].text === "") lines.shift();
  }
  if (lines.length > 1 && blank(lines[lines.length - 1])) lines.pop();
  let min = Infinity;
  for (const l of lines) {
    if (!blank(l)) min = Math.min(min, leadingWs(l.frags[0].text));
  }
  if (!Number.isFinite(min)) min = 0;
  const out = segs.map(() => "");
  lines.forEach((l, li) => {
    const first = l.frags[0];
    if (li > 0) out[first.seg] += "\n";
    first.text = first.text.slice(Math.min(min, leadingWs(first.text)));
    for (const f of l.frags) out[f.seg] += f.text;
  });
  return out;
}
