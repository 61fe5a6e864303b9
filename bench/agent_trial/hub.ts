/**
 * The trial hub: one long-lived process per trial that holds ONE server and its host-like
 * client (so cwd, variables and tasks persist between the agent's calls), serves calls from
 * `call.ts` over a Unix socket in the trial directory, and logs every call — tool, arguments,
 * isError, failed, output characters, time, and for Shoal whether the source used `sh { … }` —
 * to `calls.jsonl`, attributed to the task `call.ts begin` named last.
 *
 *   deno run -A bench/agent_trial/hub.ts SERVER      (started by `call.ts start SERVER`)
 *
 * @module
 */

import { join } from "node:path";
import { type ServerName, SERVERS, shownText, startServer, trialDirs } from "./servers.ts";

type Obj = Record<string, unknown>;

/** One logged call. */
export interface CallRecord {
  ts: string;
  server: ServerName;
  task: string | null;
  tool: string;
  args: unknown;
  isError: boolean;
  /** isError, a protocol error, or (Shoal) a command that ran and failed. */
  failed: boolean;
  /** Characters of text the agent was shown. */
  chars: number;
  ms: number;
  /** Shoal calls: `sh` when the source handed work to POSIX sh, else `native`. */
  form: "native" | "sh" | null;
}

/** How a Shoal source runs its work: through `sh { … }`/`sh -c`, or natively. */
export function formOf(tool: string, args: unknown): "native" | "sh" {
  if (tool !== "shoal_exec") return "native";
  const src = String((args as Obj)?.src ?? "");
  return /\b(sh|bash)\s*\{|\b(sh|bash)\s+-c\b/.test(src) ? "sh" : "native";
}

/** The text an agent sees of a tool result. */
export function textOf(r: Obj): string {
  const content = Array.isArray(r.content) ? r.content as Obj[] : [];
  return content.map((c) =>
    c.type === "text"
      ? String(c.text)
      : c.type === "resource_link"
      ? `[link ${c.uri}]`
      : `[${c.type}]`
  ).join("\n");
}

function failedOutcome(r: Obj): boolean {
  const v = (r.structuredContent as Obj | undefined)?.value as Obj | undefined;
  return v?.$ === "outcome" && v.ok === false;
}

async function main(server: ServerName): Promise<void> {
  const dirs = trialDirs(server);
  const running = await startServer(server, dirs);
  const sock = join(dirs.dir, "hub.sock");
  await Deno.remove(sock).catch(() => {});
  const listener = Deno.listen({ transport: "unix", path: sock });
  const log = await Deno.open(join(dirs.dir, "calls.jsonl"), { append: true, create: true });
  const enc = new TextEncoder();
  const currentTask = async () => {
    try {
      return (JSON.parse(await Deno.readTextFile(join(dirs.dir, "state.json"))) as Obj)
        .task as string;
    } catch {
      return null;
    }
  };
  console.error(`agent-trial hub: ${server} ready on ${sock}`);
  let stop = false;
  for await (const conn of listener) {
    const reply = async (x: unknown) => {
      await conn.write(enc.encode(JSON.stringify(x) + "\n")).catch(() => {});
      conn.close();
    };
    let req: Obj;
    try {
      let buf = "";
      const b = new Uint8Array(1 << 16);
      while (!buf.includes("\n")) {
        const n = await conn.read(b);
        if (n === null) break;
        buf += new TextDecoder().decode(b.subarray(0, n));
      }
      req = JSON.parse(buf);
    } catch (e) {
      await reply({ error: `bad request: ${(e as Error).message}` });
      continue;
    }
    if (req.op === "stop") {
      await reply({ ok: true });
      stop = true;
      break;
    }
    if (req.op === "show") {
      await reply({ text: await shownText(running) });
      continue;
    }
    const tool = String(req.tool);
    const t0 = performance.now();
    let text: string;
    let isError = false;
    let failed = false;
    try {
      // Long calls (a 40 s job) are the server's to bound: no client-side time limit.
      const r = await running.client.callTool(
        { name: tool, arguments: req.args as Obj },
        undefined,
        {
          timeout: 3_600_000,
        },
      ) as Obj;
      text = textOf(r);
      isError = r.isError === true;
      failed = isError || (server === "shoal" && failedOutcome(r));
    } catch (e) {
      text = `MCP error: ${(e as Error).message}`;
      isError = true;
      failed = true;
    }
    const rec: CallRecord = {
      ts: new Date().toISOString(),
      server,
      task: await currentTask(),
      tool,
      args: req.args,
      isError,
      failed,
      chars: text.length,
      ms: Math.round(performance.now() - t0),
      form: server === "shoal" ? formOf(tool, req.args) : null,
    };
    await log.write(enc.encode(JSON.stringify(rec) + "\n"));
    await reply({ text, isError });
  }
  listener.close();
  log.close();
  await running.close();
  await Deno.remove(sock).catch(() => {});
  if (stop) Deno.exit(0);
}

if (import.meta.main) {
  const server = Deno.args[0] as ServerName;
  if (!SERVERS.includes(server)) {
    console.error(`usage: hub.ts ${SERVERS.join("|")}`);
    Deno.exit(2);
  }
  await main(server);
}
