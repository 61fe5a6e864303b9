/**
 * The `io.modelcontextprotocol/tasks` extension (its 2026-07-28 specification): for a client
 * that declares it — in a request's `_meta` client capabilities (2026-07-28 era) or in its
 * `initialize` capabilities — a `shoal_exec` that does not finish in its first round (or runs
 * with `background: true`) answers at once with a `CreateTaskResult` (`resultType: "task"`)
 * whose `taskId` is the kernel task ref; `tasks/get` polls it (a finished task carries the very
 * `CallToolResult` the call would have returned), `tasks/cancel` cancels the kernel task and
 * `tasks/update` is acknowledged (Shoal tasks never ask for input). Their results carry
 * `resultType: "complete"` in both eras, as the extension requires. Clients that do not declare
 * the extension never see any of it: their long calls keep the budget → handle flow, and their
 * `tasks/*` requests are refused with -32021. The server advertises the extension only in the
 * `server/discover` / `initialize` answer to a client that declared it.
 */

import {
  type JSONRPCMessage,
  type MessageExtraInfo,
  ProtocolError,
  type Transport,
} from "@modelcontextprotocol/server";
import { RpcError, type TaskRecord } from "../client/mod.ts";
import type { KernelLink } from "./kernel_link.ts";
import type { ToolResult } from "./result.ts";

type Obj = Record<string, unknown>;

/** The extension identifier. */
export const TASKS_EXT = "io.modelcontextprotocol/tasks";
/** The per-request client-capabilities `_meta` key (2026-07-28). */
export const CLIENT_CAPS_META = "io.modelcontextprotocol/clientCapabilities";
/** Missing Required Client Capability (2026-07-28). */
export const MISSING_CAPABILITY = -32021;
/** How often a client should poll `tasks/get`. */
export const POLL_INTERVAL_MS = 1000;
/** Task creation times remembered (older ones fall back to the kernel's start time). */
const MAX_REMEMBERED = 10_000;

const isObj = (x: unknown): x is Obj => typeof x === "object" && x !== null && !Array.isArray(x);

/** Whether capabilities (`{extensions: {…}}`) declare the extension. */
export function capsDeclare(caps: unknown): boolean {
  return isObj(caps) && isObj(caps.extensions) && isObj(caps.extensions[TASKS_EXT]);
}

/** Whether a raw request's params declare the extension in their `_meta`. */
function paramsDeclare(params: unknown): boolean {
  return isObj(params) && isObj(params._meta) && capsDeclare(params._meta[CLIENT_CAPS_META]);
}

/** Whether a `subscriptions/listen` asks for task status notifications. */
function asksTaskIds(params: unknown): boolean {
  return isObj(params) && isObj(params.notifications) && "taskIds" in params.notifications;
}

/** A `CreateTaskResult`: the seed state of a task. */
export type CreateTaskResult = Obj & { resultType: "task"; taskId: string; status: string };

/** The extension's task status of a kernel task state. */
function statusOf(state: string): "working" | "completed" | "failed" | "cancelled" {
  if (state === "completed" || state === "failed") return "completed"; // tool errors complete
  if (state === "cancelled") return "cancelled";
  return "working";
}

const iso = (ns: number | null | undefined) =>
  typeof ns === "number" ? new Date(ns / 1e6).toISOString() : null;

/** Kernel-task bookkeeping for the extension, one per facade process. */
export class TasksExtension {
  #created = new Map<string, string>();

  constructor(readonly link: KernelLink) {}

  /** The `Task` fields of a kernel task record. */
  task(rec: TaskRecord, message?: string): Obj {
    const createdAt = this.#created.get(rec.task) ?? iso(rec.started_ns) ??
      new Date().toISOString();
    const seen = iso(rec.finished_ns) ?? iso(rec.started_ns) ?? createdAt;
    const lastUpdatedAt = seen < createdAt ? createdAt : seen;
    const t: Obj = {
      taskId: rec.task,
      status: statusOf(rec.state),
      createdAt,
      lastUpdatedAt,
      // Kernel tasks are bounded by count, not time, and are lost with the kernel.
      ttlMs: null,
      pollIntervalMs: POLL_INTERVAL_MS,
    };
    const msg = message ??
      (rec.state === "queued"
        ? "queued behind this session's running task"
        : rec.state === "cancelling"
        ? "cancelling"
        : undefined);
    if (msg) t.statusMessage = msg;
    return t;
  }

  /** The `CreateTaskResult` for a kernel task that just started. */
  async create(task: string): Promise<CreateTaskResult> {
    if (this.#created.size >= MAX_REMEMBERED) {
      this.#created.delete(this.#created.keys().next().value!);
    }
    this.#created.set(task, new Date().toISOString());
    const rec = await this.link.call<TaskRecord>("task.get", { task });
    return { resultType: "task", ...this.task(rec) } as CreateTaskResult;
  }

  /** A kernel task record, or the extension's -32602 for an unknown task. */
  async record(taskId: unknown): Promise<TaskRecord> {
    if (typeof taskId !== "string" || !/^task:[1-9][0-9]*$/.test(taskId)) {
      throw new ProtocolError(-32602, "Failed to retrieve task: Task not found", { taskId });
    }
    try {
      return await this.link.call<TaskRecord>("task.get", { task: taskId });
    } catch (e) {
      if (e instanceof RpcError && e.code === -32021) {
        throw new ProtocolError(-32602, "Failed to retrieve task: Task not found", { taskId });
      }
      throw e;
    }
  }

  /**
   * `tasks/get`: the `DetailedTask`. A finished task carries `result`, the `CallToolResult` the
   * call would have returned (built by `finish`); a tool error is a completed task whose result
   * has `isError: true`, as the specification requires.
   */
  async get(taskId: unknown, finish: (rec: TaskRecord) => Promise<ToolResult>): Promise<Obj> {
    const rec = await this.record(taskId);
    const t = this.task(rec);
    // The inner result is a 2026-07-28 result too, so it names its kind.
    if (t.status === "completed") t.result = { ...await finish(rec), resultType: "complete" };
    return { ...t, resultType: "complete" };
  }

  /** `tasks/cancel`: an empty acknowledgement once the kernel has the cancel. */
  async cancel(taskId: unknown): Promise<Obj> {
    const rec = await this.record(taskId);
    await this.link.call("task.cancel", { task: rec.task });
    return { resultType: "complete" };
  }

  /** `tasks/update`: acknowledged (no Shoal task waits for input, so nothing is outstanding). */
  async update(taskId: unknown): Promise<Obj> {
    await this.record(taskId);
    return { resultType: "complete" };
  }
}

/** The -32021 error for a client that uses the extension without declaring it. */
export function missingCapability(): ProtocolError {
  return new ProtocolError(MISSING_CAPABILITY, "Missing required client capability", {
    requiredCapabilities: { extensions: { [TASKS_EXT]: {} } },
  });
}

/**
 * A transport around the stdio one that applies the extension's wire rules the SDK does not
 * know: it advertises the extension in the `server/discover` or `initialize` answer to a client
 * that declared it, and sends a `CreateTaskResult` as exactly the task (the SDK adds `content`
 * to every tool result). It remembers whether the connection's `initialize` declared it.
 */
export class TasksWire implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  /** Whether this connection's `initialize` declared the extension (2025 era). */
  initializeDeclared = false;
  /** Pending discover/initialize request ids whose answer advertises the extension. */
  #advertise = new Set<string>();

  constructor(readonly inner: Transport) {}

  start(): Promise<void> {
    this.inner.onclose = () => this.onclose?.();
    this.inner.onerror = (e) => this.onerror?.(e);
    this.inner.onmessage = (m, extra) => {
      const msg = m as Obj;
      if (msg.method === "initialize" && "id" in msg) {
        const caps = isObj(msg.params) ? msg.params.capabilities : undefined;
        this.initializeDeclared = capsDeclare(caps);
        if (this.initializeDeclared) this.#advertise.add(JSON.stringify(msg.id));
      } else if (msg.method === "server/discover" && "id" in msg && paramsDeclare(msg.params)) {
        this.#advertise.add(JSON.stringify(msg.id));
      } else if (msg.method === "subscriptions/listen" && "id" in msg && asksTaskIds(msg.params)) {
        // Task notifications need the capability (a declaring client gets none agreed: the
        // acknowledgement lists no taskIds, which the specification allows).
        if (!paramsDeclare(msg.params)) {
          const e = missingCapability();
          this.inner.send({
            jsonrpc: "2.0",
            id: msg.id,
            error: { code: e.code, message: e.message, data: e.data },
          } as JSONRPCMessage).catch((err) => this.onerror?.(err as Error));
          return;
        }
      }
      this.onmessage?.(m, extra);
    };
    return this.inner.start();
  }

  send(message: JSONRPCMessage, options?: Parameters<Transport["send"]>[1]): Promise<void> {
    const msg = message as Obj;
    if ("id" in msg && isObj(msg.result)) {
      const result = msg.result;
      const key = JSON.stringify(msg.id);
      if (this.#advertise.delete(key) && isObj(result.capabilities)) {
        const caps = result.capabilities;
        const extensions = isObj(caps.extensions) ? caps.extensions : {};
        msg.result = {
          ...result,
          capabilities: { ...caps, extensions: { ...extensions, [TASKS_EXT]: {} } },
        };
      } else if (result.resultType === "task" && Array.isArray(result.content)) {
        const { content: _content, ...task } = result;
        msg.result = task;
      }
    }
    return this.inner.send(message, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
