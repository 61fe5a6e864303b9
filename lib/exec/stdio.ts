/**
 * Opening the child's stdin source and output files before the spawn (so a bad redirect
 * fails cleanly, without starting anything), and feeding stdin afterwards.
 *
 * @module
 */

import { resolve } from "node:path";
import { ExecError } from "./errors.ts";
import type { OutputTarget, StdinSpec } from "./types.ts";

/** A prepared stdin source. */
export interface StdinPlan {
  /** The `Deno.Command` stdin mode. */
  mode: "null" | "piped";
  /** Start feeding `sink` (the child's stdin); settles when done, never rejects. */
  feed(sink: WritableStream<Uint8Array>): Promise<void>;
  /** Stop feeding (the child is gone) and release the source. Idempotent. */
  stop(): void;
}

const NO_STDIN: StdinPlan = { mode: "null", feed: () => Promise.resolve(), stop() {} };

function redirectError(what: string, path: string, e: unknown): ExecError {
  const os = e instanceof Error ? e.message : String(e);
  return new ExecError("redirect_failed", `cannot open ${path} for ${what}: ${os}`, {
    path,
    osMessage: os,
    cause: e,
  });
}

/** Prepare stdin. Opens a file source now; throws `redirect_failed` / `invalid_argument`. */
export async function openStdin(spec: StdinSpec | undefined, cwd: string): Promise<StdinPlan> {
  if (spec === undefined || spec === "none") return NO_STDIN;
  if (spec instanceof Uint8Array) return bytesPlan(spec);
  if (spec instanceof ReadableStream) {
    if (spec.locked) {
      throw new ExecError("invalid_argument", "stdin stream is already locked by another reader");
    }
    return streamPlan(spec, true);
  }
  if (typeof spec === "object" && spec !== null && typeof spec.path === "string") {
    const path = resolve(cwd, spec.path);
    let file: Deno.FsFile;
    try {
      file = await Deno.open(path, { read: true });
    } catch (e) {
      throw redirectError("reading", path, e);
    }
    const isDir = await file.stat().then((s) => s.isDirectory, () => false);
    if (isDir) {
      file.close();
      throw redirectError("reading", path, new Error("Is a directory (os error 21)"));
    }
    return streamPlan(file.readable, false, () => {
      try {
        file.close();
      } catch {
        // already closed by the finished pipe
      }
    });
  }
  throw new ExecError(
    "invalid_argument",
    'stdin must be "none", a Uint8Array, {path} or a ReadableStream',
  );
}

function bytesPlan(bytes: Uint8Array): StdinPlan {
  let writer: WritableStreamDefaultWriter<Uint8Array> | null = null;
  return {
    mode: "piped",
    async feed(sink) {
      writer = sink.getWriter();
      try {
        if (bytes.length > 0) await writer.write(bytes);
        await writer.close();
      } catch {
        // EPIPE: the child stopped reading; that is its business.
      }
    },
    stop() {
      writer?.abort().catch(() => {});
    },
  };
}

function streamPlan(
  source: ReadableStream<Uint8Array>,
  callerOwned: boolean,
  release?: () => void,
): StdinPlan {
  const abort = new AbortController();
  let started = false;
  return {
    mode: "piped",
    async feed(sink) {
      started = true;
      try {
        await source.pipeTo(sink, { signal: abort.signal });
      } catch {
        // child exited or closed its stdin early; the source was cancelled by pipeTo.
      } finally {
        release?.();
      }
    },
    stop() {
      abort.abort();
      // Never fed (spawn failed): a caller's stream would otherwise wait forever.
      if (!started) {
        if (callerOwned) source.cancel().catch(() => {});
        release?.();
      }
    },
  };
}

/**
 * After a failed start, cancel a caller's stdin stream that nothing will ever read (a
 * locked stream belongs to someone else and is left alone).
 */
export function abandonStdin(spec: StdinSpec | undefined): void {
  if (spec instanceof ReadableStream && !spec.locked) spec.cancel().catch(() => {});
}

/** An output file opened for a redirect, shareable between stdout and stderr. */
export interface OpenTarget {
  path: string;
  file: Deno.FsFile;
}

/** Open the file of a `{path}` target (truncate or append); `invalid_argument` on a bad target. */
export async function openTarget(
  which: "stdout" | "stderr",
  target: OutputTarget | undefined,
  cwd: string,
): Promise<OpenTarget | null> {
  if (target === undefined || target === "capture" || target === "discard") return null;
  if (typeof target !== "object" || target === null || typeof target.path !== "string") {
    throw new ExecError(
      "invalid_argument",
      `${which} must be "capture", "discard" or {path, append?}`,
    );
  }
  const path = resolve(cwd, target.path);
  try {
    const file = await Deno.open(path, {
      write: true,
      create: true,
      append: target.append === true,
      truncate: target.append !== true,
    });
    return { path, file };
  } catch (e) {
    throw redirectError(which === "stdout" ? "writing stdout" : "writing stderr", path, e);
  }
}

/** Close `file`, ignoring "already closed". */
export function closeQuietly(file: { close(): void } | null | undefined): void {
  try {
    file?.close();
  } catch {
    // already closed
  }
}
