/**
 * The MCP tools (protocol §15.3 plus `shoal_wait`), one module per family: exec, tasks, values,
 * journal, plans, pty. Strict input schemas (zod, published as JSON Schema and enforced before
 * anything reaches the kernel), true output schemas and annotations. A new family is a new
 * module whose list is added to `TOOLS` below.
 *
 * @module
 */

import { z } from "zod";
import { EXEC_TOOLS } from "./exec.ts";
import { JOURNAL_TOOLS } from "./journal.ts";
import { PLAN_TOOLS } from "./plans.ts";
import { PTY_TOOLS } from "./pty.ts";
import { TASK_TOOLS } from "./tasks.ts";
import { VALUE_TOOLS } from "./values.ts";
import type { Obj, ToolDef } from "./types.ts";
import { withErrorBranch } from "../result.ts";

export type { Annotations, ToolContext, ToolDef } from "./types.ts";
export { FIRST_ROUND_MS } from "./exec.ts";
export { PROGRESS_EVERY_MS } from "./task_flow.ts";

/** Every tool the facade knows, in listing order. */
export const TOOLS: ToolDef[] = [
  ...EXEC_TOOLS,
  ...VALUE_TOOLS,
  ...TASK_TOOLS,
  ...JOURNAL_TOOLS,
  ...PLAN_TOOLS,
  ...PTY_TOOLS,
];

/** Tools by name. */
export const TOOLS_BY_NAME: Map<string, ToolDef> = new Map(TOOLS.map((t) => [t.name, t]));

/**
 * The tools/list entry of a tool (JSON Schema from the zod input schema); `{budget}` in the
 * descriptions becomes the configured wait budget.
 */
export function toolListing(t: ToolDef, budgetMs: number): Obj {
  const budget = `${Math.round(budgetMs / 100) / 10} s`;
  // zod spells every int's range out to 2^53; the bound says nothing, so it is left out.
  const fill = (x: Obj) =>
    JSON.parse(
      JSON.stringify(x).replaceAll("{budget}", budget)
        .replaceAll(`,"maximum":${Number.MAX_SAFE_INTEGER}`, ""),
    ) as Obj;
  const input = fill(z.toJSONSchema(t.input, { io: "input" }) as Obj);
  delete input.$schema;
  return {
    name: t.name,
    title: t.title,
    description: t.description.replaceAll("{budget}", budget),
    inputSchema: input,
    outputSchema: withErrorBranch(t.outputSchema),
    annotations: t.annotations,
  };
}

/** Validate arguments; returns parsed args or a message listing every problem. */
export function validateArgs(
  t: ToolDef,
  args: unknown,
): { ok: true; args: Obj } | { ok: false; message: string; issues: Obj[] } {
  if (args !== undefined && (args === null || typeof args !== "object" || Array.isArray(args))) {
    const issues = [{ path: "", message: "arguments must be an object" }];
    return {
      ok: false,
      message: `invalid arguments for ${t.name}: arguments must be an object`,
      issues,
    };
  }
  const r = t.input.safeParse(args ?? {});
  if (r.success) return { ok: true, args: r.data as Obj };
  const issues = r.error.issues.map((i) => ({
    path: i.path.map(String).join("."),
    message: i.message,
  }));
  const message = `invalid arguments for ${t.name}: ` +
    issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join("; ");
  return { ok: false, message, issues };
}
