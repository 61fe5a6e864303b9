/**
 * The cancellation ladder: SIGINT → grace → SIGTERM → grace → SIGKILL, each to the whole
 * process group (and, in cgroup mode, to every cgroup member, ending with `cgroup.kill`).
 * It stops early as soon as nothing is left to kill.
 *
 * @module
 */

import type { Cgroup } from "./cgroup.ts";
import { groupAlive, signalGroup } from "./process_group.ts";

const POLL_MS = 20;
/** How long to wait for the kernel to finish off SIGKILLed processes. */
const KILL_SETTLE_MS = 1000;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Escalating kill of one child's group; start it once, await `finished`. */
export class KillLadder {
  #started = false;
  #finished: Promise<void> = Promise.resolve();
  #onDone: (() => void)[] = [];

  /**
   * `leaderRunning` tells whether the child itself has not exited yet: started through
   * setsid(1) (the fallback backend), for a moment after the spawn it has not called
   * setsid(2), so its group does not exist and it must be signalled by pid.
   */
  constructor(
    readonly pgid: number,
    readonly graceMs: number,
    readonly cgroup: Cgroup | null,
    readonly leaderRunning: () => boolean,
  ) {}

  /** True once {@link start} was called. */
  get started(): boolean {
    return this.#started;
  }

  /** Settles when the ladder is done (immediately if it never started). Never rejects. */
  get finished(): Promise<void> {
    return this.#finished;
  }

  /** Run `fn` once the ladder has run to its end (never, if it is never started). */
  onDone(fn: () => void): void {
    this.#onDone.push(fn);
  }

  /** Begin escalating (idempotent). */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    this.#finished = this.#run().catch(() => {}).then(() => {
      for (const fn of this.#onDone.splice(0)) fn();
    });
  }

  #alive(): boolean {
    if (this.leaderRunning()) return true;
    return this.cgroup !== null ? this.cgroup.populated() : groupAlive(this.pgid);
  }

  #signal(sig: string): void {
    if (!signalGroup(this.pgid, sig) && this.leaderRunning()) {
      try {
        Deno.kill(this.pgid, sig as Deno.Signal);
      } catch {
        // exited meanwhile
      }
    }
    this.cgroup?.signalAll(sig);
  }

  async #waitGone(ms: number): Promise<boolean> {
    const deadline = performance.now() + ms;
    while (this.#alive()) {
      if (performance.now() >= deadline) return false;
      await sleep(POLL_MS);
    }
    return true;
  }

  async #run(): Promise<void> {
    for (const sig of ["SIGINT", "SIGTERM"]) {
      if (!this.#alive()) return;
      this.#signal(sig);
      // A stopped member (suspend()) only acts on INT/TERM once continued.
      this.#signal("SIGCONT");
      if (await this.#waitGone(this.graceMs)) return;
    }
    this.cgroup?.kill();
    this.#signal("SIGKILL");
    await this.#waitGone(KILL_SETTLE_MS);
  }
}
