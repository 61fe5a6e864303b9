/**
 * Mechanical bash → Shoal translations for the idioms agents type: pipelines of the common
 * text filters, `$VAR`/`${VAR:-d}`/`$(…)`/backticks, `2>&1`, heredocs and here-strings,
 * `export`, `NAME=$(…)` and `for … do … done`. Each returns Shoal source, or null when the
 * bash has no faithful native form (the caller then offers only `sh { … }`).
 *
 * @module
 */

import { litText, type Part, type Redir, type Tok, tryTokens, type Word } from "./lex.ts";

/** What the translator may ask about the surrounding Shoal program. */
export interface Ctx {
  /** True when `name` is a Shoal value binding in scope (`$x` → `x`, else `env.x`). */
  bound(name: string): boolean;
}

// ---- literals -------------------------------------------------------------------------------

/** A Shoal string literal whose value is exactly `s`. */
export function strLit(s: string): string {
  if (!/[\\"{}\n\r\t\0]/.test(s)) return `"${s}"`;
  if (!/['\n\r]/.test(s)) return `'${s}'`;
  return `"${escapeInString(s)}"`;
}

function escapeInString(s: string): string {
  return s.replace(
    /[\\"{}\n\r\t\0]/g,
    (c) =>
      ({
        "\\": "\\\\",
        '"': '\\"',
        "{": "\\{",
        "}": "\\}",
        "\n": "\\n",
        "\r": "\\r",
        "\t": "\\t",
        "\0": "\\0",
      })[c]!,
  );
}

/**
 * A multi-line literal for a heredoc body: `'''…'''` when Shoal's dedent leaves it unchanged
 * (no common indentation, no `'''` inside), else an escaped one-line string.
 */
export function bodyLit(body: string): string {
  const lines = body.split("\n").filter((l) => l.trim() !== "");
  const indent = Math.min(...lines.map((l) => /^[ \t]*/.exec(l)![0].length), Infinity);
  if (body.endsWith("\n") && !body.includes("'''") && !body.includes("\r") && indent === 0) {
    return `'''\n${body}\n'''`;
  }
  return strLit(body);
}

const BARE = /^[\p{L}\p{N}_.,:@%+=\/~^-]+$/u;
const BARE_GLOB = /^[A-Za-z0-9_.\/*?\[\]~-]+$/;

/** A variable reference: a Shoal binding or an environment variable. */
function varExpr(p: Extract<Part, { k: "var" }>, ctx: Ctx): string {
  const base = ctx.bound(p.name) ? p.name : `env.${p.name}`;
  return p.def === null ? base : `(${base} catch ${strLit(p.def)})`;
}

/** `$(cmd)` as a value: the native expression of `cmd`, else its outcome's `.out`. */
function subExpr(src: string, ctx: Ctx): string | null {
  const seq = /^seq\s+(-?\d+)\s+(-?\d+)$/.exec(src);
  if (seq) return `${seq[1]}..=${seq[2]}`;
  const n = commandExpr(src, ctx);
  if (n === null) return null;
  return n.kind === "command" ? `(${n.text}).out` : n.text;
}

/** A bash word as a Shoal value (expression position), or null. */
export function valueExpr(w: Word, ctx: Ctx): string | null {
  if (w.parts.length === 0) return '""';
  if (w.parts.length === 1) {
    const p = w.parts[0];
    if (p.k === "lit") return strLit(p.s);
    if (p.k === "var") return varExpr(p, ctx);
    if (p.k === "sub") return subExpr(p.src, ctx);
    return null;
  }
  let out = '"';
  for (const p of w.parts) {
    if (p.k === "lit") out += escapeInString(p.s);
    else if (p.k === "var") out += `{${varExpr(p, ctx)}}`;
    else if (p.k === "sub") {
      const e = subExpr(p.src, ctx);
      if (e === null) return null;
      out += `{${e}}`;
    } else return null;
  }
  return out + '"';
}

/** A bash word as a Shoal command argument, or null. */
export function argText(w: Word, ctx: Ctx): string | null {
  const lit = litText(w);
  if (lit !== null) {
    if (w.glob && !w.quoted) return BARE_GLOB.test(lit) ? lit : null;
    if (BARE.test(lit) && !lit.startsWith("~") && !lit.startsWith("#")) return lit;
    if (!w.quoted && (lit === "~" || lit.startsWith("~/")) && BARE.test(lit)) return lit;
    return strLit(lit);
  }
  if (w.glob && !w.quoted) return null;
  const v = valueExpr(w, ctx);
  if (v === null) return null;
  return v.startsWith('"') ? v : `(${v})`;
}

// ---- commands -------------------------------------------------------------------------------

/** A translated command: run for its outcome (`command`) or a value (`value`). */
interface Native {
  kind: "command" | "value";
  text: string;
}

/** One pipeline stage: its words and redirects. */
interface Stage {
  words: Word[];
  redirs: Redir[];
}

/** Splits tokens into `|` stages; null when anything but `|` separates them. */
function stages(toks: Tok[]): Stage[] | null {
  const out: Stage[] = [{ words: [], redirs: [] }];
  for (const [i, t] of toks.entries()) {
    // The newline carrying a heredoc body (or ending the text) separates nothing.
    if (t.k === "op" && t.op === "\n" && (t.e > t.s + 1 || i === toks.length - 1)) continue;
    if (t.k === "op") {
      if (t.op !== "|") return null;
      out.push({ words: [], redirs: [] });
    } else if (t.k === "redir") out[out.length - 1].redirs.push(t);
    else out[out.length - 1].words.push(t);
  }
  return out.some((s) => s.words.length === 0) ? null : out;
}

/** stderr needs no plumbing in Shoal: an outcome keeps it apart (`.stderr`). */
function dropsStderr(r: Redir): boolean {
  if (r.op === "2>&1") return true;
  const t = r.target && litText(r.target);
  return (r.op === "2>" || r.op === "2>>") && t === "/dev/null";
}

/** A simple command (words + plain redirects) as Shoal command text, or null. */
function simpleCommand(st: Stage, ctx: Ctx): string | null {
  const head = litText(st.words[0]);
  if (head === null || !/^[A-Za-z0-9_.\/~+-]+$/.test(head)) return null;
  const parts = [head];
  for (const w of st.words.slice(1)) {
    const a = argText(w, ctx);
    if (a === null) return null;
    parts.push(a);
  }
  for (const r of st.redirs) {
    if (dropsStderr(r)) continue;
    const op = r.op === "1>" ? ">" : r.op === "1>>" ? ">>" : r.op;
    const devnull = r.target !== null && litText(r.target) === "/dev/null";
    if ((op === "&>" || op === "&>>") && devnull) {
      parts.push("> /dev/null");
      continue;
    }
    if (op !== ">" && op !== ">>" && op !== "<") return null;
    const t = argText(r.target!, ctx);
    if (t === null) return null;
    parts.push(`${op} ${t}`);
  }
  return parts.join(" ");
}

/** What a producer yields: lines of text, a table (`ls`), or one text. */
type Kind = "lines" | "table" | "text";

/** The first stage of a pipeline as a Shoal expression. */
function producer(st: Stage, ctx: Ctx): { text: string; kind: Kind; json?: string } | null {
  if (st.redirs.some((r) => !dropsStderr(r))) return null;
  const head = litText(st.words[0]);
  const args = st.words.slice(1);
  if (head === "cat" && args.length === 1 && litText(args[0]) !== null && !args[0].glob) {
    const f = litText(args[0])!;
    if (f.startsWith("-")) return null;
    return { text: `path(${strLit(f)}).lines()`, kind: "lines", json: `path(${strLit(f)}).read()` };
  }
  const cmd = simpleCommand({ words: st.words, redirs: [] }, ctx);
  if (cmd === null) return null;
  if (head === "ls") return { text: args.length ? `(${cmd})` : "ls", kind: "table" };
  if (head === "echo") return { text: `(${cmd}).out`, kind: "text" };
  return { text: `(${cmd}).stdout.lines()`, kind: "lines", json: `(${cmd}).out` };
}

/** A line count argument (`-3`, `-n 3`, `-n3`, `--lines=3`), or null. */
function countOf(words: string[]): number | null {
  if (words.length === 0) return 10;
  let m: RegExpExecArray | null;
  if (words.length === 1 && (m = /^-(?:n)?(\d+)$|^--lines=(\d+)$/.exec(words[0]))) {
    return Number(m[1] ?? m[2]);
  }
  if (words.length === 2 && words[0] === "-n" && /^\d+$/.test(words[1])) return Number(words[1]);
  return null;
}

const BRE_META = /[.*^$[\]\\]/;
const ERE_EXTRA = /[+?|(){}]/;

/** `grep [-v] [-i] [-c] [-F|-E] PAT` as a `.where(…)` (plus `.len()` for -c), or null. */
function grepStage(words: string[], kind: Kind): string | null {
  let invert = false, icase = false, count = false, fixed = false, ere = false;
  let pat: string | null = null;
  for (const w of words) {
    if (pat === null && /^-[vicFE]+$/.test(w)) {
      for (const c of w.slice(1)) {
        if (c === "v") invert = true;
        else if (c === "i") icase = true;
        else if (c === "c") count = true;
        else if (c === "F") fixed = true;
        else ere = true;
      }
    } else if (pat === null) pat = w;
    else return null; // a file operand: grep reads the file, not the pipe
  }
  if (pat === null) return null;
  const literal = fixed || (!BRE_META.test(pat) && (!ere || !ERE_EXTRA.test(pat)));
  let test: (x: string) => string;
  if (literal) {
    const needle = strLit(icase ? pat.toLowerCase() : pat);
    test = (x) => `${x}${icase ? ".lower()" : ""}.contains(${needle})`;
  } else {
    if (icase || pat.includes('"') || (!ere && ERE_EXTRA.test(pat)) || pat.includes("\\")) {
      return null;
    }
    test = (x) => `${x}.match(re"${pat}") != null`;
  }
  const field = kind === "table" ? ".name" : "";
  const where = invert ? `.where(l => !(${test(`l${field}`)}))` : `.where(${test(field)})`;
  return count ? `${where}.len()` : where;
}

/** A filter stage applied to a producer of `kind`; null when it has no native form. */
function filterStage(words: string[], kind: Kind, prev: string): string | null {
  const [head, ...rest] = words;
  switch (head) {
    case "head": {
      const n = countOf(rest);
      return n === null ? null : `.take(${n})`;
    }
    case "tail": {
      const n = countOf(rest);
      return n === null ? null : `.last(${n})`;
    }
    case "wc":
      return rest.length === 1 && rest[0] === "-l" ? ".len()" : null;
    case "grep":
      return grepStage(rest, kind);
    case "sort": {
      if (!rest.every((w) => /^-[ru]+$/.test(w))) return null;
      const flags = rest.join("");
      const key = kind === "table" ? ".sort_by(.name)" : ".sort()";
      return key + (flags.includes("r") ? ".reverse()" : "") +
        (flags.includes("u") ? ".uniq()" : "");
    }
    case "uniq":
      // Adjacent duplicates only: the same as .uniq() once sorted.
      return rest.length === 0 && prev.startsWith("sort") ? ".uniq()" : null;
  }
  return null;
}

/** `a | b | …` as a Shoal expression, or null. */
function pipeline(sts: Stage[], ctx: Ctx): string | null {
  const p = producer(sts[0], ctx);
  return p === null ? null : filtered(p, sts.slice(1));
}

/**
 * A Shoal expression `value` piped into shell filters (`rest`: `wc -l`, `head -3 | sort`…),
 * as one method chain — or null.
 */
export function valuePipeline(value: string, rest: string): string | null {
  const toks = tryTokens(rest);
  if (toks === null) return null;
  const sts = stages(toks);
  if (sts === null) return null;
  const kind: Kind = /^\(?ls\b/.test(value) ? "table" : "lines";
  return filtered({ text: value, kind }, sts);
}

function filtered(p: { text: string; kind: Kind; json?: string }, sts: Stage[]): string | null {
  const filters = sts.map((s) => s.words.map(litText));
  if (filters.some((f) => f.some((w) => w === null))) return null;
  const ws = filters as string[][];
  if (sts.some((s) => s.redirs.length > 0)) return null;
  // `… | jq .a.b` reads JSON: the value's own fields.
  if (ws.length === 1 && ws[0][0] === "jq" && p.json !== undefined) {
    const f = ws[0].filter((w) => w !== "-r" && w !== "-c");
    if (f.length === 2 && /^(\.[A-Za-z_][A-Za-z0-9_]*|\[\d+\])+$|^\.$/.test(f[1])) {
      const base = p.json.endsWith(".read()") ? `json.parse(${p.json})` : p.json;
      return f[1] === "." ? base : base + f[1].replace(/^\.\[/, "[");
    }
    return null;
  }
  let text = p.text;
  let kind = p.kind;
  if (kind === "text") {
    if (ws.length === 1 && ws[0].join(" ") === "wc -l") return `${text}.lines().len()`;
    if (ws.length === 1 && ws[0].join(" ") === "wc -w") return `${text}.words().len()`;
    text += ".lines()";
    kind = "lines";
  }
  let prev = "";
  for (const [i, w] of ws.entries()) {
    const f = filterStage(w, kind, prev);
    if (f === null) return null;
    if (f.endsWith(".len()") && i < ws.length - 1) return null; // a count is not lines
    text += f;
    prev = w[0];
  }
  return text;
}

/** A heredoc / here-string command, or null. */
function fedCommand(st: Stage, ctx: Ctx): string | null {
  const feeds = st.redirs.filter((r) => r.op === "<<" || r.op === "<<-" || r.op === "<<<");
  if (feeds.length !== 1) return null;
  const f = feeds[0];
  let value: string | null;
  if (f.op === "<<<") value = valueExpr(f.target!, ctx);
  else if (f.literal || !/[$`\\]/.test(f.body!)) value = bodyLit(f.body!);
  else return null; // an expanding heredoc body: only sh reproduces it
  if (value === null) return null;
  const others = st.redirs.filter((r) => r !== f && !dropsStderr(r));
  const head = litText(st.words[0]);
  if (head === "cat" && st.words.length === 1) {
    if (others.length === 0) return value;
    if (others.length === 1 && (others[0].op === ">" || others[0].op === ">>")) {
      const t = valueExpr(others[0].target!, ctx);
      if (t === null) return null;
      return `${value}.${others[0].op === ">" ? "save" : "append"}(${t})`;
    }
    return null;
  }
  if (others.length > 0) return null;
  const cmd = simpleCommand({ words: st.words, redirs: [] }, ctx);
  return cmd === null ? null : `${value}.feed(${cmd})`;
}

/** A command region (a pipeline or one command) as Shoal, or null. */
export function commandExpr(src: string, ctx: Ctx): Native | null {
  const toks = tryTokens(src);
  if (toks === null) return null;
  const sts = stages(toks);
  if (sts === null) return null;
  if (sts.length > 1) {
    const t = pipeline(sts, ctx);
    return t === null ? null : { kind: "value", text: t };
  }
  const fed = fedCommand(sts[0], ctx);
  if (fed !== null) return { kind: "value", text: fed };
  if (sts[0].redirs.some((r) => r.op.startsWith("<<"))) return null;
  const c = simpleCommand(sts[0], ctx);
  return c === null ? null : { kind: "command", text: c };
}

// ---- statements -----------------------------------------------------------------------------

/** `export A=1 B=$X` → `env.A = "1"; env.B = env.X`, or null. */
export function exportStmt(src: string, ctx: Ctx): string | null {
  const ws = wordsOnly(src);
  if (ws === null || ws.length < 2 || litText(ws[0]) !== "export") return null;
  const out: string[] = [];
  for (const w of ws.slice(1)) {
    const a = assignment(w, ctx);
    if (a === null) return null;
    out.push(`env.${a.name} = ${a.value}`);
  }
  return out.join("; ");
}

/** `NAME=value` (one word) → the name and the value as a Shoal expression. */
export function assignment(w: Word, ctx: Ctx): { name: string; value: string } | null {
  const first = w.parts[0];
  if (first?.k !== "lit") return null;
  const m = /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(first.s);
  if (!m) return null;
  const rest: Part[] = first.s.length > m[0].length
    ? [{ k: "lit", s: first.s.slice(m[0].length) }, ...w.parts.slice(1)]
    : w.parts.slice(1);
  const value = valueExpr({ ...w, parts: rest }, ctx);
  return value === null ? null : { name: m[1], value };
}

function wordsOnly(src: string): Word[] | null {
  const toks = tryTokens(src);
  return toks !== null && toks.every((t) => t.k === "word") ? (toks as Word[]) : null;
}

/** The list a `for` loop walks: literal words, one glob, `{a..b}` or `$(seq a b)`. */
function loopList(ws: Word[], ctx: Ctx): string | null {
  if (ws.length === 1) {
    const lit = litText(ws[0]);
    const brace = lit === null ? null : /^\{(-?\d+)\.\.(-?\d+)\}$/.exec(lit);
    if (brace) return `${brace[1]}..=${brace[2]}`;
    if (ws[0].glob && !ws[0].quoted && lit !== null) return `glob(${strLit(lit)})`;
    const p = ws[0].parts;
    if (p.length === 1 && p[0].k === "sub") {
      const seq = /^seq\s+(-?\d+)\s+(-?\d+)$/.exec(p[0].src);
      if (seq) return `${seq[1]}..=${seq[2]}`;
    }
  }
  const items: string[] = [];
  for (const w of ws) {
    if (w.glob && !w.quoted) return null;
    const v = valueExpr(w, ctx);
    if (v === null || w.parts.some((p) => p.k === "sub")) return null;
    items.push(v);
  }
  return `[${items.join(", ")}]`;
}

/** `for x in …; do …; done` → `for x in … { … }`, or null. */
export function forLoop(src: string, ctx: Ctx): string | null {
  const toks = tryTokens(src);
  if (toks === null) return null;
  const word = (i: number) => (toks[i]?.k === "word" ? litText(toks[i] as Word) : null);
  if (word(0) !== "for" || toks[1]?.k !== "word" || word(2) !== "in") return null;
  const name = word(1);
  if (name === null || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return null;
  let i = 3;
  const list: Word[] = [];
  while (toks[i]?.k === "word") list.push(toks[i++] as Word);
  const sep = (t: Tok | undefined) => t?.k === "op" && (t.op === ";" || t.op === "\n");
  if (!sep(toks[i])) return null;
  while (sep(toks[i])) i++;
  if (word(i) !== "do") return null;
  i++;
  let end = toks.length - 1;
  while (sep(toks[end])) end--;
  if (word(end) !== "done") return null;
  const inner: Ctx = { bound: (n) => n === name || ctx.bound(n) };
  const body: string[] = [];
  let cur: Tok[] = [];
  const flush = (): boolean => {
    if (cur.length === 0) return true;
    const text = src.slice(cur[0].s, cur[cur.length - 1].e);
    const n = commandExpr(text, inner);
    if (n === null) return false;
    body.push(n.text);
    cur = [];
    return true;
  };
  for (let j = i; j < end; j++) {
    if (sep(toks[j])) {
      if (!flush()) return null;
    } else cur.push(toks[j]);
  }
  if (!flush() || body.length === 0) return null;
  const items = loopList(list, ctx);
  if (items === null) return null;
  return body.length === 1
    ? `for ${name} in ${items} { ${body[0]} }`
    : `for ${name} in ${items} {\n${body.map((b) => "  " + b).join("\n")}\n}`;
}
