/**
 * Newline-delimited JSON framing for the kernel socket (protocol §1).
 *
 * The reader is bounded *while reading*: a line longer than `maxFrame` is never assembled —
 * the reader switches to discard mode until the next newline and reports one `oversize`
 * frame, so a hostile or buggy peer cannot make us hold more than `maxFrame` bytes.
 */

/** The largest accepted frame: 16 MiB. */
export const MAX_FRAME = 16 * 1024 * 1024;

/** One unit read from the stream. */
export type Frame = { kind: "line"; text: string } | { kind: "oversize"; bytes: number };

const NL = 10;
const decoder = new TextDecoder();

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
  #discarding = 0;
  #eof = false;

  constructor(readonly src: ByteReader, readonly maxFrame = MAX_FRAME) {}

  /** The next frame, or null at end of stream. A trailing unterminated line is a frame too. */
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
        if (this.#partsLen + piece.length > this.maxFrame) {
          const bytes = this.#partsLen + piece.length;
          this.#resetParts();
          return { kind: "oversize", bytes };
        }
        const text = this.#assemble(piece);
        if (text.length === 0 || text === "\r") continue; // blank lines are not frames
        return { kind: "line", text };
      }
      // No newline in the buffered bytes: move them aside (or discard) and read more.
      const rest = this.#buf.subarray(this.#start, this.#end);
      if (rest.length) {
        if (this.#discarding > 0) this.#discarding += rest.length;
        else if (this.#partsLen + rest.length > this.maxFrame) {
          this.#discarding = this.#partsLen + rest.length;
          this.#resetParts();
        } else {
          this.#parts.push(rest.slice());
          this.#partsLen += rest.length;
        }
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

  #finish(): Frame | null {
    if (this.#discarding > 0) {
      const bytes = this.#discarding;
      this.#discarding = 0;
      return { kind: "oversize", bytes };
    }
    if (this.#partsLen === 0) return null;
    const text = this.#assemble(new Uint8Array(0));
    return text.trim() ? { kind: "line", text } : null;
  }

  #assemble(last: Uint8Array): string {
    if (this.#parts.length === 0) return decoder.decode(last);
    const all = new Uint8Array(this.#partsLen + last.length);
    let off = 0;
    for (const p of this.#parts) {
      all.set(p, off);
      off += p.length;
    }
    all.set(last, off);
    this.#resetParts();
    return decoder.decode(all);
  }

  #resetParts(): void {
    this.#parts = [];
    this.#partsLen = 0;
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

  constructor(readonly dst: ByteWriter) {}

  /** Queue one message (compact JSON + "\n"). Resolves when written; rejects if the peer is gone. */
  send(msg: unknown): Promise<void> {
    const bytes = encoder.encode(JSON.stringify(msg) + "\n");
    const run = async () => {
      if (this.#closed) throw new Error("connection closed");
      let off = 0;
      while (off < bytes.length) off += await this.dst.write(bytes.subarray(off));
    };
    const p = this.#tail.then(run, run);
    this.#tail = p.catch(() => {
      this.#closed = true;
    });
    return p;
  }

  /** Bytes of the JSON frame `msg` would produce (for bounding decisions). */
  static size(msg: unknown): number {
    return encoder.encode(JSON.stringify(msg)).length + 1;
  }
}
