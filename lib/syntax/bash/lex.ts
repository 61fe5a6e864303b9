/**
 * Just enough of a POSIX-shell lexer to rewrite bash-shaped source an agent typed: words (with
 * quotes, `$NAME`, `${NAME:-d}`, `$(…)`, backticks, globs), operators, redirects (heredoc
 * bodies included) and where a shell statement ends. It never executes or expands anything.
 *
 * @module
 */

/** One piece of a word after quote removal. */
export type Part =
  | { k: "lit"; s: string }
  /** `$NAME`, `${NAME}`, `${NAME:-default}` (a literal default). */
  | { k: "var"; name: string; def: string | null }
  /** `$(…)` or `` `…` ``: the inner source. */
  | { k: "sub"; src: string }
  /** Anything with no mechanical Shoal form: `$1`, `$@`, `$?`, `${x#y}`, `$((…))`. */
  | { k: "other"; raw: string };

/** A shell word. */
export interface Word {
  k: "word";
  parts: Part[];
  /** Unquoted `*`, `?` or `[`: the word is a glob. */
  glob: boolean;
  /** Any quoting at all (a quoted word is never a glob or keyword). */
  quoted: boolean;
  s: number;
  e: number;
}

/** A control operator: `| || && ; ;; & |& ( )` or a newline. */
export interface Op {
  k: "op";
  op: string;
  s: number;
  e: number;
}

/** A redirect: `> >> < 2> 2>> 2>&1 >&2 &> &>> <<< << <<-` (fd digits kept in `op`). */
export interface Redir {
  k: "redir";
  op: string;
  s: number;
  e: number;
  /** The target word (a heredoc's delimiter word). */
  target: Word | null;
  /** A heredoc's body (every line up to the delimiter line, each ending in `\n`). */
  body?: string;
  /** The heredoc delimiter was quoted: its body is literal. */
  literal?: boolean;
}

/** A shell token. */
export type Tok = Word | Op | Redir;

const META = new Set([" ", "\t", "\n", "|", "&", ";", "(", ")", "<", ">"]);

/** The plain text of a word whose parts are all literal, else null. */
export function litText(w: Word): string | null {
  let s = "";
  for (const p of w.parts) {
    if (p.k !== "lit") return null;
    s += p.s;
  }
  return s;
}

/** Index just past the `)` closing a `$(` whose `(` is at `i - 1`, or -1. */
function closeParen(src: string, i: number, end: number): number {
  let depth = 1;
  while (i < end) {
    const c = src[i];
    if (c === "\\") i += 2;
    else if (c === "'") {
      const q = src.indexOf("'", i + 1);
      if (q < 0 || q >= end) return -1;
      i = q + 1;
    } else if (c === '"') {
      i++;
      while (i < end && src[i] !== '"') i += src[i] === "\\" ? 2 : 1;
      i++;
    } else {
      if (c === "(") depth++;
      else if (c === ")" && --depth === 0) return i + 1;
      i++;
    }
  }
  return -1;
}

/** A tokenizer over `src[start, end)`. Throws `BashSyntax` on input it cannot follow. */
export class BashLexer {
  i: number;
  /** Heredocs whose bodies start after the next newline. */
  private pending: Redir[] = [];

  constructor(readonly src: string, start: number, readonly end = src.length) {
    this.i = start;
  }

  /** The next token, or null at the end. */
  next(): Tok | null {
    const src = this.src;
    for (;;) {
      while (this.i < this.end && (src[this.i] === " " || src[this.i] === "\t")) this.i++;
      if (src.startsWith("\\\n", this.i)) this.i += 2;
      else if (src[this.i] === "#") {
        while (this.i < this.end && src[this.i] !== "\n") this.i++;
      } else break;
    }
    if (this.i >= this.end) return null;
    const s = this.i;
    const c = src[s];
    const two = src.slice(s, s + 2);
    if (c === "\n") {
      this.i++;
      this.bodies();
      return { k: "op", op: "\n", s, e: this.i };
    }
    for (const op of ["||", "&&", ";;", "|&", "|", ";", "(", ")"]) {
      if (src.startsWith(op, s)) {
        this.i += op.length;
        return { k: "op", op, s, e: this.i };
      }
    }
    if (two === "&>") {
      const op = src[s + 2] === ">" ? "&>>" : "&>";
      this.i += op.length;
      return this.redir(op, s);
    }
    if (c === "&") {
      this.i++;
      return { k: "op", op: "&", s, e: this.i };
    }
    const fd = /^[0-9]*(?:<<<|<<-|<<|>>|>&[0-9-]|<&[0-9-]|>\||<>|>|<)/.exec(src.slice(s, s + 8));
    if (fd && (fd[0][0] === "<" || fd[0][0] === ">" || /^[0-9]+[<>]/.test(fd[0]))) {
      this.i += fd[0].length;
      return this.redir(fd[0], s);
    }
    return this.word();
  }

  private redir(op: string, s: number): Redir {
    if (op.endsWith("&1") || op.endsWith("&2") || op.endsWith("&-")) {
      return { k: "redir", op, s, e: this.i, target: null };
    }
    while (this.i < this.end && (this.src[this.i] === " " || this.src[this.i] === "\t")) this.i++;
    const t = this.i < this.end && !META.has(this.src[this.i]) ? this.word() : null;
    if (t === null) throw new BashSyntax(`\`${op}\` has no target`);
    const r: Redir = { k: "redir", op, s, e: this.i, target: t };
    if (op === "<<" || op === "<<-") {
      r.literal = t.quoted;
      this.pending.push(r);
    }
    return r;
  }

  /** Reads the bodies of pending heredocs (the cursor is just past a newline). */
  private bodies(): void {
    for (const r of this.pending) {
      const delim = litText(r.target!);
      if (delim === null) throw new BashSyntax("a heredoc delimiter must be literal");
      let body = "";
      for (;;) {
        if (this.i >= this.end) throw new BashSyntax(`heredoc \`${delim}\` is not closed`);
        let nl = this.src.indexOf("\n", this.i);
        if (nl < 0 || nl >= this.end) nl = this.end;
        let line = this.src.slice(this.i, nl);
        this.i = Math.min(nl + 1, this.end);
        if (r.op === "<<-") line = line.replace(/^\t+/, "");
        if (line === delim) break;
        body += line + "\n";
      }
      r.body = body;
      r.e = this.i;
    }
    this.pending = [];
  }

  /** True when heredoc bodies are still owed (the statement continues on later lines). */
  get owesBodies(): boolean {
    return this.pending.length > 0;
  }

  private word(): Word {
    const src = this.src, end = this.end;
    const s = this.i;
    const parts: Part[] = [];
    let lit = "";
    let glob = false, quoted = false;
    const flush = () => {
      if (lit !== "") parts.push({ k: "lit", s: lit });
      lit = "";
    };
    const dollar = (inQuotes: boolean) => {
      const i = this.i;
      const n = src[i + 1] ?? "";
      if (n === "(") {
        if (src[i + 2] === "(") {
          const q = closeParen(src, i + 3, end);
          if (q < 0) throw new BashSyntax("unclosed `$((`");
          flush();
          parts.push({ k: "other", raw: src.slice(i, q + 1) });
          this.i = q + 1;
          return;
        }
        const q = closeParen(src, i + 2, end);
        if (q < 0) throw new BashSyntax("unclosed `$(`");
        flush();
        parts.push({ k: "sub", src: src.slice(i + 2, q - 1).trim() });
        this.i = q;
      } else if (n === "{") {
        const q = src.indexOf("}", i + 2);
        if (q < 0 || q >= end) throw new BashSyntax("unclosed `${`");
        const inner = src.slice(i + 2, q);
        const m = /^([A-Za-z_][A-Za-z0-9_]*)(?::-([^$`"'\\{}]*))?$/.exec(inner);
        flush();
        parts.push(
          m
            ? { k: "var", name: m[1], def: m[2] ?? null }
            : { k: "other", raw: src.slice(i, q + 1) },
        );
        this.i = q + 1;
      } else if (/[A-Za-z_]/.test(n)) {
        let q = i + 1;
        while (q < end && /[A-Za-z0-9_]/.test(src[q])) q++;
        flush();
        parts.push({ k: "var", name: src.slice(i + 1, q), def: null });
        this.i = q;
      } else if (/[0-9@*#?$!-]/.test(n) && n !== "") {
        flush();
        parts.push({ k: "other", raw: "$" + n });
        this.i = i + 2;
      } else {
        lit += "$";
        this.i = i + 1;
      }
      void inQuotes;
    };
    const backtick = () => {
      const q = src.indexOf("`", this.i + 1);
      if (q < 0 || q >= end) throw new BashSyntax("unclosed backtick");
      flush();
      parts.push({ k: "sub", src: src.slice(this.i + 1, q).trim() });
      this.i = q + 1;
    };
    while (this.i < end) {
      const c = src[this.i];
      if (META.has(c)) break;
      if (c === "\\") {
        if (this.i + 1 < end && src[this.i + 1] !== "\n") lit += src[this.i + 1];
        quoted = true;
        this.i += 2;
      } else if (c === "'") {
        const q = src.indexOf("'", this.i + 1);
        if (q < 0 || q >= end) throw new BashSyntax("unclosed `'`");
        lit += src.slice(this.i + 1, q);
        quoted = true;
        this.i = q + 1;
      } else if (c === '"') {
        quoted = true;
        this.i++;
        for (;;) {
          if (this.i >= end) throw new BashSyntax('unclosed `"`');
          const d = src[this.i];
          if (d === '"') break;
          if (d === "\\" && /[$`"\\\n]/.test(src[this.i + 1] ?? "")) {
            if (src[this.i + 1] !== "\n") lit += src[this.i + 1];
            this.i += 2;
          } else if (d === "$") dollar(true);
          else if (d === "`") backtick();
          else {
            lit += d;
            this.i++;
          }
        }
        this.i++;
      } else if (c === "$") dollar(false);
      else if (c === "`") backtick();
      else {
        if (c === "*" || c === "?" || c === "[") glob = true;
        lit += c;
        this.i++;
      }
    }
    flush();
    return { k: "word", parts, glob, quoted, s, e: this.i };
  }
}

/** Input the rewriter cannot follow as shell (the rewrite is then simply not offered). */
export class BashSyntax extends Error {}

const OPENERS: Record<string, string> = {
  for: "done",
  while: "done",
  until: "done",
  select: "done",
  if: "fi",
  case: "esac",
};

/**
 * Where the shell statement starting at `start` ends: the first newline, `;` or `&` outside
 * any compound command (`for … done`, `if … fi`, `( … )`, `{ … }`) and after any heredoc
 * bodies, or an unmatched `)`/`}` (the Shoal construct around it). `&&`/`||` chains stay in.
 */
export function statementEnd(src: string, start: number): number {
  const lx = new BashLexer(src, start);
  const stack: string[] = [];
  let atCmd = true;
  for (;;) {
    const t = lx.next();
    if (t === null) return src.length;
    if (t.k === "op") {
      if (t.op === "(") stack.push(")");
      else if (t.op === ")") {
        if (stack[stack.length - 1] !== ")") return t.s;
        stack.pop();
      } else if ((t.op === "\n" || t.op === ";" || t.op === "&") && stack.length === 0) {
        // A heredoc's body lines (read with the newline) belong to its statement.
        if (t.op === "\n" && t.e > t.s + 1) return src[t.e - 1] === "\n" ? t.e - 1 : t.e;
        return t.op === "&" ? t.e : t.s;
      }
      atCmd = t.op !== ")";
      continue;
    }
    if (t.k === "word") {
      const text = t.quoted ? null : litText(t);
      if (text === "}") {
        if (stack[stack.length - 1] !== "}") return t.s;
        stack.pop();
      } else if (atCmd && text !== null) {
        if (text === "{") stack.push("}");
        else if (OPENERS[text]) stack.push(OPENERS[text]);
        else if (text === stack[stack.length - 1]) stack.pop();
      }
      atCmd = atCmd && text !== null &&
        ["do", "then", "else", "elif", "{", "!", "time"].includes(text);
      continue;
    }
    atCmd = false;
  }
}

/** Every token of `src[start, end)`. */
export function tokens(src: string, start = 0, end = src.length): Tok[] {
  const lx = new BashLexer(src, start, end);
  const out: Tok[] = [];
  for (let t = lx.next(); t !== null; t = lx.next()) out.push(t);
  if (lx.owesBodies) throw new BashSyntax("a heredoc is not closed");
  return out;
}

/** Every token of `src`, or null when it is not shell the lexer can follow. */
export function tryTokens(src: string): Tok[] | null {
  try {
    return tokens(src);
  } catch (e) {
    if (e instanceof BashSyntax) return null;
    throw e;
  }
}
