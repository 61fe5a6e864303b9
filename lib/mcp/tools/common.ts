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
  max_bytes: z.int().min(1).optional(),
  max_rows: z.int().min(0).optional(),
  max_items: z.int().min(0).optional(),
}).describe("when a value is elided (defaults: 8192 JSON bytes, 100 rows, 500 items)");

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
export const wireValue = {};
/** An inline value result: `{ref, uri, value, render, more}` (the tool descriptions say what
 * they are; output schemas are for validation and stay short — hosts read them every turn). */
export const inlineProps = {
  ref: { type: "string" },
  uri: { type: "string" },
  value: wireValue,
  render: { type: "string" },
  more: { type: "object" },
};
/** A task handle result. */
export const handleProps = {
  task: { type: "string" },
  events: { type: "string" },
  timed_out: { type: "boolean" },
  state: { type: "string" },
  hint: { type: "string" },
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
