/**
 * Newline-delimited JSON framing for the kernel socket (protocol §1).
 *
 * The reader is bounded *while reading*: a line longer than `maxFrame` is never assembled —
 * the reader switches to discard mode until the next newline and reports one `oversize`
 * frame. Beyond `spillAt` bytes a partial line goes to an unlinked temp file instead of
 * memory, so an oversize frame costs the process about `spillAt` bytes of memory, not
 * `maxFrame` (a legal big frame is read back once it is complete).
 */

/** The largest accepted frame: 16 MiB. */
export const MAX_FRAME = 16 * 1024 * 1024;
/** Partial lines longer than this wait on disk rather than in memory. */
export const SPILL_AT = 1024 * 1024;

/**
 * One unit read from the stream. `badUtf8`: the line's bytes are not valid UTF-8 (`text` then
 * holds replacement characters and must be refused, never acted on).
 */
export type Frame =
  | { kind: "line"; text: string; badUtf8?: true }
  | { kind: "oversize"; bytes: number };

const NL = 10;
const strict = new TextDecoder("utf-8", { fatal: true });
const lossy = new TextDecoder();

/** A line frame, decoded strictly (see {@link Frame}). */
function lineOf(bytes: Uint8Array): Frame {
  try {
    return { kind: "line", text: strict.decode(bytes) };
  } catch {
    return { kind: "line", text: lossy.decode(bytes), badUtf8: true };
  }
}

/** Minimal readable (a Deno.Conn satisfies it). */
export interface ByteReader {
  read(p: Uint8Array): Promise<number | null>;
}

/** Minimal writable (a Deno.Conn satisfies it). */
export interface ByteWriter {
  write(p: Uint8Array): Promise<number>;
}

/** Reads frames from a byte stream without ever buffering more than `maxFrame` bytes. */
export class FrameReader {
  #buf = new Uint8Array(64 * 1024);
  #start = 0;
  #end = 0;
  #parts: Uint8Array[] = [];
  #partsLen = 0;
  #spill: Deno.FsFile | null = null;
  #spillLen = 0;
  #discarding = 0;
  #eof = false;

  constructor(
    readonly src: ByteReader,
    readonly maxFrame = MAX_FRAME,
    readonly spillAt = SPILL_AT,
  ) {}

  /** Bytes of the partial line held so far (memory + spill). */
  get #held(): number {
    return this.#partsLen + this.#spillLen;
  }

  /**
   * The next frame, or null at end of stream. A final line without its newline (the peer
   * closed or half-closed after it) is a frame too: it is answered like any other.
   */
  async next(): Promise<Frame | null> {
    while (true) {
      const nl = this.#buf.subarray(this.#start, this.#end).indexOf(NL);
      if (nl >= 0) {
        const lineEnd = this.#start + nl;
        const piece = this.#buf.subarray(this.#start, lineEnd);
        this.#start = lineEnd + 1;
        if (this.#discarding > 0) {
          const bytes = this.#discarding + piece.length;
          this.#discarding = 0;
          return { kind: "oversize", bytes };
        }
        if (this.#held + piece.length > this.maxFrame) {
          const bytes = this.#held + piece.length;
          this.#resetParts();
          return { kind: "oversize", bytes };
        }
        const line = this.#assemble(piece);
        if (line.length === 0 || (line.length === 1 && line[0] === 13)) continue; // blank: no frame
        return lineOf(line);
      }
      // No newline in the buffered bytes: move them aside (or discard) and read more.
      const rest = this.#buf.subarray(this.#start, this.#end);
      if (rest.length) {
        if (this.#discarding > 0) this.#discarding += rest.length;
        else if (this.#held + rest.length > this.maxFrame) {
          this.#discarding = this.#held + rest.length;
          this.#resetParts();
        } else this.#hold(rest);
      }
      this.#start = this.#end = 0;
      if (this.#eof) return this.#finish();
      const n = await this.src.read(this.#buf);
      if (n === null) {
        this.#eof = true;
        return this.#finish();
      }
      this.#end = n;
    }
  }

  /** Keep part of a line: in memory up to `spillAt`, then in an unlinked temp file. */
  #hold(bytes: Uint8Array): void {
    if (this.#spill === null && this.#partsLen + bytes.length <= this.spillAt) {
      this.#parts.push(bytes.slice());
      this.#partsLen += bytes.length;
      return;
    }
    if (this.#spill === null) {
      const path = Deno.makeTempFileSync({ prefix: "shoal-frame-" });
      this.#spill = Deno.openSync(path, { read: true, write: true });
      Deno.removeSync(path); // anonymous: gone when closed, even after a crash
      for (const p of this.#parts) this.#writeSpill(p);
      this.#parts = [];
      this.#partsLen = 0;
    }
    this.#writeSpill(bytes);
  }

  #writeSpill(bytes: Uint8Array): void {
    for (let off = 0; off < bytes.length;) off += this.#spill!.writeSync(bytes.subarray(off));
    this.#spillLen += bytes.length;
  }

  #finish(): Frame | null {
    if (this.#discarding > 0) {
      const bytes = this.#discarding;
      this.#discarding = 0;
      return { kind: "oversize", bytes };
    }
    if (this.#held === 0) return null;
    const f = lineOf(this.#assemble(new Uint8Array(0)));
    return f.kind === "line" && f.text.trim() === "" ? null : f;
  }

  #assemble(last: Uint8Array): Uint8Array {
    if (this.#parts.length === 0 && this.#spill === null) return last;
    const all = new Uint8Array(this.#held + last.length);
    let off = 0;
    if (this.#spill !== null) {
      this.#spill.seekSync(0, Deno.SeekMode.Start);
      while (off < this.#spillLen) {
        const n = this.#spill.readSync(all.subarray(off, this.#spillLen));
        if (n === null) break;
        off += n;
      }
    }
    for (const p of this.#parts) {
      all.set(p, off);
      off += p.length;
    }
    all.set(last, off);
    this.#resetParts();
    return all;
  }

  #resetParts(): void {
    this.#parts = [];
    this.#partsLen = 0;
    if (this.#spill !== null) {
      try {
        this.#spill.close();
      } catch { /* already closed */ }
      this.#spill = null;
      this.#spillLen = 0;
    }
  }

  /** Release a pending spill file (call when the stream is abandoned mid-line). */
  close(): void {
    this.#resetParts();
  }
}

const encoder = new TextEncoder();

/**
 * Serialises whole frames onto one connection: concurrent writers (responses, event pushes)
 * never interleave inside a frame. Writes loop until every byte is out.
 */
export class FrameWriter {
  #tail: Promise<void> = Promise.resolve();
  #closed = false;
  /** Frames queued or being written; at 0 a frame is written at once (no queue hop). */
  #queued = 0;

  constructor(readonly dst: ByteWriter) {}

  /** Queue one message (compact JSON + "\n"). Resolves when written; rejects if the peer is gone. */
  send(msg: unknown): Promise<void> {
    const bytes = encoder.encode(JSON.stringify(msg) + "\n");
    const run = async () => {
      if (this.#closed) throw new Error("connection closed");
      let off = 0;
      while (off < bytes.length) off += await this.dst.write(bytes.subarray(off));
    };
    const p = this.#queued === 0 ? run() : this.#tail.then(run, run);
    this.#queued++;
    this.#tail = p.then(
      () => void this.#queued--,
      () => {
        this.#queued--;
        this.#closed = true;
      },
    );
    return p;
  }

  /** Bytes of the JSON frame `msg` would produce (for bounding decisions). */
  static size(msg: unknown): number {
    return encoder.encode(JSON.stringify(msg)).length + 1;
  }
}
