/**
 * The person's terminal: one reader of stdin for the whole process, raw mode with a restore
 * that runs however shoal ends, the window size and its changes, and colour support.
 *
 * Every byte typed goes to exactly one consumer at a time: the line editor at the prompt, the
 * program on a PTY while it is in the foreground, or the REPL's busy handler while the language
 * runs (Ctrl-C cancels; other bytes wait, bounded, as type-ahead for the next prompt).
 *
 * @module
 */

/** Most type-ahead bytes kept while nobody reads (beyond it they are dropped). */
export const TYPEAHEAD_LIMIT = 64 * 1024;

type Consumer = (bytes: Uint8Array) => void;

/** The process's terminal (see the module comment). */
export class Terminal {
  static #shared: Terminal | null = null;

  /** The one terminal of this process. */
  static shared(): Terminal {
    return (Terminal.#shared ??= new Terminal());
  }

  #consumer: Consumer | null = null;
  #interrupt: (() => void) | null = null;
  #typeahead: Uint8Array[] = [];
  #typeaheadBytes = 0;
  #reading = false;
  #raw = false;
  #resize = new Set<(size: { cols: number; rows: number }) => void>();
  #winch: (() => void) | null = null;
  #exitHooks: (() => void)[] = [];

  private constructor() {}

  /** True when stdin and stdout are both terminals. */
  static interactive(): boolean {
    return Deno.stdin.isTerminal() && Deno.stdout.isTerminal();
  }

  /** Columns and rows of the terminal (80×24 when unknown). */
  size(): { cols: number; rows: number } {
    try {
      const s = Deno.consoleSize();
      return { cols: s.columns || 80, rows: s.rows || 24 };
    } catch {
      return { cols: 80, rows: 24 };
    }
  }

  /** Call `fn` on every window size change; returns an unsubscribe function. */
  onResize(fn: (size: { cols: number; rows: number }) => void): () => void {
    this.#resize.add(fn);
    if (this.#winch === null) {
      this.#winch = () => {
        const s = this.size();
        for (const f of this.#resize) f(s);
      };
      try {
        Deno.addSignalListener("SIGWINCH", this.#winch);
      } catch { /* no signals here */ }
    }
    return () => this.#resize.delete(fn);
  }

  /** True while in raw mode. */
  get raw(): boolean {
    return this.#raw;
  }

  /** Raw mode on or off (no-op when stdin is not a terminal). */
  setRaw(on: boolean): void {
    if (on === this.#raw || !Deno.stdin.isTerminal()) return;
    try {
      Deno.stdin.setRaw(on);
      this.#raw = on;
    } catch { /* not a terminal after all */ }
  }

  /** Run `fn` when the terminal is restored at exit (disable bracketed paste…). */
  atRestore(fn: () => void): void {
    this.#exitHooks.push(fn);
  }

  /** Leave the terminal as we found it (idempotent; safe from signal handlers). */
  restore(): void {
    for (const f of this.#exitHooks.splice(0)) {
      try {
        f();
      } catch { /* best effort */ }
    }
    this.setRaw(false);
  }

  /**
   * Give typed bytes to `fn` from now on (null: keep them as type-ahead). Pending type-ahead is
   * delivered to the new consumer first. Starts the stdin reader on first use.
   */
  route(fn: Consumer | null): void {
    this.#consumer = fn;
    this.#startReading();
    if (fn !== null && this.#typeahead.length) {
      const pending = this.#typeahead.splice(0);
      this.#typeaheadBytes = 0;
      for (const b of pending) fn(b);
    }
  }

  /**
   * While nobody consumes input (the language is running), Ctrl-C calls `fn` and drops the
   * type-ahead; other bytes wait for the next prompt. Null: Ctrl-C is type-ahead too.
   */
  onInterrupt(fn: (() => void) | null): void {
    this.#interrupt = fn;
  }

  /** Drop pending type-ahead (after Ctrl-C, like a shell). */
  discardTypeahead(): void {
    this.#typeahead = [];
    this.#typeaheadBytes = 0;
  }

  #startReading(): void {
    if (this.#reading) return;
    this.#reading = true;
    (async () => {
      const buf = new Uint8Array(16 * 1024);
      for (;;) {
        let n: number | null;
        try {
          n = await Deno.stdin.read(buf);
        } catch {
          n = null;
        }
        if (n === null) {
          // End of input (the terminal went away): Ctrl-D for whoever reads.
          this.#deliver(new Uint8Array([4]));
          return;
        }
        this.#deliver(buf.slice(0, n));
      }
    })();
  }

  #deliver(bytes: Uint8Array): void {
    if (this.#consumer !== null) {
      this.#consumer(bytes);
      return;
    }
    if (this.#interrupt !== null && bytes.includes(3)) {
      this.discardTypeahead();
      this.#interrupt();
      return;
    }
    if (this.#typeaheadBytes + bytes.length > TYPEAHEAD_LIMIT) return;
    this.#typeahead.push(bytes);
    this.#typeaheadBytes += bytes.length;
  }
}

/** Colour for a stream, honouring NO_COLOR and `render.color` (`enabled`). */
export function colorSupported(enabled: boolean, env: Record<string, string>): boolean {
  if (!enabled || env.NO_COLOR) return false;
  if (!Deno.stdout.isTerminal()) return false;
  return env.TERM !== "dumb";
}
