/**
 * Capture mode: run a program to completion, draining stdout and stderr concurrently
 * under per-stream caps (stdout overflow spills), with group-wide cancellation.
 *
 * @module
 */

import { resolve } from "node:path";
import { Cgroup } from "./cgroup.ts";
import { type Child, startChild } from "./child.ts";
import { drainCapped, type DrainResult, drainToFile } from "./drain.ts";
import { ExecError } from "./errors.ts";
import { checkBytes, prepare } from "./prepare.ts";
import { type SpillFactory, tempFileSpill } from "./spill.ts";
import {
  abandonStdin,
  closeQuietly,
  openStdin,
  type OpenTarget,
  openTarget,
  type StdinPlan,
} from "./stdio.ts";
import { supervise } from "./running.ts";
import type { CaptureOptions, CaptureResult, OutputTarget } from "./types.ts";
import { DEFAULT_CAPTURE_CAP, DEFAULT_SPILL_MAX } from "./types.ts";

type Drained = DrainResult & { writeError?: string };

const EMPTY: Drained = { bytes: new Uint8Array(0), total: 0, truncated: false };

function mode(target: OutputTarget | undefined): "null" | "piped" {
  return target === "discard" ? "null" : "piped";
}

/** Open stdin, stdout and stderr redirects; on any failure close what was opened. */
async function openRedirects(opts: CaptureOptions, cwd: string) {
  const out = await openTarget("stdout", opts.stdout, cwd);
  let err: OpenTarget | null = null;
  let stdin: StdinPlan;
  try {
    // `&> f`: one fd for both streams (see startChild), or order and offsets would clash.
    const errPath = typeof opts.stderr === "object" ? opts.stderr : null;
    const sameFile = out !== null && errPath !== null && out.path === resolve(cwd, errPath.path);
    err = sameFile ? out : await openTarget("stderr", opts.stderr, cwd);
    stdin = await openStdin(opts.stdin, cwd);
  } catch (e) {
    closeQuietly(out?.file);
    if (err !== out) closeQuietly(err?.file);
    throw e;
  }
  return { out, err, stdin };
}

/**
 * Run `opts.argv` to completion and capture its output.
 *
 * - Never uses a shell; argv[0] is resolved with `opts.env.PATH` against `opts.cwd`.
 * - stdout and stderr are drained concurrently; each keeps at most its cap in memory.
 *   stdout beyond the cap goes to a spill file (`stdoutSpill`), stderr beyond it is
 *   counted and dropped; `stdoutTruncated` / `stderrTruncated` say so.
 * - Cancelling (`opts.signal`) or `opts.timeoutMs` runs SIGINT → SIGTERM → SIGKILL on the
 *   child's whole process group and still returns the real exit status / signal.
 *
 * Throws {@link ExecError} only when nothing could be started (bad options, program or
 * cwd missing, redirect file unopenable, already cancelled).
 */
export async function spawnCapture(opts: CaptureOptions): Promise<CaptureResult> {
  try {
    return await capture(opts);
  } catch (e) {
    abandonStdin(opts?.stdin);
    throw e;
  }
}

async function capture(opts: CaptureOptions): Promise<CaptureResult> {
  const prep = prepare(opts);
  const stdoutCap = checkBytes("stdoutCap", opts.stdoutCap, DEFAULT_CAPTURE_CAP);
  const stderrCap = checkBytes("stderrCap", opts.stderrCap, DEFAULT_CAPTURE_CAP);
  const spillMax = checkBytes("spillMaxBytes", opts.spillMaxBytes, DEFAULT_SPILL_MAX);
  if (opts.spill !== undefined && opts.spill !== false && typeof opts.spill !== "function") {
    throw new ExecError("invalid_argument", "spill must be a SpillFactory function or false");
  }
  const spill: SpillFactory | null = opts.spill === false ? null : opts.spill ?? tempFileSpill();
  if (opts.signal?.aborted) {
    throw new ExecError("cancelled", `${prep.displayArgv[0]} was cancelled before it started`);
  }

  const { out, err, stdin } = await openRedirects(opts, prep.cwd);
  const cgroup = prep.killScope === "cgroup" ? Cgroup.create() : null;
  let child: Child;
  try {
    child = startChild(prep, {
      stdin: stdin.mode,
      stdout: mode(opts.stdout),
      stderr: err !== null && err === out ? "merged" : mode(opts.stderr),
    }, cgroup);
  } catch (e) {
    stdin.stop();
    closeQuietly(out?.file);
    if (err !== out) closeQuietly(err?.file);
    cgroup?.remove();
    throw e;
  }
  const { t0, startedAt, exit, sup, feeding, leftRunning } = supervise(
    child,
    prep,
    cgroup,
    opts,
    stdin,
  );

  const drain = (
    target: OutputTarget | undefined,
    file: OpenTarget | null,
    stream: () => ReadableStream<Uint8Array>,
    cap: number,
    spillTo: SpillFactory | null,
  ): Promise<Drained> => {
    if (target === "discard") return Promise.resolve(EMPTY);
    if (file !== null) {
      return drainToFile(stream(), file.file, sup.drainStop).then(({ total, error }) => ({
        ...EMPTY,
        total,
        ...(error === undefined ? {} : { writeError: error }),
      }));
    }
    return drainCapped(
      stream(),
      cap,
      spillTo === null ? undefined : { factory: spillTo, maxBytes: spillMax },
      sup.drainStop,
    );
  };

  const [exitR, stdoutR, stderrR] = await Promise.allSettled([
    exit,
    drain(opts.stdout, out, () => child.stdout, stdoutCap, spill),
    err !== null && err === out
      ? Promise.resolve(EMPTY) // merged into stdout's file
      : drain(opts.stderr, err, () => child.stderr, stderrCap, null),
  ]);
  const durNs = BigInt(Math.round((performance.now() - t0) * 1e6));
  stdin.stop();
  await feeding;
  sup.dispose();
  await sup.ladder.finished;
  closeQuietly(out?.file);
  if (err !== out) closeQuietly(err?.file);
  cgroup?.remove();

  if (exitR.status === "rejected") throw exitR.reason;
  // drains never reject; allSettled only keeps a failing wait from leaking them.
  const o = (stdoutR as PromiseFulfilledResult<Drained>).value;
  const e = (stderrR as PromiseFulfilledResult<Drained>).value;
  const result: CaptureResult = {
    status: exitR.value.status,
    signal: exitR.value.signal,
    program: prep.program,
    argv: prep.displayArgv,
    pid: child.pid,
    pgid: child.pid,
    startedAt,
    durNs,
    stdout: o.bytes,
    stderr: e.bytes,
    stdoutBytes: o.total,
    stderrBytes: e.total,
    stdoutTruncated: o.truncated,
    stderrTruncated: e.truncated,
    cancelled: sup.cancelled,
    timedOut: sup.timedOut,
    killScope: cgroup !== null ? "cgroup" : "group",
  };
  if (leftRunning()) result.leftRunning = true;
  if (o.spill !== undefined) result.stdoutSpill = o.spill;
  if (o.spillError !== undefined) result.spillError = o.spillError;
  const writeError = o.writeError ?? e.writeError;
  if (writeError !== undefined) result.writeError = writeError;
  return result;
}
