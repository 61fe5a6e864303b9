/**
 * Task methods (protocol §10): list, get, await (with the additive `timeout_ms`, D-29),
 * cancel, suspend and resume.
 *
 * @module
 */

import { RPC, RpcError } from "../../client/errors.ts";
import type { Task } from "../tasks.ts";
import { optUint, reqString, sleep, untilClosed } from "./params.ts";
import { att, type Conn, type KernelServices, laneSynced, type P, type Register } from "./types.ts";

function taskOf(k: KernelServices, p: P, conn: Conn, method: string): Task {
  const ref = reqString(p, "task", method);
  const t = k.tasks.get(ref, att(conn).session.name);
  if (!t) throw new RpcError(RPC.UNKNOWN_TASK, "unknown task", { task: ref });
  return t;
}

/** Add the task family. */
export function addTaskMethods(add: Register, k: KernelServices): void {
  add("task.list", async (_p, conn) => {
    await laneSynced(conn);
    return k.tasks.list(att(conn).session.name).map((t) => t.record());
  });

  add("task.get", async (p, conn) => {
    await laneSynced(conn);
    return taskOf(k, p, conn, "task.get").record();
  });

  add("task.await", async (p, conn) => {
    await laneSynced(conn);
    const t = taskOf(k, p, conn, "task.await");
    const timeoutMs = optUint(p, "timeout_ms");
    // Bounded by the connection: a vanished client does not keep waiting.
    await untilClosed(
      conn,
      timeoutMs === undefined ? t.done : Promise.race([t.done, sleep(timeoutMs)]),
    );
    return t.finished ? t.record() : { ...t.record(), timed_out: true };
  });

  add("task.cancel", (p, conn) => {
    const t = taskOf(k, p, conn, "task.cancel");
    att(conn).session.cancel(t);
    return { task: t.ref, cancel_requested: true, state: t.state };
  });

  for (const verb of ["suspend", "resume"] as const) {
    add(`task.${verb}`, (p, conn) => {
      const t = taskOf(k, p, conn, `task.${verb}`);
      att(conn).session.suspendTask(t, verb === "suspend");
      return { task: t.ref, suspended: t.suspended, state: t.state };
    });
  }
}
