/**
 * Per-task control for spawned tasks (language §7.7, §15.7 task methods): cancel and
 * suspend/resume.
 *
 * A task body runs on its session's evaluator, interleaved with other work at its waits, so the
 * evaluator cannot tell tasks apart by itself. Each task body therefore runs inside an
 * `AsyncLocalStorage` context holding its `TaskControl`; code at a safe point asks
 * `currentTask()`:
 * - cancel: `Evaluator.checkCancelled()` (every loop iteration and method dispatch) raises
 *   `cancelled` inside a cancelled task — consulted only while some cancel is pending, so the
 *   hot path pays one integer compare — and waits the task registered with `onCancel` (a
 *   stream's pending pull, a channel subscription) are released at once;
 * - suspend: a suspended task stops at its next wait (stream stages between items) until
 *   resumed. Purely synchronous stretches of code never yield, so they cannot be paused midway.
 *
 * @module
 */

import { AsyncLocalStorage } from "node:async_hooks";
import { fail } from "../value/errors.ts";

/** Tasks cancelled but not yet finished (gates the check in the evaluator's hot path). */
let pendingCancels = 0;

/** Cancel/suspend state of one running task. */
export class TaskControl {
  /** Set by `cancel()`. */
  cancelled = false;
  /** Set by `pause(true)`, cleared by `pause(false)`. */
  suspended = false;
  private finished = false;
  private gate: { wait: Promise<void>; open: () => void } | null = null;
  private readonly onCancels = new Set<() => void>();

  /** Request cancellation: checks raise `cancelled`, registered waits are released. */
  cancel(): void {
    if (this.cancelled || this.finished) return;
    this.cancelled = true;
    pendingCancels++;
    for (const f of [...this.onCancels]) f();
    this.pause(false);
  }

  /** Suspend (true) or resume (false). */
  pause(paused: boolean): void {
    this.suspended = paused;
    if (paused && this.gate === null) {
      let open!: () => void;
      const wait = new Promise<void>((r) => (open = r));
      this.gate = { wait, open };
    } else if (!paused && this.gate !== null) {
      this.gate.open();
      this.gate = null;
    }
  }

  /** Null when the task may go on; else a promise that settles when it is resumed. */
  resumed(): Promise<void> | null {
    return this.gate?.wait ?? null;
  }

  /** Run `f` if the task is cancelled while the returned unregister function is not called. */
  onCancel(f: () => void): () => void {
    this.onCancels.add(f);
    return () => this.onCancels.delete(f);
  }

  /** The task ended (any way): stop counting its pending cancel. */
  finish(): void {
    if (this.finished) return;
    this.finished = true;
    if (this.cancelled) pendingCancels--;
    this.onCancels.clear();
  }

  /** Throw `cancelled` when the task was cancelled. */
  check(): void {
    if (this.cancelled) throw fail("cancelled", "task cancelled");
  }
}

const CONTEXT = new AsyncLocalStorage<TaskControl>();

/** Run a task body in its control context (everything it awaits inherits the context). */
export function runInTask<T>(ctl: TaskControl, body: () => T): T {
  return CONTEXT.run(ctl, body);
}

/** The control of the task whose code is running, if any. */
export function currentTask(): TaskControl | undefined {
  return CONTEXT.getStore();
}

/** Raise `cancelled` if the running task was cancelled (cheap when no cancel is pending). */
export function checkTaskCancelled(): void {
  if (pendingCancels > 0) currentTask()?.check();
}

/**
 * At a wait point of the running task: raise `cancelled` if it was cancelled; when it is
 * suspended, a promise that settles once it is resumed (and re-checks cancellation).
 */
export function taskWaitPoint(task: TaskControl | undefined): Promise<void> | null {
  if (task === undefined) return null;
  task.check();
  const r = task.resumed();
  return r === null ? null : r.then(() => task.check());
}
