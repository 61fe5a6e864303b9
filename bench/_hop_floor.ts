/**
 * The floor of the kernel's four hops, for `isolation.ts`: a relay with the kernel's transport
 * and none of its work. It serves the kernel's socket framing, hands each request to a child
 * process over the child's stdin/stdout as one JSON line (the child reads fd 0 through
 * `node:net` and writes with `Deno.stdout.writeSync`, like `shoal __session`; the relay writes
 * through the child's stdin stream and reads its stdout with a reader loop, like
 * `session_process.ts`), and answers with the child's result: client → relay → child → relay →
 * client, with no evaluation, no tasks and no events. `exec` against it shows what four hops
 * cost on this machine; the kernel's ratio over it is what the kernel itself adds.
 *
 *   deno run -A bench/_hop_floor.ts --relay PATH   (started by startHopFloor)
 *
 * @module
 */

import { LineSplitter } from "../lib/kernel/line_splitter.ts";
import { serveFrames, startBenchServer } from "./_kernel_bench.ts";

const encoder = new TextEncoder();

/** `--relay-child`: answer each `{task, src}` line with a done line carrying a fixed result. */
async function relayChild(): Promise<void> {
  const { default: net } = await import("node:net");
  const lines = new LineSplitter((line) => {
    const m = JSON.parse(line) as { task: number; src: string };
    const done = {
      t: "done",
      task: m.task,
      ok: true,
      result: { ref: "out:1", uri: "shoal://out/1", value: { $: "int", v: 3 }, render: "3" },
    };
    const bytes = encoder.encode(JSON.stringify(done) + "\n");
    for (let off = 0; off < bytes.length;) off += Deno.stdout.writeSync(bytes.subarray(off));
  });
  const sock = new net.Socket({ fd: 0, readable: true, writable: false });
  sock.on("data", (chunk: Uint8Array) => lines.push(chunk));
  await new Promise<void>((resolve) => sock.on("close", () => resolve()));
  Deno.exit(0);
}

/** `--relay PATH`: route every request frame through the child and back. */
async function relay(path: string): Promise<void> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL(import.meta.url).pathname, "--relay-child"],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const toChild = child.stdin.getWriter();
  const waiting = new Map<number, (result: unknown) => void>();
  const lines = new LineSplitter((line) => {
    const m = JSON.parse(line) as { task: number; result: unknown };
    waiting.get(m.task)?.(m.result);
    waiting.delete(m.task);
  });
  void (async () => {
    const reader = child.stdout.getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) lines.push(r.value);
  })();
  let nextTask = 1;
  await serveFrames(path, "relay: ready", (m, reply) => {
    const task = nextTask++;
    waiting.set(task, reply);
    const line = JSON.stringify({ t: "exec", task, src: String(m.params?.src ?? "") });
    toChild.write(encoder.encode(line + "\n")).catch(() => {});
  });
}

/** The relay as its own process on `path` (its child dies with it: stdin closes). */
export function startHopFloor(path: string): Promise<Deno.ChildProcess> {
  return startBenchServer(import.meta.url, "--relay", path, "relay: ready");
}

if (import.meta.main) {
  const i = Deno.args.indexOf("--relay");
  if (i >= 0) await relay(Deno.args[i + 1]);
  else if (Deno.args.includes("--relay-child")) await relayChild();
}
