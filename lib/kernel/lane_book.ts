/**
 * The exec lane, kernel side (issue 16; the session side is `session_lane.ts`): the tickets a
 * session's attachments hold, the cancel slots lent to its lane, and which task each lane exec
 * (an attachment's ticket and exec seq) became — so a client that gave up waiting on the lane
 * can claim it (`lane.claim`) and get the same task, never a second run.
 *
 * @module
 */

import type { Task } from "./tasks.ts";

/**
 * Cancel slots a session's lane holds: one per lane exec until the kernel has heard it ended
 * and zeroed it; the session reports in batches (`postSoon`), so enough for a batch or two.
 */
export const LANE_SLOTS = 32;

/** Finished lane tasks remembered for a late claim (most recent first out of the bound). */
const MAX_REMEMBERED = 256;

/** A lane exec's key: its attachment's ticket and its seq there. */
export function laneKey(ticket: string, seq: number): string {
  return `${ticket}#${seq}`;
}

/** One session's lane bookkeeping. */
export class LaneBook {
  /** Tickets granted, with whether their attachment is a terminal. */
  readonly grants = new Map<string, boolean>();
  /** The cancel slots owned by this lane (lent to the session or in use by a lane task). */
  readonly slots: number[];
  /** Lane tasks by key: running ones and the most recent finished ones. */
  readonly #tasks = new Map<string, Task>();
  /** Claimed lane execs the session had not begun when claimed: their task, by key. */
  readonly claims = new Map<string, Task>();
  /** The lane task running in the session (null: none). */
  running: Task | null = null;
  /** Slots its finished tasks gave back, zeroed, not yet lent to the session again. */
  readonly freed: number[] = [];

  constructor(readonly socket: string, slots: number[]) {
    this.slots = slots;
  }

  /** A new ticket for an attachment (`tty`: a terminal reads its renders). */
  grant(tty: boolean): string {
    const ticket = crypto.randomUUID();
    this.grants.set(ticket, tty);
    return ticket;
  }

  /** The task of a lane exec, while known. */
  task(key: string): Task | undefined {
    return this.#tasks.get(key) ?? this.claims.get(key);
  }

  /** Remember `t` as the task of lane exec `key`. */
  remember(key: string, t: Task): void {
    this.#tasks.delete(key);
    this.#tasks.set(key, t);
    while (this.#tasks.size > MAX_REMEMBERED) {
      const [oldest, task] = this.#tasks.entries().next().value!;
      if (!task.finished) break; // only finished ones are let go
      this.#tasks.delete(oldest);
    }
  }

  /** The running lane task with session-side id `id` (negative), if any. */
  byId(id: number): Task | null {
    return this.running !== null && this.running.laneId === id ? this.running : null;
  }
}
