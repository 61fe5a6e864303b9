/**
 * Streaming mode: like capture mode, but stdout is handed to the caller as a live
 * ReadableStream (for language streams and pipelines); stderr is captured under its cap.
 *
 * @module
 */

import { Cgroup } from "./cgroup.ts";
import { type Child, startChild } from "./child.ts";
import { drainCapped, drainToFile, stoppable } from "./drain.ts";
import { ExecError } from "./errors.ts";
import { checkBytes, prepare } from "./prepare.ts";
import { abandonStdin, closeQuietly, openStdin, openTarget } from "./stdio.ts";
import { supervise } from "./running.ts";
import type { StreamingChild, StreamingOptions, StreamingResult } from "./types.ts";
import { DEFAULT_CAPTURE_CAP } from "./types.ts";

/**
 * Start `opts.argv` with stdout as a live stream. Same resolution, process-group, cancel
 * and timeout semantics as {@link spawnCapture}. The caller must read `stdout` to its end
 * or cancel it; `result` settles when the child exited and stderr was drained.
 *
 * Throws {@link ExecError} only when nothing could be started.
 */
export async function spawnStreaming(opts: StreamingOptions): Promise<StreamingChild> {
  try {
    return await start(opts);
  } catch (e) {
    abandonStdin(opts?.stdin);
    throw e;
  }
}

async function start(opts: StreamingOptions): Promise<StreamingChild> {
  const prep = prepare(opts);
  const stderrCap = checkBytes("stderrCap", opts.stderrCap, DEFAULT_CAPTURE_CAP);
  if (opts.signal?.aborted) {
    throw new ExecError("cancelled", `${prep.displayArgv[0]} was cancelled before it started`);
  }
  const err = await openTarget("stderr", opts.stderr, prep.cwd);
  let stdin;
  try {
    stdin = await openStdin(opts.stdin, prep.cwd);
  } catch (e) {
    closeQuietly(err?.file);
    throw e;
  }
  const cgroup = prep.killScope === "cgroup" ? Cgroup.create() : null;
  let child: Child;
  try {
    child = startChild(prep, {
      stdin: stdin.mode,
      stdout: "piped",
      stderr: opts.stderr === "discard" ? "null" : "piped",
    }, cgroup);
  } catch (e) {
    stdin.stop();
    closeQuietly(err?.file);
    cgroup?.remove();
    throw e;
  }
  const { t0, startedAt, exit, sup, feeding } = supervise(child, prep, cgroup, opts, stdin);

  const stderrDone = opts.stderr === "discard"
    ? Promise.resolve({ bytes: new Uint8Array(0), total: 0, truncated: false })
    : err !== null
    ? drainToFile(child.stderr, err.file, sup.drainStop).then(({ total }) => ({
      bytes: new Uint8Array(0),
      total,
      truncated: false,
    }))
    : drainCapped(child.stderr, stderrCap, undefined, sup.drainStop);

  const result = (async (): Promise<StreamingResult> => {
    const [exitR, e] = await Promise.all([
      exit.then((v) => ({ ok: true as const, v }), (r) => ({ ok: false as const, r })),
      stderrDone,
    ]);
    const durNs = BigInt(Math.round((performance.now() - t0) * 1e6));
    stdin.stop();
    await feeding;
    sup.dispose();
    await sup.ladder.finished;
    closeQuietly(err?.file);
    cgroup?.remove();
    if (!exitR.ok) throw exitR.r;
    return {
      ...exitR.v,
      durNs,
      stderr: e.bytes,
      stderrBytes: e.total,
      stderrTruncated: e.truncated,
      cancelled: sup.cancelled,
      timedOut: sup.timedOut,
    };
  })();
  // Only a failing wait rejects; keep that from becoming an unhandled rejection when the
  // caller reads stdout but never awaits `result`.
  result.catch(() => {});

  return {
    program: prep.program,
    pid: child.pid,
    pgid: child.pid,
    startedAt,
    killScope: cgroup !== null ? "cgroup" : "group",
    stdout: stoppable(child.stdout, sup.drainStop),
    result,
    cancel: () => sup.cancel(),
  };
}
