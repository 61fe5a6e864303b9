/**
 * `shoal://` URIs (protocol §9, §15.6): parsing with lossy percent-decoding of path segments and
 * query values, short ref ↔ URI conversion, and which URIs are subscribable (§15.8).
 */

/** A parsed `shoal://root/seg…?k=v&…`. */
export interface ShoalUri {
  /** First path component (`out`, `task`, `events`, `session`, …). */
  root: string;
  /** The remaining decoded, non-empty segments. */
  segs: string[];
  /** Decoded query values (first `=` splits; a key without `=` maps to ""). */
  query: Map<string, string>;
}

/** A URI the facade cannot serve (answered as JSON-RPC -32602). */
export class BadUri extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BadUri";
  }
}

const dec = new TextDecoder(); // non-fatal: invalid UTF-8 becomes U+FFFD (lossy, §15.6)

/** Percent-decode `%XX` sequences (invalid escapes stay literal; `+` is not a space). */
export function percentDecode(s: string): string {
  if (!s.includes("%")) return s;
  const bytes: number[] = [];
  const enc = new TextEncoder();
  for (let i = 0; i < s.length;) {
    if (s[i] === "%" && /^[0-9A-Fa-f]{2}$/.test(s.slice(i + 1, i + 3))) {
      bytes.push(parseInt(s.slice(i + 1, i + 3), 16));
      i += 3;
      continue;
    }
    const cp = s.codePointAt(i)!;
    const ch = String.fromCodePoint(cp);
    for (const b of enc.encode(ch)) bytes.push(b);
    i += ch.length;
  }
  return dec.decode(new Uint8Array(bytes));
}

/** Parse a `shoal://` URI. Throws BadUri when it is not one. */
export function parseShoalUri(uri: string): ShoalUri {
  if (!uri.startsWith("shoal://")) {
    throw new BadUri(`not a shoal:// URI: ${JSON.stringify(uri)}`);
  }
  const rest = uri.slice("shoal://".length);
  const q = rest.indexOf("?");
  const pathPart = q >= 0 ? rest.slice(0, q) : rest;
  const queryPart = q >= 0 ? rest.slice(q + 1) : "";
  const parts = pathPart.split("/").filter((p) => p !== "").map(percentDecode);
  if (parts.length === 0) throw new BadUri(`shoal URI without a resource root: ${uri}`);
  const query = new Map<string, string>();
  for (const kv of queryPart.split("&")) {
    if (kv === "") continue;
    const eq = kv.indexOf("=");
    const k = percentDecode(eq >= 0 ? kv.slice(0, eq) : kv);
    if (!query.has(k)) query.set(k, percentDecode(eq >= 0 ? kv.slice(eq + 1) : ""));
  }
  return { root: parts[0], segs: parts.slice(1), query };
}

/** `kind:rest` → `shoal://kind/rest` (only the first colon is special). */
export function refToUri(ref: string): string | null {
  const c = ref.indexOf(":");
  if (c <= 0) return null;
  return `shoal://${ref.slice(0, c)}/${ref.slice(c + 1)}`;
}

/**
 * `shoal://out/5?path=.err` → `{ref: "out:5", path: ".err"}` (the link a result shows, given
 * where a ref goes); null for anything else. Throws BadUri for a malformed shoal:// URI.
 */
export function uriToRef(uri: string): { ref: string; path?: string } | null {
  if (!uri.startsWith("shoal://")) return null;
  const u = parseShoalUri(uri);
  if (u.segs.length !== 1) return null;
  const path = u.query.get("path");
  return path === undefined
    ? { ref: `${u.root}:${u.segs[0]}` }
    : { ref: `${u.root}:${u.segs[0]}`, path };
}

/** `task:7`, `7` → `7`; null when it is not a task id. */
export function taskNumber(id: string): string | null {
  const m = /^(?:task:)?([1-9][0-9]*)$/.exec(id);
  return m ? m[1] : null;
}

/** The kernel event channel behind a subscribable URI; throws BadUri for any other URI. */
export function subscribableChannel(uri: string): string {
  const u = parseShoalUri(uri);
  if (u.root === "events" && u.segs.length === 1) return u.segs[0];
  if (u.root === "task" && u.segs.length >= 1) {
    const n = taskNumber(u.segs[0]);
    if (n !== null) return `task.${n}`;
  }
  if (u.root === "pty" && u.segs.length === 1) {
    const m = /^(?:pty:)?([1-9][0-9]*)$/.exec(u.segs[0]);
    if (m) return `pty.${m[1]}`; // screen changes (coalesced) and the exit
  }
  throw new BadUri(
    `only shoal://events/{channel}, shoal://task/{id}[/out] and shoal://pty/{id} are ` +
      `subscribable (got ${uri})`,
  );
}

/** `a..b` with non-negative integers → [a, b]; anything else → undefined (dropped, §15.6). */
export function parseSlice(text: string | undefined): [number, number] | undefined {
  const m = text === undefined ? null : /^([0-9]+)\.\.([0-9]+)$/.exec(text);
  if (!m) return undefined;
  const a = Number(m[1]), b = Number(m[2]);
  return Number.isSafeInteger(a) && Number.isSafeInteger(b) ? [a, b] : undefined;
}

/** A signed decimal integer → number; else undefined. */
export function parseInt64(text: string | undefined): number | undefined {
  if (text === undefined || !/^-?[0-9]+$/.test(text)) return undefined;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** A non-negative decimal integer → number; else undefined. */
export function parseUint(text: string | undefined): number | undefined {
  const n = parseInt64(text);
  return n !== undefined && n >= 0 ? n : undefined;
}
