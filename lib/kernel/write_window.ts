/**
 * When the kernel hands gathered journal work (an intake fold, a batch of durable events) to the
 * journal thread. Every hand-off costs a fixed price there — a thread wake-up and a SQLite
 * commit whose WAL frames are written one by one, ~150 µs alone on this VM and several times
 * that under load — whether it carries one exec or a hundred. So a write goes
 * {@link QUIET_MS} after the first work of a quiet spell (an occasional exec shows on the
 * `journal` channel within that), and under steady load at most once per {@link BUSY_MS}:
 * measured with a process-spawning exec (~220 per second), the journal thread's CPU per exec
 * fell from 520–650 µs to 230–270 µs. Reads never wait for it: they fold first.
 *
 * @module
 */

/** Delay after the first work of a quiet spell. */
export const QUIET_MS = 20;
/** Least time between two writes while work keeps coming. */
export const BUSY_MS = 100;

/** The schedule of one kind of write. */
export class WriteWindow {
  #last = -Infinity;

  /** How long to wait, from now, before writing what gathers from now on. */
  delay(now: number = performance.now()): number {
    return Math.max(QUIET_MS, BUSY_MS - (now - this.#last));
  }

  /** A write starts now. */
  wrote(now: number = performance.now()): void {
    this.#last = now;
  }
}
