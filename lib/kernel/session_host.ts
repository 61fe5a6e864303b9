/**
 * The kernel's handle of one named session. The evaluator lives in a session process
 * (`session_worker.ts`, started by `session_process.ts`); this side keeps the session's FIFO of
 * tasks (one exec at a time in the process), cancels through each task's shared flag without
 * waiting for the process, publishes transcript/render/task events, and forwards
 * `value.get`/`env` requests.
 *
 * Containment (issue 16): a session that does not answer a ping soon after a cancel — busy in
 * native code that never polls its flag — is killed with everything it started, its tasks end,
 * its clients hear why on the `session.lifecycle` channel, and a fresh session takes its place.
 * A session that dies on its own (out of memory, a crash) is handled the same way.
 */

import { RPC, RpcError, type RpcErrorObject } from "../client/errors.ts";
import type { EventBus } from "./event_bus.ts";
import {
  Cgroup,
  resume as resumeGroup,
  signalGroup,
  suspend as suspendGroup,
} from "../exec/mod.ts";
import { STARTED, type Task } from "./tasks.ts";
import {
  type DoneMsg,
  type FromWorker,
  type SessionFacts,
  type ToWorker,
  transcriptPayload,
} from "./session_messages.ts";
import type { KernelJournal } from "./kernel_journal.ts";
import { CancelSlots, SLOTS } from "./cancel_slots.ts";
import {
  DEFAULT_SESSION_MEMORY_MB,
  describeExit,
  type SessionProcess,
  startSessionProcess,
} from "./session_process.ts";

/** Distinct `user.*` channels one session may have on the kernel bus (each keeps a ring). */
export const MAX_USER_CHANNELS = 1024;
/**
 * How long a session may take to answer a ping after a cancel before it counts as stuck and is
 * killed (a responsive one is unwinding: its children get their kill ladder).
 */
export const CANCEL_PING_MS = 400;
/** The `session.lifecycle` channel: a session died and was replaced. */
export const LIFECYCLE_CHANNEL = "session.lifecycle";

/** Where a session's processes come from and what bounds them. */
export interface SessionInit {
  cwd: string;
  env: Record<string, string>;
  journal?: KernelJournal | null;
  /** Heap limit of the session process in MiB. */
  memoryMb?: number;
  /** A private directory for the cancel-slot file (null: local flags only). */
  runDir?: string | null;
}

/** SIGKILL a child process group of a dead session (it is no longer there to do it). */
function killGroup(pgid: number): void {
  signalGroup(pgid, "SIGKILL");
}

/** A named session and its process. */
export class SessionHost {
  #proc!: SessionProcess;
  /** The session process's cgroup where the host allows: killing it ends every descendant. */
  #cgroup: Cgroup | null = null;
  /** Pings sent after a cancel, awaiting their pong. */
  #pings = new Map<number, ReturnType<typeof setTimeout>>();
  #nextPing = 1;
  #queue: Task[] = [];
  #running: Task | null = null;
  #pending = new Map<
    number,
    { resolve: (v: unknown) => void; reject: (e: unknown) => void }
  >();
  #nextRid = 1;
  #ready!: Promise<void>;
  #closed = false;
  readonly #slots: CancelSlots;
  #freeSlots: number[] = Array.from({ length: SLOTS - 1 }, (_, i) => SLOTS - 1 - i);
  /** Latest facts reported by the worker (cwd, env hash, bound names). */
  facts: SessionFacts = { cwd: "", env_hash: "", names: {} };
  /** Worker restarts after a crash (tests, diagnostics). */
  crashes = 0;
  /** `user.*` channels this session has on the kernel bus (bounded: `MAX_USER_CHANNELS`). */
  readonly userChannels = new Set<string>();

  /** Admit a `user.*` channel for this session; false once the bound is reached. */
  admitUserChannel(channel: string): boolean {
    if (this.userChannels.has(channel)) return true;
    if (this.userChannels.size >= MAX_USER_CHANNELS) return false;
    this.userChannels.add(channel);
    return true;
  }

  constructor(
    readonly name: string,
    readonly bus: EventBus,
    readonly init: SessionInit,
  ) {
    this.#slots = CancelSlots.create(init.runDir ?? null, `session-${name}`);
    this.#spawn();
  }

  /** The heap limit of this session's process, in MiB. */
  get memoryMb(): number {
    return this.init.memoryMb ?? DEFAULT_SESSION_MEMORY_MB;
  }

  /** The pid of the current session process (tests, diagnostics). */
  get pid(): number {
    return this.#proc.pid;
  }

  #spawn(): void {
    for (let i = 0; i < SLOTS; i++) Atomics.store(this.#slots.flag(i), 0, 0);
    let started = false;
    let onReady!: () => void;
    let onFail!: (e: Error) => void;
    this.#ready = new Promise<void>((resolve, reject) => {
      onReady = resolve;
      onFail = reject;
    });
    const proc = startSessionProcess({ memoryMb: this.memoryMb, label: this.name }, (line) => {
      if (this.#proc !== proc) return; // a killed predecessor's last words
      const m = JSON.parse(line) as FromWorker;
      if (started) this.#onMessage(m);
      else if (m.t === "ready") {
        started = true;
        this.facts = m.facts;
        onReady();
      }
    });
    this.#proc = proc;
    // Before `init`: the process runs nothing until then, so every descendant is inside.
    const cg = Cgroup.create("shoal-session");
    this.#cgroup = cg !== null && cg.adopt(proc.pid) ? cg : (cg?.remove(), null);
    void proc.status.then((st) => {
      if (this.#proc !== proc || this.#closed) return;
      const why = describeExit(st, this.memoryMb);
      if (!started) onFail(new Error(`session process failed to start: ${why}`));
      else this.#crash(why);
    });
    this.#ready.then(() => this.#pump(), () => {});
    this.#post({
      t: "init",
      session: this.name,
      slots: this.#slots.path,
      cgroup: this.#cgroup?.path ?? null,
      cwd: this.init.cwd,
      env: this.init.env,
      journal: this.init.journal
        ? { casDir: this.init.journal.casDir, intake: this.#intakeFor(this.init.journal) }
        : null,
      // A worker that crashed mid-exec may have logged that exec's event with the next seq:
      // its successor starts one past it (a gap at worst, never a seq used twice).
      transcriptSeq: this.bus.nextSeq(this.name, "session.transcript") +
        (this.#crashedMidExec ? 1 : 0),
    });
    this.#crashedMidExec = false;
  }

  /** The intake series of the current worker (issue 7); a crashed worker's is folded. */
  #intakeWorker = 0;

  #intakeFor(j: KernelJournal): { dir: string; token: string; worker: number } {
    const i = j.intakeFor(this.name);
    this.#intakeWorker = i.worker;
    return i;
  }

  /** Resolves once the evaluator is up. */
  ready(): Promise<void> {
    return this.#ready;
  }

  #post(m: ToWorker): void {
    this.#proc.send(JSON.stringify(m));
  }

  /** Queue an exec; it runs after every earlier task of this session. */
  submit(t: Task): void {
    this.#queue.push(t);
    this.#pump();
  }

  #pump(): void {
    if (this.#running !== null || this.#closed) return;
    const t = this.#queue.shift();
    if (!t) return;
    this.#running = t;
    // A slot is owned by one running task at a time and zeroed before reuse, so a late
    // cancel of a finished task can never reach the next one (D-24).
    t.slot = this.#freeSlots.pop()!;
    t.flag = this.#slots.flag(t.slot);
    Atomics.store(t.flag, 0, t.cancelRequested ? 1 : 0);
    t.state = "running";
    t.startedNs = Date.now() * 1_000_000;
    this.bus.publishDerived(this.name, t.channel, STARTED);
    this.#post({
      t: "exec",
      task: t.id,
      src: t.src,
      position: t.position,
      elide: t.elide,
      tty: t.tty,
      slot: t.slot,
      principal: this.init.journal?.principalOf(t),
    });
  }

  /**
   * Cancel a task of this session. A queued task is removed without running; a running one
   * gets its own flag set (seen by a busy evaluator at its next check) and a cancel message
   * (seen by awaits). Returns at once.
   */
  cancel(t: Task): void {
    if (t.finished) return;
    t.cancelRequested = true;
    const i = this.#queue.indexOf(t);
    if (i >= 0) {
      this.#queue.splice(i, 1);
      t.error = {
        code: RPC.RAISED,
        message: "cancelled before it started",
        data: { code: "cancelled", ref: null },
      };
      this.#terminal(t, "cancelled");
      return;
    }
    if (this.#running === t) {
      // A stopped group cannot act on SIGINT: continue it so the kill ladder works.
      if (t.suspended) {
        for (const g of t.pgids) resumeGroup(g);
        t.suspended = false;
      }
      t.state = "cancelling";
      Atomics.store(t.flag!, 0, 1);
      this.#post({ t: "cancel", task: t.id });
      this.#pingAfterCancel(t);
    }
  }

  /**
   * A session that cannot answer a ping within {@link CANCEL_PING_MS} of a cancel is stuck in
   * something that never polls its flag (a catastrophic regex, native code): kill it.
   */
  #pingAfterCancel(t: Task): void {
    const n = this.#nextPing++;
    const proc = this.#proc;
    const timer = setTimeout(() => {
      this.#pings.delete(n);
      if (this.#proc !== proc || t.finished || this.#running !== t) return;
      this.#kill(
        `the session did not respond within ${CANCEL_PING_MS} ms of cancelling ${t.ref}, ` +
          `so it was killed`,
      );
    }, CANCEL_PING_MS);
    this.#pings.set(n, timer);
    this.#post({ t: "ping", n });
  }

  /**
   * Kill everything left in the session's cgroup (setsid escapers, `cmd &` leftovers) and
   * remove it; `wait` waits (≤ 2 s) until it is empty.
   */
  async #endCgroup(wait = false): Promise<void> {
    const cg = this.#cgroup;
    this.#cgroup = null;
    if (cg === null) return;
    cg.kill();
    for (let i = 0; wait && i < 100 && cg.populated(); i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    cg.remove(); // kept for a later sweep while members are still dying
  }

  /** Kill the session process and everything it started; a fresh session replaces it. */
  #kill(why: string): void {
    const proc = this.#proc;
    this.#crash(why);
    proc.kill();
  }

  /**
   * Stop (SIGSTOP) or continue (SIGCONT) the process groups of a running task. Throws
   * `-32020` when the task has no running child process: evaluator work itself cannot be
   * stopped from outside.
   */
  suspendTask(t: Task, stop: boolean): void {
    if (this.#running !== t || t.pgids.size === 0) {
      throw new RpcError(
        RPC.TASK_CONTROL_UNAVAILABLE,
        `task ${stop ? "suspension" : "resume"} is unavailable: ${t.ref} has no running child ` +
          `process (only external commands can be stopped and continued)`,
        { task: t.ref },
      );
    }
    for (const g of t.pgids) (stop ? suspendGroup : resumeGroup)(g);
    t.suspended = stop;
  }

  /** The running task (suspend/resume, diagnostics). */
  get running(): Task | null {
    return this.#running;
  }

  /** Tasks waiting behind the running one. */
  get queued(): number {
    return this.#queue.length;
  }

  #terminal(t: Task, state: "completed" | "failed" | "cancelled"): void {
    if (t.slot > 0) {
      this.#freeSlots.push(t.slot);
      t.slot = -1;
      t.flag = null;
    }
    // Journal (issue 7): a task that never reached the worker still gets an honest row (one
    // that did is in the worker's intake; if the worker died, its row ends `unfinished`).
    if (t.startedNs === null) {
      this.init.journal?.settle(t, state, t.error?.message ?? state, this.facts.cwd);
    }
    t.finish(state);
    this.bus.publishDerived(this.name, t.channel, { state, result_ref: t.resultRef });
  }

  #onMessage(m: FromWorker): void {
    switch (m.t) {
      case "pong": {
        clearTimeout(this.#pings.get(m.n));
        this.#pings.delete(m.n);
        return;
      }
      case "done":
        return this.#onDone(m);
      case "reply": {
        const p = this.#pending.get(m.rid);
        if (!p) return;
        this.#pending.delete(m.rid);
        if (m.ok) p.resolve(m.result);
        else p.reject(new RpcError(m.error.code, m.error.message, m.error.data));
        return;
      }
      case "jreq": { // a language journal/undo head (issue 7)
        const j = this.init.journal;
        const t = this.#running;
        if (!j || !t) return;
        void j.answer(m, this.name, j.principalOf(t)).then((r) => this.#post(r));
        return;
      }
      case "cwd":
        this.facts = { ...this.facts, cwd: m.cwd };
        return;
      case "child": {
        const t = this.#running;
        if (!t || t.id !== m.task) return;
        if (m.live) {
          t.pgids.add(m.pgid);
          // A task suspended while between children stops its next child too.
          if (t.suspended) suspendGroup(m.pgid);
        } else t.pgids.delete(m.pgid);
        return;
      }
      case "emit":
        // Language `channel("user.x").emit(v)` → the kernel bus (never re-injected: no echo).
        // Beyond the channel bound the event stays inside the language bus only.
        if (m.channel.startsWith("user.") && this.admitUserChannel(m.channel)) {
          this.bus.publish(this.name, m.channel, m.payload);
        }
        return;
    }
  }

  #onDone(m: DoneMsg): void {
    const t = this.#running;
    this.#running = null;
    if (m.facts) this.facts = m.facts;
    if (t && t.id === m.task) {
      const complete = () => {
        if (m.ok) {
          t.resultRef = m.result.ref;
          t.result = m.result;
          const payload = transcriptPayload(m);
          // A journaling worker numbered the event and logged it with the exec (issue 7).
          if (m.transcript) {
            this.bus.publishStored(this.name, {
              channel: "session.transcript",
              seq: m.transcript.seq,
              ts: m.transcript.ts * 1_000_000,
              payload,
            });
          } else this.bus.publish(this.name, "session.transcript", payload);
          this.bus.publish(this.name, "render", { ref: m.result.ref, render: m.result.render });
          const state = m.outcomeFailed
            ? (t.cancelRequested && m.signalled ? "cancelled" : "failed")
            : "completed";
          this.#terminal(t, state);
        } else {
          t.error = m.error;
          const ref = (m.error.data as { ref?: unknown } | undefined)?.ref;
          t.resultRef = typeof ref === "string" ? ref : null;
          this.#terminal(t, t.cancelRequested || m.cancelled ? "cancelled" : "failed");
        }
      };
      // Journal (issue 7): the worker logged the exec to the intake before answering; the
      // journal thread folds it in behind.
      if (m.journal) this.init.journal?.afterExec(this.name, m.journal);
      complete();
    }
    this.#pump();
  }

  /** The previous worker crashed while running an exec (see {@link #spawn}). */
  #crashedMidExec = false;

  /**
   * The session process died or was killed: fail its tasks with a clear error, say so on the
   * session's `session.lifecycle` channel, and start a fresh process (its bindings and `out:N`
   * refs are gone; the journal ends its open exec `unfinished`).
   */
  #crash(why: string): void {
    this.crashes++;
    this.#crashedMidExec = this.#running !== null;
    const dead = this.#proc;
    dead.kill(); // a stuck process must not linger (no-op when it already ended)
    this.#endCgroup();
    for (const timer of this.#pings.values()) clearTimeout(timer);
    this.#pings.clear();
    for (const t of this.#running ? [this.#running] : []) {
      for (const g of t.pgids) killGroup(g);
    }
    const message = `${why}; the session was restarted (its bindings and out:N refs are gone)`;
    const err: RpcErrorObject = {
      code: RPC.INTERNAL_ERROR,
      message,
      data: { session: this.name, restarted: true },
    };
    const victims = [...(this.#running ? [this.#running] : []), ...this.#queue];
    this.#running = null;
    this.#queue = [];
    for (const t of victims) {
      t.error = err;
      this.#terminal(t, t.cancelRequested ? "cancelled" : "failed");
    }
    for (const p of this.#pending.values()) p.reject(new RpcError(err.code, err.message));
    this.#pending.clear();
    this.init.journal?.abandonIntake(this.#intakeWorker);
    this.bus.publish(this.name, LIFECYCLE_CHANNEL, {
      state: "restarted",
      reason: why,
      crashes: this.crashes,
      tasks_failed: victims.map((t) => t.ref),
    });
    if (!this.#closed) this.#spawn();
  }

  /** Ask the worker (value.get, env, cwd, reef). Waits while a synchronous exec holds the worker. */
  async request(kind: "value.get" | "env" | "cwd" | "reef", params: Record<string, unknown>) {
    await this.#ready;
    if (this.#closed) throw new RpcError(RPC.INTERNAL_ERROR, "kernel shutting down");
    const rid = this.#nextRid++;
    return await new Promise<unknown>((resolve, reject) => {
      this.#pending.set(rid, { resolve, reject });
      this.#post({ t: "req", rid, kind, params });
    });
  }

  /** Inject an `events.publish` payload into the session's language channel bus. */
  inject(channel: string, payload: unknown): void {
    this.#post({ t: "inject", channel, payload });
  }

  /**
   * Shut down: cancel everything, give running work `graceMs` to unwind (child process groups
   * get their kill ladder), then end the session process.
   */
  async close(graceMs = 3000): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const t of [...this.#queue]) this.cancel(t);
    const r = this.#running;
    if (r) {
      this.cancel(r);
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        r.done,
        new Promise<void>((res) => (timer = setTimeout(res, graceMs))),
      ]);
      clearTimeout(timer);
      for (const g of r.pgids) killGroup(g);
    }
    for (const timer of this.#pings.values()) clearTimeout(timer);
    this.#pings.clear();
    this.#proc.kill();
    await this.#proc.status;
    await this.#endCgroup(true);
    this.#slots.close(true);
    for (const p of this.#pending.values()) {
      p.reject(new RpcError(RPC.INTERNAL_ERROR, "kernel shutting down"));
    }
    this.#pending.clear();
    if (this.#running && !this.#running.finished) {
      this.#running.error = { code: RPC.INTERNAL_ERROR, message: "kernel shutting down" };
      this.#terminal(this.#running, "cancelled");
    }
  }
}
