/**
 * Host ports: everything the evaluator needs from the outside world (clock, statement sink,
 * diagnostics stream, process spawning, filesystem, the initial cwd and environment). Hosts
 * (the CLI, the kernel's session Worker, the conformance harness, tests) pass their own;
 * `defaultPorts` is the plain Deno implementation.
 *
 * Filesystem operations go through the {@link FsPort} with paths the evaluator has already
 * resolved against the *session* cwd, so the session never depends on the process cwd.
 *
 * @module
 */

import type { Value } from "../value/types.ts";
import type { Stmt } from "../syntax/ast.ts";
import type { MaybePromise } from "./maybe.ts";
import { type CaptureOptions, type CaptureResult, spawnCapture } from "../exec/mod.ts";
import type { JournalPort } from "./journal_port.ts";
import { denoFs, type FsPort } from "./fs_port.ts";

export {
  denoFs,
  type FsDirEntry,
  type FsEvent,
  type FsHandle,
  type FsInfo,
  fsOf,
  type FsOpenOptions,
  type FsPort,
  type FsWatcher,
} from "./fs_port.ts";

/** Wall clock and timers. */
export interface ClockPort {
  /** Nanoseconds since the Unix epoch. */
  nowNs(): bigint;
  /** The IANA name of the local time zone (`now`/`today` are viewed in it). */
  zone(): string;
  /**
   * Sleep `ms` milliseconds. When `signal` aborts first the sleep resolves early and its timer
   * is released (stream stages race timers and must not keep the process alive; optional for
   * test clocks). (Added by the streams engineer.)
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/**
 * Process spawning: run a program to completion with captured output (lib/exec contract).
 * Throws `ExecError` (`not_found`, `permission_denied`, …) when it cannot start.
 */
export interface ProcessPort {
  capture(opts: CaptureOptions): Promise<CaptureResult>;
  /**
   * Run a statement-position external in the foreground (subsystems §5A, issue 14): its output
   * reaches the person as it is produced (a PTY at a terminal, else pass-through pipes) while a
   * bounded tee still fills the result. Only hosts with a person in front (the `shoal` CLI and
   * REPL) provide it; without it every command is captured.
   */
  foreground?(opts: CaptureOptions): Promise<CaptureResult>;
}

/** All ports. */
export interface Ports {
  clock: ClockPort;
  /**
   * Receives non-final top-level statement values (language §7.1); `from` is the statement of
   * the host's own program when the host runs it statement by statement (the kernel's journal
   * does), never one of a `source`d file.
   */
  sink(v: Value, from?: Stmt): MaybePromise<void>;
  /** Diagnostics that are not values (glob "no matches" lints…). */
  stderr(text: string): void;
  process: ProcessPort;
  /** Every file operation (builtins, path methods, redirects, globs, scripts, watch/tail). */
  fs: FsPort;
  /** The journal (kernel sessions): effects, undo inverses, `journal`/`undo` heads. (issue 7) */
  journal?: JournalPort;
}

/** The process's local time zone. */
function localZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  } catch {
    return "UTC";
  }
}

/** The local zone, resolved once (`Intl` costs ≈0.3 ms a call; the process zone is fixed). */
let cachedZone: string | null = null;

/** The real clock. */
export const systemClock: ClockPort = {
  nowNs: () => BigInt(Date.now()) * 1_000_000n,
  zone: () => (cachedZone ??= localZone()),
  sleep: (ms, signal) =>
    new Promise((r) => {
      if (signal?.aborted) return r();
      const id = setTimeout(r, Math.max(0, ms));
      signal?.addEventListener("abort", () => {
        clearTimeout(id);
        r();
      }, { once: true });
    }),
};

/** The real process layer. */
export const execProcess: ProcessPort = { capture: spawnCapture };

/** A sink that discards everything (harness, kernel value channels). */
export const nullSink = (_v: Value): void => {};

/** Default ports: real clock, processes and filesystem; sink discarding values (hosts set it). */
export function defaultPorts(overrides: Partial<Ports> = {}): Ports {
  return {
    clock: systemClock,
    sink: nullSink,
    stderr: (text) => {
      Deno.stderr.writeSync(new TextEncoder().encode(text));
    },
    process: execProcess,
    fs: denoFs,
    ...overrides,
  };
}
