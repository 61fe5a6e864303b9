/**
 * The `io.modelcontextprotocol/tasks` extension (2026-07-28 specification) end to end on the raw
 * wire, every answer checked with the extension's own published schemas
 * (`@modelcontextprotocol/ext-tasks/core/v2`): a declaring client gets the extension advertised,
 * a task handle at once for long work, polling to the very tool result, cancellation, and the
 * specified errors; a client that does not declare it sees none of it.
 */

import {
  deepStrictEqual as assertEquals,
  match as assertMatch,
  ok as assert,
} from "node:assert/strict";
import {
  CancelTaskResultV2Schema,
  CreateTaskResultV2Schema,
  GetTaskResultV2Schema,
  ServerTaskCapabilityEnvelopeV2Schema,
  UpdateTaskResultV2Schema,
} from "@modelcontextprotocol/ext-tasks/core/v2";
import {
  createTaskSessionFromClient,
  resultFromTaskOutcome,
} from "@modelcontextprotocol/ext-tasks/client";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { CONFIG, MCP, startKernel, waitFor, within } from "./_helpers.ts";
import { type RawMcp, rawMcp } from "./_raw.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
type Obj = Record<string, unknown>;
// deno-lint-ignore no-explicit-any
type Any = any;

const EXT = "io.modelcontextprotocol/tasks";
const CLIENT = { name: "tasks-test", version: "1" };

/** The 2026-07-28 per-request envelope, declaring the extension or not. */
function meta(declare: boolean): Obj {
  return {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": CLIENT,
    "io.modelcontextprotocol/clientCapabilities": declare ? { extensions: { [EXT]: {} } } : {},
  };
}

/** A way to talk in one era, declaring the extension or not. */
interface Speaker {
  label: string;
  call(c: RawMcp, method: string, params: Obj): Promise<Obj>;
}

const modern = (declare: boolean): Speaker => ({
  label: `2026-07-28 ${declare ? "declaring" : "not declaring"}`,
  call: (c, method, params) => c.request(method, { ...params, _meta: meta(declare) }),
});

const legacy = (declare: boolean): Speaker => ({
  label: `2025-11-25 ${declare ? "declaring" : "not declaring"}`,
  call: (c, method, params) => c.request(method, params),
});

/** Poll `tasks/get` (as the specification has clients do) until the task leaves `working`. */
async function settled(s: Speaker, c: RawMcp, taskId: string): Promise<Any> {
  let last: Any = null;
  await waitFor(
    async () => {
      last = (await s.call(c, "tasks/get", { taskId })).result;
      return last.status !== "working";
    },
    20_000,
    `${taskId} to settle`,
  );
  return last;
}

async function handshake(c: RawMcp, era: "modern" | "legacy", declare: boolean): Promise<Obj> {
  if (era === "modern") {
    const d = await c.request("server/discover", { _meta: meta(declare) });
    return d.result as Obj;
  }
  const caps = declare ? { extensions: { [EXT]: {} } } : {};
  const r = await c.request("initialize", {
    protocolVersion: "2025-11-25",
    capabilities: caps,
    clientInfo: CLIENT,
  });
  await c.notify("notifications/initialized");
  return r.result as Obj;
}

const parse = (
  schema: { safeParse(x: unknown): { success: boolean; error?: unknown } },
  x: unknown,
  what: string,
) => {
  const r = schema.safeParse(x);
  assert(
    r.success,
    `${what} fails the extension's schema: ${JSON.stringify(r.error)}\n${JSON.stringify(x)}`,
  );
};

Deno.test(
  "tasks extension: handle at once, poll to the result, cancel; none of it undeclared",
  opts,
  async (t) => {
    const k = await startKernel();
    try {
      for (const era of ["modern", "legacy"] as const) {
        const declaring = era === "modern" ? modern(true) : legacy(true);
        const c = rawMcp(["--socket", k.socket, "--session", `tasks-${era}`]);
        try {
          await t.step(`${declaring.label}: advertised`, async () => {
            const hs = await handshake(c, era, true);
            assertEquals((hs.capabilities as Any).extensions?.[EXT], {});
            parse(ServerTaskCapabilityEnvelopeV2Schema, hs.capabilities, "capabilities");
          });

          await t.step(`${declaring.label}: long work answers with a task at once`, async () => {
            const t0 = Date.now();
            const r = await declaring.call(c, "tools/call", {
              name: "shoal_exec",
              arguments: { src: "sleep 1500ms; 6 * 7" },
            });
            assert(Date.now() - t0 < 1200, "the handle came before the work finished");
            const task = r.result as Any;
            assertEquals(task.resultType, "task");
            assertEquals(task.content, undefined);
            assertMatch(task.taskId, /^task:\d+$/);
            assertEquals(task.status, "working");
            parse(CreateTaskResultV2Schema, task, "CreateTaskResult");
            // Durably created: tasks/get resolves at once.
            const g = await declaring.call(c, "tasks/get", { taskId: task.taskId });
            parse(GetTaskResultV2Schema, g.result, "GetTaskResult (working)");
            assertEquals((g.result as Any).status, "working");
            assertEquals((g.result as Any).resultType, "complete");
            const done = await settled(declaring, c, task.taskId);
            parse(GetTaskResultV2Schema, done, "GetTaskResult (completed)");
            assertEquals(done.status, "completed");
            assertEquals(done.result.isError, false);
            assertEquals(done.result.content[0], { type: "text", text: "42" });
            assertEquals(done.result.structuredContent.value, { $: "int", v: 42 });
          });

          await t.step(`${declaring.label}: quick work still answers inline`, async () => {
            const r = await declaring.call(c, "tools/call", {
              name: "shoal_exec",
              arguments: { src: "1 + 1" },
            });
            assertEquals((r.result as Any).content[0].text, "2");
            assert((r.result as Any).resultType !== "task");
          });

          await t.step(`${declaring.label}: a tool error completes with isError`, async () => {
            const r = await declaring.call(c, "tools/call", {
              name: "shoal_exec",
              arguments: { src: "sleep 400ms; 1 / 0" },
            });
            const id = (r.result as Any).taskId;
            const done = await settled(declaring, c, id);
            parse(GetTaskResultV2Schema, done, "GetTaskResult (tool error)");
            assertEquals(done.status, "completed");
            assertEquals(done.result.isError, true);
            assertMatch(done.result.content[0].text, /division by zero/);
          });

          await t.step(`${declaring.label}: cancel, update, unknown ids`, async () => {
            const r = await declaring.call(c, "tools/call", {
              name: "shoal_exec",
              arguments: { src: "sleep 30s", background: true },
            });
            const id = (r.result as Any).taskId;
            parse(CreateTaskResultV2Schema, r.result, "CreateTaskResult (background)");
            const u = await declaring.call(c, "tasks/update", { taskId: id, inputResponses: {} });
            parse(UpdateTaskResultV2Schema, u.result, "UpdateTaskResult");
            const x = await declaring.call(c, "tasks/cancel", { taskId: id });
            parse(CancelTaskResultV2Schema, x.result, "CancelTaskResult");
            const st = await settled(declaring, c, id);
            parse(GetTaskResultV2Schema, st, "GetTaskResult (cancelled)");
            assertEquals(st.status, "cancelled");
            for (const method of ["tasks/get", "tasks/cancel", "tasks/update"]) {
              const e = await declaring.call(c, method, {
                taskId: "task:999999",
                inputResponses: {},
              });
              assertEquals((e.error as Any)?.code, -32602, `${method} unknown task`);
            }
          });
        } finally {
          await c.close();
        }

        const plain = era === "modern" ? modern(false) : legacy(false);
        const p = rawMcp(["--socket", k.socket, "--session", `plain-${era}`, "--budget-ms", "300"]);
        try {
          await t.step(`${plain.label}: not advertised, no task results, -32021`, async () => {
            const hs = await handshake(p, era, false);
            assertEquals((hs.capabilities as Any).extensions?.[EXT], undefined);
            const r = await plain.call(p, "tools/call", {
              name: "shoal_exec",
              arguments: { src: "sleep 1s; 1" },
            });
            const res = r.result as Any;
            assert(res.resultType !== "task", "no CreateTaskResult without the capability");
            assertMatch(res.structuredContent.task, /^task:\d+$/); // the budget → handle flow
            const e = await plain.call(p, "tasks/get", { taskId: res.structuredContent.task });
            assertEquals((e.error as Any)?.code, -32021);
            assertEquals((e.error as Any).data.requiredCapabilities, { extensions: { [EXT]: {} } });
            if (era === "modern") {
              const l = await plain.call(p, "subscriptions/listen", {
                notifications: { taskIds: [res.structuredContent.task] },
              });
              assertEquals(
                (l.error as Any)?.code,
                -32021,
                "task notifications need the capability",
              );
            }
          });
        } finally {
          await p.close();
        }
      }
    } finally {
      await k.stop();
    }
  },
);

Deno.test(
  "tasks extension: the extension's own requester (ext-tasks) round-trips",
  opts,
  async () => {
    const k = await startKernel();
    const caps = { extensions: { [EXT]: {} } };
    const client = new Client(CLIENT, {
      capabilities: caps,
      versionNegotiation: { mode: { pin: "2026-07-28" } },
    } as never);
    const args = ["--socket", k.socket, "--session", "requester"];
    // The requester needs a raw request path besides the SDK client (as its guide says).
    const raw = rawMcp(args);
    try {
      await within(
        60_000,
        client.connect(
          new StdioClientTransport({
            command: Deno.execPath(),
            args: ["run", "-A", "--unstable-worker-options", "--config", CONFIG, MCP, ...args],
          }),
        ),
        "connect",
      );
      const methods: string[] = [];
      const session = createTaskSessionFromClient(client, {
        endpointId: "shoal-test",
        rawDispatch: async (req: Any) => {
          methods.push(req.method);
          return await raw.request(req.method, req.params) as never;
        },
        v2RequestFraming: {
          protocolVersion: "2026-07-28",
          clientInfo: CLIENT,
          clientCapabilities: caps,
        },
      } as never);
      try {
        const execution = await session.callTool("shoal_exec", { src: "sleep 1200ms; 6 * 7" });
        const { outcome } = await within(30_000, execution.settle(), "settle");
        assertEquals((outcome as Any).status, "completed");
        const result = resultFromTaskOutcome(outcome) as Any;
        assertEquals(result.content[0], { type: "text", text: "42" });
        assertEquals(result.isError, false);
        assertEquals(methods[0], "tools/call");
        assert(methods.includes("tasks/get"), `polled: ${methods.join(", ")}`);
      } finally {
        await session.close();
      }
    } finally {
      await raw.close();
      await client.close().catch(() => {});
      await k.stop();
    }
  },
);
