/** The task family: `shoal_wait` and `shoal_cancel`. */

import { z } from "zod";
import { toolOk, type ToolResult } from "../result.ts";
import { handleProps, inlineProps, kernelResult, objectOut, READS, TaskId } from "./common.ts";
import { awaitTask, finished, handleResult, waitHint } from "./task_flow.ts";
import type { Obj, ToolContext, ToolDef } from "./types.ts";

const WaitIn = z.strictObject({
  task: TaskId,
  timeout_ms: z.int().min(1).optional().describe("wait at most this long (default {budget})"),
});

async function runWait(a: z.infer<typeof WaitIn>, ctx: ToolContext): Promise<ToolResult> {
  const task = a.task.startsWith("task:") ? a.task : `task:${a.task}`;
  return await kernelResult(async () => {
    const t0 = Date.now();
    const rec = await awaitTask(task, a.timeout_ms ?? ctx.budgetMs, ctx, t0);
    if (rec === null) {
      const hint = waitHint(task, null);
      return toolOk({ task, state: "unknown", timed_out: true, hint }, undefined, {}, hint);
    }
    if (rec.timed_out) {
      return handleResult({ task, state: rec.state, timed_out: true }, Date.now() - t0);
    }
    return await finished(ctx.link, rec, { task, state: rec.state }, undefined, undefined, true);
  });
}

const CancelIn = z.strictObject({ task: TaskId });

async function runCancel(a: z.infer<typeof CancelIn>, ctx: ToolContext): Promise<ToolResult> {
  const task = a.task.startsWith("task:") ? a.task : `task:${a.task}`;
  return await kernelResult(async () => {
    const r = await ctx.link.call<Obj>("task.cancel", { task });
    const done = ["cancelled", "completed", "failed"].includes(String(r.state));
    const text = done
      ? `${task} has ended (${r.state}).`
      : `Cancel requested: ${task} is ${r.state}; shoal_wait {"task":"${task}"} reports when ` +
        `it has stopped.`;
    return toolOk(r, undefined, r, text);
  }, "task.cancel");
}

/** The task family. */
export const TASK_TOOLS: ToolDef[] = [
  {
    name: "shoal_wait",
    title: "Wait for a task",
    description: "Wait for a task (the {task} of shoal_exec) at most timeout_ms (default " +
      "{budget}). Done: the same result shoal_exec would have given (its error as isError); " +
      "cancelled: state cancelled; still running: {task, state, timed_out: true} — call again.",
    input: WaitIn,
    outputSchema: objectOut({ ...inlineProps, ...handleProps }, ["task", "state"]),
    annotations: { title: "Wait for a task", ...READS, idempotentHint: false },
    run: (a, ctx) => runWait(a as z.infer<typeof WaitIn>, ctx),
  },
  {
    name: "shoal_cancel",
    title: "Cancel a task",
    description: "Stop a task and the processes it started. Returns {task, cancel_requested, " +
      "state}; shoal_wait on it then reports state cancelled.",
    input: CancelIn,
    outputSchema: objectOut({
      task: { type: "string" },
      cancel_requested: { type: "boolean" },
      state: { type: "string" },
    }, ["task", "cancel_requested", "state"]),
    annotations: {
      title: "Cancel a task",
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: false,
    },
    run: (a, ctx) => runCancel(a as z.infer<typeof CancelIn>, ctx),
  },
];
