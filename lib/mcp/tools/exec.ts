/**
 * `shoal_exec`: run source in the attached session. Long work never dies at the client's time
 * limit: without `timeout_ms` the call waits at most the configured budget, then returns the task
 * handle with a sentence that says how to wait for it or read it; progress notifications flow
 * while it runs when the request has a progress token; an aborted request cancels the task.
 */

import { z } from "zod";
import { RPC, RpcError } from "../../client/mod.ts";
import { approveAndApply, type PlanInfo } from "../approval.ts";
import { toolOk, type ToolResult } from "../result.ts";
import {
  anyJson,
  Elide,
  handleProps,
  inlineProps,
  kernelResult,
  objectOut,
  RUNS,
} from "./common.ts";
import { awaitTask, finished, handleResult } from "./task_flow.ts";
import type { CreateTaskResult } from "../tasks_ext.ts";
import type { Obj, ToolContext, ToolDef } from "./types.ts";

/** How long the first exec round waits inline: a task id is known after it, so an abort can
 * cancel the task; quick commands finish inside it in one kernel round trip. */
export const FIRST_ROUND_MS = 200;

const ExecIn = z.strictObject({
  src: z.string().describe("Shoal source to run"),
  mode: z.enum(["run", "plan"]).optional().describe(
    "run (default) evaluates; plan derives effects without running",
  ),
  position: z.enum(["stmt", "value"]).optional().describe(
    "value (default): a failed command is an outcome with ok:false; stmt: it raises cmd_failed",
  ),
  background: z.boolean().optional().describe("return {task} at once"),
  timeout_ms: z.int().min(1).optional().describe(
    "wait at most this long, then return {task} (the work goes on)",
  ),
  elide: Elide.optional(),
});

/** The plan fields of a `mode: "plan"` result. */
export const planProps = {
  plan_ref: { type: "string" },
  effects: { type: "array", items: anyJson },
  reversibility: { type: "string" },
  verdict: { type: "string" },
  approval_pending: { type: "boolean" },
};

async function runExec(
  a: z.infer<typeof ExecIn>,
  ctx: ToolContext,
): Promise<ToolResult | CreateTaskResult> {
  const base: Obj = { src: a.src, mode: a.mode ?? "run", position: a.position ?? "value" };
  if (a.elide) base.elide = a.elide;
  if (a.background) {
    let h: Obj;
    try {
      h = await ctx.link.call<Obj>("exec", { ...base, async: true });
    } catch (e) {
      if (e instanceof RpcError) return await kernelResult(() => Promise.reject(e), "exec", a.src);
      throw e;
    }
    return ctx.createTask ? await ctx.createTask(String(h.task)) : handleResult(h, null);
  }
  if (base.mode === "plan") {
    return await kernelResult(async () => toolOk(await ctx.link.call<Obj>("exec", base)));
  }
  const wait = a.timeout_ms ?? ctx.budgetMs;
  const t0 = Date.now();
  let first: Obj;
  try {
    first = await ctx.link.call<Obj>("exec", {
      ...base,
      timeout_ms: Math.min(wait, FIRST_ROUND_MS),
    });
  } catch (e) {
    // Needs approval: ask the person in the host, or hand back the three steps (issue 15).
    if (e instanceof RpcError && e.code === RPC.APPROVAL_REQUIRED) {
      const plan = () =>
        ctx.link.call<PlanInfo>("exec", { ...base, mode: "plan" }).then((p) => ({
          ...p,
          src: a.src,
        }));
      return await approveAndApply(ctx.link, ctx.host, plan, "this needs approval", a.src);
    }
    if (e instanceof RpcError) return await kernelResult(() => Promise.reject(e), "exec", a.src);
    throw e;
  }
  if (typeof first.task !== "string") return toolOk(first);
  const task = first.task;
  // A client with the tasks extension polls the task itself: hand it over now.
  if (ctx.createTask) return await ctx.createTask(task);
  const cancel = () => {
    ctx.link.call("task.cancel", { task }).catch(() => {});
  };
  if (ctx.signal.aborted) {
    cancel();
    return handleResult(first, Date.now() - t0);
  }
  if (Date.now() - t0 >= wait) return handleResult(first, Date.now() - t0);
  // Queued behind a job nobody waits for (a background task, a timed-out exec): say so now
  // rather than spend the whole budget waiting for something that has not started. Behind
  // another caller's inline exec it waits as usual (that one ends when its caller is answered).
  if (first.state === "queued" && first.behind_detached === true) {
    return handleResult(first, Date.now() - t0);
  }
  ctx.signal.addEventListener("abort", cancel, { once: true });
  try {
    return await kernelResult(
      async () => {
        const rec = await awaitTask(task, wait - (Date.now() - t0), ctx, t0);
        if (rec === null) return handleResult(first, Date.now() - t0); // aborted: nobody reads it
        if (rec.timed_out) {
          const waited = Date.now() - t0;
          const ahead = typeof first.behind_ms === "number"
            ? { behind_ms: first.behind_ms + waited }
            : {};
          return handleResult({ ...first, ...ahead, state: rec.state }, waited);
        }
        return await finished(ctx.link, rec, {}, a.elide, a.src);
      },
      "exec",
      a.src,
    );
  } finally {
    ctx.signal.removeEventListener("abort", cancel);
  }
}

/** The exec family. */
export const EXEC_TOOLS: ToolDef[] = [{
  name: "shoal_exec",
  title: "Run Shoal code",
  description: "Run Shoal source in a persistent session: cwd, env " +
    "and variables carry over between calls. The text result reads like a terminal " +
    "(command output as printed, a failed command's status and stderr, big output cut with " +
    'the shoal_get call that reads on). Structured: {ref ("out:N"), value, render}. Errors ' +
    "(parse, runtime) are isError results with the fix. Still running after timeout_ms " +
    "(default {budget}; up to 55000 waits one call for a known long job): {task}, " +
    "finish with shoal_wait. background:true returns {task} at once but holds the session " +
    "(later execs wait; to run beside them: shoal_pty_open).",
  input: ExecIn,
  outputSchema: objectOut({ ...inlineProps, ...handleProps, ...planProps }, [], {
    anyOf: [{ required: ["ref", "value"] }, { required: ["task"] }, { required: ["plan_ref"] }],
  }),
  annotations: { title: "Run Shoal code", ...RUNS },
  run: (a, ctx) => runExec(a as z.infer<typeof ExecIn>, ctx),
}];
