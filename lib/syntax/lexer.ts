/**
 * The position-addressed, modal lexer (language §1).
 *
 * The parser asks for "the token at offset N in mode M" and may re-lex the same text in the
 * other mode, so the lexer keeps no cursor of its own. Offsets here are UTF-16 indices into
 * the JS string; `parse` converts spans to UTF-8 byte offsets at the very end.
 */

import { ParseError } from "./errors.ts";
import { lexNumber } from "./lex_number.ts";
import { lexQuoted, type StrToken } from "./lex_string.ts";

/** Token kinds of both modes. */
export type TK =
  | "LParen"
  | "RParen"
  | "LBracket"
  | "RBracket"
  | "LBrace"
  | "RBrace"
  | "Comma"
  | "Colon"
  | "Plus"
  | "PlusEq"
  | "Minus"
  | "MinusEq"
  | "ThinArrow"
  | "Star"
  | "StarEq"
  | "Slash"
  | "SlashEq"
  | "Percent"
  | "EqEq"
  | "FatArrow"
  | "Eq"
  | "Bang"
  | "NotEq"
  | "Lt"
  | "Le"
  | "Gt"
  | "Ge"
  | "AndAnd"
  | "OrOr"
  | "Pipe"
  | "QQ"
  | "QuestionDot"
  | "Question"
  | "Dot"
  | "DotDot"
  | "DotDotEq"
  | "Ellipsis"
  | "Caret"
  | "Int"
  | "Float"
  | "Size"
  | "Duration"
  | "Time"
  | "Str"
  | "Regex"
  | "DateTime"
  | "Ident"
  | "Newline"
  | "Semi"
  | "Eof"
  // CMD mode only
  | "RedirOut"
  | "RedirAppend"
  | "RedirIn"
  | "Amp"
  | "Word"
  | "PathWord"
  | "GlobWord"
  | "FlagLong"
  | "FlagLongEq"
  | "FlagLongPending"
  | "FlagShort"
  | "DashDash"
  | "Dash"
  | "EnvAssign";

/** One token. Which optional fields are set depends on `k`. */
export interface Token {
  k: TK;
  /** Start offset (after trivia). */
  s: number;
  /** End offset (exclusive). */
  e: number;
  /** Ident name, word text, flag name, env name, regex/datetime source, decimal number text. */
  text?: string;
  /** Float value. */
  num?: number;
  /** Time literal parts. */
  hms?: [number, number, number];
  /** Long flag original spelling (without `--`). */
  raw?: string;
  /** The value of `--name=value` and `NAME=value`. */
  value?: string;
  /** Quoted string payload. */
  str?: StrToken;
}

const C_NL = 10, C_SP = 32, C_TAB = 9, C_CR = 13, C_BS = 92, C_HASH = 35;

/** ASCII letter or `_`. */
export function isIdentStart(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95;
}

/** ASCII letter, digit or `_`. */
export function isIdentChar(c: number): boolean {
  return isIdentStart(c) || (c >= 48 && c <= 57);
}

/** ASCII digit. */
export function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** Renders a token the way diagnostics name it (Rust `Debug` style: `RParen`, `Ident("x")`). */
export function tokenName(t: Token): string {
  switch (t.k) {
    case "Ident":
    case "Word":
    case "PathWord":
    case "GlobWord":
    case "FlagLong":
    case "FlagShort":
      return `${t.k}(${JSON.stringify(t.text ?? "")})`;
    case "Int":
    case "Size":
    case "Duration":
      return `${t.k}(${t.text})`;
    case "Float":
      return `Float(${t.num})`;
    default:
      return t.k;
  }
}

/** The position-addressed lexer over one source string. */
export class Lexer {
  /** The whole source. */
  readonly src: string;
  /** Offsets at or past `lim` read as end of input (used for interpolation holes). */
  lim: number;

  /** Creates a lexer over `src`. */
  constructor(src: string) {
    this.src = src;
    this.lim = src.length;
  }

  /** Char code at `p`, or -1 at/after the limit. */
  ch(p: number): number {
    return p < this.lim ? this.src.charCodeAt(p) : -1;
  }

  /** Error helper. */
  err(msg: string, s: number, e: number, hint: string | null = null): ParseError {
    return new ParseError(msg, [s, Math.max(s, e)], hint);
  }

  /**
   * Skips horizontal trivia from `p`: spaces, tabs, CR, backslash-newline and comments
   * (`#` at a token start through end of line). Never skips a newline.
   */
  skipTrivia(p: number): number {
    const src = this.src, lim = this.lim;
    while (p < lim) {
      const c = src.charCodeAt(p);
      if (c === C_SP || c === C_TAB || c === C_CR) {
        p++;
      } else if (c === C_BS) {
        const n = this.ch(p + 1);
        if (n === C_NL) p += 2;
        else if (n === C_CR && this.ch(p + 2) === C_NL) p += 3;
        else return p;
      } else if (c === C_HASH) {
        while (p < lim && src.charCodeAt(p) !== C_NL) p++;
      } else {
        return p;
      }
    }
    return p;
  }

  /** Skips trivia and newlines (not `;`). */
  skipTriviaNl(p: number): number {
    for (;;) {
      p = this.skipTrivia(p);
      if (this.ch(p) === C_NL) p++;
      else return p;
    }
  }

  /** End of an ASCII identifier starting at `p`, or -1 when none starts there. */
  identEnd(p: number): number {
    if (!isIdentStart(this.ch(p))) return -1;
    let q = p + 1;
    while (isIdentChar(this.ch(q))) q++;
    return q;
  }

  private tok(k: TK, s: number, e: number): Token {
    return { k, s, e };
  }

  /** Mode-independent token starts, or null. `p` is already past trivia. */
  private common(p: number): Token | null {
    const c = this.ch(p);
    switch (c) {
      case -1:
        return this.tok("Eof", p, p);
      case C_NL:
        return this.tok("Newline", p, p + 1);
      case 59: // ;
        return this.tok("Semi", p, p + 1);
      case 40:
        return this.tok("LParen", p, p + 1);
      case 41:
        return this.tok("RParen", p, p + 1);
      case 123:
        return this.tok("LBrace", p, p + 1);
      case 125:
        return this.tok("RBrace", p, p + 1);
      case 34: // "
      case 39: { // '
        const str = lexQuoted(this, p);
        return { k: "Str", s: p, e: str.end, str };
      }
      case 96: // `
        throw this.backtick(p);
    }
    return null;
  }

  /** The backtick diagnostic. */
  backtick(p: number): ParseError {
    return this.err(
      "backtick is not shoal syntax",
      p,
      p + 1,
      "run a command with (cmd args) for its value, or sh { … } for shell code",
    );
  }

  /** The `$` diagnostic. */
  sigil(p: number): ParseError {
    return this.err(
      "shoal variables have no sigil",
      p,
      p + 1,
      "write the name directly (`name`), or read an environment variable with `env.NAME`",
    );
  }

  /** The unexpected-character diagnostic for the code point at `p`. */
  unexpected(p: number): ParseError {
    const cp = this.src.codePointAt(p) ?? 0;
    const chr = String.fromCodePoint(cp);
    return this.err(`unexpected character \`${chr}\``, p, p + chr.length);
  }

  /** Lexes one EXPR-mode token at `p` (trivia is skipped first). */
  expr(p0: number): Token {
    const p = this.skipTrivia(p0);
    const common = this.common(p);
    if (common) return common;
    const c = this.ch(p);
    const n = this.ch(p + 1);
    switch (c) {
      case 91:
        return this.tok("LBracket", p, p + 1);
      case 93:
        return this.tok("RBracket", p, p + 1);
      case 44:
        return this.tok("Comma", p, p + 1);
      case 58:
        return this.tok("Colon", p, p + 1);
      case 43: // +
        return n === 61 ? this.tok("PlusEq", p, p + 2) : this.tok("Plus", p, p + 1);
      case 45: // -
        return n === 61
          ? this.tok("MinusEq", p, p + 2)
          : n === 62
          ? this.tok("ThinArrow", p, p + 2)
          : this.tok("Minus", p, p + 1);
      case 42: // *
        return n === 61 ? this.tok("StarEq", p, p + 2) : this.tok("Star", p, p + 1);
      case 47: // /
        return n === 61 ? this.tok("SlashEq", p, p + 2) : this.tok("Slash", p, p + 1);
      case 37:
        return this.tok("Percent", p, p + 1);
      case 61: // =
        return n === 61
          ? this.tok("EqEq", p, p + 2)
          : n === 62
          ? this.tok("FatArrow", p, p + 2)
          : this.tok("Eq", p, p + 1);
      case 33: // !
        return n === 61 ? this.tok("NotEq", p, p + 2) : this.tok("Bang", p, p + 1);
      case 60: // <
        return n === 61 ? this.tok("Le", p, p + 2) : this.tok("Lt", p, p + 1);
      case 62: // >
        return n === 61 ? this.tok("Ge", p, p + 2) : this.tok("Gt", p, p + 1);
      case 38: // &
        if (n === 38) return this.tok("AndAnd", p, p + 2);
        throw this.err(
          "`&` is not an operator here",
          p,
          p + 1,
          "backgrounding with & is command syntax (`cmd args &`); logical and is &&",
        );
      case 124: // |
        return n === 124 ? this.tok("OrOr", p, p + 2) : this.tok("Pipe", p, p + 1);
      case 63: // ?
        return n === 63
          ? this.tok("QQ", p, p + 2)
          : n === 46
          ? this.tok("QuestionDot", p, p + 2)
          : this.tok("Question", p, p + 1);
      case 46: // .
        if (n === 46) {
          const m = this.ch(p + 2);
          if (m === 46) return this.tok("Ellipsis", p, p + 3);
          if (m === 61) return this.tok("DotDotEq", p, p + 3);
          return this.tok("DotDot", p, p + 2);
        }
        return this.tok("Dot", p, p + 1);
      case 94:
        return this.tok("Caret", p, p + 1);
      case 36:
        throw this.sigil(p);
    }
    if (isDigit(c)) return lexNumber(this, p);
    if (isIdentStart(c)) {
      const q = this.identEnd(p);
      if (this.ch(q) === 34 && q - p <= 2) {
        const name = this.src.slice(p, q);
        if (name === "re" || name === "t") return this.tagged(name, p, q);
      }
      return { k: "Ident", s: p, e: q, text: this.src.slice(p, q) };
    }
    throw this.unexpected(p);
  }

  /** `re"…"` / `t"…"`: raw text up to the next `"`. */
  private tagged(name: string, p: number, q: number): Token {
    const close = this.src.indexOf('"', q + 1);
    if (close < 0 || close >= this.lim) {
      throw this.err("unterminated tagged literal", p, this.lim, 'close it with `"`');
    }
    return {
      k: name === "re" ? "Regex" : "DateTime",
      s: p,
      e: close + 1,
      text: this.src.slice(q + 1, close),
    };
  }

  /** Lexes one CMD-mode token at `p` (trivia is skipped first). */
  cmd(p0: number): Token {
    const p = this.skipTrivia(p0);
    const common = this.common(p);
    if (common) return common;
    const c = this.ch(p);
    const n = this.ch(p + 1);
    switch (c) {
      case 62: // >
        return n === 62 ? this.tok("RedirAppend", p, p + 2) : this.tok("RedirOut", p, p + 1);
      case 60: // <
        if (n === 60) {
          if (this.ch(p + 2) === 60) {
            throw this.err(
              "shoal has no here-strings",
              p,
              p + 3,
              'feed a value to a command instead: "text".feed(cmd)',
            );
          }
          throw this.err(
            "shoal has no heredocs",
            p,
            p + 2,
            'feed text with """…""".feed(cmd), or use sh { … } for shell code',
          );
        }
        return this.tok("RedirIn", p, p + 1);
      case 38: // &
        if (n === 38) return this.tok("AndAnd", p, p + 2);
        if (n === 62) {
          throw this.err(
            "shoal has no stream-merging redirect",
            p,
            p + (this.ch(p + 2) === 62 ? 3 : 2),
            "outcomes capture stdout and stderr separately: (cmd).stdout, (cmd).stderr",
          );
        }
        return this.tok("Amp", p, p + 1);
      case 124: // |
        return n === 124 ? this.tok("OrOr", p, p + 2) : this.tok("Pipe", p, p + 1);
      case 94:
        return this.tok("Caret", p, p + 1);
      case 93:
        throw this.err(
          "unexpected `]`",
          p,
          p + 1,
          "quote it to pass a literal bracket: ']'",
        );
      case 91: { // [ starts a word only when a ] closes it before the run ends
        let q = p + 1;
        for (;;) {
          const d = this.ch(q);
          if (d === -1 || d === C_SP || d === C_TAB || d === C_NL || d === C_CR || d === 93) break;
          q++;
        }
        if (this.ch(q) !== 93) {
          throw this.err(
            "`[` cannot start a command argument",
            p,
            p + 1,
            "quote it, or pass a list with (expr); mid-word [ranges] in globs are fine",
          );
        }
        break;
      }
    }
    return this.word(p);
  }

  /** Scans a CMD word at `p` and classifies it (language §1.3). */
  word(p: number): Token {
    const src = this.src;
    let q = p;
    let glob = false;
    for (;;) {
      const c = this.ch(q);
      if (c === -1) break;
      if (c === C_SP || c === C_TAB || c === C_NL || c === C_CR) break;
      if (
        c === 40 || c === 41 || c === 123 || c === 125 || c === 34 || c === 39 || c === 59 ||
        c === 38 || c === 60 || c === 62 || c === 124
      ) break;
      if (c === 36) throw this.sigil(q);
      if (c === 96) throw this.backtick(q);
      if (c === 42 || c === 63 || c === 91 || c === 93) glob = true;
      q++;
    }
    if (q === p) throw this.unexpected(p);
    const text = src.slice(p, q);
    if (this.ch(q) === 62 && /^[0-9]+$/.test(text)) {
      throw this.err(
        "shoal has no fd-numbered redirects",
        p,
        q + 1,
        "stderr is captured separately: read (cmd).stderr, or use sh { … } for shell plumbing",
      );
    }
    return classifyWord(text, p, q, glob);
  }

  /**
   * Scans the raw payload of an interpreter block whose `{` is at `p` (language §1.6):
   * balanced braces, skipping `"…"` (with `\` escapes) and `'…'` spans.
   */
  rawBlock(p: number): { src: string; end: number } {
    const src = this.src, lim = this.lim;
    let depth = 0;
    let q = p;
    while (q < lim) {
      const c = src.charCodeAt(q);
      if (c === 123) depth++;
      else if (c === 125) {
        depth--;
        if (depth === 0) return { src: src.slice(p + 1, q).trim(), end: q + 1 };
      } else if (c === 34) {
        q++;
        while (q < lim && src.charCodeAt(q) !== 34) q += src.charCodeAt(q) === C_BS ? 2 : 1;
      } else if (c === 39) {
        q++;
        while (q < lim && src.charCodeAt(q) !== 39) q++;
      }
      q++;
    }
    throw this.err(
      "unbalanced braces in interpreter block `{ … }`",
      p,
      lim,
      "close every `{` in the block, or pass the code as a raw string: tool'''…'''",
    );
  }
}

const LONG_FLAG = /^--([A-Za-z0-9_-]+)(=(.*))?$/s;
const SHORT_FLAG = /^-[A-Za-z0-9]+$/;
const ENV_ASSIGN = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s;

function classifyWord(text: string, s: number, e: number, glob: boolean): Token {
  if (text === "--") return { k: "DashDash", s, e };
  if (text === "-") return { k: "Dash", s, e };
  if (glob) return { k: "GlobWord", s, e, text };
  const c0 = text.charCodeAt(0);
  if (
    c0 === 47 || text === "~" || text.startsWith("~/") || text.startsWith("./") ||
    text.startsWith("../")
  ) {
    return { k: "PathWord", s, e, text };
  }
  if (c0 === 45) {
    const m = LONG_FLAG.exec(text);
    if (m) {
      const raw = m[1];
      const name = raw.replaceAll("-", "_");
      if (m[2] === undefined) return { k: "FlagLong", s, e, text: name, raw };
      if (m[3] === "") return { k: "FlagLongPending", s, e, text: name, raw };
      return { k: "FlagLongEq", s, e, text: name, raw, value: m[3] };
    }
    if (SHORT_FLAG.test(text)) return { k: "FlagShort", s, e, text: text.slice(1) };
  }
  const env = ENV_ASSIGN.exec(text);
  if (env) return { k: "EnvAssign", s, e, text: env[1], value: env[2] };
  return { k: "Word", s, e, text };
}
