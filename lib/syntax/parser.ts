/**
 * Parser state shared by the statement, expression, command and pattern parsers: the cursor,
 * token peeking (position-addressed, cached per mode), the two kinds of lexical binding
 * (value names vs command names) that drive statement dispatch (language §2), and the
 * nesting-depth guard.
 */

import type { Span, Stmt } from "./ast.ts";
import { ParseError } from "./errors.ts";
import { Lexer, type TK, type Token, tokenName } from "./lexer.ts";

/** How a name is bound in a lexical scope. */
/** What a name is bound as, for command-vs-value dispatch. */
export type Binding = "value" | "command";

/** Deepest allowed nesting of expressions/statements/patterns (guards the JS stack). */
export const MAX_DEPTH = 256;

/**
 * Longest allowed operator or postfix chain in one expression: each link nests the tree one
 * level deeper (left-associative), and tree walkers downstream recurse on it.
 */
export const MAX_CHAIN = 1000;

/** Words the parser treats as keywords (language §1.2). */
export const RESERVED = new Set([
  "let",
  "var",
  "fn",
  "alias",
  "use",
  "export",
  "return",
  "break",
  "continue",
  "if",
  "else",
  "match",
  "for",
  "in",
  "while",
  "try",
  "catch",
  "true",
  "false",
  "null",
]);

/** Heads that take a raw interpreter block (language §3.8). */
export const INTERP_HEADS = new Set([
  "sh",
  "bash",
  "python",
  "python3",
  "node",
  "deno",
  "ruby",
  "jq",
  "perl",
  "php",
  "lua",
  "Rscript",
  "osascript",
  "fish",
  "zsh",
]);

/** Options accepted by `parse`. */
export interface ParseOptions {
  /** REPL mode: `it`/`out` are bound and a leading `.` continues from `it`. */
  repl?: boolean;
  /** Names already bound as values in the session (pre-seed the root scope). */
  valueNames?: Iterable<string>;
  /** Names already bound as commands (fns, aliases) in the session. */
  commandNames?: Iterable<string>;
  /**
   * The session's bindings prebuilt by {@link bindingScope} (replaces `repl`'s names,
   * `valueNames` and `commandNames`): a session parsing many times reuses one map instead of
   * copying every bound name into each parse.
   */
  bindings?: ReadonlyMap<string, Binding>;
}

/** The parser's outermost scope for a session's bindings (see `ParseOptions.bindings`). */
export function bindingScope(
  opts: Pick<ParseOptions, "repl" | "valueNames" | "commandNames">,
): ReadonlyMap<string, Binding> {
  const root = new Map<string, Binding>();
  for (const n of ["path", "glob", "regex"]) root.set(n, "value");
  if (opts.repl) {
    root.set("it", "value");
    root.set("out", "value");
  }
  for (const n of opts.commandNames ?? []) root.set(n, "command");
  for (const n of opts.valueNames ?? []) root.set(n, "value");
  return root;
}

/** Mutable parser state; the grammar lives in the `parse_*.ts` modules. */
export class Parser {
  /** The source text. */
  readonly src: string;
  /** The modal lexer. */
  readonly lx: Lexer;
  /** REPL mode. */
  readonly repl: boolean;
  /** Cursor: the next unconsumed offset (may point at trivia). */
  pos = 0;
  /** End of the last consumed token. */
  last = 0;
  /** Current nesting depth. */
  depth = 0;
  /** Suppress trailing-block capture at this nesting level (headers of for/if/while/…). */
  noTrail = false;
  /** Statements parsed as command statements (dispatch rules 2, 6, 12, 13). */
  readonly commandStmts = new WeakSet<Stmt>();
  /** Lexical scopes, innermost last. */
  scopes: Map<string, Binding>[];
  /**
   * Inside an implicit item lambda (`.where(.a && !.b)`): the item's name, which every
   * further leading `.` of that argument refers to; null elsewhere.
   */
  implicitItem: string | null = null;

  private cache: [Token | null, Token | null] = [null, null];
  private cachePos: [number, number] = [-1, -1];
  private cacheLim: [number, number] = [-1, -1];

  /** Creates a parser over `src`. */
  constructor(src: string, opts: ParseOptions = {}) {
    this.src = src;
    this.lx = new Lexer(src);
    this.repl = opts.repl ?? false;
    // A prebuilt session scope is shared, never written: the program binds in its own root.
    this.scopes = opts.bindings
      ? [opts.bindings as Map<string, Binding>, new Map()]
      : [bindingScope(opts) as Map<string, Binding>];
  }

  // ---------------------------------------------------------------------------------------
  // Errors

  /** Builds a ParseError at `[s, e)`. */
  fail(msg: string, s: number, e: number = s, hint: string | null = null): ParseError {
    return new ParseError(msg, [s, Math.max(s, e)], hint);
  }

  /** `expected X, found <token>`. */
  expected(what: string, t: Token, hint: string | null = null): ParseError {
    return this.fail(`expected ${what}, found ${tokenName(t)}`, t.s, t.e, hint);
  }

  // ---------------------------------------------------------------------------------------
  // Tokens

  /** The EXPR-mode token at the cursor (not consumed). */
  peek(): Token {
    return this.peekMode(0);
  }

  /** The CMD-mode token at the cursor (not consumed). */
  peekC(): Token {
    return this.peekMode(1);
  }

  private peekMode(m: 0 | 1): Token {
    const lim = this.lx.lim;
    if (this.cachePos[m] === this.pos && this.cacheLim[m] === lim) return this.cache[m]!;
    const t = m === 0 ? this.lx.expr(this.pos) : this.lx.cmd(this.pos);
    this.cache[m] = t;
    this.cachePos[m] = this.pos;
    this.cacheLim[m] = lim;
    return t;
  }

  /** Consumes `t` (a token just peeked at the cursor). */
  take(t: Token): Token {
    this.pos = t.e;
    this.last = t.e;
    return t;
  }

  /** Consumes the next EXPR token, which must be of kind `k`. */
  expect(k: TK, what: string, hint: string | null = null): Token {
    const t = this.peek();
    if (t.k !== k) throw this.expected(what, t, hint);
    return this.take(t);
  }

  /** True when the next EXPR token is the identifier `word`. */
  atWord(word: string): boolean {
    const p = this.lx.skipTrivia(this.pos);
    const q = this.lx.identEnd(p);
    return q - p === word.length && this.src.startsWith(word, p);
  }

  /** Consumes an identifier token (any spelling) or fails with `what`. */
  ident(what: string): Token {
    return this.expect("Ident", what);
  }

  /** Moves the cursor past trivia and newlines. */
  skipNl(): void {
    this.pos = this.lx.skipTriviaNl(this.pos);
  }

  /** Moves the cursor past trivia, newlines and `;`. */
  skipTerms(): void {
    for (;;) {
      const p = this.lx.skipTrivia(this.pos);
      const c = this.lx.ch(p);
      if (c === 10 || c === 59) this.pos = p + 1;
      else {
        this.pos = p;
        return;
      }
    }
  }

  /** The char code of the next significant char on this line (after horizontal trivia). */
  nextChar(): number {
    return this.lx.ch(this.lx.skipTrivia(this.pos));
  }

  /** Offset of the next significant char on this line. */
  nextPos(): number {
    return this.lx.skipTrivia(this.pos);
  }

  /** The identifier starting exactly at `p`, or null. */
  identAt(p: number): string | null {
    const q = this.lx.identEnd(p);
    return q < 0 ? null : this.src.slice(p, q);
  }

  /** True when a path head (`/`, `~`, `~/`, `./`, `../`) starts at `p` (language §2 rule 2). */
  pathHeadAt(p: number): boolean {
    const lx = this.lx;
    const c = lx.ch(p);
    if (c === 47) return true;
    if (c === 126) {
      const n = lx.ch(p + 1);
      return n === 47 || n === -1 || n === 32 || n === 9 || n === 10 || n === 13 || n === 59 ||
        n === 41 || n === 125;
    }
    if (c === 46) {
      const n = lx.ch(p + 1);
      if (n === 47) return true;
      return n === 46 && lx.ch(p + 2) === 47;
    }
    return false;
  }

  // ---------------------------------------------------------------------------------------
  // Scopes

  /** Opens a lexical scope. */
  pushScope(): void {
    this.scopes.push(new Map());
  }

  /** Closes the innermost lexical scope. */
  popScope(): void {
    this.scopes.pop();
  }

  /** Binds `name` as a value in the innermost scope (`_` binds nothing). */
  bindValue(name: string): void {
    if (name !== "_") this.scopes[this.scopes.length - 1].set(name, "value");
  }

  /** Binds `name` as a command (fn, alias) in the innermost scope. */
  bindCommand(name: string): void {
    this.scopes[this.scopes.length - 1].set(name, "command");
  }

  /** True when the nearest binding of `name` is a value. */
  isValue(name: string): boolean {
    for (let i = this.scopes.length - 1; i >= 0; i--) {
      const b = this.scopes[i].get(name);
      if (b) return b === "value";
    }
    return false;
  }

  /** The REPL-only diagnostic for `it`/`out` in a script. */
  replOnly(name: string, s: number): ParseError {
    return this.fail(
      `\`${name}\` is REPL-only`,
      s,
      s + name.length,
      "`it` and `out` name the previous REPL result; in a script, bind the value with let",
    );
  }

  /** True for `it`/`out` that are not bound (script mode). */
  isReplOnlyName(name: string): boolean {
    return (name === "it" || name === "out") && !this.isValue(name);
  }

  // ---------------------------------------------------------------------------------------
  // Nesting

  /** Enters one nesting level; fails with «nesting too deep» past MAX_DEPTH. */
  enter(): void {
    if (++this.depth > MAX_DEPTH) {
      const p = this.nextPos();
      throw this.fail(
        "nesting too deep",
        p,
        p + 1,
        `expressions may nest at most ${MAX_DEPTH} levels; bind parts with let`,
      );
    }
  }

  /** Fails with «expression too long» once a chain passes MAX_CHAIN links. */
  chainLink(n: number, at: number): void {
    if (n > MAX_CHAIN) {
      throw this.fail(
        "expression too long",
        at,
        at + 1,
        `an operator or method chain may have at most ${MAX_CHAIN} links; bind parts with let`,
      );
    }
  }

  /** Leaves one nesting level. */
  leave(): void {
    this.depth--;
  }

  /** Runs `f` with trailing-block capture set to `noTrail`, restoring it afterwards. */
  withTrail<T>(noTrail: boolean, f: () => T): T {
    const saved = this.noTrail;
    this.noTrail = noTrail;
    try {
      return f();
    } finally {
      this.noTrail = saved;
    }
  }

  /** A span from `s` to the end of the last consumed token. */
  spanFrom(s: number): Span {
    return [s, Math.max(s, this.last)];
  }
}
