/**
 * UTF-16 → UTF-8 offset conversion. The lexer and parser work on JS string indices; the AST
 * and diagnostics carry UTF-8 byte offsets. All-ASCII sources (the common case) need nothing.
 */

import type { Span } from "./ast.ts";

const NON_ASCII = /[\u0080-\uffff]/;

/** A table mapping every UTF-16 index (0..length) to its UTF-8 byte offset, or null if ASCII. */
export function byteOffsets(src: string): Int32Array | null {
  if (!NON_ASCII.test(src)) return null;
  const n = src.length;
  const map = new Int32Array(n + 1);
  let b = 0;
  for (let i = 0; i < n; i++) {
    map[i] = b;
    const c = src.charCodeAt(i);
    if (c < 0x80) b += 1;
    else if (c < 0x800) b += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
      const d = src.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        map[i + 1] = b; // inside a pair: snap to the character start
        b += 4;
        i++;
      } else b += 3; // lone surrogate (encoded as U+FFFD)
    } else b += 3;
  }
  map[n] = b;
  return map;
}

/** Converts one span through `map`. */
export function convertSpan(map: Int32Array, s: Span): Span {
  const last = map.length - 1;
  return [map[Math.min(Math.max(s[0], 0), last)], map[Math.min(Math.max(s[1], 0), last)]];
}

/** Rewrites every `span`/`headSpan` in a parsed tree from UTF-16 to UTF-8 offsets, in place. */
export function convertTree(map: Int32Array, root: unknown): void {
  // iterative: left-nested operator chains can be far deeper than the JS stack
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== "object") continue;
    if (Array.isArray(v)) {
      for (const x of v) stack.push(x);
      continue;
    }
    const o = v as Record<string, unknown>;
    for (const k in o) {
      const x = o[k];
      if ((k === "span" || k === "headSpan") && Array.isArray(x)) {
        o[k] = convertSpan(map, x as Span);
      } else if (x !== null && typeof x === "object") stack.push(x);
    }
  }
}
