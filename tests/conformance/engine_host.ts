/**
 * The engine host: a child process that loads one engine module and runs the harness's cases
 * on it, one at a time. Usage: `engine_host.ts SOCKET_PATH ENGINE_URL`. It connects to the
 * harness at SOCKET_PATH, reports `ready` or `load_failed`, then answers each request line.
 *
 * @module
 */
import {
  type Engine,
  type HostFrame,
  readLines,
  type RunRequest,
  writeLine,
} from "./engine_contract.ts";

const [socketPath, engineUrl] = Deno.args;
const conn = await Deno.connect({ transport: "unix", path: socketPath });

let queue = Promise.resolve();
/** Sends frames strictly in order (a crash report must not overtake a result). */
function send(frame: HostFrame): Promise<void> {
  const sent = queue.then(() => writeLine(conn, frame));
  queue = sent.catch(() => {}); // One unsendable frame (say, a BigInt result) must not block the rest.
  return sent;
}

function describe(e: unknown): string {
  if (e instanceof Error) return e.stack ?? `${e.name}: ${e.message}`;
  return String(e);
}

/** Reports an uncaught engine failure to the harness, then ends this process. */
async function crash(message: string): Promise<never> {
  await send({ type: "crash", message }).catch(() => {});
  Deno.exit(70);
}

globalThis.addEventListener("error", (e) => {
  e.preventDefault();
  crash(describe(e.error));
});
globalThis.addEventListener("unhandledrejection", (e) => {
  e.preventDefault();
  crash(`unhandled rejection: ${describe(e.reason)}`);
});

async function loadEngine(url: string): Promise<Engine | undefined> {
  try {
    const mod = await import(url);
    if (typeof mod.runCase === "function") return mod as Engine;
    await send({ type: "load_failed", message: `${url} does not export a function runCase` });
  } catch (e) {
    await send({ type: "load_failed", message: describe(e) });
  }
  return undefined;
}

const engine = await loadEngine(engineUrl);
if (engine) {
  await send({ type: "ready" });
  for await (const line of readLines(conn.readable)) {
    const req = JSON.parse(line) as RunRequest;
    try {
      const result = await engine.runCase(req.src, req.cwd);
      await send({ type: "result", id: req.id, result });
    } catch (e) {
      await send({ type: "threw", id: req.id, message: describe(e) });
    }
  }
}
// The harness hung up: stop even if the engine left timers or handles behind.
Deno.exit(0);
