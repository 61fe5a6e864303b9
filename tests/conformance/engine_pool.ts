/**
 * Runs cases on an engine in child processes, one case at a time per process, and kills a
 * process whose case overruns its time limit.
 *
 * Why processes and not Workers: in Deno 2.9 `Worker.terminate()` does not stop a worker
 * that is stuck in a synchronous loop (measured here: the thread keeps a core busy and the
 * process cannot exit; upstream denoland/deno#35657). Killing a process always works, and
 * it also contains engines that call `Deno.exit` or crash the runtime.
 *
 * @module
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type HostFrame, readLines, type RunRequest, writeLine } from "./engine_contract.ts";

/** How to start an engine host. */
export interface EngineSpec {
  /** URL of the engine module (imported by the host). */
  url: string;
  /** Time allowed to start the host, import the engine and report ready. */
  loadTimeoutMs: number;
  /** A private folder for the hosts' sockets. */
  socketDir: string;
}

/** What running one case produced: an untrusted engine answer, or a failure text. */
export type RunOutcome = { ok: true; result: unknown } | { ok: false; got: string };

/** A {@link RunOutcome} and the time the case itself took (engine start-up excluded). */
export type TimedOutcome = RunOutcome & { ms: number };

const HOST = fileURLToPath(new URL("./engine_host.ts", import.meta.url));
const CONFIG = fileURLToPath(new URL("../../deno.json", import.meta.url));

/** Races `p` against a timer; the timer is always cleared. */
async function within<T>(p: Promise<T>, ms: number): Promise<T | "timeout"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"timeout">((resolve) =>
    timer = setTimeout(() => resolve("timeout"), ms)
  );
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

let socketSeq = 0;
const liveChildren = new Set<Deno.ChildProcess>();

/**
 * Kills every engine process still running. For a harness stopped by a signal: a host stuck
 * in a loop would otherwise outlive it and keep a core busy.
 */
export function killEngineProcesses(): void {
  for (const child of liveChildren) {
    try {
      child.kill("SIGKILL");
    } catch {
      // Already exited.
    }
  }
}

/** Copies engine output to our stderr: it is not judged (§4) and stdout may be --json. */
async function toStderr(stream: ReadableStream<Uint8Array>): Promise<void> {
  try {
    for await (const chunk of stream) {
      for (let off = 0; off < chunk.length;) off += Deno.stderr.writeSync(chunk.subarray(off));
    }
  } catch {
    // The process was killed mid-write.
  }
}

/** One engine host child process and its connection. */
class EngineProcess {
  #child: Deno.ChildProcess;
  #listener: Deno.Listener;
  #conn?: Deno.Conn;
  #waiting?: (frame: HostFrame) => void;
  #crash?: string;
  #nextId = 1;
  #exited: Promise<Deno.CommandStatus>;
  #readDone: Promise<void> = Promise.resolve();

  constructor(spec: EngineSpec) {
    const path = join(spec.socketDir, `engine-${++socketSeq}.sock`);
    this.#listener = Deno.listen({ transport: "unix", path });
    this.#child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--unstable-worker-options", "--config", CONFIG, HOST, path, spec.url],
      stdin: "null", // Like CI: a program that reads stdin gets end-of-file, not our requests.
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const child = this.#child;
    liveChildren.add(child);
    child.status.finally(() => liveChildren.delete(child));
    const forwarded = toStderr(this.#child.stdout);
    // A grandchild may keep stdout open after a kill; wait for the rest only briefly.
    this.#exited = this.#child.status.then(async (s) => (await within(forwarded, 500), s));
  }

  async #read(conn: Deno.Conn): Promise<void> {
    try {
      for await (const line of readLines(conn.readable)) {
        const frame = JSON.parse(line) as HostFrame;
        if (frame.type === "crash") this.#crash = frame.message;
        else this.#waiting?.(frame);
      }
    } catch {
      // The connection broke because the process died; the exit status tells how.
    }
  }

  #nextFrame(): Promise<HostFrame> {
    return new Promise((resolve) => this.#waiting = resolve);
  }

  /** Resolves when the process has exited and the frames it sent before have been read. */
  #gone(): Promise<Deno.CommandStatus> {
    return this.#exited.then(async (s) => (await within(this.#readDone, 500), s));
  }

  #died(s: Deno.CommandStatus, when: string): string {
    const how = s.signal ? `was killed by ${s.signal}` : `exited with code ${s.code}`;
    return `engine process ${how} ${when}` + (this.#crash ? `: ${this.#crash}` : "");
  }

  /** Waits for the engine to load; returns why it did not, or undefined when ready. */
  async ready(timeoutMs: number): Promise<string | undefined> {
    const first = this.#nextFrame();
    const connected = this.#listener.accept().then((conn) => {
      this.#conn = conn;
      this.#readDone = this.#read(conn);
      return first;
    });
    const got = await within(Promise.race([connected, this.#gone()]), timeoutMs);
    this.#listener.close(); // One host per socket; this also ends a pending accept.
    connected.catch(() => {});
    if (got === "timeout") return `no answer within ${timeoutMs} ms while loading`;
    if ("success" in got) return this.#died(got, "while loading");
    if (got.type === "ready") return undefined;
    if (got.type === "load_failed") return got.message;
    return `engine host sent ${got.type} before ready`;
  }

  /** Runs one case. `alive` is false when the process was killed or died doing it. */
  async run(
    src: string,
    cwd: string,
    timeoutMs: number,
  ): Promise<{ outcome: RunOutcome; alive: boolean }> {
    const id = this.#nextId++;
    const answer = this.#nextFrame();
    const req: RunRequest = { id, src, cwd };
    const sent = writeLine(this.#conn!, req).then(() => answer);
    const got = await within(Promise.race([sent, this.#gone()]), timeoutMs).catch(() =>
      this.#gone()
    );
    const fail = async (text: string) => {
      await this.kill();
      return { outcome: { ok: false, got: text } as RunOutcome, alive: false };
    };
    if (got === "timeout") return await fail(`timed out after ${timeoutMs} ms`);
    if ("success" in got) return await fail(this.#died(got, "during the case"));
    if (got.type === "result" && got.id === id) {
      return { outcome: { ok: true, result: got.result }, alive: true };
    }
    if (got.type === "threw" && got.id === id) {
      return { outcome: { ok: false, got: `engine threw: ${got.message}` }, alive: true };
    }
    return await fail(`engine host sent ${got.type} out of turn`);
  }

  /** Kills the process and waits until it is gone. */
  async kill(): Promise<void> {
    try {
      this.#child.kill("SIGKILL");
    } catch {
      // Already exited.
    }
    await this.#exited;
    this.#close();
  }

  /** Hangs up (the host then exits by itself) and waits; kills it if it lingers. */
  async close(): Promise<void> {
    this.#close();
    if (await within(this.#exited, 5_000) === "timeout") await this.kill();
  }

  #close(): void {
    try {
      this.#listener.close();
    } catch {
      // Closed after the host connected.
    }
    try {
      this.#conn?.close();
    } catch {
      // Already closed.
    }
    this.#conn = undefined;
  }
}

/**
 * One lane of the pool: owns at most one engine process, replaces it after a kill or crash,
 * and shares a load failure with the other lanes so a broken engine is not retried per case.
 */
export class EngineSlot {
  #proc?: EngineProcess;
  #spec: EngineSpec;
  #shared: { loadFailure?: string };

  /** `shared` is the same object for every slot of one run. */
  constructor(spec: EngineSpec, shared: { loadFailure?: string }) {
    this.#spec = spec;
    this.#shared = shared;
  }

  /** Runs one case, starting an engine process first if needed. */
  async run(src: string, cwd: string, timeoutMs: number): Promise<TimedOutcome> {
    if (!this.#proc && this.#shared.loadFailure === undefined) {
      const proc = new EngineProcess(this.#spec);
      const failure = await proc.ready(this.#spec.loadTimeoutMs);
      if (failure === undefined) this.#proc = proc;
      else {
        this.#shared.loadFailure ??= failure;
        await proc.kill();
      }
    }
    if (!this.#proc) {
      return { ok: false, got: `engine failed to load: ${this.#shared.loadFailure}`, ms: 0 };
    }
    const start = performance.now();
    const { outcome, alive } = await this.#proc.run(src, cwd, timeoutMs);
    if (!alive) this.#proc = undefined;
    return { ...outcome, ms: Math.round(performance.now() - start) };
  }

  /** Stops this slot's engine process, if any. */
  async close(): Promise<void> {
    await this.#proc?.close();
    this.#proc = undefined;
  }
}
