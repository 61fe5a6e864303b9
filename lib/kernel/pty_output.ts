/**
 * The text a PTY program printed since the last `pty.read`, for `wait_for` (protocol §12,
 * beyond upstream): UTF-8 decoded across chunk boundaries, escape sequences removed (one cut
 * off by a chunk boundary waits for the next chunk), `\r\n` as `\n`, other control characters
 * dropped. Bounded: the newest `cap` characters are kept and the rest counted as dropped.
 *
 * @module
 */

import { incompleteEscapeAt, stripAnsi } from "../client/bound_text.ts";

/** Characters of output text kept between reads. */
export const OUTPUT_TAIL_CAP = 65536;
/** Longest escape sequence held back waiting for its end (beyond it, it is dropped as text). */
const MAX_HELD = 4096;

// deno-lint-ignore no-control-regex
const CONTROLS = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g;

/** Output text since the last {@link take}. */
export class OutputTail {
  #text = "";
  #held = "";
  #dropped = 0;
  #bytes = 0;
  readonly #decoder = new TextDecoder("utf-8", { fatal: false });

  constructor(readonly cap = OUTPUT_TAIL_CAP) {}

  /** Add program output. */
  push(chunk: Uint8Array): void {
    this.#bytes += chunk.length;
    let s = this.#held + this.#decoder.decode(chunk, { stream: true });
    this.#held = "";
    const cut = incompleteEscapeAt(s);
    if (cut >= 0 && s.length - cut <= MAX_HELD) {
      this.#held = s.slice(cut);
      s = s.slice(0, cut);
    }
    // A trailing \r may be the first half of \r\n.
    if (s.endsWith("\r")) {
      this.#held = "\r" + this.#held;
      s = s.slice(0, -1);
    }
    s = stripAnsi(s).replaceAll("\r\n", "\n").replace(CONTROLS, "");
    this.#text += s;
    if (this.#text.length > this.cap) {
      const over = this.#text.length - this.cap;
      this.#dropped += over;
      this.#text = this.#text.slice(over);
    }
  }

  /** The text so far (not consumed). */
  get text(): string {
    return this.#text;
  }

  /** Return what accumulated and start over: the text, dropped characters, bytes seen. */
  take(): { text: string; dropped: number; bytes: number } {
    const r = { text: this.#text, dropped: this.#dropped, bytes: this.#bytes };
    this.#text = "";
    this.#dropped = 0;
    this.#bytes = 0;
    return r;
  }
}
