/**
 * Tool and resource result envelopes (protocol §15.4, §15.7): a bounded text twin, a named
 * `resource_link`, `structuredContent` always an object, kernel errors as `isError` results
 * whose `structuredContent` is `{error: {code, message, data?}}` — a shape every tool's output
 * schema admits (see `withErrorBranch`), so clients that validate results accept them.
 */

import { boundText } from "../client/bound_text.ts";
import type { RpcErrorObject } from "../client/errors.ts";
import { pagingLine } from "./twin.ts";
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
 * A successful tool result around a kernel result object. The text twin is `text` when given,
 * else `lead` (a sentence for the agent) followed by the render, else pretty JSON of `shown`.
 */
export function toolOk(
  result: Obj,
  lead?: string,
  shown: Obj = result,
  text?: string,
): ToolResult {
  const link = linkOf(result);
  const fetchVia = link?.uri ?? "structuredContent";
  const body = text ?? (typeof result.render === "string" ? renderTwin(result) : pretty(shown));
  const twin = boundText(lead && text === undefined ? `${lead}\n${body}` : body, fetchVia);
  const content: Array<Obj> = [{ type: "text", text: twin }];
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

/** The text twin of a rendered value: the render, how to read on. */
function renderTwin(result: Obj): string {
  const parts = [result.render as string];
  const next = pagingLine(result.ref, result.more);
  if (next) parts.push(next);
  return parts.join("\n");
}

/**
 * An error as an `isError` tool result: `structuredContent` is `{error, ...extra}`, the text
 * twin is `text` (what the agent reads) or the error's pretty JSON after `lead`.
 */
export function toolError(
  e: RpcErrorObject,
  opts: { lead?: string; text?: string; extra?: Obj } = {},
): ToolResult {
  const error: Obj = { code: e.code, message: e.message };
  if (e.data !== undefined) error.data = e.data;
  const body = opts.text ?? (opts.lead ? `${opts.lead}\n${pretty(error)}` : pretty(error));
  return {
    content: [{ type: "text", text: boundText(body, "structuredContent") }],
    structuredContent: { error, ...(opts.extra ?? {}) },
    isError: true,
  };
}

/** The `error` member every tool's output schema admits. */
export const ERROR_SCHEMA: Obj = {
  type: "object",
  properties: {
    code: { type: "integer" },
    message: { type: "string" },
    data: {},
  },
  required: ["code", "message"],
};

/**
 * A tool's declared output schema widened so an error result validates too: the success shape's
 * `required`/`anyOf` become alternatives beside `{required: ["error"]}`.
 */
export function withErrorBranch(schema: Obj): Obj {
  const { required, anyOf, properties, ...rest } = schema;
  const branches: Obj[] = Array.isArray(anyOf)
    ? (anyOf as Obj[]).map((
      b,
    ) => (Array.isArray(required)
      ? { ...b, required: [...required, ...((b.required as string[]) ?? [])] }
      : b)
    )
    : Array.isArray(required) && required.length
    ? [{ required }]
    : [{}];
  return {
    ...rest,
    properties: { ...(properties as Obj ?? {}), error: ERROR_SCHEMA },
    anyOf: [...branches, { required: ["error"] }],
  };
}

/** Whether a negotiated protocol version has `resource_link` content (2025-06-18+). */
export function hasResourceLinks(version: string | undefined): boolean {
  return version !== undefined && version >= "2025-06-18";
}

/** Drop content blocks the client's protocol version does not define. */
export function forVersion(r: ToolResult, version: string | undefined): ToolResult {
  if (hasResourceLinks(version)) return r;
  return { ...r, content: r.content.filter((c) => c.type !== "resource_link") };
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
