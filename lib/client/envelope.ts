/**
 * The JSON-RPC 2.0 envelope, read the same way by the kernel and the MCP facade (protocol §1,
 * §15.2): one frame becomes a request, a notification, a response, a batch, or an invalid
 * message that is answered under the id it carried. Ids are kept verbatim: a number id comes
 * back as the digits it was sent with (`18446744073709551617`, `1.0`), never as the nearest
 * double, because responses are serialised with the id's source text (`JSON.rawJSON`).
 *
 * @module
 */

import { RPC, type RpcErrorObject } from "./errors.ts";

/** An id as echoed: a string, null, or a number's source text (serialises verbatim). */
export type WireId = string | number | null | RawJson;

/** What `JSON.rawJSON` returns: JSON.stringify emits its text as is. */
export interface RawJson {
  readonly rawJSON: string;
}

const rawJSON = (JSON as unknown as { rawJSON(text: string): RawJson }).rawJSON;

/** One decoded message. `msg` is the object as parsed (its `id` is the parsed value). */
export type Envelope =
  | { kind: "request"; id: WireId; method: string; params: Record<string, unknown>; msg: Obj }
  | { kind: "notification"; method: string; params: Record<string, unknown>; msg: Obj }
  | { kind: "response"; id: WireId; msg: Obj }
  /** A fault answered under `id`; `silent` for a notification's fault (never answered). */
  | { kind: "invalid"; id: WireId; error: RpcErrorObject; silent?: boolean }
  | { kind: "batch"; items: Envelope[] };

type Obj = Record<string, unknown>;

/** The error object of an envelope fault. */
function fault(code: number, message: string, data?: unknown): RpcErrorObject {
  return data === undefined ? { code, message } : { code, message, data };
}

/** Batch elements at most: a batch is answered as one frame, so it is bounded. */
export const MAX_BATCH = 1024;

/**
 * Read one frame. `badUtf8`: the frame's bytes were not valid UTF-8 — it is refused (-32700),
 * never executed with replacement characters, and still answered under its id when one can be
 * read. An array is a batch: the facade serves one, the kernel answers each element -32600.
 */
export function parseEnvelope(text: string, opts: { badUtf8?: boolean } = {}): Envelope {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return {
      kind: "invalid",
      id: null,
      error: fault(RPC.PARSE_ERROR_JSON, "parse error: malformed JSON", {
        detail: (e as Error).message.slice(0, 200),
      }),
    };
  }
  const ids = new RawIds(text);
  if (opts.badUtf8) {
    return {
      kind: "invalid",
      id: isObj(value) && isId(value.id) ? ids.of(value, 0) : null,
      error: fault(
        RPC.PARSE_ERROR_JSON,
        "parse error: the frame is not valid UTF-8 (it was not run); send UTF-8 JSON text",
      ),
    };
  }
  if (Array.isArray(value)) {
    if (value.length === 0) {
      return {
        kind: "invalid",
        id: null,
        error: fault(RPC.INVALID_REQUEST, "invalid request: an empty batch"),
      };
    }
    if (value.length > MAX_BATCH) {
      return {
        kind: "invalid",
        id: null,
        error: fault(
          RPC.INVALID_REQUEST,
          `invalid request: a batch of ${value.length} messages exceeds the limit of ${MAX_BATCH}`,
          { limit: MAX_BATCH },
        ),
      };
    }
    return { kind: "batch", items: value.map((v, i) => envelopeOf(v, () => ids.of(v, i))) };
  }
  return envelopeOf(value, () => ids.of(value, -1));
}

function isObj(x: unknown): x is Obj {
  return x !== null && typeof x === "object" && !Array.isArray(x);
}

function isId(x: unknown): boolean {
  return x === null || typeof x === "string" || typeof x === "number";
}

/** One message object (a frame, or one element of a batch). */
function envelopeOf(value: unknown, wireId: () => WireId): Envelope {
  if (!isObj(value)) {
    return {
      kind: "invalid",
      id: null,
      error: fault(RPC.INVALID_REQUEST, "invalid request: expected a JSON object"),
    };
  }
  const m = value;
  const hasId = "id" in m;
  if (hasId && !isId(m.id)) {
    return {
      kind: "invalid",
      id: null,
      error: fault(RPC.INVALID_REQUEST, "invalid request: id must be a string, number or null"),
    };
  }
  const id = hasId ? wireId() : null;
  const bad = (message: string, code: number = RPC.INVALID_REQUEST): Envelope => ({
    kind: "invalid",
    id,
    error: fault(code, message),
    ...(hasId ? {} : { silent: true }),
  });
  if (m.jsonrpc !== "2.0") return bad('invalid JSON-RPC version: jsonrpc must be "2.0"');
  if (!("method" in m) && hasId && ("result" in m || "error" in m)) {
    return { kind: "response", id, msg: m };
  }
  if (typeof m.method !== "string") return bad("invalid request: method must be a string");
  let params: Obj = {};
  if (m.params !== undefined && m.params !== null) {
    if (Array.isArray(m.params)) {
      return bad("invalid params: params must be an object (by-name)", RPC.INVALID_PARAMS);
    }
    if (!isObj(m.params)) return bad("invalid request: params must be an object");
    params = m.params;
  }
  return hasId
    ? { kind: "request", id, method: m.method, params, msg: m }
    : { kind: "notification", method: m.method, params, msg: m };
}

/** A JSON-RPC error response under `id`. */
export function errorResponse(id: WireId, error: RpcErrorObject): Obj {
  return { jsonrpc: "2.0", id, error };
}

/**
 * Source text of the `id` members of a frame's top-level message (or of each element of a
 * top-level batch), found by a scan that skips strings with `indexOf` and stops at the id:
 * typical frames put it first, so this costs a few dozen characters, not the frame.
 */
class RawIds {
  #text: string;
  constructor(text: string) {
    this.#text = text;
  }

  /** The echoable id of `msg` (element `index` of a batch; -1: the frame itself). */
  of(msg: unknown, index: number): WireId {
    const id = (msg as Obj).id as string | number | null;
    if (typeof id !== "number") return id;
    const raw = this.#find(index);
    // Canonical digits round-trip as a plain number; anything else is echoed as sent.
    if (raw === null || raw === String(id)) return id;
    return rawJSON(raw);
  }

  #find(index: number): string | null {
    const t = this.#text;
    let p = skipWs(t, 0);
    if (index >= 0) {
      if (t[p] !== "[") return null;
      p = skipWs(t, p + 1);
      for (let i = 0; i < index; i++) {
        p = skipValue(t, p);
        if (p < 0) return null;
        p = skipWs(t, p);
        if (t[p] !== ",") return null;
        p = skipWs(t, p + 1);
      }
    }
    if (t[p] !== "{") return null;
    p = skipWs(t, p + 1);
    while (p < t.length && t[p] !== "}") {
      const keyEnd = skipString(t, p);
      if (keyEnd < 0) return null;
      const key = t.slice(p, keyEnd);
      p = skipWs(t, keyEnd);
      if (t[p] !== ":") return null;
      p = skipWs(t, p + 1);
      const end = skipValue(t, p);
      if (end < 0) return null;
      // A key may be escaped (`"\u0069d"`): compare the decoded name.
      if (key === '"id"' || (key.includes("\\") && JSON.parse(key) === "id")) {
        return t.slice(p, end).trim();
      }
      p = skipWs(t, end);
      if (t[p] === ",") p = skipWs(t, p + 1);
    }
    return null;
  }
}

function skipWs(t: string, p: number): number {
  while (p < t.length) {
    const c = t.charCodeAt(p);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
    p++;
  }
  return p;
}

/** End (exclusive) of the string starting at `p` (a `"`), or -1. */
function skipString(t: string, p: number): number {
  if (t[p] !== '"') return -1;
  let q = p + 1;
  while (true) {
    const e = t.indexOf('"', q);
    if (e < 0) return -1;
    let bs = 0;
    for (let k = e - 1; k > p && t[k] === "\\"; k--) bs++;
    if (bs % 2 === 0) return e + 1;
    q = e + 1;
  }
}

/** End (exclusive) of the JSON value starting at `p`, or -1 (the frame already parsed). */
function skipValue(t: string, p: number): number {
  const c = t[p];
  if (c === '"') return skipString(t, p);
  if (c === "{" || c === "[") {
    let depth = 0;
    let q = p;
    while (q < t.length) {
      const ch = t[q];
      if (ch === '"') {
        q = skipString(t, q);
        if (q < 0) return -1;
        continue;
      }
      if (ch === "{" || ch === "[") depth++;
      else if (ch === "}" || ch === "]") {
        depth--;
        if (depth === 0) return q + 1;
      }
      q++;
    }
    return -1;
  }
  let q = p;
  while (q < t.length && !",}] \n\r\t".includes(t[q])) q++;
  return q;
}
