/**
 * A bounded tee: keeps the first `cap` bytes of a stream (the value's `.out`) and counts the
 * rest, which still reach the terminal (`tee_truncated`, subsystems §5A).
 *
 * @module
 */

/** The first `cap` bytes of what was pushed, and how many there were in all. */
export class BoundedTee {
  #chunks: Uint8Array[] = [];
  #kept = 0;
  /** Bytes pushed in all. */
  total = 0;

  constructor(readonly cap: number) {}

  /** Keep what fits of `chunk` (copied: readers reuse their buffers). */
  push(chunk: Uint8Array): void {
    this.total += chunk.length;
    const room = this.cap - this.#kept;
    if (room <= 0 || chunk.length === 0) return;
    const part = chunk.slice(0, Math.min(room, chunk.length));
    this.#chunks.push(part);
    this.#kept += part.length;
  }

  /** True when more than `cap` bytes were pushed. */
  get truncated(): boolean {
    return this.total > this.cap;
  }

  /** The kept bytes as one array. */
  bytes(): Uint8Array {
    const out = new Uint8Array(this.#kept);
    let off = 0;
    for (const c of this.#chunks) {
      out.set(c, off);
      off += c.length;
    }
    return out;
  }
}
