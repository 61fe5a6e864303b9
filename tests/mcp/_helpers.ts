/**
 * Test helpers: a kernel subprocess on a temp socket, `shoal-mcp` subprocesses driven by the
 * MCP SDK client in either protocol era, and bounded waits.
 */

import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { KernelClient } from "../../lib/client/mod.ts";

const root = (p: string) => fileURLToPath(new URL(`../../${p}`, import.meta.url));
/** Repo paths. */
export const MAIN = root("main.ts");
export const MCP = root("mcp.ts");
export const CONFIG = root("deno.json");

/** The two protocol eras. */
export type Era = "legacy" | "modern";
export const ERAS: Era[] = ["legacy", "modern"];

/** Reject after `ms` with `what`. */
export async function within<T>(ms: number, p: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, rej) => {
        timer = setTimeout(() => rej(new Error(`timed out after ${ms} ms: ${what}`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Poll `cond` until true, at most `ms`. */
export async function waitFor(cond: () => boolean | Promise<boolean>, ms: number, what: string) {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A kernel subprocess. */
export interface TestKernel {
  dir: string;
  socket: string;
  child: Deno.ChildProcess;
  stop(): Promise<void>;
}

/**
 * Start `shoal kernel` on a temp socket (`--ephemeral` unless `args` say otherwise; `setup`
 * prepares the temp dir first and returns extra flags) and wait for its ready line.
 */
export async function startKernel(
  setup?: (dir: string) => Promise<string[]>,
): Promise<TestKernel> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "shoal-mcp-test-" }));
  const socket = join(dir, "run", "k.sock");
  const flags = setup ? await setup(dir) : ["--ephemeral"];
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--unstable-worker-options",
      "--config",
      CONFIG,
      MAIN,
      "kernel",
      "--socket",
      socket,
      ...flags,
    ],
    cwd: dir,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  await within(
    30_000,
    (async () => {
      while (!seen.includes("shoal-kernel: ready")) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`kernel exited before ready: ${seen}`);
        seen += value;
      }
    })(),
    "kernel ready line",
  );
  // Keep draining stderr so the kernel never blocks on a full pipe.
  (async () => {
    try {
      while (!(await reader.read()).done) { /* drain */ }
    } catch { /* closed */ }
  })();
  return {
    dir,
    socket,
    child,
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch { /* already gone */ }
      await within(10_000, child.status, "kernel exit");
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

/** A connected MCP client over a `shoal-mcp` subprocess. */
export interface McpHandle {
  client: Client;
  transport: StdioClientTransport;
  /** Everything the server wrote on stderr so far. */
  stderr(): string;
  close(): Promise<void>;
}

/** Spawn `shoal-mcp` with `args`/`env` and connect in `era`. */
export async function connectMcp(
  era: Era,
  args: string[],
  env: Record<string, string> = {},
  cwd?: string,
): Promise<McpHandle> {
  let err = "";
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: ["run", "-A", "--unstable-worker-options", "--config", CONFIG, MCP, ...args],
    env: { ...Deno.env.toObject(), ...env },
    stderr: "pipe",
    ...(cwd ? { cwd } : {}),
  });
  transport.stderr?.on("data", (d: Uint8Array | string) => {
    err += typeof d === "string" ? d : new TextDecoder().decode(d);
  });
  const client = new Client(
    { name: "shoal-mcp-test", version: "1" },
    era === "modern" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {},
  );
  await within(60_000, client.connect(transport), `${era} connect (stderr: ${err})`);
  return {
    client,
    transport,
    stderr: () => err,
    close: () => within(10_000, client.close(), "client close"),
  };
}

/** A raw kernel client attached to `session` (to publish events, read stats). */
export async function kernelClient(socket: string, session: string): Promise<KernelClient> {
  return await KernelClient.connect({ socket, attach: { session } });
}

/** structuredContent as a record. */
// deno-lint-ignore no-explicit-any
export function sc(r: { structuredContent?: unknown }): any {
  return r.structuredContent;
}

/** The text of the first content block. */
export function text(r: { content?: unknown }): string {
  const c = (r.content as Array<{ type: string; text?: string }>)[0];
  return c.type === "text" ? c.text ?? "" : "";
}

/** The JSON-RPC error code a promise rejects with (fails when it resolves). */
export async function rpcCode(
  p: Promise<unknown>,
): Promise<{ code: number; message: string; data: unknown }> {
  try {
    const r = await p;
    throw new Error(`expected a JSON-RPC error, got ${JSON.stringify(r).slice(0, 300)}`);
  } catch (e) {
    const x = e as { code?: unknown; message: string; data?: unknown };
    if (typeof x.code !== "number") throw e;
    return { code: x.code, message: x.message, data: x.data };
  }
}

/** Processes whose command line mentions `needle` (our unique temp dir): leftover kernels. */
export async function pidsMentioning(needle: string): Promise<number[]> {
  const out: number[] = [];
  for await (const e of Deno.readDir("/proc")) {
    if (!/^[0-9]+$/.test(e.name) || Number(e.name) === Deno.pid) continue;
    try {
      const cmd = await Deno.readTextFile(`/proc/${e.name}/cmdline`);
      if (cmd.includes(needle)) out.push(Number(e.name));
    } catch { /* gone */ }
  }
  return out;
}

/** Kernels this test started (by pid, from the facade's stderr line). */
export function startedPids(stderr: string): number[] {
  return [...stderr.matchAll(/started kernel pid (\d+)/g)].map((m) => Number(m[1]));
}

export async function killPid(pid: number): Promise<void> {
  try {
    Deno.kill(pid, "SIGTERM");
  } catch { /* gone already */ }
  await waitFor(
    () => {
      try {
        Deno.kill(pid, "SIGCONT"); // probe: throws once the process is gone
        return false;
      } catch {
        return true;
      }
    },
    10_000,
    `kernel ${pid} to exit`,
  ).catch(() => {
    try {
      Deno.kill(pid, "SIGKILL");
    } catch { /* gone */ }
  });
}
