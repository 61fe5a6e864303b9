/**
 * The foreground for a `shoal` whose stdout is not a terminal (`shoal -c … | less`, a script
 * in CI): a statement-position command's stdout is passed through as it is produced and teed
 * (bounded) into the result; its stderr is captured and written to our stderr when it ends,
 * so no byte of either is lost, whether the command succeeds or fails. Like the PTY tee, the
 * result's stderr is then empty: it was shown already, and a `cmd_failed` must not repeat it.
 *
 * @module
 */

import {
  type CaptureOptions,
  type CaptureResult,
  DEFAULT_CAPTURE_CAP,
  spawnStreaming,
} from "../exec/mod.ts";
import { BoundedTee } from "./tee.ts";
import { markStreamed } from "./streamed.ts";

/** Write all of `bytes` to a sync fd. */
export function writeFd(fd: { writeSync(p: Uint8Array): number }, bytes: Uint8Array): void {
  for (let off = 0; off < bytes.length;) off += fd.writeSync(bytes.subarray(off));
}

/** Run `opts` with stdout passed through to ours (see the module comment). */
export async function pipeForeground(opts: CaptureOptions): Promise<CaptureResult> {
  const child = await spawnStreaming({ ...opts, stderr: "capture" });
  const tee = new BoundedTee(opts.stdoutCap ?? DEFAULT_CAPTURE_CAP);
  const reader = child.stdout.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      tee.push(value);
      try {
        writeFd(Deno.stdout, value);
      } catch {
        // Our stdout is gone (a closed pipe): the child still runs to its end, teed.
      }
    }
  } finally {
    reader.releaseLock();
  }
  const r = await child.result;
  if (r.stderr.length) {
    try {
      writeFd(Deno.stderr, r.stderr);
    } catch { /* stderr closed */ }
  }
  const stdout = tee.bytes();
  markStreamed(stdout);
  return {
    status: r.status,
    signal: r.signal,
    program: child.program,
    argv: opts.argv.map((a) => (typeof a === "string" ? a : new TextDecoder().decode(a))),
    pid: child.pid,
    pgid: child.pgid,
    startedAt: child.startedAt,
    durNs: r.durNs,
    stdout,
    stderr: new Uint8Array(0),
    stdoutBytes: tee.total,
    stderrBytes: r.stderrBytes,
    stdoutTruncated: tee.truncated,
    stderrTruncated: r.stderrTruncated,
    cancelled: r.cancelled,
    timedOut: r.timedOut,
    killScope: child.killScope,
  };
}
