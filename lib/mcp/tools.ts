/**
 * The MCP tools (protocol §15.3 plus `shoal_wait`): strict input schemas (zod, published as JSON
 * Schema and enforced before anything reaches the kernel), true output schemas and annotations,
 * and the handlers that map each call onto kernel methods.
 *
 * Long work never dies at the client's time limit: `shoal_exec` without `timeout_ms` waits at
 * most the configured budget, then returns the task handle with a sentence that says how to wait
 * for it or read it; progress notifications flow while it runs when the request has a progress
 * token; an aborted request cancels the kernel task.
 */

import { z } from "zod";
import { RPC, RpcError, type TaskRecord } from "../client/mod.ts";
import type { KernelLink } from "./kernel_link.ts";
import { toolKernelError, toolOk, type ToolResult } from "./result.ts";
import { refToUri, taskNumber } from "./uri.ts";
import { ptyToolResult } from "./pty_frame.ts";
import { approveAndApply, type HostAsk, type PlanInfo, requestApproval } from "./approval.ts";

/** How long the first exec round waits inline: a task id is known after it, so an abort can
 * cancel the task; quick commands finish inside it in one kernel round trip. */
export const FIRST_ROUND_MS = 200;
/** Interval of progress notifications while a call waits. */
export const PROGRESS_EVERY_MS = 1000;

/** What a tool handler gets besides its arguments. */
export interface ToolContext {
  link: KernelLink;
  budgetMs: number;
  /** Aborted when the MCP request is cancelled (or the client goes away). */
  signal: AbortSignal;
  /** Present when the request carried a progress token. */
  progress?: (elapsedMs: number, message: string) => Promise<void>;
  /** Present when the person can be asked in the host and an approver is configured. */
  host?: HostAsk;
}

type Obj = Record<string, unknown>;

/** One tool. */
export interface ToolDef {
  name: string;
  title: string;
  description: string;
  input: z.ZodType;
  outputSchema: Obj;
  annotations: {
    title?: string;
    readOnlyHint: boolean;
    destructiveHint: boolean;
    idempotentHint: boolean;
    openWorldHint: boolean;
  };
  /** The kernel method whose absence hides this tool from tools/list (see KernelLink.probe). */
  needs?: string;
  run(args: Obj, ctx: ToolContext): Promise<ToolResult>;
}

// ---- schemas ---------------------------------------------------------------------------------

const Elide = z.strictObject({
  max_bytes: z.int().min(1).optional().describe("encoded JSON bytes before a value is elided"),
  max_rows: z.int().min(0).optional().describe("table rows before a table is elided"),
  max_items: z.int().min(0).optional().describe("list items before a list is elided"),
}).describe("per-call elision budget (defaults 8192 bytes, 100 rows, 500 items)");

const TaskId = z.string().regex(/^(task:)?[1-9][0-9]*$/, "expected a task ref such as task:7")
  .describe("task ref, e.g. task:7");
const PlanRef = z.string().min(1).describe("plan ref, e.g. plan:7b2fd854cb805ba1");
const PtyId = z.string().min(1).describe("pty ref, e.g. pty:3");
const Dim = z.int().min(1).max(1000);
const PtyKey = z.union([
  z.string(),
  z.strictObject({ key: z.string().min(1) }),
  z.strictObject({ text: z.string() }),
  z.strictObject({ bytes: z.string() }),
]);

const anyJson = {};
const wireValue = { description: 'a $-tagged wire value (elided as {$:"ref",…} when large)' };
const inlineProps = {
  ref: { type: "string", description: "transcript ref, e.g. out:17" },
  uri: { type: "string", description: "shoal://out/17" },
  value: wireValue,
  render: { type: "string", description: "80-column rendering (bounded)" },
};
const handleProps = {
  task: { type: "string", description: "task ref when the work continues as a task" },
  events: { type: "string", description: "the task's event channel, e.g. task.9" },
  timed_out: { type: "boolean" },
  state: { type: "string" },
  hint: { type: "string", description: "how to wait for or read the task" },
};
const planProps = {
  plan_ref: { type: "string" },
  effects: { type: "array", items: anyJson },
  reversibility: { type: "string" },
  verdict: { type: "string" },
  approval_pending: { type: "boolean" },
};
const objectOut = (properties: Obj, required: string[] = [], extra: Obj = {}): Obj => ({
  type: "object",
  properties,
  ...(required.length ? { required } : {}),
  ...extra,
});

const RUNS = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: false,
  openWorldHint: true,
};
const READS = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

// ---- kernel helpers --------------------------------------------------------------------------

/** Run `fn`; a kernel RpcError becomes an isError result (other failures propagate). */
async function kernelResult(fn: () => Promise<ToolResult>, method = "exec"): Promise<ToolResult> {
  try {
    return await fn();
  } catch (e) {
    if (!(e instanceof RpcError)) throw e;
    const lead = e.code === RPC.METHOD_NOT_FOUND
      ? `Not available: this kernel does not implement ${method} (or this mode of it) yet; ` +
        `nothing was run.`
      : undefined;
    return toolKernelError(e.toJSON(), lead);
  }
}

/** Resolve when `p` settles or `signal` aborts (then null). */
function unlessAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T | null> {
  if (signal.aborted) return Promise.resolve(null);
  return new Promise<T | null>((resolve, reject) => {
    const onAbort = () => resolve(null);
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

const secs = (ms: number) => `${Math.round(ms / 100) / 10} s`;

function waitHint(task: string, waitedMs: number | null): string {
  const n = taskNumber(task) ?? task;
  const lead = waitedMs === null
    ? `Started in the background as ${task}.`
    : `${task} is still running after ${secs(waitedMs)}; it keeps running in the kernel.`;
  return `${lead} Wait for it with shoal_wait {"task":"${task}"}, read shoal://task/${n}/out ` +
    `once it is done, subscribe to shoal://task/${n} for a notification, or stop it with ` +
    `shoal_cancel {"task":"${task}"}.`;
}

function handleResult(h: Obj, waitedMs: number | null): ToolResult {
  const hint = waitHint(String(h.task), waitedMs);
  return toolOk({ ...h, hint }, hint, h);
}

/**
 * Wait for a task up to `ms`, with progress notifications; null when the request was aborted.
 * The last record (with `timed_out: true` when the wait ended first) otherwise.
 */
async function awaitTask(
  task: string,
  ms: number,
  ctx: ToolContext,
  started: number,
): Promise<(TaskRecord & { timed_out?: boolean }) | null> {
  const deadline = Date.now() + ms;
  while (true) {
    const left = Math.max(1, deadline - Date.now());
    const slice = ctx.progress ? Math.min(left, PROGRESS_EVERY_MS) : left;
    const rec = await unlessAborted(
      ctx.link.call<TaskRecord & { timed_out?: boolean }>("task.await", {
        task,
        timeout_ms: slice,
      }),
      ctx.signal,
    );
    if (rec === null) return null;
    if (!rec.timed_out || Date.now() >= deadline) return rec;
    await ctx.progress?.(
      Date.now() - started,
      `${task} ${rec.state} for ${secs(Date.now() - started)}`,
    )
      .catch(() => {});
  }
}

/** The inline result of a finished task: `{ref, uri, value, render}` fetched from its value. */
async function inlineOf(link: KernelLink, ref: string, elide?: unknown): Promise<Obj> {
  const [json, render] = await Promise.all([
    link.call<Obj>("value.get", { ref, ...(elide ? { elide } : {}) }),
    link.call<Obj>("value.get", { ref, format: "render" }),
  ]);
  return { ref, uri: refToUri(ref), value: json.value, render: render.render };
}

/** A finished task as a tool result (its error as an isError result). */
async function finished(
  link: KernelLink,
  rec: TaskRecord,
  extra: Obj,
  elide?: unknown,
): Promise<ToolResult> {
  if (rec.error) {
    return toolKernelError(rec.error, `${rec.task} ended ${rec.state}:`, {
      task: rec.task,
      state: rec.state,
    });
  }
  if (rec.result_ref) {
    return toolOk({ ...extra, ...(await inlineOf(link, rec.result_ref, elide)) });
  }
  return toolOk({ ...extra, ...rec });
}

// ---- tools -----------------------------------------------------------------------------------

const ExecIn = z.strictObject({
  src: z.string().describe("Shoal source to run"),
  mode: z.enum(["run", "plan"]).optional().describe(
    "run (default) evaluates; plan derives effects without running",
  ),
  position: z.enum(["stmt", "value"]).optional().describe(
    "value (default): the last expression's value is returned, a failed command comes back " +
      "as an outcome with ok:false; stmt: a failed command raises cmd_failed",
  ),
  background: z.boolean().optional().describe("return a task handle at once"),
  timeout_ms: z.int().min(1).optional().describe(
    "wait at most this long, then return the task handle (the work is never killed)",
  ),
  elide: Elide.optional(),
});

async function runExec(a: z.infer<typeof ExecIn>, ctx: ToolContext): Promise<ToolResult> {
  const base: Obj = { src: a.src, mode: a.mode ?? "run", position: a.position ?? "value" };
  if (a.elide) base.elide = a.elide;
  if (a.background) {
    return await kernelResult(async () =>
      handleResult(await ctx.link.call<Obj>("exec", { ...base, async: true }), null)
    );
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
    if (e instanceof RpcError) return await kernelResult(() => Promise.reject(e));
    throw e;
  }
  if (typeof first.task !== "string") return toolOk(first);
  const task = first.task;
  const cancel = () => {
    ctx.link.call("task.cancel", { task }).catch(() => {});
  };
  if (ctx.signal.aborted) {
    cancel();
    return handleResult(first, Date.now() - t0);
  }
  if (Date.now() - t0 >= wait) return handleResult(first, Date.now() - t0);
  ctx.signal.addEventListener("abort", cancel, { once: true });
  try {
    return await kernelResult(async () => {
      const rec = await awaitTask(task, wait - (Date.now() - t0), ctx, t0);
      if (rec === null) return handleResult(first, Date.now() - t0); // aborted: nobody reads it
      if (rec.timed_out) return handleResult({ ...first, state: rec.state }, Date.now() - t0);
      return await finished(ctx.link, rec, {}, a.elide);
    });
  } finally {
    ctx.signal.removeEventListener("abort", cancel);
  }
}

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
      return toolOk({ task, state: "unknown", timed_out: true, hint: waitHint(task, null) });
    }
    if (rec.timed_out) {
      const hint = waitHint(task, Date.now() - t0);
      const h = { task, state: rec.state, timed_out: true };
      return toolOk({ ...h, hint }, hint, h);
    }
    return await finished(ctx.link, rec, { task, state: rec.state });
  });
}

const GetIn = z.strictObject({
  ref: z.string().min(1).describe("transcript ref, e.g. out:17"),
  path: z.string().optional().describe("side-effect-free selector, e.g. .rows[0].name"),
  slice: z.array(z.int().min(0)).length(2).optional().describe("[start, end), half-open"),
  elide: Elide.optional(),
});

const JournalIn = z.strictObject({
  since: z.int().optional().describe("entry start ≥ since (ns since the epoch)"),
  until: z.int().optional().describe("entry start ≤ until (ns since the epoch)"),
  principal: z.string().optional(),
  ok: z.boolean().optional(),
  effects: z.array(z.string()).optional().describe("all of these effect kinds (fs.write, …)"),
  head: z.string().optional().describe("first word of the source, e.g. git"),
  limit: z.int().min(1).optional().describe("rows, newest first (default 100)"),
});

const CancelIn = z.strictObject({ task: TaskId });
const PlanIn = z.strictObject({ src: z.string().describe("Shoal source to plan") });
const ApplyIn = z.strictObject({ plan_ref: PlanRef });
const CapIn = z.strictObject({
  plan_ref: PlanRef,
  effects: z.array(z.union([z.string(), z.strictObject({ kind: z.string() })])).optional()
    .describe("effect kinds the grant covers (default: the whole plan)"),
});
const PtyOpenIn = z.strictObject({
  cmd: z.string().min(1).describe("program, resolved like a command of the session (PATH, cwd)"),
  args: z.array(z.string()).optional(),
  cols: Dim.optional().describe("columns (default 80)"),
  rows: Dim.optional().describe("rows (default 24)"),
  env: z.record(z.string(), z.string()).optional().describe(
    "variables over the session environment (TERM defaults to xterm-256color)",
  ),
  scrollback: z.int().min(0).max(10000).optional().describe(
    "lines kept after they scroll off the screen (default 1000)",
  ),
});
const PtySendIn = z.strictObject({
  pty_id: PtyId,
  input: z.union([PtyKey, z.array(PtyKey)]).describe(
    "text, {key: NAME} (Enter, Tab, Escape, Backspace, Delete, Space, Up, Down, Left, Right, " +
      "Home, End, PageUp, PageDown, F1–F12, Ctrl-A…Ctrl-Z), {text}, {bytes: base64}, or a list",
  ),
});
const PtyIdIn = z.strictObject({ pty_id: PtyId });
const PtyReadIn = z.strictObject({
  pty_id: PtyId,
  wait_for: z.string().min(1).max(1024).optional().describe(
    "a regular expression: return as soon as the output since the last read (or the screen) " +
      "matches, the program exits, or timeout_ms passes — one call instead of polling",
  ),
  match: z.enum(["any", "output", "screen"]).optional().describe(
    "where wait_for looks: any (default), output (only what was printed since the last read: " +
      "use it to wait for the *next* prompt), screen (the whole visible screen)",
  ),
  flags: z.string().regex(/^[imsu]*$/).optional().describe("regex flags: i, m, s, u"),
  timeout_ms: z.int().min(1).optional().describe(
    "how long wait_for waits (default 10 s, at most the facade's wait budget)",
  ),
  scrollback: z.array(z.int()).min(1).max(2).optional().describe(
    "[start, end) of the lines that scrolled off, numbered from the first; negative counts " +
      "back from the newest ([-50]: the last 50)",
  ),
});
const PtyResizeIn = z.strictObject({ pty_id: PtyId, cols: Dim, rows: Dim });

/** Forward arguments to one kernel method; the result object becomes structuredContent. */
function forward(method: string, map: (a: Obj) => Obj = (a) => a, wrap?: string) {
  return (a: Obj, ctx: ToolContext) =>
    kernelResult(async () => {
      const r = await ctx.link.call<unknown>(method, map(a));
      return toolOk(wrap ? { [wrap]: r } : (r as Obj));
    }, method);
}

/** Every tool the facade knows. */
export const TOOLS: ToolDef[] = [
  {
    name: "shoal_exec",
    title: "Run Shoal code",
    description:
      "Run Shoal source in the attached session and return its value: a transcript ref " +
      "(out:N, also shoal://out/N), the value (large values are elided to a preview with a URI — " +
      "drill in with shoal_get), and an 80-column render. Work that outlives timeout_ms (default " +
      "budget 25 s) comes back as a task handle: wait with shoal_wait, read shoal://task/N/out, " +
      "or subscribe to shoal://task/N. background:true returns the handle at once.",
    input: ExecIn,
    outputSchema: objectOut({ ...inlineProps, ...handleProps, ...planProps }, [], {
      anyOf: [{ required: ["ref", "value"] }, { required: ["task"] }, { required: ["plan_ref"] }],
    }),
    annotations: { title: "Run Shoal code", ...RUNS },
    run: (a, ctx) => runExec(a as z.infer<typeof ExecIn>, ctx),
  },
  {
    name: "shoal_get",
    title: "Read a transcript value",
    description:
      "Read a stored transcript value without running anything again: select a field/index " +
      "with path (.rows[0].name), page with slice [start, end), and set an elision budget.",
    input: GetIn,
    outputSchema: objectOut({ ref: inlineProps.ref, value: wireValue }, ["ref", "value"]),
    annotations: { title: "Read a transcript value", ...READS },
    run: forward("value.get"),
  },
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
  {
    name: "shoal_journal",
    title: "Query the journal",
    description: "Query the structured journal of past executions (newest first), as {entries}.",
    input: JournalIn,
    outputSchema: objectOut({ entries: { type: "array", items: { type: "object" } } }, [
      "entries",
    ]),
    annotations: { title: "Query the journal", ...READS },
    run: forward("journal.query", (a) => a, "entries"),
  },
  {
    name: "shoal_plan",
    title: "Plan Shoal code",
    description:
      "Derive the effects, reversibility and policy verdict of source without running it.",
    input: PlanIn,
    outputSchema: objectOut(planProps, ["plan_ref"]),
    annotations: { title: "Plan Shoal code", ...READS, idempotentHint: false },
    needs: "plan.list",
    run: forward("exec", (a) => ({ src: a.src, mode: "plan", position: "value" })),
  },
  {
    name: "shoal_apply",
    title: "Apply an approved plan",
    description: "Run a stored plan that is approved (or allowed by policy).",
    input: ApplyIn,
    outputSchema: objectOut(inlineProps, ["ref", "value"]),
    annotations: { title: "Apply an approved plan", ...RUNS },
    needs: "plan.apply",
    run: async (a, ctx) => {
      try {
        return toolOk(await ctx.link.call<Obj>("plan.apply", { plan_ref: a.plan_ref }));
      } catch (e) {
        if (!(e instanceof RpcError) || e.code !== RPC.APPROVAL_REQUIRED) {
          return await kernelResult(() => Promise.reject(e), "plan.apply");
        }
        const plan = async () => {
          const p = await ctx.link.call<Obj>("plan.get", { plan_ref: a.plan_ref });
          return p as unknown as PlanInfo;
        };
        return await approveAndApply(ctx.link, ctx.host, plan, "the plan is not approved yet");
      }
    },
  },
  {
    name: "shoal_cap_request",
    title: "Request approval for a plan",
    description: "Request approval for a pending plan; effects scope the grant.",
    input: CapIn,
    outputSchema: objectOut({ grant: { type: "string" }, plan_ref: { type: "string" } }, [
      "grant",
      "plan_ref",
    ]),
    annotations: {
      title: "Request approval for a plan",
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
    needs: "cap.request",
    run: (a, ctx) =>
      requestApproval(ctx.link, ctx.host, String(a.plan_ref), (a.effects as unknown[]) ?? []),
  },
  ...ptyTools(),
];

function ptyTools(): ToolDef[] {
  const pty = (
    name: string,
    title: string,
    description: string,
    input: z.ZodType,
    method: string,
    out: Obj,
    ann: ToolDef["annotations"],
    run?: ToolDef["run"],
  ): ToolDef => ({
    name,
    title,
    description,
    input,
    outputSchema: out,
    annotations: { title, ...ann },
    needs: "pty.list",
    run: run ?? forward(method),
  });
  const id = { pty_id: { type: "string" } };
  const exit = { type: ["object", "null"], description: "{status, signal} once it ended" };
  return [
    pty(
      "shoal_pty_open",
      "Open a PTY",
      "Start an interactive program (a REPL, an editor, an installer that asks questions, top…) " +
        "on a pseudo-terminal in the session's cwd and environment. Then read its screen with " +
        "shoal_pty_read — with wait_for to wait for a prompt — and answer with shoal_pty_send; " +
        "shoal_pty_close ends it.",
      PtyOpenIn,
      "pty.open",
      objectOut({ ...id, pid: { type: "integer" }, cols: {}, rows: {}, cmd: {} }, ["pty_id"]),
      RUNS,
      (a, ctx) =>
        kernelResult(async () => {
          const r = await ctx.link.call<Obj>("pty.open", {
            cmd: a.cmd,
            args: a.args ?? [],
            cols: a.cols,
            rows: a.rows,
            env: a.env ?? {},
            scrollback: a.scrollback,
          });
          const lead = `Opened ${r.pty_id} (${r.cmd}, pid ${r.pid}, ${r.cols}x${r.rows}). ` +
            `Read it with shoal_pty_read {"pty_id":"${r.pty_id}","wait_for":"<prompt regex>"}.`;
          return toolOk(r, lead);
        }, "pty.open"),
    ),
    pty(
      "shoal_pty_send",
      "Send to a PTY",
      "Type text or named keys into a PTY, as a person at its terminal would.",
      PtySendIn,
      "pty.send",
      objectOut({ ...id, sent: { type: "integer" } }, ["pty_id"]),
      RUNS,
    ),
    pty(
      "shoal_pty_read",
      "Read a PTY screen",
      "Read a PTY's screen: its rows as plain text, the cursor, whether it changed since the " +
        "last read, and whether the program is still alive (or how it exited). wait_for " +
        "returns as soon as a regex matches; scrollback pages through lines that scrolled off.",
      PtyReadIn,
      "pty.read",
      objectOut({
        ...id,
        screen: { type: "array", items: { type: "string" } },
        cursor: { type: "object" },
        changed: { type: "boolean" },
        alive: { type: "boolean" },
        exit,
        matched: { type: ["object", "null"] },
        timed_out: { type: "boolean" },
        scrollback: { type: "object" },
      }, ["pty_id", "screen", "alive"]),
      { ...READS, idempotentHint: false },
      (a, ctx) =>
        kernelResult(async () => {
          const args: Obj = { ...a };
          // A wait never outlives the MCP call's budget.
          if (args.wait_for !== undefined) {
            args.timeout_ms = Math.min(
              (args.timeout_ms as number | undefined) ?? 10_000,
              ctx.budgetMs,
            );
          }
          return ptyToolResult(await ctx.link.call<Obj>("pty.read", args));
        }, "pty.read"),
    ),
    pty(
      "shoal_pty_resize",
      "Resize a PTY",
      "Resize a PTY (1–1000 columns and rows); the program is told (SIGWINCH).",
      PtyResizeIn,
      "pty.resize",
      objectOut({ ...id, cols: {}, rows: {} }, ["pty_id"]),
      { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    ),
    pty(
      "shoal_pty_close",
      "Close a PTY",
      "Close a PTY: its program and everything it started are killed. Closing again is harmless.",
      PtyIdIn,
      "pty.close",
      objectOut({ ...id, closed: { type: "boolean" }, exit }, ["pty_id"]),
      { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    ),
    pty(
      "shoal_pty_list",
      "List PTYs",
      "List this session's open PTYs (ids, programs, sizes, alive).",
      z.strictObject({}),
      "pty.list",
      objectOut({ ptys: { type: "array" } }, ["ptys"]),
      READS,
    ),
  ];
}

/** Tools by name. */
export const TOOLS_BY_NAME: Map<string, ToolDef> = new Map(TOOLS.map((t) => [t.name, t]));

/** The tools/list entry of a tool (JSON Schema from the zod input schema). */
export function toolListing(t: ToolDef): Obj {
  const input = z.toJSONSchema(t.input, { io: "input" }) as Obj;
  delete input.$schema;
  return {
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: input,
    outputSchema: t.outputSchema,
    annotations: t.annotations,
  };
}

/** Validate arguments; returns parsed args or a message listing every problem. */
export function validateArgs(
  t: ToolDef,
  args: unknown,
): { ok: true; args: Obj } | { ok: false; message: string; issues: Obj[] } {
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
