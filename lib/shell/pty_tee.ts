/**
 * PtyTee (subsystems §5A): a statement-position command at a person's terminal runs on a PTY of
 * its own (the PTY engineer's `openPty`, with job control), so `vi`, `less`, `python3`, `top`,
 * `git add -p` and password prompts work, and a `make` shows its lines as they come.
 *
 * - The real terminal is in raw mode while the program runs; every typed byte goes to the
 *   program (Ctrl-C and Ctrl-Z included: its terminal turns them into SIGINT/SIGTSTP for its
 *   foreground group — the program, never shoal).
 * - Output goes to the terminal as it is produced and into a bounded tee, which becomes the
 *   outcome's `.out` (stderr arrives merged on the terminal, so `.err` is empty).
 * - The window size follows the terminal (SIGWINCH → TIOCSWINSZ → the program's SIGWINCH).
 * - Ctrl-Z parks the program in the REPL's job table (`fg`/`bg` resume it); its exit ends the
 *   session it led (whatever it left behind on its terminal is killed with it).
 *
 * @module
 */

import {
  type CaptureOptions,
  type CaptureResult,
  DEFAULT_CAPTURE_CAP,
  DEFAULT_TERM,
  type ExitInfo,
  openPty,
  type Pty,
} from "../exec/mod.ts";
import { BoundedTee } from "./tee.ts";
import { markStreamed } from "./streamed.ts";
import { writeFd } from "./foreground_pipe.ts";
import type { Terminal } from "./terminal.ts";
import type { Job, JobTable } from "./jobs.ts";

/** How long output is still drained after the program ended (a grandchild may hold the PTY). */
const DRAIN_GRACE_MS = 500;

/** What the tee needs from its host. */
export interface PtyTeeHost {
  terminal: Terminal;
  /** The REPL's job table; without one (`shoal -c` at a terminal) Ctrl-Z is passed on. */
  jobs?: JobTable;
  /** The person pressed Ctrl-C while a program had the terminal. */
  onInterrupt?: () => void;
  /** Programs on PTYs right now (a SIGTERM/SIGHUP of shoal ends them). */
  live?: Set<Pty>;
}

/** A foreground runner for `ProcessPort.foreground` that runs programs on PTYs. */
export function ptyForeground(host: PtyTeeHost): (opts: CaptureOptions) => Promise<CaptureResult> {
  return (opts) => runOnPty(host, opts);
}

async function runOnPty(host: PtyTeeHost, opts: CaptureOptions): Promise<CaptureResult> {
  const term = host.terminal;
  const { cols, rows } = term.size();
  const env = { ...opts.env };
  env.TERM ??= Deno.env.get("TERM") ?? DEFAULT_TERM;
  const t0 = performance.now();
  const pty = openPty({
    argv: opts.argv,
    cwd: opts.cwd,
    env,
    signal: opts.signal,
    timeoutMs: opts.timeoutMs,
    graceMs: opts.graceMs,
    killScope: opts.killScope,
    onSpawn: opts.onSpawn,
    cols,
    rows,
    jobControl: host.jobs !== undefined,
  });
  host.live?.add(pty);
  const tee = new BoundedTee(opts.stdoutCap ?? DEFAULT_CAPTURE_CAP);
  const wasRaw = term.raw;
  let attached = false;
  let unResize: (() => void) | null = null;
  const attach = () => {
    if (attached) return;
    attached = true;
    term.setRaw(true);
    // The terminal may have changed size while the program was parked.
    const s = term.size();
    if (s.cols !== pty.cols || s.rows !== pty.rows) {
      try {
        pty.resize(s.cols, s.rows);
      } catch { /* closed */ }
    }
    unResize = term.onResize((sz) => {
      try {
        pty.resize(sz.cols, sz.rows);
      } catch { /* closed */ }
    });
    term.route((b) => {
      if (b.includes(3)) host.onInterrupt?.();
      pty.write(b).catch(() => {});
    });
  };
  const detach = () => {
    if (!attached) return;
    attached = false;
    unResize?.();
    term.route(null);
    term.setRaw(wasRaw);
  };
  let job: Job | null = null;
  const out = { at: performance.now() };
  const unJob = pty.onJobState(async (c) => {
    if (c.state === "stopped" && host.jobs) {
      // What the program's terminal echoed as it stopped (`^Z`) is shown before the REPL's
      // "Stopped" line and prompt, not after them.
      await outputSettled(out);
      job = host.jobs.stopped(pty, (id) => ({
        id,
        cmd: pty.argv.join(" "),
        pty,
        state: "stopped",
        submission: null,
        attach,
        detach,
      }));
    } else if (c.state === "running" && job) job.state = "running";
  });
  attach();
  const pump = pumpOutput(pty, tee, out);
  let exit: ExitInfo;
  try {
    exit = await pty.exit;
  } finally {
    // Output written just before the end is still shown, then the session goes.
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([pump, new Promise((r) => (timer = setTimeout(r, DRAIN_GRACE_MS)))]);
    clearTimeout(timer);
    detach();
    unJob();
    host.jobs?.ended(pty);
    await pty.close();
    host.live?.delete(pty);
  }
  // The terminal turned each "\n" into "\r\n": `.out` gets the program's own line ends back.
  const stdout = crlfToLf(tee.bytes());
  markStreamed(stdout);
  return {
    status: exit.status,
    signal: exit.signal,
    program: pty.program,
    argv: [...pty.argv],
    pid: pty.pid,
    pgid: pty.pgid,
    startedAt: pty.startedAt,
    durNs: BigInt(Math.round((performance.now() - t0) * 1e6)),
    stdout,
    stderr: new Uint8Array(0),
    stdoutBytes: tee.total,
    stderrBytes: 0,
    stdoutTruncated: tee.truncated,
    stderrTruncated: false,
    cancelled: opts.signal?.aborted ?? false,
    timedOut: false,
    killScope: pty.killScope,
  };
}

/** Replace CR LF pairs with LF (in place, bounded by the tee's cap). */
function crlfToLf(b: Uint8Array): Uint8Array {
  let w = 0;
  for (let r = 0; r < b.length; r++) {
    if (b[r] === 13 && b[r + 1] === 10) continue;
    b[w++] = b[r];
  }
  return b.subarray(0, w);
}

/** Quiet time that counts as "the program's output so far has been shown". */
const SETTLE_QUIET_MS = 30;
/** The longest a stop waits for its program's output to go quiet. */
const SETTLE_MAX_MS = 300;

/**
 * Resolves once no output came for SETTLE_QUIET_MS since now (at most SETTLE_MAX_MS): the
 * terminal's echo of a stop reaches the PTY's master just after the stop itself.
 */
async function outputSettled(out: { at: number }): Promise<void> {
  const t0 = performance.now();
  for (;;) {
    const now = performance.now();
    const quiet = now - Math.max(out.at, t0);
    if (quiet >= SETTLE_QUIET_MS || now - t0 >= SETTLE_MAX_MS) return;
    await new Promise((r) => setTimeout(r, SETTLE_QUIET_MS - quiet));
  }
}

/** Copy the PTY's output to the terminal and the tee until it ends; `out.at` is the last. */
async function pumpOutput(pty: Pty, tee: BoundedTee, out: { at: number }): Promise<void> {
  const buf = new Uint8Array(64 * 1024);
  for (;;) {
    let n: number;
    try {
      n = await pty.read(buf);
    } catch {
      return;
    }
    if (n === 0) return;
    out.at = performance.now();
    const chunk = buf.subarray(0, n);
    tee.push(chunk);
    try {
      writeFd(Deno.stdout, chunk);
    } catch { /* the terminal is gone; the program still runs to its end */ }
  }
}
