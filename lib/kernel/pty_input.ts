/**
 * `pty.send` input (protocol §12): a string (UTF-8 verbatim), `{key: NAME}`, `{text}`,
 * `{bytes: base64}`, or an array of those, nested to any depth — decoded to the bytes a
 * terminal would send. Named keys follow xterm in normal cursor mode (`ESC [ A` for Up);
 * names are case-insensitive. Anything else is a `-32602` that says what was wrong where.
 *
 * @module
 */

import { invalid } from "./methods/params.ts";

const ESC = "\x1b";

/** Named keys → bytes (lower-case names; aliases included). */
const KEYS: ReadonlyMap<string, string> = new Map([
  ...["enter", "return", "cr"].map((k) => [k, "\r"] as const),
  ...["newline", "lf"].map((k) => [k, "\n"] as const),
  ["tab", "\t"],
  ...["backtab", "shift-tab"].map((k) => [k, `${ESC}[Z`] as const),
  ...["escape", "esc"].map((k) => [k, ESC] as const),
  ...["backspace", "bs"].map((k) => [k, "\x7f"] as const),
  ...["delete", "del"].map((k) => [k, `${ESC}[3~`] as const),
  ["space", " "],
  ["up", `${ESC}[A`],
  ["down", `${ESC}[B`],
  ["right", `${ESC}[C`],
  ["left", `${ESC}[D`],
  ["home", `${ESC}[H`],
  ["end", `${ESC}[F`],
  ...["pageup", "pgup"].map((k) => [k, `${ESC}[5~`] as const),
  ...["pagedown", "pgdn"].map((k) => [k, `${ESC}[6~`] as const),
  ...["insert", "ins"].map((k) => [k, `${ESC}[2~`] as const),
  ["f1", `${ESC}OP`],
  ["f2", `${ESC}OQ`],
  ["f3", `${ESC}OR`],
  ["f4", `${ESC}OS`],
  ["f5", `${ESC}[15~`],
  ["f6", `${ESC}[17~`],
  ["f7", `${ESC}[18~`],
  ["f8", `${ESC}[19~`],
  ["f9", `${ESC}[20~`],
  ["f10", `${ESC}[21~`],
  ["f11", `${ESC}[23~`],
  ["f12", `${ESC}[24~`],
]);

/** `Ctrl-` + these → their control codes (letters are handled separately). */
const CTRL_SYMBOLS: ReadonlyMap<string, number> = new Map([
  ["space", 0x00],
  ["@", 0x00],
  ["[", 0x1b],
  ["\\", 0x1c],
  ["]", 0x1d],
  ["^", 0x1e],
  ["_", 0x1f],
  ["?", 0x7f],
]);

/** Every key name, for error messages and tool descriptions. */
export const KEY_NAMES =
  "Enter, Tab, BackTab, Escape, Backspace, Delete, Space, Up, Down, Left, Right, Home, End, " +
  "PageUp, PageDown, Insert, F1–F12, Newline, Ctrl-A…Ctrl-Z (also Ctrl-Space, Ctrl-[ \\ ] ^ _ ?)";

/** The bytes of key `name`, or null when there is no such key. */
export function keyBytes(name: string): string | null {
  const k = name.toLowerCase();
  const named = KEYS.get(k);
  if (named !== undefined) return named;
  const m = /^(?:ctrl-|c-)(.+)$/.exec(k);
  if (m === null) return null;
  const rest = m[1];
  if (/^[a-z]$/.test(rest)) return String.fromCharCode(rest.charCodeAt(0) - 0x60);
  const sym = CTRL_SYMBOLS.get(rest);
  return sym === undefined ? null : String.fromCharCode(sym);
}

/** Most bytes one `pty.send` may carry. */
export const MAX_SEND_BYTES = 1 << 20;
const MAX_DEPTH = 32;

const utf8 = new TextEncoder();

/** Decode `pty.send` input to bytes. Throws `-32602` naming the offending element. */
export function decodeInput(input: unknown): Uint8Array {
  const parts: Uint8Array[] = [];
  let total = 0;
  const add = (b: Uint8Array) => {
    total += b.length;
    if (total > MAX_SEND_BYTES) {
      throw invalid(`input exceeds ${MAX_SEND_BYTES} bytes; send it in parts`, {
        limit: MAX_SEND_BYTES,
      });
    }
    parts.push(b);
  };
  const walk = (x: unknown, at: string, depth: number) => {
    if (depth > MAX_DEPTH) throw invalid(`input is nested deeper than ${MAX_DEPTH} at ${at}`);
    if (typeof x === "string") return add(utf8.encode(x));
    if (Array.isArray(x)) {
      x.forEach((item, i) => walk(item, `${at}[${i}]`, depth + 1));
      return;
    }
    if (x === null || typeof x !== "object") {
      throw invalid(
        `input ${at} must be a string, {key}, {text}, {bytes} or an array, got ${
          x === null ? "null" : typeof x
        }`,
      );
    }
    const o = x as Record<string, unknown>;
    const kinds = ["key", "text", "bytes"].filter((k) => k in o);
    if (kinds.length !== 1) {
      throw invalid(`input ${at} must have exactly one of key, text or bytes`);
    }
    const v = o[kinds[0]];
    if (typeof v !== "string") throw invalid(`input ${at}.${kinds[0]} must be a string`);
    if (kinds[0] === "text") return add(utf8.encode(v));
    if (kinds[0] === "key") {
      const b = keyBytes(v);
      if (b === null) {
        throw invalid(`unknown key ${JSON.stringify(v)} at ${at}; keys: ${KEY_NAMES}`, {
          key: v,
        });
      }
      return add(utf8.encode(b));
    }
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(v) || v.length % 4 === 1) {
      throw invalid(`input ${at}.bytes is not valid base64`);
    }
    try {
      add(Uint8Array.fromBase64(v));
    } catch {
      throw invalid(`input ${at}.bytes is not valid base64`);
    }
  };
  walk(input, "input", 0);
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(total);
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}
