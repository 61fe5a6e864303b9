/**
 * The main-thread handle of one named session. The evaluator lives in a Worker
 * (`session_worker.ts`); this side keeps the session's FIFO of tasks (one exec at a time in
 * the worker), cancels through each task's shared flag without waiting for the worker,
 * publishes transcript/render/task events, and forwards `value.get`/`env` requests.
 */

import { RPC, RpcError, type RpcErrorObject } from "../client/errors.ts";
import type { EventBus } from "./event_bus.ts";
import { resume as resumeGroup, suspend as suspendGroup } from "../exec/mod.ts";
import { STARTED, type Task } from "./tasks.ts";
import {
  type DoneMsg,
  type FromWorker,
  type SessionFacts,
  type ToWorker,
  transcriptPayload,
} from "./session_messages.ts";
import type { KernelJournal } from "./kernel_journal.ts";
import { mailboxBuffer, MailboxReceiver, MailboxSender } from "./mailbox.ts";

/** Distinct `user.*` channels one session may have on the kernel bus (each keeps a ring). */
export const MAX_USER_CHANNELS = 1024;
/** Cancel slots per session: slot 0 is the idle slot; one is held per running task. */
const SLOTS = 64;

/** A named session and its Worker. */
export class SessionHost {
  #worker!: Worker;
  /** Messages to and from the worker (shared-memory slots; `postMessage` for big ones). */
  #toWorker!: MailboxSender;
  #fromWorker: MailboxReceiver | null = null;
  #queue: Task[] = [];
  #running: Task | null = null;
  #pending = new Map<
    number,
    { resolve: (v: unknown) => void; reject: (e: unknown) => void }
  >();
  #nextRid = 1;
  #ready!: Promise<void>;
  #closed = false;
  readonly #slots = new SharedArrayBuffer(SLOTS * 4);
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
    readonly init: { cwd: string; env: Record<string, string>; journal?: KernelJournal | null },
  ) {
    this.#spawn();
  }

  #spawn(): void {
    const w = new Worker(new URL("./session_worker.ts", import.meta.url), {
      type: "module",
      name: `shoal-session-${this.name}`,
    });
    this.#worker = w;
    const toWorker = mailboxBuffer();
    const fromWorker = mailboxBuffer();
    this.#toWorker = new MailboxSender(toWorker, (text) => w.postMessage(text));
    this.#fromWorker?.close();
    this.#ready = new Promise<void>((resolve, reject) => {
      let started = false;
      const rx = new MailboxReceiver(fromWorker, (json) => {
        const m = JSON.parse(json) as FromWorker;
        if (started) this.#onMessage(m);
        else if (m.t === "ready") {
          started = true;
          this.facts = m.facts;
          resolve();
        }
      });
      this.#fromWorker = rx;
      w.onmessage = (e: MessageEvent<string>) => rx.fromPost(e.data);
      w.onerror = (e) => {
        e.preventDefault();
        reject(new Error(`session worker failed to start: ${e.message}`));
      };
    });
    this.#ready.then(() => {
      w.onerror = (e) => {
        e.preventDefault();
        this.#crash(e.message);
      };
      this.#pump();
    }, () => {});
    // The only structured-clone message: it carries the shared cancel slots and mailboxes.
    w.postMessage({
      t: "init",
      session: this.name,
      slots: this.#slots,
      mailbox: { toWorker, fromWorker },
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
    this.#toWorker.send(m);
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
    t.flag = new Int32Array(this.#slots, t.slot * 4, 1);
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
    }
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

  /** The worker died: fail its tasks with an internal error and start a fresh evaluator. */
  #crash(message: string): void {
    this.crashes++;
    this.#crashedMidExec = this.#running !== null;
    const err: RpcErrorObject = {
      code: RPC.INTERNAL_ERROR,
      message: `session worker crashed: ${message}; the session was restarted`,
    };
    try {
      this.#worker.terminate();
    } catch { /* already gone */ }
    this.#fromWorker?.close();
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
   * get their kill ladder), then terminate the worker.
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
    }
    this.#worker.terminate();
    this.#fromWorker?.close();
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
