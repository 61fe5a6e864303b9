/** The journal family: `shoal_journal` queries the structured journal of past executions. */

import { z } from "zod";
import { forward, objectOut, READS } from "./common.ts";
import type { ToolDef } from "./types.ts";

const JournalIn = z.strictObject({
  since: z.int().optional().describe("entry start ≥ since (ns since the epoch)"),
  until: z.int().optional().describe("entry start ≤ until (ns since the epoch)"),
  principal: z.string().optional(),
  ok: z.boolean().optional(),
  effects: z.array(z.string()).optional().describe("all of these effect kinds (fs.write, …)"),
  head: z.string().optional().describe("first word of the source, e.g. git"),
  limit: z.int().min(1).optional().describe("rows, newest first (default 100)"),
});

/** The journal family. */
export const JOURNAL_TOOLS: ToolDef[] = [{
  name: "shoal_journal",
  title: "Query the journal",
  description: "Query the structured journal of past executions (newest first), as {entries}.",
  input: JournalIn,
  outputSchema: objectOut({ entries: { type: "array", items: { type: "object" } } }, ["entries"]),
  annotations: { title: "Query the journal", ...READS },
  run: forward("journal.query", (a) => a, "entries"),
}];
