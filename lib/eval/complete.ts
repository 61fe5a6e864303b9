/**
 * Completion (protocol §4.4, D-35; subsystems §11): the one engine behind the kernel's
 * `complete` and the REPL's Tab. For the word left of a UTF-8 byte cursor it offers
 *
 * - after `.`: the receiver's methods (by its bound type, a literal's type, else every method),
 *   a namespace's functions (`json.`), environment variables (`env.`);
 * - a word that looks like a path (`./`, `../`, `~/`, `/`, or any `/`), or an argument of a
 *   command (`cat REA`): file names, directories with a trailing `/`;
 * - otherwise: keywords, builtins, namespaces, session bindings, names declared earlier in the
 *   source and, in command-head position, executables on PATH.
 *
 * Matching is by prefix, else (with `fuzzy`) by subsequence; case folds with
 * `caseInsensitive`. Every directory read is bounded, and PATH listings are cached by mtime.
 * The cursor is clamped to the source length and down to a character boundary, so no offset
 * can fail.
 *
 * @module
 */

import { RESERVED } from "../syntax/parser.ts";
import { BUILTIN_HEADS, CALL_FORMS } from "./builtins/registry.ts";
import { KNOWN_METHODS_BY_TYPE } from "./methods/mod.ts";
import { namespaceNames, namespaceTable } from "./namespaces/mod.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Words the upstream completer always offers besides keywords and builtins. */
const EXTRA_WORDS = ["true", "false", "null", "spawn", "with", "sh", "parallel", "pick"];

/** Most directory entries looked at per completion (a huge directory costs O(bound)). */
export const DIR_SCAN_LIMIT = 10_000;

/** What completion may look at beyond the source. */
export interface CompletionContext {
  /** Root bindings → type names (null: none known; names declared in the source still count). */
  names: Record<string, string> | null;
  /** The session cwd (absolute): enables path completion. */
  cwd?: string;
  /** The session environment: `env.` members, `HOME` for `~`, `PATH` executables. */
  env?: Record<string, string> | Map<string, string>;
  /** Subsequence matches after prefix matches (default false: the kernel's plain contract). */
  fuzzy?: boolean;
  /** Case-insensitive matching (default false). */
  caseInsensitive?: boolean;
  /** Most candidates returned (default 100). */
  maxResults?: number;
}

/** Candidates for the text between byte offset `from` and the cursor. */
export interface Completion {
  /** Byte offset where the replaced word starts. */
  from: number;
  candidates: string[];
  /** What they are: file names (an editor adds a space after a file), methods/members, words. */
  kind?: "path" | "member" | "word";
}

let staticWords: string[] | null = null;

function wordList(): string[] {
  staticWords ??= [
    ...new Set([
      ...RESERVED,
      ...EXTRA_WORDS,
      ...BUILTIN_HEADS,
      ...CALL_FORMS.keys(),
      ...namespaceNames(),
    ]),
  ];
  return staticWords;
}

let allMethods: string[] | null = null;

function methodsFor(type: string | undefined): readonly string[] {
  const known = type === undefined
    ? undefined
    : KNOWN_METHODS_BY_TYPE[type as keyof typeof KNOWN_METHODS_BY_TYPE];
  if (known) return known;
  allMethods ??= [...new Set(Object.values(KNOWN_METHODS_BY_TYPE).flat())] as string[];
  return allMethods;
}

/** The source text left of a byte cursor, clamped to a character boundary. */
export function prefixAtByte(src: string, cursor: number | undefined): string {
  const bytes = enc.encode(src);
  let b = cursor === undefined ? bytes.length : Math.max(0, Math.min(cursor, bytes.length));
  while (b > 0 && b < bytes.length && (bytes[b] & 0xc0) === 0x80) b--;
  return dec.decode(bytes.subarray(0, b));
}

function envGet(ctx: CompletionContext, name: string): string | undefined {
  const e = ctx.env;
  if (e === undefined) return undefined;
  return e instanceof Map ? e.get(name) : e[name];
}

function envKeys(ctx: CompletionContext): string[] {
  const e = ctx.env;
  if (e === undefined) return [];
  return e instanceof Map ? [...e.keys()] : Object.keys(e);
}

/** Rank `pool` against `word`: prefix matches (sorted), else subsequence matches. */
export function rankCandidates(
  pool: Iterable<string>,
  word: string,
  opts: { fuzzy?: boolean; caseInsensitive?: boolean; maxResults?: number } = {},
): string[] {
  const fold = opts.caseInsensitive ? (s: string) => s.toLowerCase() : (s: string) => s;
  const w = fold(word);
  const prefix = new Set<string>();
  const fuzzy = new Set<string>();
  for (const c of pool) {
    const f = fold(c);
    if (f.startsWith(w)) prefix.add(c);
    else if (opts.fuzzy && w.length > 0 && isSubsequence(w, f)) fuzzy.add(c);
  }
  // Subsequence matches only when nothing starts with the word: Tab stays predictable.
  const out = prefix.size > 0 ? [...prefix].sort() : [...fuzzy].sort();
  return out.slice(0, opts.maxResults ?? 100);
}

function isSubsequence(needle: string, hay: string): boolean {
  let i = 0;
  for (let j = 0; j < hay.length && i < needle.length; j++) if (hay[j] === needle[i]) i++;
  return i === needle.length;
}

/** Byte length of a string. */
function byteLen(s: string): number {
  return enc.encode(s).length;
}

/** Keywords that start a statement rather than run a command (`let x = …`). */
const NOT_COMMANDS = new Set([...RESERVED, "true", "false", "null", "spawn", "with"]);

/** The current token left of the cursor (from the last separator) and what precedes it. */
function splitToken(left: string): { token: string; before: string } {
  const m = /[^\s()[\]{},;|&=<>"'`]*$/.exec(left)!;
  return { token: m[0], before: left.slice(0, left.length - m[0].length) };
}

/** True when the token is an argument of a command (`cat REA`), not an expression. */
function isCommandArgument(before: string): boolean {
  const stmt = /(?:^|[\n;{(])([^\n;{(]*)$/.exec(before)![1];
  const m = /^\s*([A-Za-z_.~/][^\s=(]*)\s+(?:\S+\s+)*$/.exec(stmt);
  if (!m) return false;
  const head = m[1];
  return !NOT_COMMANDS.has(head) && !/[.][A-Za-z_]/.test(head.replace(/^\.\.?\//, ""));
}

/** True in command-head position: the token starts a statement. */
function isHeadPosition(before: string): boolean {
  return /(?:^|[\n;{(]|&&|\|\|)\s*$/.test(before);
}

/** Directory entries (bounded): names and whether each is a directory. */
function listDir(dir: string): { name: string; dir: boolean }[] {
  const out: { name: string; dir: boolean }[] = [];
  try {
    for (const e of Deno.readDirSync(dir)) {
      let isDir = e.isDirectory;
      if (e.isSymlink) {
        try {
          isDir = Deno.statSync(`${dir}/${e.name}`).isDirectory;
        } catch { /* dangling */ }
      }
      out.push({ name: e.name, dir: isDir });
      if (out.length >= DIR_SCAN_LIMIT) break;
    }
  } catch { /* unreadable or missing: no candidates */ }
  return out;
}

/** Path candidates for `token` (the full token text, directories ending in `/`). */
function pathCandidates(token: string, ctx: CompletionContext): string[] {
  const slash = token.lastIndexOf("/");
  const dirPart = slash < 0 ? "" : token.slice(0, slash + 1);
  const namePart = token.slice(slash + 1);
  let dir = dirPart === "" ? "." : dirPart;
  if (dir === "~/" || dir.startsWith("~/")) dir = (envGet(ctx, "HOME") ?? "/") + dir.slice(1);
  if (!dir.startsWith("/")) dir = `${ctx.cwd}/${dir}`;
  const names: string[] = [];
  for (const e of listDir(dir)) {
    // Dot files only when asked for, like every shell.
    if (e.name.startsWith(".") && !namePart.startsWith(".")) continue;
    names.push(e.name + (e.dir ? "/" : ""));
  }
  return rankCandidates(names, namePart, ctx).map((n) => dirPart + n);
}

const pathCache = new Map<string, { mtime: number; names: string[] }>();

/** Executables in the PATH directories (each listing cached until its mtime changes). */
function pathExecutables(ctx: CompletionContext): string[] {
  const path = envGet(ctx, "PATH") ?? "";
  const out: string[] = [];
  for (const dir of path.split(":")) {
    if (dir === "" || !dir.startsWith("/")) continue;
    let mtime: number;
    try {
      mtime = Deno.statSync(dir).mtime?.getTime() ?? 0;
    } catch {
      continue;
    }
    let hit = pathCache.get(dir);
    if (hit === undefined || hit.mtime !== mtime) {
      const names: string[] = [];
      for (const e of listDir(dir)) {
        if (e.dir) continue;
        try {
          if ((Deno.statSync(`${dir}/${e.name}`).mode ?? 0) & 0o111) names.push(e.name);
        } catch { /* dangling */ }
      }
      hit = { mtime, names };
      if (pathCache.size > 256) pathCache.clear();
      pathCache.set(dir, hit);
    }
    out.push(...hit.names);
  }
  return out;
}

/** The receiver's type left of a `.`: a bound name's type, or a literal's. */
function receiverType(before: string, names: Record<string, string> | null): string | undefined {
  const id = /([A-Za-z_][A-Za-z0-9_]*)\.$/.exec(before)?.[1];
  if (id !== undefined) return names?.[id];
  if (/["']\.$/.test(before)) return "str";
  if (/\]\.$/.test(before)) return "list";
  if (/\d\.$/.test(before)) return "int";
  return undefined;
}

/** Completion candidates and the span they replace. */
export function completeAt(
  src: string,
  cursor: number | undefined,
  ctx: CompletionContext,
): Completion {
  const left = prefixAtByte(src, cursor);
  const leftBytes = byteLen(left);
  const { token, before } = splitToken(left);
  const names = ctx.names;
  // Paths: a token with a slash or a leading ~, or any argument of a command.
  const pathy = token.includes("/") || token.startsWith("~");
  if (
    ctx.cwd !== undefined &&
    (pathy || (isCommandArgument(before) && !token.startsWith("-")))
  ) {
    return {
      from: leftBytes - byteLen(token),
      candidates: pathCandidates(token, ctx),
      kind: "path",
    };
  }
  const word = /[A-Za-z0-9_]*$/.exec(left)![0];
  const wbefore = left.slice(0, left.length - word.length);
  const from = leftBytes - byteLen(word);
  let pool: Iterable<string>;
  if (wbefore.endsWith(".")) {
    const recv = /([A-Za-z_][A-Za-z0-9_]*)\.$/.exec(wbefore)?.[1];
    const bound = recv !== undefined && names !== null && recv in names;
    if (recv === "env" && !bound) pool = envKeys(ctx);
    else if (recv !== undefined && !bound && namespaceTable(recv) !== undefined) {
      pool = namespaceTable(recv)!.functions.keys();
    } else pool = methodsFor(receiverType(wbefore, names));
    return { from, candidates: rankCandidates(pool, word, ctx), kind: "member" };
  }
  const declared = [...left.matchAll(/\b(?:let|var|fn|alias)\s+([A-Za-z_][A-Za-z0-9_]*)/g)]
    .map((m) => m[1]);
  const words = [...wordList(), ...declared, ...(names ? Object.keys(names) : [])];
  if (ctx.cwd !== undefined && isHeadPosition(wbefore) && word !== "") {
    words.push(...pathExecutables(ctx));
  }
  return { from, candidates: rankCandidates(words, word, ctx), kind: "word" };
}

/**
 * The kernel's plain contract: candidates only, prefix matches, no filesystem (before attach,
 * or for a caller that passes no cwd).
 */
export function complete(
  src: string,
  cursor: number | undefined,
  names: Record<string, string> | null,
): string[] {
  return completeAt(src, cursor, { names, maxResults: Infinity }).candidates;
}
