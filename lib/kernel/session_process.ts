/**
 * Starting a session process (issue 16: one process per session, so a session's memory, spin
 * or crash stays inside it). The child runs `shoal __session` — the sibling binary when
 * compiled, `deno run … main.ts __session` from a checkout — with its V8 heap bounded, and
 * talks to the kernel over its stdin/stdout one JSON message per line (`session_worker.ts`).
 *
 * @module
 */

import { basename } from "node:path";
import { fileURLToPath } from "node:url";
import { setImmediate } from "node:timers";
import { LineSplitter } from "./line_splitter.ts";

/** Default heap limit of one session process, in MiB (`--session-memory` overrides). */
export const DEFAULT_SESSION_MEMORY_MB = 2048;

/** How a session process is started. */
export interface SessionProcessOptions {
  /** V8 old-space limit in MiB. */
  memoryMb: number;
  /** Environment of the process itself (the evaluator's env travels in `init`). */
  env?: Record<string, string>;
  /** Names the process in the kernel's stderr (`shoal-kernel: session NAME: …`). */
  label: string;
  /** Wraps the session's argv (a confined session starts through its sandbox launcher). */
  wrap?: (argv: string[]) => string[];
}

/** A running session process. */
export interface SessionProcess {
  readonly pid: number;
  /** Send one message line (JSON text without the newline); sends are ordered. */
  send(json: string): void;
  /** Resolves with how the process ended. */
  readonly status: Promise<Deno.CommandStatus>;
  /** SIGKILL the process (idempotent). */
  kill(): void;
}

const MAIN_MODULE = new URL("../../main.ts", import.meta.url);
const CONFIG = new URL("../../deno.json", import.meta.url);

/** argv for `shoal __session` in this host: compiled binary, or the deno CLI on a checkout. */
export function sessionCommand(): { exe: string; args: string[] } {
  const exe = Deno.execPath();
  if (!/^deno(\.exe)?$/.test(basename(exe))) return { exe, args: ["__session"] };
  const args = ["run", "-A", "-q", "--no-prompt"];
  if (MAIN_MODULE.protocol === "file:") {
    const cfg = fileURLToPath(CONFIG);
    try {
      Deno.statSync(cfg);
      args.push("--config", cfg);
    } catch { /* no config beside main.ts: run without one */ }
  }
  args.push(MAIN_MODULE.href, "__session");
  return { exe, args };
}

const encoder = new TextEncoder();

/** Longest message line a session may send (its largest are store chunks: ~1.4 MB). */
export const MAX_SESSION_LINE = 64 * 1024 * 1024;

/** Longest stderr line forwarded whole; the rest of a longer one is cut. */
const MAX_STDERR_LINE = 4096;

/** Copy a session's stderr to ours, one labelled line at a time. */
async function forwardStderr(src: ReadableStream<Uint8Array>, prefix: string): Promise<void> {
  const emit = (line: string) => {
    const cut = line.length > MAX_STDERR_LINE ? line.slice(0, MAX_STDERR_LINE) + "…" : line;
    const bytes = encoder.encode(prefix + cut + "\n");
    for (let off = 0; off < bytes.length;) off += Deno.stderr.writeSync(bytes.subarray(off));
  };
  const lines = new LineSplitter(emit);
  try {
    for await (const chunk of src) {
      lines.push(chunk);
      if (lines.pendingLength > MAX_STDERR_LINE) emit(lines.takeRest());
    }
  } catch { /* the process went away */ }
  const rest = lines.takeRest();
  if (rest !== "") emit(rest);
}

/**
 * Start a session process; `onLine` gets each message line it writes, in order. The process
 * starts in `/` (the session cwd is evaluator state); its stderr lines reach the kernel's
 * stderr labelled with the session (a V8 out-of-memory report among them).
 */
export function startSessionProcess(
  opts: SessionProcessOptions,
  onLine: (line: string) => void,
): SessionProcess {
  const { exe, args } = sessionCommand();
  const argv = opts.wrap ? opts.wrap([exe, ...args]) : [exe, ...args];
  const env: Record<string, string> = { ...(opts.env ?? Deno.env.toObject()) };
  const flags = (env.DENO_V8_FLAGS ?? "").split(",").filter((f) =>
    f !== "" && !f.startsWith("--max-old-space-size")
  );
  flags.push(`--max-old-space-size=${opts.memoryMb}`);
  env.DENO_V8_FLAGS = flags.join(",");
  const child = new Deno.Command(argv[0], {
    args: argv.slice(1),
    cwd: "/",
    env,
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  void forwardStderr(child.stderr, `shoal-kernel: session ${opts.label}: `);
  const writer = child.stdin.getWriter();
  let dead = false;
  void (async () => {
    let delivered = false;
    const lines = new LineSplitter((line) => {
      delivered = true;
      onLine(line);
    });
    // A plain reader loop: the async iterator adds a promise per chunk on every reply.
    const reader = child.stdout.getReader();
    try {
      for (let r = await reader.read(); !r.done; r = await reader.read()) {
        lines.push(r.value);
        // A session (a confined one is not trusted) must not grow the kernel without bound.
        if (lines.pendingLength > MAX_SESSION_LINE) {
          console.error(
            `shoal-kernel: session ${opts.label}: a message line exceeded ` +
              `${MAX_SESSION_LINE} bytes; the session is killed`,
          );
          child.kill("SIGKILL");
          void reader.cancel().catch(() => {});
          break;
        }
        // What a message started (the reply to a waiting client: a few promise reactions)
        // runs before the next read is issued, which costs ~4 µs (the stream's pull, a read
        // that finds the pipe empty) and would otherwise come first (measured).
        if (delivered) {
          delivered = false;
          await new Promise((next) => setImmediate(next));
        }
      }
    } catch { /* the process died: status reports it */ }
  })();
  const status = child.status.then((s) => {
    dead = true;
    return s;
  });
  return {
    pid: child.pid,
    send(json) {
      if (dead) return;
      const bytes = encoder.encode(json + "\n");
      // The stream queues writes in order; a failed one means the process is gone.
      writer.write(bytes).catch(() => {});
    },
    status,
    kill() {
      if (dead) return;
      try {
        child.kill("SIGKILL");
      } catch { /* already gone */ }
    },
  };
}

/** A sentence for how a session process ended (its heap limit, a signal, an exit status). */
export function describeExit(s: Deno.CommandStatus, memoryMb: number): string {
  // V8's fatal out-of-memory ends the process with SIGTRAP (measured: exit 133).
  if (s.signal === "SIGTRAP" || s.code === 133) {
    return `the session ran out of memory (its heap limit is ${memoryMb} MiB)`;
  }
  if (s.code === 126) {
    return "the session's sandbox could not be installed (the kernel's stderr says why)";
  }
  if (s.signal === "SIGKILL") return "the session process was killed";
  if (s.signal) return `the session process died of ${s.signal}`;
  return `the session process exited with status ${s.code}`;
}
