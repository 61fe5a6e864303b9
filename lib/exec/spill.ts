/**
 * Where captured stdout goes once it outgrows its in-memory cap.
 *
 * The capture layer keeps the first `cap` bytes in memory and hands every later byte, in
 * order, to a {@link SpillSink}. The default sink writes a temp file; the journal/CAS layer
 * can plug in a content store (hashing as it writes) by passing its own {@link SpillFactory}.
 *
 * @module
 */

import { writeAll } from "./write_all.ts";

/** Where spilled bytes ended up. */
export interface SpillInfo {
  /** A file holding exactly the spilled bytes (the stream after the in-memory part). */
  path: string;
  /** Number of bytes in that file. */
  bytes: number;
  /** True when the child wrote more than the spill limit; the excess was discarded. */
  truncated: boolean;
}

/** A sequential byte sink, opened lazily at the first overflow. */
export interface SpillSink {
  /**
   * Append `chunk`. Calls are sequential (each awaited before the next). `chunk` is only
   * valid until the returned promise settles (its buffer is reused): copy it to keep it.
   */
  write(chunk: Uint8Array): Promise<void>;
  /** Finish writing and describe the result; `truncated` is supplied by the caller. */
  close(truncated: boolean): Promise<SpillInfo>;
  /** Give up (after a write error): release resources and remove partial data. */
  abort(): Promise<void>;
}

/** Creates one sink per spilling stream. */
export type SpillFactory = () => Promise<SpillSink>;

/** Options for {@link tempFileSpill}. */
export interface TempFileSpillOptions {
  /** Directory for spill files (created if missing); default: the OS temp dir. */
  dir?: string;
  /** File name prefix; default `"shoal-spill-"`. */
  prefix?: string;
}

/** Bytes collected before one write call, so a 200 MB spill is ~200 writes, not ~3000. */
const WRITE_BATCH = 1 << 20;

/**
 * The default {@link SpillFactory}: each sink is a fresh temp file (mode 0600) that the
 * caller owns afterwards and must delete or ingest.
 */
export function tempFileSpill(options: TempFileSpillOptions = {}): SpillFactory {
  return async () => {
    if (options.dir !== undefined) await Deno.mkdir(options.dir, { recursive: true, mode: 0o700 });
    const path = await Deno.makeTempFile({
      dir: options.dir,
      prefix: options.prefix ?? "shoal-spill-",
    });
    const file = await Deno.open(path, { write: true, truncate: true });
    return new FileSink(path, file);
  };
}

class FileSink implements SpillSink {
  #bytes = 0;
  #batch = new Uint8Array(WRITE_BATCH);
  #fill = 0;
  #closed = false;

  constructor(readonly path: string, readonly file: Deno.FsFile) {}

  async write(chunk: Uint8Array): Promise<void> {
    this.#bytes += chunk.length;
    if (chunk.length >= WRITE_BATCH) {
      await this.#flush();
      await writeAll(this.file, chunk);
      return;
    }
    if (this.#fill + chunk.length > WRITE_BATCH) await this.#flush();
    this.#batch.set(chunk, this.#fill);
    this.#fill += chunk.length;
  }

  async #flush(): Promise<void> {
    if (this.#fill === 0) return;
    await writeAll(this.file, this.#batch.subarray(0, this.#fill));
    this.#fill = 0;
  }

  async close(truncated: boolean): Promise<SpillInfo> {
    try {
      await this.#flush();
    } finally {
      this.#release();
    }
    return { path: this.path, bytes: this.#bytes, truncated };
  }

  async abort(): Promise<void> {
    this.#release();
    await Deno.remove(this.path).catch(() => {});
  }

  #release(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.file.close();
  }
}
