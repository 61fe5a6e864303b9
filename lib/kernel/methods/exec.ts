/**
 * Exec methods (protocol §4.6, §5.1): `exec` with its background and timeout flows, and
 * `value.get` on the transcript.
 *
 * @module
 */

import { RPC, RpcError } from "../../client/errors.ts";
import type { Task } from "../tasks.ts";
import {
  invalid,
  optBool,
  optElide,
  optString,
  optUint,
  reqString,
  sleep,
  untilClosed,
} from "./params.ts";
import { att, type Attachment, type Conn, type KernelServices, type Register } from "./types.ts";
import type { ElideSpec } from "../../value/elide.ts";
import type { Effect } from "../../leash/mod.ts";
import { approvedEffects, storePlan } from "./plans.ts";

/** Tasks that may wait behind a session's running one (D-31: bounded queues). */
export const MAX_QUEUED = 10_000;

/** A finished task's inline result, or its error thrown as the RPC error. */
function inlineOrThrow(t: Task): unknown {
  const r = t.takeResult();
  if (r) return r;
  const e = t.error ?? { code: RPC.INTERNAL_ERROR, message: "task ended without a result" };
  throw new RpcError(e.code, e.message, e.data);
}

/** What one exec runs with. */
export interface ExecRequest {
  src: string;
  position: "stmt" | "value";
  background: boolean;
  timeoutMs: number | undefined;
  elide: ElideSpec | null;
  /** Approved mode: the stored plan's effects (the session re-derives and compares, D-22). */
  approved: Effect[] | undefined;
  /** Its seq among the attachment's execs (`lane_seq`: the exec lane orders by it). */
  laneSeq?: number;
}

/** Queue an exec as a task of the attachment's session; its result, or the task handle. */
export async function submitExec(k: KernelServices, a: Attachment, conn: Conn, r: ExecRequest) {
  // A policy edited since the last exec reaches the session before this exec does.
  k.leash?.policies();
  const limit = k.maxQueued ?? MAX_QUEUED;
  if (a.session.queued >= limit) {
    throw new RpcError(
      RPC.INTERNAL_ERROR,
      `session "${a.session.visibleName}" already has ${limit} tasks waiting; await or ` +
        `cancel some before queueing more`,
      { queued: a.session.queued, limit },
    );
  }
  const lease = k.quotas.take(a.principal, "tasks"); // per principal (D-31)
  const t = k.tasks.create(a.session.name, r.src, r.position, r.elide, a.tty);
  void t.done.finally(() => lease.release());
  t.approved = r.approved;
  if (a.lane && r.laneSeq !== undefined) t.lane = { ticket: a.lane, seq: r.laneSeq };
  k.journal?.notePrincipal(t, a.principal); // the journal row's principal (issue 7)
  t.keepResult = !r.background; // nobody waits for an async task's inline result
  t.detached = r.background;
  a.session.submit(t);
  if (r.background) return { task: t.ref, events: t.channel };
  return await awaitInline(t, a, conn, r.timeoutMs);
}

/** Wait for `t` (at most `timeoutMs`): its inline result, its error thrown, or its handle. */
async function awaitInline(t: Task, a: Attachment, conn: Conn, timeoutMs: number | undefined) {
  const handle = { task: t.ref, events: t.channel };
  const waited = timeoutMs === undefined ? t.done : Promise.race([t.done, sleep(timeoutMs)]);
  await untilClosed(conn, waited);
  if (!t.finished && conn.closed.aborted) {
    // Its client left before it was answered: work still queued for nobody is cancelled (a
    // new exec of the session must not wait behind it); a running one finishes unread.
    t.keepResult = false;
    t.detached = true;
    if (t.state === "queued") a.session.cancel(t, "its client disconnected");
    return handle;
  }
  if (!t.finished) {
    t.keepResult = false;
    t.detached = true;
    // A queued exec says what it waits behind: a client can tell a long wait from a slow run.
    const ahead = t.state === "queued" ? a.session.busyWith : null;
    return {
      ...handle,
      timed_out: true,
      state: t.state,
      ...(ahead === null ? {} : {
        behind: ahead.ref,
        behind_ms: ahead.startedNs === null
          ? 0
          : Math.max(0, Math.round(Date.now() - ahead.startedNs / 1e6)),
        // Nobody waits for it inline: it may run long (a background job, a timed-out exec).
        behind_detached: ahead.detached,
      }),
    };
  }
  return inlineOrThrow(t);
}

/** Add the exec family. */
export function addExecMethods(add: Register, k: KernelServices): void {
  add("exec", async (p, conn) => {
    const src = reqString(p, "src", "exec");
    const mode = optString(p, "mode") ?? "run";
    if (mode !== "run" && mode !== "plan" && mode !== "approved") {
      throw invalid(`mode must be run, plan or approved (got ${mode})`);
    }
    const position = optString(p, "position") ?? "stmt";
    if (position !== "stmt" && position !== "value") {
      throw invalid(`position must be stmt or value (got ${position})`);
    }
    const background = (optBool(p, "async") ?? false) || (optBool(p, "background") ?? false);
    const timeoutMs = optUint(p, "timeout_ms");
    const elide = optElide(p);
    const planRef = optString(p, "plan_ref");
    const laneSeq = optUint(p, "lane_seq");
    const a = att(conn);
    if (mode === "plan") return await storePlan(k, a, src);
    const approved = mode === "approved" ? approvedEffects(k, a, src, planRef) : undefined;
    return await submitExec(k, a, conn, {
      src,
      position,
      background,
      timeoutMs,
      elide,
      approved,
      laneSeq,
    });
  });

  // The exec lane (`session_lane.ts`): a client that stopped waiting on lane exec `seq` (its
  // timeout passed, or the lane dropped) takes it over here — the same task, run once.
  add("lane.claim", async (p, conn) => {
    const a = att(conn);
    const seq = optUint(p, "seq");
    if (seq === undefined || seq < 1) throw invalid("lane.claim needs `seq` (a positive integer)");
    const src = reqString(p, "src", "lane.claim");
    const position = optString(p, "position") ?? "stmt";
    if (position !== "stmt" && position !== "value") {
      throw invalid(`position must be stmt or value (got ${position})`);
    }
    if (!a.lane) throw invalid("this attachment has no exec lane to claim from");
    const instance = optString(p, "instance");
    // A claim the session leaves to the kernel is a task like a queued exec: same quota.
    const leases: Array<{ release(): void }> = [];
    const onNew = () => void leases.push(k.quotas.take(a.principal, "tasks"));
    const t = a.session.claimLane(a.lane, seq, { src, position, tty: a.tty, instance, onNew });
    for (const lease of leases) void t.done.finally(() => lease.release());
    if (!(optBool(p, "wait") ?? false)) {
      t.detached = true; // its client stopped waiting
      return { task: t.ref, events: t.channel, timed_out: true };
    }
    if (t.finished && t.result === null && t.error === null) {
      throw new RpcError(
        RPC.INTERNAL_ERROR,
        `the exec finished as ${t.ref} but its answer was lost with the exec lane; read it ` +
          `with value.get {ref: "${t.resultRef}"}`,
        { task: t.ref, ref: t.resultRef },
      );
    }
    t.keepResult = true;
    return await awaitInline(t, a, conn, optUint(p, "timeout_ms"));
  });

  add("value.get", (p, conn) => {
    const ref = reqString(p, "ref", "value.get");
    const path = optString(p, "path");
    let slice: [number, number] | undefined;
    if (p.slice !== undefined && p.slice !== null) {
      const s = p.slice;
      if (
        !Array.isArray(s) || s.length !== 2 ||
        !s.every((x) => typeof x === "number" && Number.isSafeInteger(x) && x >= 0)
      ) {
        throw invalid("`slice` must be [start, end] with non-negative integers");
      }
      slice = [s[0], s[1]];
    }
    const format = optString(p, "format") ?? "json";
    if (format !== "json" && format !== "render" && format !== "raw") {
      throw invalid(`format must be json, render, or raw (got ${format})`);
    }
    const elide = optElide(p);
    const a = att(conn);
    return a.session.request("value.get", { ref, path, slice, format, elide, tty: a.tty });
  });
}
