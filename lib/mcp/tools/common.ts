/**
 * Pieces every tool family shares: argument schema fragments, output schema fragments, the
 * annotation presets, and the kernel-call wrappers that turn a kernel error into an `isError`
 * result.
 */

import { z } from "zod";
import { RPC, RpcError } from "../../client/mod.ts";
import { toolError, toolOk, type ToolResult } from "../result.ts";
import { errorText } from "../twin.ts";
import type { Annotations, Obj, ToolContext } from "./types.ts";

// ---- argument schema fragments ---------------------------------------------------------------

/** The per-call elision budget. */
export const Elide = z.strictObject({
  max_bytes: z.int().min(1).optional().describe("encoded JSON bytes before a value is elided"),
  max_rows: z.int().min(0).optional().describe("table rows before a table is elided"),
  max_items: z.int().min(0).optional().describe("list items before a list is elided"),
}).describe("per-call elision budget (defaults 8192 bytes, 100 rows, 500 items)");

/** A task ref argument. */
export const TaskId = z.string().regex(
  /^(task:)?[1-9][0-9]*$/,
  "expected a task ref such as task:7",
)
  .describe("task ref, e.g. task:7");

// ---- output schema fragments -----------------------------------------------------------------

/** Any JSON value. */
export const anyJson = {};
/** A `$`-tagged wire value. */
export const wireValue = {
  description: 'a $-tagged wire value (elided as {$:"ref",…} when large)',
};
/** An inline value result: `{ref, uri, value, render}`. */
export const inlineProps = {
  ref: { type: "string", description: "transcript ref, e.g. out:17" },
  uri: { type: "string", description: "shoal://out/17" },
  value: wireValue,
  render: { type: "string", description: "80-column rendering (bounded)" },
};
/** A task handle result. */
export const handleProps = {
  task: { type: "string", description: "task ref when the work continues as a task" },
  events: { type: "string", description: "the task's event channel, e.g. task.9" },
  timed_out: { type: "boolean" },
  state: { type: "string" },
  hint: { type: "string", description: "how to wait for or read the task" },
};

/** An object schema with `properties`, optional `required` and extra keywords. */
export const objectOut = (properties: Obj, required: string[] = [], extra: Obj = {}): Obj => ({
  type: "object",
  properties,
  ...(required.length ? { required } : {}),
  ...extra,
});

// ---- annotations -----------------------------------------------------------------------------

/** A tool that runs code. */
export const RUNS: Annotations = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: false,
  openWorldHint: true,
};
/** A tool that only reads. */
export const READS: Annotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

// ---- kernel helpers --------------------------------------------------------------------------

/**
 * Run `fn`; a kernel RpcError becomes an isError result whose text explains it (other failures
 * propagate). `src` is the source the call ran, for pointing into it.
 */
export async function kernelResult(
  fn: () => Promise<ToolResult>,
  method = "exec",
  src?: string,
): Promise<ToolResult> {
  try {
    return await fn();
  } catch (e) {
    if (!(e instanceof RpcError)) throw e;
    const lead = e.code === RPC.METHOD_NOT_FOUND
      ? `Not available: this kernel does not implement ${method} (or this mode of it) yet; ` +
        `nothing was run.`
      : undefined;
    const err = e.toJSON();
    return toolError(err, { text: errorText(err, src, lead) });
  }
}

/** Forward arguments to one kernel method; the result object becomes structuredContent. */
export function forward(method: string, map: (a: Obj) => Obj = (a) => a, wrap?: string) {
  return (a: Obj, ctx: ToolContext): Promise<ToolResult> =>
    kernelResult(async () => {
      const r = await ctx.link.call<unknown>(method, map(a));
      return toolOk(wrap ? { [wrap]: r } : (r as Obj));
    }, method);
}
