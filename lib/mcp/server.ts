/**
 * The `shoal-mcp` process: attach to the kernel (starting one if needed) before reading stdin,
 * then serve MCP over stdio in both protocol eras — the 2025 `initialize` handshake and the
 * 2026-07-28 era (`server/discover`, per-request `_meta`, `subscriptions/listen`) — from one
 * server factory. Requests are handled concurrently (a slow tool call blocks nothing else).
 * stdout carries protocol frames only; logs go to stderr. The process exits when stdin closes.
 */

import {
  inputRequired,
  type JSONRPCMessage,
  ProtocolError,
  Server,
} from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import denoJson from "../../deno.json" with { type: "json" };
import { z } from "zod";
import { type KernelEvent, RpcError, type TaskRecord } from "../client/mod.ts";
import { MCP_USAGE, type McpConfig, parseMcpArgs, UsageError } from "./config.ts";
import { KernelLink, TransportError } from "./kernel_link.ts";
import { instructions } from "./primer.ts";
import { listResources, readResource, TEMPLATES } from "./resources.ts";
import { forVersion, toolError, type ToolResult } from "./result.ts";
import {
  capsDeclare,
  CLIENT_CAPS_META,
  missingCapability,
  TasksExtension,
  TasksWire,
} from "./tasks_ext.ts";
import { finished } from "./tools/task_flow.ts";
import { errorText } from "./twin.ts";
import { LEGACY_HOLDER, Subscriptions } from "./subscriptions.ts";
import {
  type ToolContext,
  type ToolDef,
  toolListing,
  TOOLS,
  TOOLS_BY_NAME,
  validateArgs,
} from "./tools/mod.ts";
import { BadUri } from "./uri.ts";
import { InputNeeded, legacyAsk, modernAsk, StateSeal } from "./approval.ts";
import { DenoStdioTransport, type FastPath } from "./stdio.ts";
import { stdinReader, stdoutWriter } from "./event_stdio.ts";

/** Server identity. */
export const SERVER_INFO = { name: "shoal-mcp", version: denoJson.version };

function log(msg: string): void {
  console.error(`shoal-mcp: ${msg}`);
}

type Obj = Record<string, unknown>;

/** Map a failure to the JSON-RPC error the client sees. */
function protocolError(e: unknown): ProtocolError {
  if (e instanceof ProtocolError) return e;
  if (e instanceof BadUri) return new ProtocolError(-32602, e.message, null);
  if (e instanceof RpcError) return new ProtocolError(e.code, `kernel error: ${e.message}`, e.data);
  if (e instanceof TransportError) return new ProtocolError(-32603, e.message, null);
  log(`internal error: ${(e as Error)?.stack ?? e}`);
  return new ProtocolError(-32603, `internal error: ${(e as Error)?.message ?? e}`, null);
}

/**
 * Sees each inbound message before the SDK: a 2026-era `subscriptions/listen` opens kernel
 * subscriptions for its URIs first (so the acknowledgement follows a live subscription), and a
 * `notifications/cancelled` of a listen releases them.
 */
function listenInspector(subs: Subscriptions): (m: JSONRPCMessage) => Promise<void> {
  const listens = new Set<string>();
  return async (m) => {
    const msg = m as Obj;
    const params = (msg.params ?? {}) as Obj;
    const meta = (params._meta ?? {}) as Obj;
    // Only a 2026-era listen (it carries the per-request envelope) is served by the SDK.
    const modern = typeof meta["io.modelcontextprotocol/protocolVersion"] === "string";
    if (msg.method === "subscriptions/listen" && "id" in msg && modern) {
      const holder = `listen:${JSON.stringify(msg.id)}`;
      const uris = ((params.notifications ?? {}) as Obj).resourceSubscriptions;
      if (!Array.isArray(uris)) return;
      listens.add(holder);
      await Promise.all(
        uris.filter((u): u is string => typeof u === "string").map((u) =>
          subs.add(u, holder).catch((e) => log(`listen ${u}: ${(e as Error).message}`))
        ),
      );
    } else if (msg.method === "notifications/cancelled") {
      const holder = `listen:${JSON.stringify(params.requestId)}`;
      if (listens.delete(holder)) await subs.removeHolder(holder);
    }
  };
}

/** Seals the `requestState` of input-required rounds (one key per facade process). */
const seal = new StateSeal();

/**
 * The first tool result after the session restarted under the facade (its kernel was lost)
 * says so, and which refs are gone, before anything else (issue 19).
 */
function withRestartNotice(r: ToolResult, link: KernelLink): ToolResult {
  const n = link.takeRestartNotice();
  if (n === null) return r;
  return {
    ...r,
    content: [{ type: "text", text: n.message }, ...r.content],
    structuredContent: { ...(r.structuredContent ?? {}), session_restarted: n },
  };
}

/** Run a validated tool call: its result for the client's version, or the protocol error. */
async function runTool(
  tool: ToolDef,
  args: Obj,
  tc: ToolContext,
  version: string | undefined,
): Promise<Obj> {
  try {
    const r = await tool.run(args, tc);
    if (!("content" in r)) return r as Obj; // a CreateTaskResult (tasks extension)
    return forVersion(withRestartNotice(r as ToolResult, tc.link), version) as Obj;
  } catch (e) {
    if (e instanceof InputNeeded) return e.result as Obj;
    throw protocolError(e);
  }
}

/**
 * Plain 2025-era `shoal_exec` calls, served without the SDK's per-request dispatch, which costs
 * ~10 % of a `shoal_exec` of a quick command here (measured with facades built without it): a
 * `tools/call` whose params are only `name` and valid `arguments`, from a client that negotiated a
 * 2025 version, declared neither the tasks extension nor elicitation (nothing to ask it, no task to
 * hand over, no progress token). Everything else goes to the SDK. The answer is what the SDK path
 * gives (a test compares the two); cancelling stops it and nothing is sent.
 */
function fastExec(
  link: KernelLink,
  cfg: McpConfig,
  wire: TasksWire,
  current: () => Server | null,
): FastPath {
  const tool = TOOLS_BY_NAME.get("shoal_exec")!;
  return (msg, signal) => {
    if (msg.method !== "tools/call" || cfg.sdkOnly) return null;
    const p = msg.params as Obj | undefined;
    if (p === null || typeof p !== "object" || p.name !== "shoal_exec") return null;
    for (const k in p) if (k !== "name" && k !== "arguments") return null;
    const server = current();
    const version = server?.getNegotiatedProtocolVersion();
    if (version === undefined || version >= MODERN_ERA || wire.initializeDeclared) return null;
    if (server!.getClientCapabilities()?.elicitation && link.canApprove) return null;
    const v = validateArgs(tool, p.arguments);
    if (!v.ok) return null; // the SDK path says what is wrong
    const tc: ToolContext = { link, budgetMs: cfg.budgetMs, signal };
    return runTool(tool, v.args, tc, version).then(
      (result) => ({ result }),
      (e: ProtocolError) => ({
        error: {
          code: e.code,
          message: e.message,
          ...(e.data !== undefined ? { data: e.data } : {}),
        },
      }),
    );
  };
}

/** The first protocol revision of the 2026 era (per-request envelopes; the SDK serves it). */
const MODERN_ERA = "2026-07-28";

/** Build one MCP server instance (the factory is called once per connection era). */
function buildServer(
  link: KernelLink,
  subs: Subscriptions,
  cfg: McpConfig,
  instructions: string,
  wire: TasksWire,
): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: {
      tools: { listChanged: false },
      resources: { subscribe: true, listChanged: false },
    },
    instructions,
  });
  let listing: Obj[] | null = null;
  const tasks = new TasksExtension(link);
  /** The request's own declaration (2026-07-28), else the connection's `initialize` one. */
  const declaresTasks = (envelope: unknown) =>
    envelope !== undefined
      ? capsDeclare((envelope as Obj)[CLIENT_CAPS_META])
      : wire.initializeDeclared;

  server.setRequestHandler("tools/list", () => {
    listing ??= TOOLS.filter((t) => !t.needs || !link.missing.has(t.needs)).map((t) =>
      toolListing(t, cfg.budgetMs)
    );
    return { tools: listing } as never;
  });

  server.setRequestHandler("tools/call", async (req, ctx) => {
    const name = req.params.name;
    const tool = TOOLS_BY_NAME.get(name);
    if (!tool) {
      throw new ProtocolError(-32602, `unknown tool ${JSON.stringify(name)}`, { tool: name });
    }
    const version = server.getNegotiatedProtocolVersion();
    // Bad arguments are the model's to fix, so they come back as a tool result (SEP-1303).
    const v = validateArgs(tool, req.params.arguments);
    if (!v.ok) {
      const error = { code: -32602, message: v.message, data: { tool: name, issues: v.issues } };
      return forVersion(toolError(error, { text: errorText(error) }), version) as never;
    }
    const token = ctx.mcpReq._meta?.progressToken;
    const tc: ToolContext = {
      link,
      budgetMs: cfg.budgetMs,
      signal: ctx.mcpReq.signal,
      createTask: declaresTasks(ctx.mcpReq.envelope)
        ? (task: string) => tasks.create(task)
        : undefined,
      progress: token === undefined ? undefined : (elapsedMs, message) =>
        ctx.mcpReq.notify({
          method: "notifications/progress",
          params: { progressToken: token, progress: elapsedMs / 1000, message },
        }),
    };
    // Approval in the host (issue 15): only a client that can elicit, only with an approver.
    const envelope = (ctx.mcpReq.envelope ?? {}) as Obj;
    const modern = typeof envelope["io.modelcontextprotocol/protocolVersion"] === "string";
    const caps = (modern
      ? envelope["io.modelcontextprotocol/clientCapabilities"]
      : server.getClientCapabilities()) as Obj | undefined;
    if (caps?.elicitation && link.canApprove) {
      const principal = link.attached?.principal ?? "the agent";
      tc.host = modern
        ? modernAsk(seal, name, v.args, {
          state: ctx.mcpReq.requestState(),
          response: ctx.mcpReq.inputResponses?.approve as Obj | undefined,
        }, (_plan, requestState, message, requestedSchema) =>
          inputRequired({
            inputRequests: {
              approve: inputRequired.elicit({ message, requestedSchema } as never),
            },
            requestState,
          }) as unknown as Obj, principal)
        : legacyAsk((p) =>
          ctx.mcpReq.elicitInput(p as never) as never, principal);
    }
    return await runTool(tool, v.args, tc, version) as never;
  });

  // The tasks extension (tasks_ext.ts): only for clients that declared it.
  const taskMethod =
    (fn: (p: Obj) => Promise<Obj>) => async (p: Obj, ctx: { mcpReq: { envelope?: unknown } }) => {
      if (!declaresTasks(ctx.mcpReq.envelope)) throw missingCapability();
      try {
        return await fn(p) as never;
      } catch (e) {
        throw protocolError(e);
      }
    };
  const finish = async (rec: TaskRecord) =>
    forVersion(await finished(link, rec, {}), server.getNegotiatedProtocolVersion());
  const TaskParams = { params: z.looseObject({ taskId: z.string() }) };
  server.setRequestHandler(
    "tasks/get",
    TaskParams as never,
    taskMethod((p) => tasks.get(p.taskId, finish)) as never,
  );
  server.setRequestHandler(
    "tasks/cancel",
    TaskParams as never,
    taskMethod((p) => tasks.cancel(p.taskId)) as never,
  );
  server.setRequestHandler(
    "tasks/update",
    TaskParams as never,
    taskMethod((p) => tasks.update(p.taskId)) as never,
  );

  server.setRequestHandler("resources/list", async () => {
    try {
      return { resources: await listResources(link) } as never;
    } catch (e) {
      throw protocolError(e);
    }
  });

  server.setRequestHandler("resources/templates/list", () =>
    ({
      resourceTemplates: TEMPLATES,
    }) as never);

  server.setRequestHandler("resources/read", async (req) => {
    try {
      return await readResource(link, req.params.uri) as never;
    } catch (e) {
      throw protocolError(e);
    }
  });

  server.setRequestHandler("resources/subscribe", async (req) => {
    try {
      await subs.add(req.params.uri, LEGACY_HOLDER);
      return {};
    } catch (e) {
      throw protocolError(e);
    }
  });

  server.setRequestHandler("resources/unsubscribe", async (req) => {
    try {
      await subs.remove(req.params.uri, LEGACY_HOLDER);
      return {};
    } catch (e) {
      throw protocolError(e);
    }
  });

  return server;
}

/** Run `shoal-mcp`; resolves with the exit status once stdin closes. */
export async function mcpMain(args: string[]): Promise<number> {
  let cfg: McpConfig | null;
  try {
    cfg = parseMcpArgs(args);
  } catch (e) {
    console.error(e instanceof UsageError ? e.message : `shoal-mcp: ${(e as Error).message}`);
    return 2;
  }
  if (cfg === null) {
    // `--help` asked for it: usage on stdout, success (no MCP session is started).
    console.log(MCP_USAGE);
    return 0;
  }
  const link = new KernelLink(cfg, log);
  try {
    await link.client(); // connect and attach before reading stdin
    await link.probe();
  } catch (e) {
    if (!(e instanceof RpcError)) {
      log((e as Error).message); // no kernel to be had (or not one of ours): nothing to serve
      await link.close();
      return 1;
    }
    // The kernel is there but refused the attach: serve anyway, and each call retries and
    // reports the kernel's error to the host (rather than the host seeing the facade vanish).
    log(`kernel refused session.attach (${e.code}): ${e.message}; each call will retry`);
  }
  let server: Server | null = null;
  const notify = (uri: string, e: KernelEvent) => {
    server?.sendResourceUpdated({ uri, seq: e.seq, payload: e.payload } as never).catch((err) =>
      log(`notification for ${uri}: ${(err as Error).message}`)
    );
  };
  const subs = new Subscriptions(link, notify);
  const text = await instructions(cfg.budgetMs);
  let done!: () => void;
  const closed = new Promise<void>((r) => (done = r));
  const stdio = new DenoStdioTransport(listenInspector(subs), stdinReader(), stdoutWriter());
  const transport = new TasksWire(stdio);
  stdio.fast = fastExec(link, cfg, transport, () => server);
  serveStdio(() => {
    server = buildServer(link, subs, cfg, text, transport);
    server.onclose = done;
    return server;
  }, { transport, onerror: (e) => log(e.message) });
  // stdin EOF closes the transport (and the instance); with no instance yet, exit all the same.
  stdio.ended.then(done);
  await closed;
  await link.close();
  return 0;
}
