/**
 * The floor of the kernel's four hops, for `isolation.ts`: a relay with the kernel's transport
 * and none of its work. It serves the kernel's socket framing, hands each request to a child
 * process over the child's stdin/stdout as one JSON line (the child reads fd 0 through
 * `node:net` and writes with `Deno.stdout.writeSync`, like `shoal __session`; the relay writes
 * through the child's stdin stream and reads its stdout with a reader loop, like
 * `session_process.ts`), and answers with the child's result: client → relay → child → relay →
 * client, with no evaluation, no tasks and no events. `exec` against it shows what four hops
 * cost on this machine; the kernel's ratio over it is what the kernel itself adds. With
 * `--socket-link` the relay and child talk over one Unix socket read and written directly
 * instead: what another kernel↔session transport would save. `--direct` is the other design's
 * floor: one process serving the socket that parses, evaluates, elides and renders each `src`
 * itself with the real evaluator (two hops, as if the client spoke to its session directly).
 *
 *   deno run -A bench/_hop_floor.ts --relay PATH [--socket-link]   (started by startHopFloor)
 *   deno run -A bench/_hop_floor.ts --direct PATH                  (started by startDirectFloor)
 *
 * @module
 */

import { LineSplitter } from "../lib/kernel/line_splitter.ts";
import { serveFrames } from "./_kernel_bench.ts";
import { startReady } from "./_kernel.ts";
import { Evaluator } from "../lib/eval/mod.ts";
import { outcomeOut } from "../lib/eval/outcome.ts";
import { elide, resolveBudget } from "../lib/value/elide.ts";
import { pagedRender } from "../lib/kernel/paged_render.ts";

const encoder = new TextEncoder();

/** A child's answer to one `{task, src}` line: a done line carrying a fixed result. */
function doneLine(line: string): Uint8Array {
  const m = JSON.parse(line) as { task: number; src: string };
  const done = {
    t: "done",
    task: m.task,
    ok: true,
    result: { ref: "out:1", uri: "shoal://out/1", value: { $: "int", v: 3 }, render: "3" },
  };
  return encoder.encode(JSON.stringify(done) + "\n");
}

/** Write every byte to a connection. */
async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  for (let off = 0; off < bytes.length;) off += await conn.write(bytes.subarray(off));
}

/** Feed a connection's bytes to `lines` until it closes. */
async function readInto(conn: Deno.Conn, lines: LineSplitter): Promise<void> {
  const buf = new Uint8Array(64 * 1024);
  for (let n = await conn.read(buf); n !== null; n = await conn.read(buf)) {
    lines.push(buf.subarray(0, n));
  }
}

/** `--relay-child`: answer each line from stdin on stdout (the session process's link). */
async function relayChild(): Promise<void> {
  const { default: net } = await import("node:net");
  const lines = new LineSplitter((line) => {
    const bytes = doneLine(line);
    for (let off = 0; off < bytes.length;) off += Deno.stdout.writeSync(bytes.subarray(off));
  });
  const sock = new net.Socket({ fd: 0, readable: true, writable: false });
  sock.on("data", (chunk: Uint8Array) => lines.push(chunk));
  await new Promise<void>((resolve) => sock.on("close", () => resolve()));
  Deno.exit(0);
}

/** `--socket-child PATH`: the same over a Unix socket the relay listens on. */
async function socketChild(path: string): Promise<void> {
  const conn = await Deno.connect({ transport: "unix", path });
  await readInto(conn, new LineSplitter((line) => void writeAll(conn, doneLine(line))));
  Deno.exit(0);
}

/** The relay's side of its link to the child: send a line; answers go to `onLine`. */
type Link = (line: string) => void;

/** The kernel's link: the child's stdin stream out, a reader loop on its stdout back. */
function pipeLink(onLine: (line: string) => void): Link {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL(import.meta.url).pathname, "--relay-child"],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const toChild = child.stdin.getWriter();
  const lines = new LineSplitter(onLine);
  void (async () => {
    const reader = child.stdout.getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) lines.push(r.value);
  })();
  return (line) => void toChild.write(encoder.encode(line + "\n")).catch(() => {});
}

/** The alternative: one Unix socket connection, read and written directly on both ends. */
async function socketLink(path: string, onLine: (line: string) => void): Promise<Link> {
  const linkPath = `${path}.link`;
  const listener = Deno.listen({ transport: "unix", path: linkPath });
  new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL(import.meta.url).pathname, "--socket-child", linkPath],
    stdin: "null",
    stderr: "inherit",
  }).spawn();
  const conn = await listener.accept();
  listener.close();
  void readInto(conn, new LineSplitter(onLine)).catch(() => {});
  return (line) => void writeAll(conn, encoder.encode(line + "\n")).catch(() => {});
}

/** `--relay PATH [--socket-link]`: route every request frame through the child and back. */
async function relay(path: string, socket: boolean): Promise<void> {
  const waiting = new Map<number, (result: unknown) => void>();
  const onLine = (line: string) => {
    const m = JSON.parse(line) as { task: number; result: unknown };
    waiting.get(m.task)?.(m.result);
    waiting.delete(m.task);
  };
  const send = socket ? await socketLink(path, onLine) : pipeLink(onLine);
  let nextTask = 1;
  await serveFrames(path, "relay: ready", (m, reply) => {
    const task = nextTask++;
    waiting.set(task, reply);
    send(JSON.stringify({ t: "exec", task, src: String(m.params?.src ?? "") }));
  });
}

/** `--direct PATH`: evaluate each request's `src` here and answer as a session would. */
async function direct(path: string): Promise<void> {
  const ev = new Evaluator({ cwd: "/", env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" } });
  let n = 0;
  await serveFrames(path, "direct: ready", async (m, reply) => {
    const value = await ev.evalProgram(ev.parse(String(m.params?.src ?? "")));
    const ref = `out:${++n}`;
    const uri = `shoal://out/${n}`;
    const wire = elide(value, uri, resolveBudget(null), (o) => outcomeOut(o, null));
    const shown = pagedRender(value, { ref, path: "", offset: 0, cwd: "/", tty: false });
    reply({ ref, uri, value: wire, ...shown });
  });
}

/** The two-hop floor (`--direct`) as its own process on `path`. */
export function startDirectFloor(path: string): Promise<Deno.ChildProcess> {
  return startReady(
    ["run", "-A", new URL(import.meta.url).pathname, "--direct", path],
    "direct: ready",
  );
}

/**
 * The relay as its own process on `path` (its child dies with it); `socketLink` joins relay
 * and child by a Unix socket instead of the kernel's pipes.
 */
export function startHopFloor(path: string, socketLink = false): Promise<Deno.ChildProcess> {
  const args = ["run", "-A", new URL(import.meta.url).pathname, "--relay", path];
  return startReady(socketLink ? [...args, "--socket-link"] : args, "relay: ready");
}

if (import.meta.main) {
  const i = Deno.args.indexOf("--relay");
  const j = Deno.args.indexOf("--socket-child");
  if (i >= 0) await relay(Deno.args[i + 1], Deno.args.includes("--socket-link"));
  else if (j >= 0) await socketChild(Deno.args[j + 1]);
  else if (Deno.args.includes("--direct")) {
    await direct(Deno.args[Deno.args.indexOf("--direct") + 1]);
  } else if (Deno.args.includes("--relay-child")) await relayChild();
}
