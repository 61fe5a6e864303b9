/**
 * Plain-data options and results of the process layer. Nothing here knows about the
 * language: callers convert values to argv strings/bytes and results back to outcomes.
 *
 * @module
 */

import type { SpillFactory, SpillInfo } from "./spill.ts";

/** Default per-stream in-memory capture cap: 64 MiB. */
export const DEFAULT_CAPTURE_CAP = 64 * 1024 * 1024;
/** Default limit of one stdout spill file: 1 GiB (beyond it bytes are drained and dropped). */
export const DEFAULT_SPILL_MAX = 1024 * 1024 * 1024;
/** Default wait between the steps of the SIGINT → SIGTERM → SIGKILL ladder. */
export const DEFAULT_GRACE_MS = 2000;

/**
 * One argv element: a string, or raw bytes (for OS paths and arguments that are not valid
 * UTF-8; `argv[0]` must be valid UTF-8 because Deno cannot name a non-UTF-8 file).
 */
export type ArgvItem = string | Uint8Array;

/**
 * What the child reads on fd 0.
 *
 * - `"none"` — /dev/null (the default).
 * - `Uint8Array` — these bytes, then EOF.
 * - `{ path }` — the file (`< f`); a relative path is resolved against `cwd`.
 * - `ReadableStream` — bytes as the stream yields them, then EOF; when the child exits
 *   first, the stream is cancelled.
 */
export type StdinSpec = "none" | Uint8Array | { path: string } | ReadableStream<Uint8Array>;

/**
 * Where a child's stdout or stderr goes.
 *
 * - `"capture"` — into the result, capped (the default).
 * - `"discard"` — /dev/null.
 * - `{ path, append? }` — written to the file as the bytes arrive (`> f`, or `>> f` with
 *   `append: true`); a relative path is resolved against `cwd`. The same path for stdout
 *   and stderr makes the child's fd 2 a copy of fd 1 (`&> f`: their order is kept, and
 *   both streams count as stdout).
 */
export type OutputTarget = "capture" | "discard" | { path: string; append?: boolean };

/**
 * How far a cancel reaches.
 *
 * - `"group"` — the child's process group (baseline; descendants that call setsid escape).
 * - `"cgroup"` — additionally a fresh cgroup v2 with `cgroup.kill`, which also takes
 *   escaped descendants. Falls back to `"group"` when cgroup v2 is not writable; the
 *   result's `killScope` says which one was in force.
 */
export type KillScope = "group" | "cgroup";

/** Options shared by {@link spawnCapture} and {@link spawnStreaming}. */
export interface SpawnOptions {
  /** Program and arguments. Never run through a shell; pass `["sh", "-c", src]` for that. */
  argv: readonly ArgvItem[];
  /** Absolute working directory of the child (the session cwd; the host cwd never changes). */
  cwd: string;
  /** The child's complete environment (nothing is inherited). Its PATH resolves argv[0]. */
  env: Readonly<Record<string, string>>;
  /** The child's stdin; default `"none"`. */
  stdin?: StdinSpec;
  /** Aborting starts the SIGINT → SIGTERM → SIGKILL ladder on the whole group. */
  signal?: AbortSignal;
  /** Start the same ladder after this many milliseconds. */
  timeoutMs?: number;
  /** Milliseconds between ladder steps; default {@link DEFAULT_GRACE_MS}. */
  graceMs?: number;
  /** Default `"group"`. */
  killScope?: KillScope;
  /**
   * When the child exits, SIGKILL whatever it left running in its process group (and cgroup):
   * nothing the command started outlives it (`sh { sleep 60 & }`), and its output ends when it
   * does. Default false (the command's output then ends when the last holder closes it).
   */
  reapOnExit?: boolean;
  /** Called once the child runs, with its pid (= its process group id). */
  onSpawn?: (pid: number) => void;
}

/** Options of {@link spawnCapture}. */
export interface CaptureOptions extends SpawnOptions {
  /** Default `"capture"`. */
  stdout?: OutputTarget;
  /** Default `"capture"`. */
  stderr?: OutputTarget;
  /** In-memory cap for stdout in bytes; default {@link DEFAULT_CAPTURE_CAP}. */
  stdoutCap?: number;
  /** In-memory cap for stderr in bytes; default {@link DEFAULT_CAPTURE_CAP}. */
  stderrCap?: number;
  /**
   * Where stdout beyond its cap goes: a {@link SpillFactory}, or `false` to count and drop
   * it like stderr. Default: a temp file per spill ({@link tempFileSpill}).
   */
  spill?: SpillFactory | false;
  /** Most bytes one spill takes; default {@link DEFAULT_SPILL_MAX}. */
  spillMaxBytes?: number;
}

/** How a process ended. Exactly one of `status` / `signal` is non-null. */
export interface ExitInfo {
  /** Exit code, or null when a signal killed the process. */
  status: number | null;
  /** Signal name with the SIG prefix (`"SIGSEGV"`), or null on a normal exit. */
  signal: string | null;
}

/** What {@link spawnCapture} reports (plain data). */
export interface CaptureResult extends ExitInfo {
  /** The executable actually started (absolute path). */
  program: string;
  /** argv as given, byte elements decoded lossily for display. */
  argv: string[];
  /** Process id of the child; also its process group id (and session id, see child.ts). */
  pid: number;
  /** Process group id (== pid). */
  pgid: number;
  /** Start time, Unix epoch milliseconds. */
  startedAt: number;
  /** Wall time from spawn until the child exited and its output was drained, in ns. */
  durNs: bigint;
  /** Captured stdout: at most the cap (empty when stdout went to a file or was discarded). */
  stdout: Uint8Array;
  /** Captured stderr: at most the cap. */
  stderr: Uint8Array;
  /** Bytes the child wrote to stdout in total (also counts file targets, not discards). */
  stdoutBytes: number;
  /** Bytes the child wrote to stderr in total. */
  stderrBytes: number;
  /** True when stdout exceeded its in-memory cap. */
  stdoutTruncated: boolean;
  /** True when stderr exceeded its cap (the excess was dropped). */
  stderrTruncated: boolean;
  /**
   * Present when stdout spilled: the bytes after the in-memory part. The caller owns the
   * spill (e.g. a temp file): ingest it into the content store or delete it.
   */
  stdoutSpill?: SpillInfo;
  /** Present when the spill could not be written; the overflow was then dropped. */
  spillError?: string;
  /** Present when writing a `{path}` output target failed (disk full…); later bytes were drained and dropped. */
  writeError?: string;
  /** True when the caller's signal asked for cancellation. */
  cancelled: boolean;
  /** True when `timeoutMs` ran out. */
  timedOut: boolean;
  /** The kill scope that was in force. */
  killScope: KillScope;
  /**
   * With `reapOnExit`: true when processes of the command were still running as its leader
   * exited (`cmd &` left behind) and were killed then.
   */
  leftRunning?: boolean;
}

/** Options of {@link spawnStreaming}: stdout is always a live stream. */
export interface StreamingOptions extends SpawnOptions {
  /** Default `"capture"`. */
  stderr?: OutputTarget;
  /** In-memory cap for stderr; default {@link DEFAULT_CAPTURE_CAP}. */
  stderrCap?: number;
}

/** Final report of a streaming child. */
export interface StreamingResult extends ExitInfo {
  /** Wall time from spawn until the child exited and stderr was drained, in ns. */
  durNs: bigint;
  /** Captured stderr, at most the cap. */
  stderr: Uint8Array;
  /** Bytes written to stderr in total. */
  stderrBytes: number;
  /** True when stderr exceeded its cap. */
  stderrTruncated: boolean;
  /** True when cancelled through `signal` or `cancel()`. */
  cancelled: boolean;
  /** True when `timeoutMs` ran out. */
  timedOut: boolean;
}

/** A running child whose stdout is read live. */
export interface StreamingChild {
  /** The executable actually started. */
  readonly program: string;
  /** Process id (== process group id). */
  readonly pid: number;
  /** Process group id (== pid). */
  readonly pgid: number;
  /** Start time, Unix epoch milliseconds. */
  readonly startedAt: number;
  /** The kill scope in force. */
  readonly killScope: KillScope;
  /**
   * The child's stdout. Read it to the end or cancel it: an unread pipe stalls the child
   * (that is the back-pressure), and cancelling it gives the child EPIPE/SIGPIPE.
   */
  readonly stdout: ReadableStream<Uint8Array>;
  /** Settles once the child exited and stderr was drained (after any kill ladder). */
  readonly result: Promise<StreamingResult>;
  /** Start the kill ladder (idempotent). */
  cancel(): void;
}
