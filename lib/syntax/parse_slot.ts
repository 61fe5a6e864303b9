/**
 * Value slots that hold a bare command: `let f = ls src`, `[n, ls -a dir]`, `f(1, git log -n
 * 2)`, `{a: ls d}`, `x = git status`, `return ls d`. Agents write commands there the way a shell
 * would, and the only reading that parses is the command's: the slot is parsed as an
 * expression first — every form that parsed before means what it meant — and re-read as a
 * command, exactly as if it were in `( )`, only when that expression stops at a word that
 * cannot follow it. The command runs to the slot's end: the next `,` (items only) or closing
 * bracket at its depth, a newline, `;`, or a `catch` that then applies to it.
 *
 * @module
 */

import type { Expr } from "./ast.ts";
import { ParseError } from "./errors.ts";
import type { Parser } from "./parser.ts";
import { isIdentStart, type Lexer } from "./lexer.ts";
import { lexQuoted } from "./lex_string.ts";
import { atCommandHead, commandChain, GLUED_HINT } from "./parse_cmd.ts";
import { catchTail, parseExpr } from "./parse_expr.ts";

/** `item`: a list element, argument or record value (a `,` ends it); `stmt`: a statement's value. */
export type SlotKind = "item" | "stmt";

/** The slot's value: an expression, or the command written there bare. */
export function parseSlot(p: Parser, kind: SlotKind): Expr {
  if (!bareCommandAhead(p)) {
    const shadow = shadowedCommandAhead(p);
    if (shadow === null) return parseExpr(p);
    const e = parseExpr(p);
    if (slotEnded(p, kind)) return e;
    // `let ls = …` earlier, then `[ls -a d]`: the name is the variable, which is the rule
    // (language §2), but nothing says so unless we do.
    throw p.fail(
      `\`${shadow.name}\` is a variable here, so \`${shadow.name} …\` is not the command`,
      shadow.at,
      shadow.at + shadow.name.length,
      `a let bound \`${shadow.name}\`; to run the command write ^${shadow.name} …`,
    );
  }
  const saved = save(p);
  // `[pwd, ls -a]`: a flag glued to its dash after a command head is the command's, never
  // `ls - a` (which would run ls and subtract a variable).
  if (!flagAfterHead(p)) {
    try {
      const e = parseExpr(p);
      if (slotEnded(p, kind)) return e;
    } catch (err) {
      if (!(err instanceof ParseError)) throw err;
    }
    restore(p, saved);
  }
  const s = p.nextPos();
  const end = slotEnd(p.lx, s, kind);
  const lim = p.lx.lim;
  let cmd: Expr | null = null;
  let cmdErr: ParseError | null = null;
  p.lx.lim = end;
  try {
    p.pos = s;
    cmd = commandChain(p);
    if (p.nextPos() !== end) cmd = null;
  } catch (err) {
    if (!(err instanceof ParseError)) throw err;
    cmdErr = err;
  } finally {
    p.lx.lim = lim;
  }
  // `let n = ls d.map(.name)`: the command reading failed with a fix to resend, which says
  // more than the expression's "expected newline" after `ls`.
  if (cmdErr?.hint?.startsWith(GLUED_HINT)) throw cmdErr;
  if (cmd === null) {
    // Not a command either: the expression's own error is the one to report.
    restore(p, saved);
    return parseExpr(p);
  }
  return catchTail(p, cmd);
}

/** A name bound as a value, written the way a command with arguments is (`ls -a d`). */
function shadowedCommandAhead(p: Parser): { name: string; at: number } | null {
  const s = p.nextPos();
  const q = p.lx.identEnd(s);
  if (q < 0) return null;
  const name = p.src.slice(s, q);
  if (!p.isValue(name) || (p.lx.ch(q) !== 32 && p.lx.ch(q) !== 9)) return null;
  const n = p.lx.ch(p.lx.skipTrivia(q));
  // A word or flag follows: not an operator's other operand (`x - 1` has a space after `-`).
  if (!(n === 45 && /[A-Za-z]/.test(p.src[p.lx.skipTrivia(q) + 1] ?? "")) && !isIdentStart(n)) {
    return null;
  }
  return { name, at: s };
}

/** A command head followed on the same line by something: `ls d`, `^ls d`; not `ls`, `now - 1d`. */
function bareCommandAhead(p: Parser): boolean {
  const q = headEnd(p);
  if (q < 0 || !atCommandHead(p)) return false;
  const c = p.lx.ch(q);
  if (c !== 32 && c !== 9) return false;
  const n = p.lx.ch(p.lx.skipTrivia(q));
  return n !== -1 && n !== 10 && n !== 59;
}

/** Where the head word at the cursor (after an optional `^`) ends; -1 when none starts there. */
function headEnd(p: Parser): number {
  const s0 = p.nextPos();
  return p.lx.identEnd(p.lx.ch(s0) === 94 ? s0 + 1 : s0);
}

/**
 * After the command head ahead: a space, then `-x` or `--x` with no space after the dash. (Not
 * `-1`: `[now -1d]` has always been arithmetic.)
 */
function flagAfterHead(p: Parser): boolean {
  const q = headEnd(p);
  if (q < 0) return false;
  const d = p.lx.skipTrivia(q);
  return d > q && p.lx.ch(d) === 45 && /[A-Za-z-]/.test(p.src[d + 1] ?? "");
}

/** Has the expression ended where the slot does? */
function slotEnded(p: Parser, kind: SlotKind): boolean {
  const c = p.nextChar();
  if (c === -1 || c === 10 || c === 59 || c === 41 || c === 93 || c === 125) return true;
  return kind === "item" && c === 44;
}

/** Where a command written in a slot from `s` stops (before the first offset past it). */
function slotEnd(lx: Lexer, s: number, kind: SlotKind): number {
  const { src, lim } = lx;
  let depth = 0;
  for (let i = s; i < lim; i++) {
    const c = src.charCodeAt(i);
    if (c === 34 || c === 39) {
      i = quoteEnd(lx, i);
    } else if (c === 40 || c === 91 || c === 123) {
      depth++;
    } else if (c === 41 || c === 93 || c === 125) {
      if (depth === 0) return i;
      depth--;
    } else if (depth === 0 && (c === 10 || c === 59 || (c === 44 && kind === "item"))) {
      return i;
    } else if (depth === 0 && wordStart(src, i) && /^catch\b/.test(src.slice(i, i + 6))) {
      return trimEnd(src, s, i);
    } else if (c === 35 && wordStart(src, i)) {
      // A comment runs to the end of the line.
      while (i + 1 < lim && src.charCodeAt(i + 1) !== 10) i++;
    }
  }
  return lim;
}

function wordStart(src: string, i: number): boolean {
  const b = src.charCodeAt(i - 1);
  return b === 32 || b === 9;
}

function trimEnd(src: string, s: number, i: number): number {
  while (i > s && (src.charCodeAt(i - 1) === 32 || src.charCodeAt(i - 1) === 9)) i--;
  return i;
}

/** The offset of the last character of the string literal at `i` (the lexer's own scan). */
function quoteEnd(lx: Lexer, i: number): number {
  try {
    return lexQuoted(lx, i).end - 1;
  } catch (err) {
    if (err instanceof ParseError) return lx.lim; // unterminated: the slot runs to the end
    throw err;
  }
}

interface Saved {
  pos: number;
  last: number;
  depth: number;
  scopes: number;
  noTrail: boolean;
  implicitItem: string | null;
}

function save(p: Parser): Saved {
  return {
    pos: p.pos,
    last: p.last,
    depth: p.depth,
    scopes: p.scopes.length,
    noTrail: p.noTrail,
    implicitItem: p.implicitItem,
  };
}

function restore(p: Parser, s: Saved): void {
  p.pos = s.pos;
  p.last = s.last;
  p.depth = s.depth;
  p.scopes.length = s.scopes;
  p.noTrail = s.noTrail;
  p.implicitItem = s.implicitItem;
}
