/**
 * The task registry (protocol §10, D-24, D-29, D-30, D-42). Every exec becomes a task with a
 * global id `task:N`; each task owns its own cancel slot in shared memory, so cancelling one
 * task can never stop another. Finished tasks are evicted oldest-first beyond a bound.
 */

import type { RpcErrorObject } from "../client/errors.ts";
import type { TaskRecord, TaskState } from "../client/protocol.ts";
import type { ElideSpec } from "../value/elide.ts";
import type { BusEvent } from "./event_bus.ts";
import type { Effect } from "../leash/mod.ts";

/** The payload of a task's `started` event. */
export const STARTED = { $: "str", v: "started" };

/** Finished tasks kept for `task.get`/`task.list` (D-30: the registry does not grow forever). */
export const MAX_FINISHED_TASKS = 10_000;

/** What an exec produced inline. */
export interface InlineResult {
  ref: string;
  uri: string;
  value: unknown;
  render: string;
  /** Present when its journal record is not whole (issue 19, `JournalNote`). */
  journal?: unknown;
}

/** One task. */
export class Task {
  state: TaskState = "queued";
  startedNs: number | null = null;
  finishedNs: number | null = null;
  resultRef: string | null = null;
  error: RpcErrorObject | null = null;
  /** The inline result, held only until the exec call that waits for it takes it. */
  result: InlineResult | null = null;
  /**
   * False once no exec call waits for the inline result (async, or timed out): the finished
   * task then drops it. Up to 10,000 finished tasks are kept, each result up to the elision
   * budget; only the record and `result_ref` outlive the call.
   */
  keepResult = true;
  /**
   * True once no caller waits for it inline (started in the background, or its caller stopped
   * waiting): work queued behind it may wait long, and is told so at once.
   */
  detached = false;
  cancelRequested = false;
  /** True once its `started` event was published (a task starts once). */
  announced = false;
  /**
   * This task's cancel slot while it runs (element 0 ≠ 0 = cancel), a view into its session's
   * shared slots that the Worker reads; null while queued and after it finished.
   */
  flag: Int32Array | null = null;
  /** Index of `flag` in the session's slots (-1 when none). */
  slot = -1;
  #pgids: Set<number> | null = null;
  /** Process groups of the task's running children (task.suspend/resume; made on first use). */
  get pgids(): Set<number> {
    return this.#pgids ??= new Set();
  }
  /** True between task.suspend and task.resume. */
  suspended = false;
  /** Approved mode: the stored plan's effects, re-checked where the exec runs (issue 15). */
  approved: Effect[] | undefined = undefined;
  /** A lane exec's id in its session process (negative; 0: the kernel sent it). */
  laneId = 0;
  /** Its attachment's lane ticket and its exec seq there (null: no lane). */
  lane: { ticket: string; seq: number } | null = null;

  /** The id its session process knows it by (a lane exec's own, else the kernel's). */
  get sessionId(): number {
    return this.laneId || this.id;
  }
  readonly done: Promise<void>;
  #resolve!: () => void;

  constructor(
    readonly id: number,
    readonly session: string,
    readonly src: string,
    readonly position: "stmt" | "value",
    readonly elide: ElideSpec | null,
    readonly tty: boolean,
  ) {
    this.done = new Promise((r) => (this.#resolve = r));
  }

  /** `task:N`. */
  get ref(): string {
    return `task:${this.id}`;
  }

  /** The event channel `task.N`. */
  get channel(): string {
    return `task.${this.id}`;
  }

  /** True in a terminal state. */
  get finished(): boolean {
    return this.state === "completed" || this.state === "failed" || this.state === "cancelled";
  }

  /** Enter a terminal state (once). */
  finish(state: "completed" | "failed" | "cancelled"): void {
    if (this.finished) return;
    this.state = state;
    this.finishedNs = Date.now() * 1_000_000;
    if (!this.keepResult) this.result = null;
    this.#pgids = null;
    this.#resolve();
  }

  /**
   * The events of this task's `task.N` channel so far (protocol §13.2: `started` once it ran,
   * then its end), with the seq and ts the bus would have given them.
   */
  events(): BusEvent[] {
    const channel = this.channel;
    const out: BusEvent[] = [];
    if (this.startedNs !== null) {
      out.push({ channel, seq: 0, ts: this.startedNs, payload: STARTED });
    }
    if (this.finished) {
      out.push({
        channel,
        seq: out.length,
        ts: this.finishedNs!,
        payload: { state: this.state, result_ref: this.resultRef },
      });
    }
    return out;
  }

  /** The inline result, once: the task does not keep it after handing it over. */
  takeResult(): InlineResult | null {
    const r = this.result;
    this.result = null;
    this.keepResult = false;
    return r;
  }

  /** The wire record. */
  record(): TaskRecord {
    return {
      task: this.ref,
      session: this.session,
      state: this.state,
      started_ns: this.startedNs,
      finished_ns: this.finishedNs,
      result_ref: this.resultRef,
      error: this.error,
      suspended: this.suspended,
    };
  }
}

/** All tasks of the kernel. */
export class TaskRegistry {
  #tasks = new Map<number, Task>();
  #finished: number[] = [];
  #nextId = 1;

  /** `onEvict` runs for each finished task dropped from the registry (its channel goes too). */
  constructor(
    readonly onEvict: (t: Task) => void = () => {},
    readonly maxFinished = MAX_FINISHED_TASKS,
  ) {}

  /** Create a task. */
  create(
    session: string,
    src: string,
    position: "stmt" | "value",
    elide: ElideSpec | null,
    tty: boolean,
  ): Task {
    const t = new Task(this.#nextId++, session, src, position, elide, tty);
    this.#tasks.set(t.id, t);
    t.done.then(() => this.#retire(t.id));
    return t;
  }

  #retire(id: number): void {
    this.#finished.push(id);
    while (this.#finished.length > this.maxFinished) {
      const old = this.#finished.shift()!;
      const t = this.#tasks.get(old);
      this.#tasks.delete(old);
      if (t) this.onEvict(t);
    }
  }

  /** Look a task up by `task:N` (or `N`) within a session; undefined when unknown or foreign. */
  get(ref: unknown, session: string): Task | undefined {
    const m = typeof ref === "string" ? /^(?:task:)?([1-9][0-9]*)$/.exec(ref) : null;
    const t = m ? this.#tasks.get(Number(m[1])) : undefined;
    return t && t.session === session ? t : undefined;
  }

  /** The events of `channel` when it is the `task.N` channel of a task of `session` held here. */
  channelEvents(session: string, channel: string): BusEvent[] | null {
    if (!channel.startsWith("task.")) return null;
    return this.get(channel.slice(5), session)?.events() ?? null;
  }

  /** Tasks of one session, in id order. */
  list(session: string): Task[] {
    return [...this.#tasks.values()].filter((t) => t.session === session);
  }

  /** Tasks held (finished ones up to the bound). */
  get size(): number {
    return this.#tasks.size;
  }

  /** Unfinished tasks (all sessions). */
  live(): Task[] {
    return [...this.#tasks.values()].filter((t) => !t.finished);
  }
}
