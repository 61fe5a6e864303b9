/**
 * The journal family: `shoal_journal` queries the structured journal of past executions. Times
 * are what an agent has at hand — a duration ago ("2h"), an RFC 3339 time, or ns since the
 * epoch — and the text twin is one line per entry.
 */

import { z } from "zod";
import { toolOk, type ToolResult } from "../result.ts";
import { kernelResult, objectOut, READS } from "./common.ts";
import type { Obj, ToolContext, ToolDef } from "./types.ts";

const UNIT_NS: Record<string, number> = {
  ns: 1,
  us: 1e3,
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
  d: 86400e9,
  w: 604800e9,
};
const DURATION = /^(?:\d+(?:\.\d+)?(?:ns|us|ms|s|m|h|d|w))+$/;

/** A `since`/`until` argument as ns since the epoch, or null when it is none of the forms. */
export function whenNs(x: number | string, nowMs = Date.now()): number | null {
  if (typeof x === "number") return x;
  const s = x.trim();
  if (/^-?\d+$/.test(s)) return Number(s);
  if (DURATION.test(s)) {
    let ns = 0;
    for (const [, n, u] of s.matchAll(/(\d+(?:\.\d+)?)(ns|us|ms|s|m|h|d|w)/g)) {
      ns += Number(n) * UNIT_NS[u];
    }
    return Math.round(nowMs * 1e6 - ns);
  }
  // RFC 3339 (a date alone means its midnight UTC).
  if (/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/i.test(s)) {
    const ms = Date.parse(s.replace(" ", "T"));
    if (Number.isFinite(ms)) return ms * 1e6;
  }
  return null;
}

// ns since the epoch exceed 2^53: a JSON number, not a safe integer.
const When = z.union([z.number(), z.string()]).refine((x) => whenNs(x) !== null, {
  message: 'expected a duration ago ("2h", "30m", "1d"), an RFC 3339 time, or ns since the epoch',
});

const JournalIn = z.strictObject({
  since: When.optional().describe('entries started at or after: "2h" (ago), RFC 3339, or ns'),
  until: When.optional().describe("entries started at or before (same forms)"),
  principal: z.string().optional(),
  ok: z.boolean().optional().describe("only successful (true) or failed (false) runs"),
  effects: z.array(z.string()).optional().describe("all of these effect kinds (fs_write, …)"),
  head: z.string().optional().describe("first word of the source, e.g. git"),
  limit: z.int().min(1).optional().describe("rows, newest first (default 100)"),
});

const secs = (ns: unknown) =>
  typeof ns === "number" ? `${Math.round(ns / 1e6) / 1000} s` : "running";

/** One line per entry: when, how it went, how long, the source's first line. */
function entryLine(e: Obj): string {
  const ts = typeof e.ts === "number" ? new Date(e.ts / 1e6).toISOString().slice(0, 19) : "?";
  const how = e.ok === true
    ? "ok"
    : typeof e.state === "string" && e.state !== ""
    ? e.state
    : "failed";
  const status = typeof e.status === "number" && e.status !== 0 ? ` (status ${e.status})` : "";
  const src = String(e.src ?? "").split("\n")[0];
  const cut = src.length > 100 ? src.slice(0, 99) + "…" : src;
  return `#${e.id} ${ts}Z ${how}${status} ${secs(e.dur_ns)}  ${cut}`;
}

async function runJournal(a: z.infer<typeof JournalIn>, ctx: ToolContext): Promise<ToolResult> {
  return await kernelResult(async () => {
    const q: Obj = { ...a };
    if (a.since !== undefined) q.since = whenNs(a.since);
    if (a.until !== undefined) q.until = whenNs(a.until);
    const entries = await ctx.link.call<Obj[]>("journal.query", q);
    const list = Array.isArray(entries) ? entries : [];
    const text = list.length === 0
      ? "No journal entries match."
      : `${list.length} ${list.length === 1 ? "entry" : "entries"}, newest first:\n${
        list.map(entryLine).join("\n")
      }`;
    return toolOk({ entries: list }, undefined, {}, text);
  }, "journal.query");
}

/** The journal family. */
export const JOURNAL_TOOLS: ToolDef[] = [{
  name: "shoal_journal",
  title: "Query the journal",
  description: "What ran before in Shoal, newest first. since/until take a duration ago " +
    '("2h", "30m"), an RFC 3339 time or ns; filter by head (first word, e.g. git), ok, ' +
    "effects; limit (default 100). Text: one line per entry (#id time ok|failed duration " +
    "source); structured: {entries}.",
  input: JournalIn,
  outputSchema: objectOut({ entries: { type: "array", items: { type: "object" } } }, ["entries"]),
  annotations: { title: "Query the journal", ...READS },
  run: (a, ctx) => runJournal(a as z.infer<typeof JournalIn>, ctx),
}];
