/**
 * The screen a person would see on a PTY: a headless xterm (`@xterm/headless`) fed with the
 * program's raw output. It answers the terminal's queries (cursor position, device
 * attributes) through `reply` — programs such as vim wait for those answers — and keeps a
 * bounded scrollback of the lines that scrolled off, numbered from the first line that ever
 * did, so a reader can page through it while output keeps coming.
 *
 * @module
 */

import xtermPkg from "@xterm/headless";

// A CommonJS package: the default import is the module object (a named import fails).
const { Terminal } = xtermPkg;
type Term = InstanceType<typeof Terminal>;

/** What a screen shows. */
export interface ScreenSnapshot {
  cols: number;
  rows: number;
  /** Exactly `rows` strings: plain text, trailing blanks trimmed, no escape sequences. */
  lines: string[];
  /** 0-based; `hidden` when the program turned the cursor off (DECTCEM). */
  cursor: { row: number; col: number; hidden: boolean };
  /** True while a full-screen program uses the alternate screen (vim, less). */
  alternate: boolean;
  /** The window title the program set (OSC 0/2), "" if none. */
  title: string;
}

/** Options of a {@link PtyScreen}. */
export interface ScreenOptions {
  cols: number;
  rows: number;
  /** Lines kept after they scroll off the top (0: none). */
  scrollback: number;
  /** Bytes the terminal sends back to the program (query answers). */
  reply: (data: string) => void;
}

/** Internal xterm structures for exact scrollback numbering (pinned @xterm/headless 6.0.0). */
interface CoreLines {
  onTrim(fn: (n: number) => void): { dispose(): void };
}
interface CoreBuffers {
  normal?: { lines?: CoreLines };
}

/** A headless terminal screen. */
export class PtyScreen {
  readonly #term: Term;
  #hidden = false;
  #title = "";
  /** Lines of the normal buffer gone for good (trimmed from the scrollback, or reset). */
  #gone = 0;
  #lines: CoreLines | null = null;
  #trimSub: { dispose(): void } | null = null;
  #disposed = false;

  constructor(opts: ScreenOptions) {
    this.#term = new Terminal({
      cols: opts.cols,
      rows: opts.rows,
      scrollback: opts.scrollback,
      allowProposedApi: true,
      // The core logs a warning about its synchronous write (see #writeSync).
      logLevel: "off",
    });
    const t = this.#term;
    const core = (t as unknown as { _core?: { writeSync?: (d: Uint8Array) => void } })._core;
    this.#writeSync = typeof core?.writeSync === "function" ? core.writeSync.bind(core) : null;
    t.onData((d: string) => opts.reply(d));
    t.onBinary((d: string) => opts.reply(d));
    t.onTitleChange((s: string) => (this.#title = s));
    // Cursor visibility (DECTCEM, `CSI ? 25 h/l`) is not in xterm's public modes; watch it
    // without consuming the sequence (handlers return false, so xterm still acts on it).
    const dectcem = (visible: boolean) => (params: (number | number[])[]) => {
      if (params.includes(25)) this.#hidden = !visible;
      return false;
    };
    t.parser.registerCsiHandler({ prefix: "?", final: "h" }, dectcem(true));
    t.parser.registerCsiHandler({ prefix: "?", final: "l" }, dectcem(false));
    const shown = () => {
      this.#hidden = false;
      return false;
    };
    t.parser.registerEscHandler({ final: "c" }, shown); // RIS
    t.parser.registerCsiHandler({ intermediates: "!", final: "p" }, shown); // DECSTR
    this.#watchTrims();
  }

  /** Follow trims of the normal buffer (a reset replaces it: what it held is gone then). */
  #watchTrims(): void {
    const core = (this.#term as unknown as { _core?: { buffers?: CoreBuffers } })._core;
    const lines = core?.buffers?.normal?.lines ?? null;
    if (lines === this.#lines) return;
    if (this.#lines !== null) this.#gone += this.#term.buffer.normal.length; // replaced
    this.#trimSub?.dispose();
    this.#lines = lines;
    this.#trimSub = lines?.onTrim((n) => (this.#gone += n)) ?? null;
  }

  /**
   * Feed program output. Parsed at once (returns undefined) through xterm's synchronous
   * write; where that is missing, through its public write, whose promise resolves once the
   * data is parsed (`data` must then stay unchanged until it does). Either way a snapshot taken
   * after it shows the data.
   */
  write(data: Uint8Array): Promise<void> | undefined {
    if (this.#disposed) return undefined;
    if (this.#writeSync !== null) {
      this.#writeSync(data);
      this.#watchTrims();
      return undefined;
    }
    return new Promise((resolve) =>
      this.#term.write(data, () => {
        this.#watchTrims();
        resolve();
      })
    );
  }

  /**
   * xterm's public write parses on a timer (setTimeout per batch, clamped to 4 ms when nested):
   * 1.3 MB/s and ~4.6 ms from a program's write to a `wait_for` answer, measured. The core's
   * synchronous write (pinned @xterm/headless 6.0.0; we register no async parser handlers, the
   * reason it is called unreliable) parses at 60+ MB/s with no timer in between. The caller
   * yields to its event loop between slices of work.
   */
  readonly #writeSync: ((data: Uint8Array) => void) | null;

  /** True when {@link write} parses at once (it keeps no reference to the data then). */
  get synchronous(): boolean {
    return this.#writeSync !== null;
  }

  /** Change the size (the normal screen reflows, as in xterm). */
  resize(cols: number, rows: number): void {
    this.#term.resize(cols, rows);
    this.#watchTrims();
  }

  /** Columns. */
  get cols(): number {
    return this.#term.cols;
  }

  /** Rows. */
  get rows(): number {
    return this.#term.rows;
  }

  /** The visible screen. */
  snapshot(): ScreenSnapshot {
    const t = this.#term;
    const b = t.buffer.active;
    const lines: string[] = new Array(t.rows);
    for (let y = 0; y < t.rows; y++) {
      // xterm keeps written blanks; the screen's rows are trimmed like a person reads them.
      lines[y] = b.getLine(b.baseY + y)?.translateToString(true).trimEnd() ?? "";
    }
    return {
      cols: t.cols,
      rows: t.rows,
      lines,
      cursor: { row: b.cursorY, col: b.cursorX, hidden: this.#hidden },
      alternate: b.type === "alternate",
      title: this.#title,
    };
  }

  /**
   * The scrollback's extent: lines numbered from 0 (the first that ever scrolled off the
   * normal screen); `first` is the oldest still kept, `total` the number that scrolled off.
   */
  scrollbackExtent(): { first: number; total: number } {
    this.#watchTrims();
    return { first: this.#gone, total: this.#gone + this.#term.buffer.normal.baseY };
  }

  /** Scrollback lines `[start, end)` (absolute numbers, clamped to what is kept). */
  scrollbackLines(start: number, end: number): { start: number; lines: string[] } {
    const { first, total } = this.scrollbackExtent();
    const from = Math.max(first, Math.min(start, total));
    const to = Math.max(from, Math.min(end, total));
    const b = this.#term.buffer.normal;
    const lines: string[] = [];
    for (let n = from; n < to; n++) {
      lines.push(b.getLine(n - first)?.translateToString(true).trimEnd() ?? "");
    }
    return { start: from, lines };
  }

  /** Release the terminal. */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    this.#trimSub?.dispose();
    this.#term.dispose();
  }
}
