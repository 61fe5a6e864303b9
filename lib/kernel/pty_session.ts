/**
 * One agent PTY (protocol §12, subsystems §5B) inside its session's evaluator host: the
 * program on its pseudo-terminal (lib/exec/pty.ts), the screen model fed by a pump that waits
 * for each chunk to be parsed before reading the next (so a flood back-pressures the program,
 * not our memory), the output text since the last read, `wait_for`, and change notices
 * coalesced to at most one per {@link NOTIFY_MS}.
 *
 * @module
 */

import type { ExitInfo, Pty } from "../exec/mod.ts";
import { PtyScreen, type ScreenSnapshot } from "../exec/pty_screen.ts";
import { OutputTail } from "./pty_output.ts";

/** At most one screen-change notice per this many ms per PTY. */
export const NOTIFY_MS = 50;
/** Scrollback lines one read returns at most. */
export const MAX_SCROLLBACK_READ = 1000;
/** A waiting `wait_for` re-checks at once this many times per window, then once per window. */
const RECHECK_BURST = 4;
const RECHECK_MS = 5;
/** Parsing work between two yields to the event loop, in ms. */
const SLICE_MS = 10;
/** How long the output a program left behind may take to be parsed after it exited. */
const EXIT_DRAIN_MAX_MS = 5000;

/** What `wait_for` matches against. */
export type MatchIn = "any" | "output" | "screen";

/** Options of {@link AgentPty.read}. */
export interface ReadOptions {
  waitFor?: RegExp;
  /** Wait until the program ends (or `timeoutMs` passes) instead of for a match. */
  untilExit?: boolean;
  match?: MatchIn;
  timeoutMs?: number;
  /** `[start, end)` of scrollback lines (negative: counted back from the total). */
  scrollback?: [number] | [number, number];
}

/** An event for the `pty.N` channel. */
export type PtyNotice =
  | {
    pty_id: string;
    kind: "screen";
    cursor: ScreenSnapshot["cursor"];
    /** The text of the cursor's row (what a prompt looks like), at most 256 characters. */
    line: string;
    alive: true;
  }
  | { pty_id: string; kind: "exit"; alive: false; exit: WireExit }
  | { pty_id: string; kind: "closed"; exit: WireExit | null };

/** `{status, signal}` as the protocol spells it. */
export type WireExit = { status: number | null; signal: string | null };

const wireExit = (e: ExitInfo): WireExit => ({ status: e.status, signal: e.signal });

/** FNV-1a over the screen and cursor: `changed` compares these. */
function screenHash(s: ScreenSnapshot): number {
  let h = 0x811c9dc5;
  const mix = (str: string) => {
    for (let i = 0; i < str.length; i++) h = Math.imul(h ^ str.charCodeAt(i), 0x01000193);
    h = Math.imul(h ^ 0x0a, 0x01000193);
  };
  for (const l of s.lines) mix(l);
  mix(`${s.cols}x${s.rows}@${s.cursor.row},${s.cursor.col},${s.cursor.hidden}`);
  return h >>> 0;
}

/** One PTY of a session. */
export class AgentPty {
  readonly ref: string;
  readonly #pty: Pty;
  readonly #screen: PtyScreen;
  readonly #tail = new OutputTail();
  readonly #notify: (n: PtyNotice) => void;
  #lastReadHash: number | null = null;
  #lastNoticeHash: number | null = null;
  #dirty = false;
  #noticeTimer: ReturnType<typeof setTimeout> | undefined;
  #lastNotice = 0;
  #alive = true;
  #exit: WireExit | null = null;
  #closed = false;
  #waiters = new Set<() => void>();
  readonly #pumped: Promise<void>;

  constructor(
    readonly id: number,
    pty: Pty,
    readonly cmd: string,
    scrollback: number,
    notify: (n: PtyNotice) => void,
  ) {
    this.ref = `pty:${id}`;
    this.#pty = pty;
    this.#notify = notify;
    this.#screen = new PtyScreen({
      cols: pty.cols,
      rows: pty.rows,
      scrollback,
      // The terminal's answers to queries go back to the program, as a terminal's would.
      reply: (d) => void pty.write(d).catch(() => {}),
    });
    this.#pumped = this.#pump();
    pty.exit.then((e) => this.#onExit(e), () => this.#onExit({ status: null, signal: null }));
  }

  /** Process id of the program. */
  get pid(): number {
    return this.#pty.pid;
  }

  /** True until the program was reaped (and its last output taken in). */
  get alive(): boolean {
    return this.#alive;
  }

  async #pump(): Promise<void> {
    const buf = new Uint8Array(65536);
    let slice = performance.now();
    try {
      for (;;) {
        const n = await this.#pty.read(buf);
        if (n === 0) return;
        const parsing = this.#feed(buf.subarray(0, n));
        if (parsing) {
          this.#feeding = parsing;
          await parsing;
          this.#feeding = null;
        }
        // A flood is read and parsed without waiting: let requests and timers run between
        // slices, or the session would stop answering (and back-pressure would never come).
        if (performance.now() - slice > SLICE_MS) {
          await new Promise((r) => setTimeout(r, 0));
          slice = performance.now();
        }
      }
    } catch {
      // A read error ends the output; the exit still comes through the reaper.
    }
  }

  /** A chunk whose parse is asynchronous (the screen's fallback path), else null. */
  #feeding: Promise<void> | null = null;

  /**
   * Parse one chunk: the screen, then the output text (so whatever a waiter finds in the output
   * is on the screen too), waiters and notices. Returns a promise only when the screen parses
   * asynchronously (then `chunk` is copied, since the reader reuses its buffer).
   */
  #feed(chunk: Uint8Array): Promise<void> | undefined {
    if (!this.#screen.synchronous) chunk = chunk.slice();
    const after = () => {
      this.#tail.push(chunk);
      this.#changed();
    };
    const parsing = this.#screen.write(chunk);
    if (parsing !== undefined) return parsing.then(after);
    after();
    return undefined;
  }

  #changed(): void {
    this.#dirty = true;
    for (const w of this.#waiters) w();
    if (this.#noticeTimer !== undefined || this.#closed) return;
    const wait = Math.max(0, NOTIFY_MS - (performance.now() - this.#lastNotice));
    this.#noticeTimer = setTimeout(() => this.#tick(), wait);
    Deno.unrefTimer(this.#noticeTimer);
  }

  #tick(): void {
    this.#noticeTimer = undefined;
    if (!this.#dirty || this.#closed) return;
    this.#dirty = false;
    this.#lastNotice = performance.now();
    const s = this.#screen.snapshot();
    const h = screenHash(s);
    if (h === this.#lastNoticeHash) return;
    this.#lastNoticeHash = h;
    if (!this.#alive) return; // the exit notice already went out
    this.#notify({
      pty_id: this.ref,
      kind: "screen",
      cursor: s.cursor,
      line: (s.lines[s.cursor.row] ?? "").slice(0, 256),
      alive: true,
    });
  }

  async #onExit(e: ExitInfo): Promise<void> {
    // What the program wrote before it exited is taken in first: until the pump has read and
    // parsed everything the terminal holds (the end of the output, or nothing pending while a
    // background process keeps the terminal open), bounded.
    let ended = false;
    this.#pumped.then(() => (ended = true));
    const deadline = performance.now() + EXIT_DRAIN_MAX_MS;
    while (!ended && !this.#closed && performance.now() < deadline) {
      if (this.#feeding !== null) await this.#feeding;
      else if (this.#pty.pending() > 0) await new Promise((r) => setTimeout(r, 1));
      else {
        // Nothing pending: give the end of the output (EOF) a moment to show up.
        await Promise.race([this.#pumped, new Promise((r) => setTimeout(r, 5))]);
        if (this.#feeding === null && this.#pty.pending() === 0) break;
      }
    }
    this.#exit = wireExit(e);
    this.#alive = false;
    for (const w of this.#waiters) w();
    if (!this.#closed) {
      this.#notify({ pty_id: this.ref, kind: "exit", alive: false, exit: this.#exit });
    }
  }

  /** The `pty.list` entry. */
  summary(): Record<string, unknown> {
    return {
      pty_id: this.ref,
      cmd: this.cmd,
      pid: this.pid,
      cols: this.#screen.cols,
      rows: this.#screen.rows,
      alive: this.#alive,
    };
  }

  /**
   * The `pty.read` result. With `waitFor`, first waits until the output since the last read
   * (or the screen, per `match`) matches, the program exits, or `timeoutMs` passes.
   */
  async read(opts: ReadOptions = {}): Promise<Record<string, unknown>> {
    let matched: { source: "output" | "screen"; text: string } | null = null;
    let timedOut = false;
    const t0 = performance.now();
    if (opts.waitFor !== undefined) {
      const re = opts.waitFor;
      const match = opts.match ?? "any";
      const check = (): boolean => {
        if (match !== "screen") {
          const m = re.exec(this.#tail.text);
          if (m) return !!(matched = { source: "output", text: m[0] });
        }
        if (match !== "output") {
          const m = re.exec(this.#screen.snapshot().lines.join("\n"));
          if (m) return !!(matched = { source: "screen", text: m[0] });
        }
        return false;
      };
      if (!check() && this.#alive && !this.#closed) {
        timedOut = !(await this.#until(() => check() || !this.#alive || this.#closed, opts));
      }
    } else if (opts.untilExit && this.#alive && !this.#closed) {
      timedOut = !(await this.#until(() => !this.#alive || this.#closed, opts));
    }
    const s = this.#screen.snapshot();
    const h = screenHash(s);
    const changed = h !== this.#lastReadHash;
    this.#lastReadHash = h;
    const out = this.#tail.take();
    const result: Record<string, unknown> = {
      pty_id: this.ref,
      cmd: this.cmd,
      cols: s.cols,
      rows: s.rows,
      cursor: s.cursor,
      screen: s.lines,
      changed,
      alive: this.#alive,
      exit: this.#exit,
      pid: this.pid,
      alternate: s.alternate,
      title: s.title,
      output_bytes: out.bytes,
      scrollback: this.#scrollback(opts.scrollback),
    };
    if (out.dropped > 0) result.output_dropped = out.dropped;
    if (opts.waitFor !== undefined) result.matched = matched;
    if (opts.waitFor !== undefined || opts.untilExit) {
      result.timed_out = timedOut;
      result.waited_ms = Math.round(performance.now() - t0);
    }
    return result;
  }

  /**
   * Resolves true once `cond()` holds, false at the deadline. Re-checked after parsed output:
   * at once for the first {@link RECHECK_BURST} chunks of each {@link RECHECK_MS} window (a
   * prompt arrives right after its echo), beyond that once at the window's end — a flood does
   * not pay a regex over the output and the screen per chunk.
   */
  #until(cond: () => boolean, opts: ReadOptions): Promise<boolean> {
    return new Promise((resolve) => {
      let windowStart = -Infinity;
      let checks = 0;
      let pending: ReturnType<typeof setTimeout> | undefined;
      const run = () => {
        pending = undefined;
        if (cond()) done(true);
      };
      const waiter = () => {
        if (pending !== undefined) return;
        const now = performance.now();
        if (now - windowStart >= RECHECK_MS) {
          windowStart = now;
          checks = 0;
        }
        if (++checks <= RECHECK_BURST) run();
        else pending = setTimeout(run, RECHECK_MS - (now - windowStart));
      };
      const timer = setTimeout(() => done(cond()), opts.timeoutMs ?? 0);
      const done = (ok: boolean) => {
        clearTimeout(timer);
        clearTimeout(pending);
        this.#waiters.delete(waiter);
        resolve(ok);
      };
      this.#waiters.add(waiter);
    });
  }

  #scrollback(req: ReadOptions["scrollback"]): Record<string, unknown> {
    const ext = this.#screen.scrollbackExtent();
    if (req === undefined) return ext;
    const rel = (n: number) => (n < 0 ? ext.total + n : n);
    const start = rel(req[0]);
    const end = Math.min(
      req[1] === undefined ? ext.total : rel(req[1]),
      start + MAX_SCROLLBACK_READ,
    );
    const got = this.#screen.scrollbackLines(start, end);
    return { ...ext, start: got.start, end: got.start + got.lines.length, lines: got.lines };
  }

  /** Type `bytes` into the terminal; the byte count. */
  async send(bytes: Uint8Array): Promise<number> {
    await this.#pty.write(bytes);
    return bytes.length;
  }

  /** Resize terminal and screen (the next read reports a change). */
  resize(cols: number, rows: number): { cols: number; rows: number } {
    this.#pty.resize(cols, rows);
    this.#screen.resize(cols, rows);
    this.#lastReadHash = null;
    this.#changed();
    return { cols, rows };
  }

  /** Kill the program's session, reap it, release the terminal. Idempotent. */
  async close(): Promise<WireExit> {
    const first = !this.#closed;
    this.#closed = true;
    clearTimeout(this.#noticeTimer);
    for (const w of this.#waiters) w();
    const e = await this.#pty.close();
    await this.#pumped;
    if (first) {
      this.#screen.dispose();
      this.#exit ??= wireExit(e);
      this.#alive = false;
      this.#notify({ pty_id: this.ref, kind: "closed", exit: this.#exit });
    }
    return this.#exit ?? wireExit(e);
  }
}
