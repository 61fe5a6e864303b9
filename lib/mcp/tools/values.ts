/** The value family: `shoal_get` reads a stored transcript value without running anything. */

import { z } from "zod";
import { toolOk, type ToolResult } from "../result.ts";
import { Elide, inlineProps, kernelResult, objectOut, READS, wireValue } from "./common.ts";
import type { Obj, ToolContext, ToolDef } from "./types.ts";
import { uriToRef } from "../uri.ts";

const GetIn = z.strictObject({
  ref: z.string().min(1).describe("out:17, or its link shoal://out/17"),
  path: z.string().optional().describe("selector, e.g. .err, .out.rows[0].name, [2..5]"),
  slice: z.array(z.int().min(0)).length(2).optional().describe(
    "[start, end): rows/items, or characters of text (bytes of .stdout)",
  ),
  elide: Elide.optional(),
});

/** The selected value and its render (the text twin), like an exec result. */
function runGet(a: z.infer<typeof GetIn>, ctx: ToolContext): Promise<ToolResult> {
  return kernelResult(async () => {
    // The `[link shoal://out/N]` a result shows is accepted where its ref goes.
    const linked = uriToRef(a.ref);
    const sel: Obj = { ref: linked?.ref ?? a.ref };
    const path = a.path ?? linked?.path;
    if (path !== undefined) sel.path = path;
    if (a.slice !== undefined) sel.slice = a.slice;
    const [json, shown] = await Promise.all([
      ctx.link.call<Obj>("value.get", { ...sel, ...(a.elide ? { elide: a.elide } : {}) }),
      ctx.link.call<Obj>("value.get", { ...sel, format: "render" }),
    ]);
    const r: Obj = { ref: json.ref, value: json.value, render: shown.render };
    if (shown.more) r.more = shown.more;
    return toolOk(r);
  }, "value.get");
}

/** The value family. */
export const VALUE_TOOLS: ToolDef[] = [{
  name: "shoal_get",
  title: "Read a transcript value",
  description: "Read (part of) an earlier result again without rerunning it: ref (out:N), " +
    "path (.err, .stdout, .out.name, [3], [2..5]), slice [start, end) of rows, items or text. " +
    "Text: the selection rendered like shoal_exec, a cut one ending in the call for the next " +
    "page; structured: {ref, value}.",
  input: GetIn,
  outputSchema: objectOut(
    { ref: inlineProps.ref, value: wireValue, render: inlineProps.render, more: inlineProps.more },
    ["ref", "value"],
  ),
  annotations: { title: "Read a transcript value", ...READS },
  run: (a, ctx) => runGet(a as z.infer<typeof GetIn>, ctx),
}];
