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

/** Longest stderr line forwarded whole; the rest of a longer one is cut. */
const MAX_STDERR_LINE = 4096;

/** Copy a session's stderr to ours, one labelled line at a time. */
async function forwardStderr(src: ReadableStream<Uint8Array>, prefix: string): Promise<void> {
  const decoder = new TextDecoder();
  let pending = "";
  const emit = (line: string) => {
    if (line === "") return;
    const cut = line.length > MAX_STDERR_LINE ? line.slice(0, MAX_STDERR_LINE) + "…" : line;
    const bytes = encoder.encode(prefix + cut + "\n");
    for (let off = 0; off < bytes.length;) off += Deno.stderr.writeSync(bytes.subarray(off));
  };
  try {
    for await (const chunk of src) {
      pending += decoder.decode(chunk, { stream: true });
      let nl;
      while ((nl = pending.indexOf("\n")) >= 0) {
        emit(pending.slice(0, nl));
        pending = pending.slice(nl + 1);
      }
      if (pending.length > MAX_STDERR_LINE) {
        emit(pending);
        pending = "";
      }
    }
  } catch { /* the process went away */ }
  if (pending !== "") emit(pending);
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
  const env: Record<string, string> = { ...(opts.env ?? Deno.env.toObject()) };
  const flags = (env.DENO_V8_FLAGS ?? "").split(",").filter((f) =>
    f !== "" && !f.startsWith("--max-old-space-size")
  );
  flags.push(`--max-old-space-size=${opts.memoryMb}`);
  env.DENO_V8_FLAGS = flags.join(",");
  const child = new Deno.Command(exe, {
    args,
    cwd: "/",
    env,
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  void forwardStderr(child.stderr, `shoal-kernel: session ${opts.label}: `);
  const writer = child.stdin.getWriter();
  let writing = Promise.resolve();
  let dead = false;
  void (async () => {
    const decoder = new TextDecoder();
    let pending = "";
    try {
      for await (const chunk of child.stdout) {
        pending += decoder.decode(chunk, { stream: true });
        let nl;
        while ((nl = pending.indexOf("\n")) >= 0) {
          const line = pending.slice(0, nl);
          pending = pending.slice(nl + 1);
          if (line !== "") onLine(line);
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
      writing = writing.then(() => writer.write(bytes)).catch(() => {});
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
  if (s.signal === "SIGKILL") return "the session process was killed";
  if (s.signal) return `the session process died of ${s.signal}`;
  return `the session process exited with status ${s.code}`;
}
