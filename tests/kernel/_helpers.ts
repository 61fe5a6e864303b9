/**
 * Test helpers: an in-process kernel on a temp socket, a kernel subprocess, attached clients,
 * and a bounded wait.
 */

import { join } from "node:path";
import { KernelClient } from "../../lib/client/client.ts";
import { RpcError } from "../../lib/client/errors.ts";
import { type KernelHandle, type KernelOptions, startKernel } from "../../lib/kernel/server.ts";

/** A fresh private directory for sockets and session cwds. */
export async function tempDir(): Promise<string> {
  return await Deno.makeTempDir({ prefix: "shoal-kernel-test-" });
}

type KernelTest = (k: KernelHandle, dir: string) => Promise<void>;

/** Run `fn` against an in-process kernel on a socket in a fresh temp dir (its cwd too). */
async function inTempKernel(
  fn: KernelTest,
  extra: Partial<KernelOptions>,
  own: (dir: string) => Partial<KernelOptions>,
): Promise<void> {
  const dir = await tempDir();
  const k = await startKernel({
    ...extra,
    ...own(dir),
    socket: join(dir, "run", "k.sock"),
    cwd: dir,
    onError: () => {},
  });
  try {
    await fn(k, dir);
  } finally {
    await k.close();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** An in-process kernel on a temp socket. */
export function withKernel(fn: KernelTest, extra: Partial<KernelOptions> = {}): Promise<void> {
  // The core suite isolates the kernel from the journal (tests/kernel/journal_*.ts cover it).
  return inTempKernel(fn, extra, () => ({ ephemeral: true, journal: false }));
}

/** Like {@link withKernel}, with a journal in `dir/state` (what a real kernel keeps). */
export function withJournaledKernel(
  fn: KernelTest,
  extra: Partial<KernelOptions> = {},
): Promise<void> {
  return inTempKernel(fn, extra, (dir) => ({ stateDir: join(dir, "state") }));
}

/** Connect and attach (default session unless given). */
export async function client(
  path: string,
  session = "default",
  extra: Record<string, unknown> = {},
): Promise<KernelClient> {
  return await KernelClient.connect({ socket: path, attach: { session, ...extra } });
}

/** The RpcError a call rejects with (fails the test when it resolves). */
export async function rpcError(p: Promise<unknown>): Promise<RpcError> {
  try {
    const r = await p;
    throw new Error(`expected an RPC error, got ${JSON.stringify(r)}`);
  } catch (e) {
    if (e instanceof RpcError) return e;
    throw e;
  }
}

/** Poll `cond` until true or `ms` elapse (then throw `what`). */
export async function waitFor(cond: () => boolean | Promise<boolean>, ms: number, what: string) {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Raw socket access: write bytes, read response frames. */
export class RawConn {
  #buf = "";
  #dec = new TextDecoder();
  private constructor(readonly conn: Deno.UnixConn) {}

  static async open(path: string): Promise<RawConn> {
    return new RawConn(await Deno.connect({ transport: "unix", path }));
  }

  async write(text: string | Uint8Array): Promise<void> {
    let data = typeof text === "string" ? new TextEncoder().encode(text) : text;
    while (data.length) data = data.subarray(await this.conn.write(data));
  }

  /** The next response frame (parsed), within `ms`. */
  async next(ms = 5000): Promise<Record<string, unknown>> {
    const end = Date.now() + ms;
    const chunk = new Uint8Array(65536);
    while (!this.#buf.includes("\n")) {
      const left = end - Date.now();
      if (left <= 0) throw new Error("timed out waiting for a frame");
      let timer: ReturnType<typeof setTimeout> | undefined;
      const n = await Promise.race([
        this.conn.read(chunk),
        new Promise<"t">((r) => (timer = setTimeout(() => r("t"), left))),
      ]);
      clearTimeout(timer);
      if (n === "t") continue;
      if (n === null) throw new Error("connection closed");
      this.#buf += this.#dec.decode(chunk.subarray(0, n), { stream: true });
    }
    const i = this.#buf.indexOf("\n");
    const line = this.#buf.slice(0, i);
    this.#buf = this.#buf.slice(i + 1);
    return JSON.parse(line);
  }

  /** Send a request and read frames until its response (events are skipped). */
  async call(id: unknown, method: string, params?: unknown): Promise<Record<string, unknown>> {
    await this.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    for (;;) {
      const f = await this.next();
      if (f.method === "event") continue;
      return f;
    }
  }

  close(): void {
    try {
      this.conn.close();
    } catch { /* closed */ }
  }
}

/** Start `lib/kernel/cli.ts` as a subprocess and wait for its ready line. */
export async function spawnKernel(
  socket: string,
  extra: string[] = [],
): Promise<{ child: Deno.ChildProcess; stderr: () => string }> {
  const cli = new URL("../../lib/kernel/cli.ts", import.meta.url).pathname;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-worker-options", cli, "--socket", socket, ...extra],
    // Journal into a state dir beside the socket, never the user's ~/.local/state/shoal.
    env: { XDG_STATE_HOME: `${socket}.state` },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let text = "";
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  const pump = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      text += value;
    }
  })();
  pump.catch(() => {});
  await waitFor(
    () => text.includes("shoal-kernel: ready") || text.includes("shoal-kernel: "),
    20000,
    "kernel ready",
  );
  if (!text.includes("ready")) throw new Error(`kernel failed: ${text}`);
  return { child, stderr: () => text };
}

/** VmRSS of a process in KiB. */
export function rssKiB(pid: number): number {
  const s = Deno.readTextFileSync(`/proc/${pid}/status`);
  return Number(/VmRSS:\s+(\d+)/.exec(s)![1]);
}
