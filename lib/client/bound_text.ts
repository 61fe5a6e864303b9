/**
 * Render bounding (protocol §8.3), shared by the kernel and the MCP facade: ANSI escape
 * sequences stripped for non-tty clients, text cut to whole lines within the 64 KiB wall with
 * a marker that says how much is missing and where to fetch it.
 */

/** The wall for any render or text payload (bytes of UTF-8). */
export const TEXT_CAP = 65536;
/** Room kept for the truncation marker. */
const MARKER_ROOM = 96;

// CSI (ESC [ … final), OSC (ESC ] … BEL/ST), DCS/SOS/PM/APC strings (ESC P|X|^|_ … ST),
// nF escapes (ESC, intermediates, final: `ESC ( B`), other two-byte escapes (`ESC 7`, `ESC M`,
// `ESC =`), and 8-bit CSI.
const ANSI =
  // deno-lint-ignore no-control-regex
  /\x1b\[[0-?]*[ -\/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[PX^_][^\x1b]*\x1b\\|\x1b[ -\/]+[0-~]|\x1b[0-OQ-WYZ\\`-~]|\x9b[0-?]*[ -\/]*[@-~]/g;

/** Remove ANSI/CSI/OSC escape sequences. */
export function stripAnsi(text: string): string {
  return text.includes("\x1b") || text.includes("\x9b") ? text.replace(ANSI, "") : text;
}

/**
 * Where an escape sequence that `text` ends in the middle of begins (-1 when it ends outside
 * one): a stream stripper keeps that tail for the next chunk.
 */
export function incompleteEscapeAt(text: string): number {
  const at = text.lastIndexOf("\x1b");
  if (at < 0) return -1;
  ANSI.lastIndex = at;
  const m = ANSI.exec(text);
  ANSI.lastIndex = 0;
  return m !== null && m.index === at ? -1 : at;
}

const enc = new TextEncoder();

function utf8Len(s: string): number {
  return s.length > TEXT_CAP ? TEXT_CAP + 1 : enc.encode(s).length;
}

/**
 * Strip escapes unless `tty`, then bound to `TEXT_CAP` bytes: whole leading lines while they
 * fit, else a hard cut; a marker `…(N more lines, fetch via <uri>)` ends a cut text.
 */
export function boundText(text: string, uri: string, tty = false): string {
  const s = tty ? text : stripAnsi(text);
  if (s.length * 3 <= TEXT_CAP || enc.encode(s).length <= TEXT_CAP) return s;
  const limit = TEXT_CAP - MARKER_ROOM;
  const lines = s.split("\n");
  let used = 0;
  let kept = 0;
  for (; kept < lines.length; kept++) {
    const n = utf8Len(lines[kept]) + 1;
    if (used + n > limit) break;
    used += n;
  }
  let head: string;
  if (kept === 0) {
    // No whole line fits: cut by characters, never inside a surrogate pair.
    let cut = Math.min(lines[0].length, limit);
    while (enc.encode(lines[0].slice(0, cut)).length > limit) cut = Math.floor(cut * 0.9);
    if (cut > 0 && /[\ud800-\udbff]/.test(lines[0][cut - 1])) cut--;
    head = lines[0].slice(0, cut) + "\n";
    kept = 1;
  } else head = lines.slice(0, kept).join("\n") + "\n";
  return `${head}…(${lines.length - kept} more lines, fetch via ${uri})`;
}
