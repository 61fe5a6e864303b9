/**
 * The REPL's job table: foreground programs stopped with Ctrl-Z (subsystems §5A, §11). A job is
 * the PTY program and the submission it belongs to: the submission stays suspended where it was
 * (awaiting its program) while the prompt comes back; `fg` gives the program the terminal and
 * SIGCONT, then waits for the submission again; `bg` lets it run on with no stdin.
 *
 * @module
 */

import type { Pty } from "../exec/mod.ts";

/** One job. */
export interface Job {
  /** `%N` (1, 2, … in order of stopping; freed when the job ends). */
  readonly id: number;
  /** What it runs, for `jobs`. */
  readonly cmd: string;
  readonly pty: Pty;
  state: "running" | "stopped";
  /** The submission that waits for this program (set when it is parked). */
  submission: Promise<unknown> | null;
  /** Give it the terminal again (stdin, output, size); set by the PTY tee. */
  attach: () => void;
  /** Stop forwarding the terminal to it. */
  detach: () => void;
}

/** The job table of one REPL. */
export class JobTable {
  readonly #jobs = new Map<number, Job>();
  #waiters = new Set<(job: Job) => void>();

  /** Jobs in id order. */
  list(): Job[] {
    return [...this.#jobs.values()].sort((a, b) => a.id - b.id);
  }

  /** Number of jobs. */
  get size(): number {
    return this.#jobs.size;
  }

  /** A job by id. */
  get(id: number): Job | undefined {
    return this.#jobs.get(id);
  }

  /** The job `fg`/`bg` without a number mean: the most recently stopped one. */
  current(): Job | undefined {
    const jobs = this.list();
    return jobs.filter((j) => j.state === "stopped").pop() ?? jobs.pop();
  }

  /** Register a program that just stopped and tell whoever waits for the foreground. */
  stopped(pty: Pty, make: (id: number) => Job): Job {
    let job = [...this.#jobs.values()].find((j) => j.pty === pty);
    if (job === undefined) {
      let id = 1;
      while (this.#jobs.has(id)) id++;
      job = make(id);
      this.#jobs.set(id, job);
    }
    job.state = "stopped";
    job.detach();
    const ws = [...this.#waiters];
    this.#waiters.clear();
    for (const w of ws) w(job);
    return job;
  }

  /** Forget a job whose program ended. */
  ended(pty: Pty): Job | undefined {
    for (const [id, j] of this.#jobs) {
      if (j.pty === pty) {
        this.#jobs.delete(id);
        return j;
      }
    }
    return undefined;
  }

  /** Settles with the next job that stops (the REPL races it against the submission). */
  nextStop(): { promise: Promise<Job>; cancel: () => void } {
    let w!: (job: Job) => void;
    const promise = new Promise<Job>((resolve) => {
      w = resolve;
      this.#waiters.add(w);
    });
    return { promise, cancel: () => this.#waiters.delete(w) };
  }

  /** End every job (the REPL is exiting or was told to stop). */
  async closeAll(): Promise<void> {
    const jobs = this.list();
    this.#jobs.clear();
    await Promise.all(jobs.map((j) => j.pty.close().catch(() => {})));
  }
}
