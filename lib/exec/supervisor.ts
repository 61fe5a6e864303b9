/**
 * Wires a running child to its cancel sources — the caller's AbortSignal, `timeoutMs`
 * and explicit `cancel()` calls — all of which start the same {@link KillLadder}.
 *
 * @module
 */

import type { Cgroup } from "./cgroup.ts";
import { KillLadder } from "./kill_ladder.ts";

/**
 * After the ladder, how long output pipes may still deliver buffered bytes before they are
 * closed from our side (their EOF never comes while a setsid escaper holds them).
 */
const DRAIN_GRACE_MS = 250;

/** Cancel bookkeeping for one child; call {@link dispose} when the child is done. */
export class Supervisor {
  /** Set when the AbortSignal fired or {@link cancel} was called. */
  cancelled = false;
  /** Set when the timeout ran out. */
  timedOut = false;
  /** The child's kill ladder. */
  readonly ladder: KillLadder;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #drainTimer: ReturnType<typeof setTimeout> | undefined;
  #signal: AbortSignal | undefined;
  #onAbort = () => this.cancel();
  #stopDrains = new AbortController();
  #disposed = false;

  constructor(
    pgid: number,
    graceMs: number,
    cgroup: Cgroup | null,
    signal: AbortSignal | undefined,
    timeoutMs: number | undefined,
    leaderRunning: () => boolean,
  ) {
    this.ladder = new KillLadder(pgid, graceMs, cgroup, leaderRunning);
    this.ladder.onDone(() => this.#graceThenStopDrains());
    if (timeoutMs !== undefined) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        this.timedOut = true;
        this.ladder.start();
      }, timeoutMs);
    }
    if (signal !== undefined) {
      this.#signal = signal;
      if (signal.aborted) this.cancel();
      else signal.addEventListener("abort", this.#onAbort, { once: true });
    }
  }

  #graceThenStopDrains(): void {
    if (this.#disposed || this.#drainTimer !== undefined) return;
    this.#drainTimer = setTimeout(() => this.#stopDrains.abort(), DRAIN_GRACE_MS);
  }

  /**
   * The leader exited and its group was killed (`reapOnExit`): whatever still holds the output
   * pipes escaped the group (setsid) and is swept when the exec ends, so its EOF is not waited
   * for either — `sh { setsid daemon & }` returns, as `sh { daemon & }` does.
   */
  leaderReaped(): void {
    this.#graceThenStopDrains();
  }

  /** Fires a moment after a finished ladder or a reaped leader: stop waiting for output EOF. */
  get drainStop(): AbortSignal {
    return this.#stopDrains.signal;
  }

  /** Request cancellation (idempotent; ignored once the child is done and disposed). */
  cancel(): void {
    // After dispose the group may be gone and its id reused: never signal it then.
    if (this.#disposed) return;
    this.cancelled = true;
    this.ladder.start();
  }

  /** Stop listening for cancel sources (the ladder, if started, runs to its end). */
  dispose(): void {
    this.#disposed = true;
    clearTimeout(this.#timer);
    clearTimeout(this.#drainTimer);
    this.#timer = undefined;
    this.#signal?.removeEventListener("abort", this.#onAbort);
    this.#signal = undefined;
  }
}
