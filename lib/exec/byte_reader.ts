/**
 * Reading a child's pipe without a fresh allocation per read.
 *
 * A plain reader of a `Deno.Command` pipe allocates a new 64 KiB buffer for every read;
 * at hundreds of MB that is allocation churn and RSS the GC returns late. Child pipes are
 * byte streams, so we read them BYOB into one scratch buffer that is reused. Other
 * streams fall back to an ordinary reader. A pipe of the posix_spawn backend is read
 * straight from its fd, without taking the stream's reader at all: getting and releasing
 * one (release always makes a TypeError, stack trace included) cost more than the rest of
 * a small capture. Scratch buffers come from a small pool, so a capture allocates none.
 *
 * @module
 */

import { type FdSource, fdSourceOf } from "./fd_stream.ts";

/** Size of the reused read buffer (the default Linux pipe capacity). */
const SCRATCH = 64 * 1024;
/** Idle scratch buffers kept for the next readers (each 64 KiB). */
const POOL_MAX = 8;
const pool: ArrayBuffer[] = [];

/**
 * Sequential reader of a byte stream. The view returned by {@link read} is valid only
 * until the next call: consume (copy, write, hash) it before reading again. The reader
 * must be the stream's only consumer until {@link release}.
 */
export class ByteReader {
  #byob: ReadableStreamBYOBReader | null = null;
  #plain: ReadableStreamDefaultReader<Uint8Array> | null = null;
  #direct: FdSource | undefined;
  #scratch: ArrayBuffer | null = null;
  #stop: AbortSignal | undefined;
  #onStop = () => this.#cancel();

  /**
   * `stop`, when it fires, cancels the stream: the pending read then reports the end.
   * It exists for pipes held open by a process outside the killed group (a setsid
   * escaper), whose EOF would never come.
   */
  constructor(stream: ReadableStream<Uint8Array>, stop?: AbortSignal) {
    this.#direct = fdSourceOf(stream);
    if (this.#direct === undefined) {
      try {
        this.#byob = stream.getReader({ mode: "byob" });
      } catch {
        this.#plain = stream.getReader();
      }
    }
    this.#stop = stop;
    stop?.addEventListener("abort", this.#onStop, { once: true });
    if (stop?.aborted) this.#cancel();
  }

  #cancel(): void {
    if (this.#direct !== undefined) this.#direct.close();
    else (this.#byob ?? this.#plain)!.cancel().catch(() => {});
  }

  /** The next bytes, or null at the end of the stream (or on a read error). */
  async read(): Promise<Uint8Array | null> {
    try {
      if (this.#direct !== undefined) {
        const view = new Uint8Array(this.#scratch ??= pool.pop() ?? new ArrayBuffer(SCRATCH));
        const n = await this.#direct.read(view);
        return n === 0 ? null : view.subarray(0, n);
      }
      if (this.#plain !== null) {
        const { done, value } = await this.#plain.read();
        return done ? null : value;
      }
      const buf = this.#scratch ?? pool.pop() ?? new ArrayBuffer(SCRATCH);
      this.#scratch = null; // transferred by the read; taken back from the result below
      const { done, value } = await this.#byob!.read(new Uint8Array(buf));
      if (value !== undefined) this.#scratch = value.buffer as ArrayBuffer;
      return done || value === undefined ? null : value;
    } catch {
      // The pipe broke (the resource was closed under us): what was read is kept.
      return null;
    }
  }

  /**
   * Stop listening for `stop` and release the stream's lock. The last view returned by
   * {@link read} is invalid from here on (its buffer goes back to the pool).
   */
  release(): void {
    this.#stop?.removeEventListener("abort", this.#onStop);
    this.#stop = undefined;
    (this.#byob ?? this.#plain)?.releaseLock();
    this.#byob = this.#plain = null;
    const scratch = this.#scratch;
    this.#scratch = null;
    if (scratch !== null && scratch.byteLength === SCRATCH && pool.length < POOL_MAX) {
      pool.push(scratch);
    }
  }
}
