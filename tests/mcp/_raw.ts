/**
 * A newline-JSON-RPC client over a `shoal-mcp` subprocess with no SDK in between, for wire
 * behaviour the SDK clients do not expose (the tasks extension, exact result shapes).
 */

import { CONFIG, MCP, within } from "./_helpers.ts";

type Obj = Record<string, unknown>;

/** A raw connection. */
export interface RawMcp {
  /** Send a request; resolves with its whole response message (result or error). */
  request(method: string, params?: Obj): Promise<Obj>;
  /** Send a request without waiting: its id, and its response when (if ever) it comes. */
  start(method: string, params?: Obj): { id: number; answer: Promise<Obj> };
  notify(method: string, params?: Obj): Promise<void>;
  close(): Promise<void>;
}

/** Spawn `shoal-mcp` with `args` (and `env` added to ours) and talk JSON-RPC to it. */
export function rawMcp(args: string[], env: Record<string, string> = {}): RawMcp {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-worker-options", "--config", CONFIG, MCP, ...args],
    env: { ...Deno.env.toObject(), ...env },
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  const enc = new TextEncoder();
  const waiting = new Map<string, (m: Obj) => void>();
  let next = 1;
  (async () => {
    let buf = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      buf += chunk;
      for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.trim() === "") continue;
        const m = JSON.parse(line) as Obj;
        if ("id" in m && !("method" in m)) waiting.get(JSON.stringify(m.id))?.(m);
      }
    }
  })().catch(() => {});
  const write = (m: Obj) => writer.write(enc.encode(JSON.stringify(m) + "\n"));
  const start = (method: string, params: Obj = {}) => {
    const id = next++;
    const answer = new Promise<Obj>((r) => waiting.set(JSON.stringify(id), r));
    void write({ jsonrpc: "2.0", id, method, params });
    return { id, answer };
  };
  return {
    async request(method, params = {}) {
      return await within(60_000, start(method, params).answer, `${method} answer`);
    },
    start,
    async notify(method, params = {}) {
      await write({ jsonrpc: "2.0", method, params });
    },
    async close() {
      await writer.close().catch(() => {});
      await within(10_000, child.status, "shoal-mcp exit");
    },
  };
}
