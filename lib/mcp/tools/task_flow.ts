/**
 * How a tool call waits for kernel work: bounded waits on `task.await` with progress
 * notifications, an abort that stops waiting, the handle sentence for work that outlives the
 * wait, and a finished task turned into the tool result its caller would have got inline.
 */

import type { TaskRecord } from "../../client/mod.ts";
import type { KernelLink } from "../kernel_link.ts";
import { toolError, toolOk, type ToolResult } from "../result.ts";
import { errorText } from "../twin.ts";
import { refToUri, taskNumber } from "../uri.ts";
import type { Obj, ToolContext } from "./types.ts";

/** Interval of progress notifications while a call waits. */
export const PROGRESS_EVERY_MS = 1000;

/** A task record as `task.await` returns it. */
export type AwaitedRecord = TaskRecord & { timed_out?: boolean };

/** Resolve when `p` settles or `signal` aborts (then null). */
export function unlessAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T | null> {
  if (signal.aborted) return Promise.resolve(null);
  return new Promise<T | null>((resolve, reject) => {
    const onAbort = () => resolve(null);
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** `1.5 s`. */
export const secs = (ms: number): string => `${Math.round(ms / 100) / 10} s`;

/** What a queued task waits behind (the kernel's timed-out exec handle says). */
export interface Behind {
  task: string;
  ms: number;
}

/** The sentence that tells the agent how to wait for, read or stop a task. */
export function waitHint(
  task: string,
  waitedMs: number | null,
  state?: string,
  behind?: Behind,
): string {
  const n = taskNumber(task) ?? task;
  const lead = waitedMs === null
    ? `Started in the background as ${task}; until it ends, later execs of this session wait ` +
      `behind it (a job to run beside your other calls: shoal_pty_open).`
    : state === "queued" && behind
    ? `${task} has not started: it is queued behind ${behind.task}, which has run for ` +
      `${secs(behind.ms)} — a session runs one exec at a time (a program that must keep ` +
      `running while you work: shoal_pty_open). To run this now, stop that one: ` +
      `shoal_cancel {"task":"${behind.task}"}.`
    : state === "queued"
    ? `${task} is queued behind this session's running task (a session runs one at a time).`
    : `${task} is still running after ${secs(waitedMs)}; it keeps running.`;
  return `${lead} Wait: shoal_wait {"task":"${task}"}. Stop: shoal_cancel {"task":"${task}"}. ` +
    `Result when done: shoal://task/${n}/out.`;
}

/** A task handle as a tool result (the text is the sentence; the handle is structured). */
export function handleResult(h: Obj, waitedMs: number | null): ToolResult {
  const behind = typeof h.behind === "string"
    ? { task: h.behind, ms: typeof h.behind_ms === "number" ? h.behind_ms : 0 }
    : undefined;
  const hint = waitHint(String(h.task), waitedMs, h.state as string | undefined, behind);
  return toolOk({ ...h, hint }, undefined, h, hint);
}

/**
 * Wait for a task up to `ms`, with progress notifications; null when the request was aborted.
 * The last record (with `timed_out: true` when the wait ended first) otherwise.
 */
export async function awaitTask(
  task: string,
  ms: number,
  ctx: ToolContext,
  started: number,
): Promise<AwaitedRecord | null> {
  const deadline = Date.now() + ms;
  while (true) {
    const left = Math.max(1, deadline - Date.now());
    const slice = ctx.progress ? Math.min(left, PROGRESS_EVERY_MS) : left;
    const rec = await unlessAborted(
      ctx.link.call<AwaitedRecord>("task.await", { task, timeout_ms: slice }),
      ctx.signal,
    );
    if (rec === null) return null;
    if (!rec.timed_out || Date.now() >= deadline) return rec;
    await ctx.progress?.(
      Date.now() - started,
      `${task} ${rec.state} for ${secs(Date.now() - started)}`,
    ).catch(() => {});
  }
}

/** The inline result of a finished task: `{ref, uri, value, render}` fetched from its value. */
export async function inlineOf(link: KernelLink, ref: string, elide?: unknown): Promise<Obj> {
  const [json, shown] = await Promise.all([
    link.call<Obj>("value.get", { ref, ...(elide ? { elide } : {}) }),
    link.call<Obj>("value.get", { ref, format: "render" }),
  ]);
  const r: Obj = { ref, uri: refToUri(ref), value: json.value, render: shown.render };
  if (shown.more) r.more = shown.more;
  return r;
}

/**
 * A finished task as a tool result: its value, its error as an isError result, or — when it was
 * cancelled — a normal result saying so (cancelling is something the agent asked for).
 */
export async function finished(
  link: KernelLink,
  rec: TaskRecord,
  extra: Obj,
  elide?: unknown,
  src?: string,
  sayWhose = false,
): Promise<ToolResult> {
  if (rec.state === "cancelled") {
    const done = { ...extra, task: rec.task, state: rec.state };
    return toolOk(done, undefined, done, `${rec.task} was cancelled; nothing more will run.`);
  }
  if (rec.error) {
    return toolError(rec.error, {
      // The exec that ran it shows the error as its own; a wait says whose error it is.
      text: errorText(
        rec.error,
        src,
        sayWhose ? `${rec.task} ended ${rec.state}.` : undefined,
      ),
      extra: { task: rec.task, state: rec.state },
    });
  }
  if (rec.result_ref) {
    return toolOk({ ...extra, ...(await inlineOf(link, rec.result_ref, elide)) });
  }
  return toolOk({ ...extra, ...rec });
}
