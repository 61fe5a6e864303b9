/**
 * Splits a byte stream into lines for the kernel ↔ session pipes. Each chunk is scanned once
 * (a line split over many chunks costs O(its length), not O(length²)), and the bytes of an
 * unfinished line are held in parts until its newline arrives.
 *
 * @module
 */

/** Feeds chunks and calls `onLine` with each complete line (without its `\n`, never empty). */
export class LineSplitter {
  readonly #decoder = new TextDecoder();
  #parts: string[] = [];

  constructor(readonly onLine: (line: string) => void) {}

  /** Take one chunk of bytes. */
  push(chunk: Uint8Array): void {
    const text = this.#decoder.decode(chunk, { stream: true });
    let start = 0;
    let nl = text.indexOf("\n");
    while (nl >= 0) {
      let line = text.slice(start, nl);
      if (this.#parts.length > 0) {
        this.#parts.push(line);
        line = this.#parts.join("");
        this.#parts = [];
      }
      if (line !== "") this.onLine(line);
      start = nl + 1;
      nl = text.indexOf("\n", start);
    }
    if (start < text.length) this.#parts.push(text.slice(start));
  }

  /** Characters held of the unfinished line. */
  get pendingLength(): number {
    let n = 0;
    for (const p of this.#parts) n += p.length;
    return n;
  }

  /** The unfinished line (its newline never came), emptied. */
  takeRest(): string {
    const rest = this.#parts.join("");
    this.#parts = [];
    return rest;
  }
}
