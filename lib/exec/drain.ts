/**
 * Draining one child output stream: into memory under a cap (overflow spilled or dropped),
 * or into a file as it arrives. Memory use is bounded by the cap, whatever the child writes.
 *
 * @module
 */

import { ByteReader } from "./byte_reader.ts";
import type { SpillFactory, SpillInfo, SpillSink } from "./spill.ts";
import { writeAll } from "./write_all.ts";

/** Result of {@link drainCapped}. */
export interface DrainResult {
  /** The first `cap` bytes, exactly sized. */
  bytes: Uint8Array;
  /** All bytes read from the stream. */
  total: number;
  /** True when `total > cap`. */
  truncated: boolean;
  /** Where the overflow went, when it was spilled. */
  spill?: SpillInfo;
  /** Why spilling stopped early, when it failed. */
  spillError?: string;
}

/** Overflow handling for {@link drainCapped}; absent ⇒ count and drop. */
export interface SpillPolicy {
  factory: SpillFactory;
  maxBytes: number;
}

const FIRST_BLOCK = 64 * 1024;
const MAX_BLOCK = 4 * 1024 * 1024;

/**
 * In-memory part of a capture: chunks are copied into our own blocks, which grow
 * geometrically up to 4 MiB, so small outputs stay small and large ones cost few
 * allocations. (Reads land in a reused scratch buffer, see ByteReader.)
 */
class Blocks {
  #blocks: Uint8Array[] = [];
  #used = 0; // bytes used in the last block
  #total = 0;

  constructor(readonly cap: number) {}

  get size(): number {
    return this.#total;
  }

  /** Copy as much of `chunk` as fits under the cap; returns how many bytes were taken. */
  take(chunk: Uint8Array): number {
    let taken = 0;
    while (taken < chunk.length && this.#total < this.cap) {
      let block = this.#blocks.at(-1);
      if (block === undefined || this.#used === block.length) {
        const next = Math.min(block ? block.length * 2 : FIRST_BLOCK, MAX_BLOCK);
        block = new Uint8Array(Math.min(next, this.cap - this.#total));
        this.#blocks.push(block);
        this.#used = 0;
      }
      const n = Math.min(chunk.length - taken, block.length - this.#used);
      block.set(chunk.subarray(taken, taken + n), this.#used);
      this.#used += n;
      this.#total += n;
      taken += n;
    }
    return taken;
  }

  /** One exactly-sized array (a single full block is returned without copying). */
  finish(): Uint8Array {
    const blocks = this.#blocks;
    this.#blocks = [];
    if (blocks.length === 0) return new Uint8Array(0);
    if (blocks.length === 1) {
      const only = blocks[0];
      return this.#used === only.length ? only : only.slice(0, this.#used);
    }
    const out = new Uint8Array(this.#total);
    let off = 0;
    for (let i = 0; i < blocks.length; i++) {
      const part = i === blocks.length - 1 ? blocks[i].subarray(0, this.#used) : blocks[i];
      out.set(part, off);
      off += part.length;
    }
    return out;
  }
}

/**
 * Read `stream` to its end. Keeps the first `cap` bytes; later bytes go to a spill sink
 * (created at the first overflow, at most `spill.maxBytes`) or are counted and dropped.
 * A read error ends the drain early (the bytes so far are kept); it never throws.
 */
export async function drainCapped(
  stream: ReadableStream<Uint8Array>,
  cap: number,
  spill?: SpillPolicy,
  stop?: AbortSignal,
): Promise<DrainResult> {
  const mem = new Blocks(cap);
  let total = 0;
  let sink: SpillSink | null = null;
  let spilled = 0;
  let spillTruncated = false;
  let spillError: string | undefined;
  let spillDisabled = spill === undefined;

  const overflow = async (rest: Uint8Array) => {
    if (spillDisabled) return;
    try {
      sink ??= await spill!.factory();
      const room = spill!.maxBytes - spilled;
      const part = rest.length > room ? rest.subarray(0, room) : rest;
      if (part.length < rest.length) spillTruncated = true;
      if (part.length > 0) {
        await sink.write(part);
        spilled += part.length;
      }
    } catch (e) {
      spillError = e instanceof Error ? e.message : String(e);
      spillDisabled = true;
      const failed = sink;
      sink = null;
      await failed?.abort().catch(() => {});
    }
  };

  const reader = new ByteReader(stream, stop);
  try {
    for (let chunk = await reader.read(); chunk !== null; chunk = await reader.read()) {
      total += chunk.length;
      const taken = mem.take(chunk);
      if (taken < chunk.length) await overflow(chunk.subarray(taken));
    }
  } finally {
    reader.release();
  }

  let info: SpillInfo | undefined;
  if (sink !== null) {
    const open: SpillSink = sink;
    try {
      info = await open.close(spillTruncated);
    } catch (e) {
      spillError = e instanceof Error ? e.message : String(e);
      await open.abort().catch(() => {});
    }
  }
  const result: DrainResult = { bytes: mem.finish(), total, truncated: total > cap };
  if (info !== undefined) result.spill = info;
  if (spillError !== undefined) result.spillError = spillError;
  return result;
}

/**
 * Copy `stream` into `file` as chunks arrive. Returns the byte count. A write error (disk
 * full, …) stops writing; the rest of the stream is still drained so the child never
 * blocks on a full pipe, and the error message is returned.
 */
export async function drainToFile(
  stream: ReadableStream<Uint8Array>,
  file: { write(p: Uint8Array): Promise<number> },
  stop?: AbortSignal,
): Promise<{ total: number; error?: string }> {
  let total = 0;
  let error: string | undefined;
  const reader = new ByteReader(stream, stop);
  try {
    for (let chunk = await reader.read(); chunk !== null; chunk = await reader.read()) {
      total += chunk.length;
      if (error !== undefined) continue;
      try {
        await writeAll(file, chunk);
      } catch (e) {
        error = e instanceof Error ? e.message : String(e);
      }
    }
  } finally {
    reader.release();
  }
  return error === undefined ? { total } : { total, error };
}

/**
 * A pass-through of `stream` that ends (as if at EOF) when `stop` fires; cancelling it
 * cancels `stream`. No read-ahead: bytes are pulled only when the consumer reads.
 */
export function stoppable(
  stream: ReadableStream<Uint8Array>,
  stop: AbortSignal,
): ReadableStream<Uint8Array> {
  const reader = stream.getReader();
  const onStop = () => reader.cancel().catch(() => {});
  stop.addEventListener("abort", onStop, { once: true });
  const finish = () => stop.removeEventListener("abort", onStop);
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let next: ReadableStreamReadResult<Uint8Array>;
      try {
        next = await reader.read();
      } catch {
        next = { done: true, value: undefined };
      }
      if (next.done) {
        finish();
        controller.close();
      } else {
        controller.enqueue(next.value);
      }
    },
    async cancel(reason) {
      finish();
      await reader.cancel(reason).catch(() => {});
    },
  }, { highWaterMark: 0 });
}
