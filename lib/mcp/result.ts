/**
 * Tool and resource result envelopes (protocol §15.4, §15.7): a bounded text twin, a named
 * `resource_link`, `structuredContent` always an object, kernel errors as `isError` results
 * carrying the kernel error object.
 */

import { boundText } from "../client/bound_text.ts";
import type { RpcErrorObject } from "../client/errors.ts";
import { refToUri } from "./uri.ts";

/** A tool result as sent on the wire. */
export interface ToolResult {
  [key: string]: unknown;
  content: Array<Record<string, unknown>>;
  structuredContent?: Record<string, unknown>;
  isError: boolean;
}

type Obj = Record<string, unknown>;

const isObj = (x: unknown): x is Obj => typeof x === "object" && x !== null && !Array.isArray(x);

/** Pretty JSON (bigints cannot occur: results come from JSON). */
export function pretty(x: unknown): string {
  return JSON.stringify(x, null, 2);
}

/** The URI a result points at: `uri` → an elided `value.uri` → `ref` as a URI (§15.4). */
export function linkOf(result: Obj): { uri: string; name: string } | null {
  const ref = typeof result.ref === "string" ? result.ref : null;
  if (typeof result.uri === "string") return { uri: result.uri, name: ref ?? result.uri };
  const v = result.value;
  if (isObj(v) && v.$ === "ref" && typeof v.uri === "string") {
    return { uri: v.uri, name: ref ?? v.uri };
  }
  if (ref) {
    const uri = refToUri(ref);
    if (uri) return { uri, name: ref };
  }
  if (typeof result.task === "string") {
    const uri = refToUri(result.task);
    if (uri) return { uri, name: result.task };
  }
  return null;
}

/**
 * A successful tool result around a kernel result object. The text twin is `lead` (a sentence
 * for the agent) followed by the render, else pretty JSON of `shown` (default: the result).
 */
export function toolOk(result: Obj, lead?: string, shown: Obj = result): ToolResult {
  const link = linkOf(result);
  const fetchVia = link?.uri ?? "structuredContent";
  const body = typeof result.render === "string" ? result.render : pretty(shown);
  const text = boundText(lead ? `${lead}\n${body}` : body, fetchVia);
  const content: Array<Obj> = [{ type: "text", text }];
  if (link) {
    content.push({
      type: "resource_link",
      uri: link.uri,
      name: link.name,
      mimeType: "application/json",
    });
  }
  return { content, structuredContent: result, isError: false };
}

/** A kernel error as an `isError` tool result carrying the error object (plus `extra` keys). */
export function toolKernelError(e: RpcErrorObject, lead?: string, extra: Obj = {}): ToolResult {
  const obj: Obj = { code: e.code, message: e.message };
  if (e.data !== undefined) obj.data = e.data;
  Object.assign(obj, extra);
  const body = pretty(obj);
  return {
    content: [{
      type: "text",
      text: boundText(lead ? `${lead}\n${body}` : body, "structuredContent"),
    }],
    structuredContent: obj,
    isError: true,
  };
}

/** `resources/read` envelope (§15.7): render/raw text as text/plain, else bounded JSON. */
export function readEnvelope(uri: string, result: unknown): Obj {
  if (isObj(result)) {
    for (const k of ["render", "raw", "raw_base64"] as const) {
      if (typeof result[k] === "string") {
        return {
          contents: [{ uri, mimeType: "text/plain", text: boundText(result[k] as string, uri) }],
          structuredContent: result,
        };
      }
    }
  }
  const c = isObj(result) && "value" in result ? result.value : result;
  const sc = isObj(c) ? c : { value: c };
  return {
    contents: [{ uri, mimeType: "application/json", text: boundText(pretty(c), uri) }],
    structuredContent: sc,
  };
}
