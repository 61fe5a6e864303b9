/** The task family: `shoal_wait` and `shoal_cancel`. */

import { z } from "zod";
import { toolOk, type ToolResult } from "../result.ts";
import {
  forward,
  handleProps,
  inlineProps,
  kernelResult,
  objectOut,
  READS,
  TaskId,
} from "./common.ts";
import { awaitTask, finished, handleResult, waitHint } from "./task_flow.ts";
import type { ToolContext, ToolDef } from "./types.ts";

const WaitIn = z.strictObject({
  task: TaskId,
  timeout_ms: z.int().min(1).optional().describe("wait at most this long (default: the budget)"),
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
    return await finished(ctx.link, rec, { task, state: rec.state });
  });
}

const CancelIn = z.strictObject({ task: TaskId });

/** The task family. */
export const TASK_TOOLS: ToolDef[] = [
  {
    name: "shoal_wait",
    title: "Wait for a task",
    description:
      "Wait for a task (at most timeout_ms, default the budget). A finished task returns its " +
      "value like shoal_exec (or its error); otherwise its current state and timed_out:true.",
    input: WaitIn,
    outputSchema: objectOut({ ...inlineProps, ...handleProps }, ["task", "state"]),
    annotations: { title: "Wait for a task", ...READS, idempotentHint: false },
    run: (a, ctx) => runWait(a as z.infer<typeof WaitIn>, ctx),
  },
  {
    name: "shoal_cancel",
    title: "Cancel a task",
    description: "Request cancellation of a task (its processes are stopped); returns its state.",
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
    run: forward("task.cancel"),
  },
];
