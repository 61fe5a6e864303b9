/**
 * What every spawn path does the moment a child exists: tell the caller its pid, start the
 * clocks, attach the cancel sources (signal, timeout) to its kill ladder and start feeding
 * its stdin. Shared by the capture and streaming runners.
 *
 * @module
 */

import { signalGroup } from "./process_group.ts";
import type { Cgroup } from "./cgroup.ts";
import type { Child } from "./child.ts";
import type { Prepared } from "./prepare.ts";
import type { StdinPlan } from "./stdio.ts";
import { Supervisor } from "./supervisor.ts";
import type { ExitInfo, SpawnOptions } from "./types.ts";

/** A child under supervision. */
export interface Running {
  /** `performance.now()` at spawn (for `durNs`). */
  t0: number;
  /** Wall-clock ms at spawn. */
  startedAt: number;
  /** Settles when the child has been reaped. */
  exit: Promise<ExitInfo>;
  /** Cancel bookkeeping and the kill ladder. */
  sup: Supervisor;
  /** Settles when stdin has been fed (immediately when stdin is not piped). */
  feeding: Promise<void>;
  /** With `reapOnExit`, once exited: whether anything of the command was left to kill. */
  leftRunning: () => boolean;
}

/** Start supervising a freshly spawned child. */
export function supervise(
  child: Child,
  prep: Prepared,
  cgroup: Cgroup | null,
  opts: SpawnOptions,
  stdin: StdinPlan,
): Running {
  opts.onSpawn?.(child.pid); // the kernel tracks running groups (task.suspend/resume)
  const t0 = performance.now();
  const startedAt = Date.now();
  let exited = false;
  const sup = new Supervisor(
    child.pid,
    prep.graceMs,
    cgroup,
    opts.signal,
    prep.timeoutMs,
    () => !exited,
  );
  let left = false;
  const exit = child.exit.finally(() => {
    exited = true;
    if (opts.reapOnExit) {
      left = cgroup?.populated() ?? false;
      cgroup?.kill();
      // false (ESRCH) when nothing was left in the group
      if (signalGroup(child.pid, "SIGKILL")) left = true;
      sup.leaderReaped();
    }
  });
  const feeding = stdin.mode === "piped" ? stdin.feed(child.stdin) : Promise.resolve();
  return { t0, startedAt, exit, sup, feeding, leftRunning: () => left };
}
