/**
 * `complete` (protocol §4.4, D-35): candidates for the word left of a UTF-8 byte cursor —
 * keywords, builtins, namespaces and session bindings, or methods after a `.`. The cursor is
 * clamped to the source length and down to a character boundary, so no offset can fail.
 */

import { RESERVED } from "../syntax/parser.ts";
import { BUILTIN_HEADS, CALL_FORMS } from "../eval/builtins/registry.ts";
import { KNOWN_METHODS_BY_TYPE } from "../eval/methods/mod.ts";
import { namespaceNames } from "../eval/namespaces/mod.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Words the upstream completer always offers besides keywords and builtins. */
const EXTRA_WORDS = ["true", "false", "null", "spawn", "with", "sh", "parallel", "pick"];

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

/**
 * Completion candidates. `names` maps the attached session's root bindings to their type
 * names (null before attach: only the static words and names declared in `src` count).
 */
export function complete(
  src: string,
  cursor: number | undefined,
  names: Record<string, string> | null,
): string[] {
  const left = prefixAtByte(src, cursor);
  const word = /[A-Za-z0-9_]*$/.exec(left)![0];
  const before = left.slice(0, left.length - word.length);
  let pool: Iterable<string>;
  if (before.endsWith(".")) {
    const recv = /([A-Za-z_][A-Za-z0-9_]*)\.$/.exec(before)?.[1];
    pool = methodsFor(recv !== undefined && names ? names[recv] : undefined);
  } else {
    const declared = [...left.matchAll(/\b(?:let|var|fn|alias)\s+([A-Za-z_][A-Za-z0-9_]*)/g)]
      .map((m) => m[1]);
    pool = [...wordList(), ...declared, ...(names ? Object.keys(names) : [])];
  }
  const out = new Set<string>();
  for (const w of pool) if (w.startsWith(word)) out.add(w);
  return [...out].sort();
}
