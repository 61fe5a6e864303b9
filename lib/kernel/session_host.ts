/**
 * The kernel's handle of one named session. The evaluator lives in a session process
 * (`session_worker.ts`, started by `session_process.ts`); this side keeps the session's FIFO of
 * tasks (one exec at a time in the process), cancels through each task's shared flag without
 * waiting for the process, publishes transcript/render/task events, and forwards
 * `value.get`/`env`/`pty` requests. The session's PTYs live in its process too; their notices
 * become `pty.N` events here, and their programs are killed from here when the process cannot
 * close them (it died, or hangs at shutdown) and no session cgroup takes them with it.
 *
 * Containment (issue 16): a session that does not answer a ping soon after a cancel — busy in
 * native code that never polls its flag — is killed with everything it started, its tasks end,
 * its clients hear why on the `session.lifecycle` channel, and a fresh session takes its place.
 * A session that dies on its own (out of memory, a crash) is handled the same way.
 */

import { join } from "node:path";
import { createHash } from "node:crypto";
import { RPC, RpcError, type RpcErrorObject } from "../client/errors.ts";
import type { EventBus } from "./event_bus.ts";
import {
  Cgroup,
  resume as resumeGroup,
  signalGroup,
  signalSession,
  suspend as suspendGroup,
} from "../exec/mod.ts";
import { STARTED, type Task, type TaskRegistry } from "./tasks.ts";
import { JournalProxy } from "./journal_proxy.ts";
import {
  type DoneMsg,
  type FromWorker,
  type InitMsg,
  type RequestKind,
  type SessionFacts,
  type ToWorker,
  transcriptPayload,
} from "./session_messages.ts";
import type { KernelJournal } from "./kernel_journal.ts";
import type { LeashInit } from "../leash/mod.ts";
import { journalNote } from "./journal_messages.ts";
import type { PtyNotice } from "./pty_session.ts";
import { CancelSlots, SLOTS } from "./cancel_slots.ts";
import { type SandboxSpec, SandboxSpecError } from "../exec/sandbox_spec.ts";
import { type KernelPlaces, SessionConfinement } from "./session_sandbox.ts";
import { MAX_LOST_NAMES } from "./lost_bindings.ts";
import { LANE_SLOTS, LaneBook, laneKey } from "./lane_book.ts";
import { isDir } from "./session_cwd.ts";
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
/** How long a closed PTY's `pty.N` channel stays readable (its last events reach subscribers). */
const PTY_CHANNEL_LINGER_MS = 2000;
/** How long shutdown waits for the session to close its PTYs before killing them from here. */
const PTY_CLOSE_WAIT_MS = 3000;
/** Claimed lane execs a session holds unanswered at most (D-31: bounded queues). */
const MAX_LANE_CLAIMS = 1024;
/** How long `laneSync` waits for a busy session. */
const LANE_SYNC_MS = 100;
/** Lane sockets made by this kernel (each session's has its own number). */
let laneSockets = 0;

/** Where a session's processes come from and what bounds them. */
export interface SessionInit {
  cwd: string;
  env: Record<string, string>;
  journal?: KernelJournal | null;
  /** Heap limit of the session process in MiB. */
  memoryMb?: number;
  /** A private directory for the cancel-slot file (null: local flags only). */
  runDir?: string | null;
  /** The only principal that may drive this session (issue 15). */
  principal?: string;
  /** Its visible name (default: the session key). */
  visibleName?: string;
  /** Its principal's policy (absent: no policy evaluation). */
  leash?: LeashInit | null;
  /** The first `out:N` (one past what an earlier kernel gave this session; default 1). */
  firstOut?: number;
  /** Why the session does not start where it was asked to (shown at attach). */
  cwdNote?: string | null;
  /** The kernel's state directory: the session's `rm` trash is below it (issue 13). */
  stateDir?: string | null;
  /**
   * What the session's principal may touch (issue 16): its process and everything it starts
   * run confined to it. Null or absent: unconfined (the permissive local human).
   */
  sandbox?: SandboxSpec | null;
  /** The kernel's private places a confined session must not see (with `sandbox`). */
  places?: KernelPlaces;
  /** The policy file and its signature as last read (an exec lane compares it). */
  policyFile?: () => { path: string; stamp: string } | null;
  /** The kernel's task registry (lane execs become tasks in it). */
  tasks?: TaskRegistry;
  /** Serve plain execs on an exec lane (`session_lane.ts`; needs `tasks` and `runDir`). */
  lane?: boolean;
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
  /** The task each ping after a cancel asked about. */
  #pingTask = new Map<number, Task>();
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
  /**
   * Names this session's transcript: a new one whenever it starts afresh (a new process, a new
   * kernel), so a client that re-attaches can tell its old refs are gone (`session.attach`).
   */
  instance = "";
  /** The highest `out:N` handed out (the next session process starts past it). */
  #lastOut = 0;
  /** `user.*` channels this session has on the kernel bus (bounded: `MAX_USER_CHANNELS`). */
  readonly userChannels = new Set<string>();
  /**
   * Process ids of the PTY programs the session runs, by PTY number: killed from here when the
   * session cannot close them itself (it died, or hangs at shutdown).
   */
  readonly ptyChildren = new Map<number, number>();
  /** The exec lane (`lane_book.ts`; null: none — a confined session, or no run directory). */
  #lane: LaneBook | null = null;
  /** `laneSync` calls waiting for the session's answer. */
  #syncs = new Map<number, () => void>();
  #nextSync = 1;

  /** Admit a `user.*` channel for this session; false once the bound is reached. */
  admitUserChannel(channel: string): boolean {
    if (this.userChannels.has(channel)) return true;
    if (this.userChannels.size >= MAX_USER_CHANNELS) return false;
    this.userChannels.add(channel);
    return true;
  }

  /**
   * `name` is the session's key — its visible name, plus `@principal` for a principal other
   * than the kernel's own (D-13): the bus scope, the task scope and the journal's session.
   */
  constructor(
    readonly name: string,
    readonly bus: EventBus,
    readonly init: SessionInit,
  ) {
    this.#leash = init.leash ?? null;
    // A principal may hold any characters: keep the slot file's name plain.
    const plain = name.replace(/[^A-Za-z0-9._@:-]/g, "_");
    this.#slots = CancelSlots.create(init.runDir ?? null, `session-${plain}`);
    this.#lastOut = Math.max(0, (init.firstOut ?? 1) - 1);
    let malformed: string | null = null;
    this.confinement = null;
    if (init.sandbox && init.places) {
      // Where a confined session spills large captures before it stores them (through us).
      // File names of its own: the session key with anything unusual replaced, and a digest
      // of the key so that two keys never share one.
      const own = `${name.replace(/[^A-Za-z0-9._-]/g, "_")}.${
        createHash("sha256").update(name).digest("hex").slice(0, 12)
      }`;
      this.#scratch = Deno.makeTempDirSync({ dir: init.places.runDir, prefix: `${own}.` });
      // Its own corner of the state directory (`rm`'s trash): never another principal's.
      if (init.stateDir) {
        this.#ownState = join(init.stateDir, "confined", own);
        Deno.mkdirSync(this.#ownState, { recursive: true, mode: 0o700 });
      }
      try {
        this.confinement = new SessionConfinement(
          init.sandbox,
          init.places,
          this.#slots.path,
          [this.#scratch, ...(this.#ownState ? [this.#ownState] : [])],
        );
      } catch (e) {
        if (!(e instanceof SandboxSpecError)) throw e;
        malformed = e.message;
      }
    }
    if (malformed !== null) {
      this.#refuse(
        `the sandbox of this principal cannot be built: ${malformed}; fix its policy`,
        { missing: [], detail: [malformed] },
      );
      return;
    }
    if (this.confinement?.refused) {
      const r = this.confinement.report;
      this.#refuse(
        `the hermetic policy needs ${r.missing.join(", ")} enforced, and this host cannot: ` +
          r.detail.join("; "),
        { missing: r.missing, detail: r.detail },
      );
      return;
    }
    if (init.lane && this.confinement === null && init.runDir && init.tasks) {
      const slots = this.#freeSlots.splice(-LANE_SLOTS, LANE_SLOTS);
      this.#lane = new LaneBook(join(init.runDir, `lane-${++laneSockets}.sock`), slots);
    }
    this.#spawn();
  }

  /** This session never starts: its `ready()` rejects with `SANDBOX_UNENFORCEABLE`. */
  #refuse(message: string, data: { missing: string[]; detail: string[] }): void {
    this.#ready = Promise.reject(new RpcError(RPC.SANDBOX_UNENFORCEABLE, message, data));
    this.#ready.catch(() => {});
    this.#closed = true;
    this.#slots.close(true);
    this.#removeScratch();
  }

  /** The session's OS confinement (null: unconfined). */
  readonly confinement: SessionConfinement | null;
  /** A cgroup `memory.max` bounds the session with its children (not only its heap). */
  memoryBounded = false;
  /** A confined session's private spill directory. */
  #scratch: string | null = null;
  /** A confined session's state directory (its trash), inside the kernel's. */
  #ownState: string | null = null;
  /** A confined session's journal, written by us on its behalf (issue 16). */
  #proxy: JournalProxy | null = null;

  #removeScratch(): void {
    if (this.#scratch === null) return;
    try {
      Deno.removeSync(this.#scratch, { recursive: true });
    } catch { /* already gone */ }
  }

  /** The init message's journal part: direct, or proxied for a confined session. */
  #journalInit(j: KernelJournal): InitMsg["journal"] {
    const intake = this.#intakeFor(j);
    this.#proxy?.close();
    this.#proxy = null;
    if (!this.confinement?.confined) return { casDir: j.casDir, intake };
    this.#proxy = new JournalProxy(j.store.cas, intake, this.name);
    return { casDir: j.casDir, intake, proxied: { spillDir: this.#scratch! } };
  }

  #leash: LeashInit | null;

  /** The principal whose session this is (PTYs and other per-session state check it). */
  get principal(): string {
    return this.init.principal ?? "";
  }

  /** The name clients attached with. */
  get visibleName(): string {
    return this.init.visibleName ?? this.name;
  }

  /** Hand the session its principal's reloaded policy (ordered before any later exec). */
  setPolicy(leash: LeashInit): void {
    this.#leash = leash;
    if (!this.#closed) {
      this.#post({ t: "policy", leash, policyStamp: this.init.policyFile?.()?.stamp ?? "" });
    }
  }

  /** The heap limit of this session's process, in MiB. */
  get memoryMb(): number {
    return this.init.memoryMb ?? DEFAULT_SESSION_MEMORY_MB;
  }

  /** The pid of the current session process (tests, diagnostics). */
  get pid(): number {
    return this.#proc.pid;
  }

  /**
   * True once the current process said `ready`: nothing is posted to a process still starting
   * (after a crash, an exec posted before its `init` finished was lost and the session hung).
   */
  #live = false;

  #spawn(): void {
    this.#live = false;
    this.instance = crypto.randomUUID();
    for (let i = 0; i < SLOTS; i++) Atomics.store(this.#slots.flag(i), 0, 0);
    let started = false;
    let onReady!: () => void;
    let onFail!: (e: Error) => void;
    this.#ready = new Promise<void>((resolve, reject) => {
      onReady = resolve;
      onFail = reject;
    });
    // A confined start forks (bubblewrap) before the session runs: its cgroup is joined by the
    // start itself. Otherwise the process is moved in below, before `init`.
    const conf = this.confinement;
    const early = conf?.joinsCgroup ? Cgroup.create("shoal-session") : null;
    const wrap = conf?.confined
      ? (argv: string[]) => conf.wrap(argv, early?.procsFile ?? null)
      : undefined;
    const proc = startSessionProcess(
      { memoryMb: this.memoryMb, label: this.name, wrap },
      (line) => {
        if (this.#proc !== proc) return; // a killed predecessor's last words
        const m = JSON.parse(line) as FromWorker;
        if (started) this.#onMessage(m);
        else if (m.t === "ready") {
          started = true;
          this.#live = true;
          this.facts = m.facts;
          onReady();
        }
      },
    );
    this.#proc = proc;
    // Before `init`: the process runs nothing until then, so every descendant is inside.
    if (early !== null) this.#cgroup = early;
    else {
      const cg = Cgroup.create("shoal-session");
      this.#cgroup = cg !== null && cg.adopt(proc.pid) ? cg : (cg?.remove(), null);
    }
    // A confined session and its children share one memory bound where the host delegates a
    // memory controller (twice the heap: the runtime and its children need room too).
    if (conf?.confined) {
      this.memoryBounded = this.#cgroup?.limitMemory(this.memoryMb * 2 ** 21) ?? false;
    }
    void proc.status.then((st) => {
      if (this.#proc !== proc || this.#closed) return;
      const why = this.#killedFor ?? describeExit(st, this.memoryMb);
      this.#killedFor = null;
      if (!started) onFail(new Error(`session process failed to start: ${why}`));
      else this.#crash(why);
    });
    this.#ready.then(() => this.#pump(), () => {});
    this.#post({
      t: "init",
      session: this.name,
      slots: this.#slots.path,
      cgroup: this.#cgroup?.path ?? null,
      cwd: this.#startCwd(),
      env: this.init.env,
      stateDir: this.#ownState ?? (this.confinement ? null : this.init.stateDir ?? null),
      journal: this.init.journal ? this.#journalInit(this.init.journal) : null,
      confined: conf?.confined === true,
      pins: conf?.pins ?? null,
      // A worker that crashed mid-exec may have logged that exec's event with the next seq:
      // its successor starts one past it (a gap at worst, never a seq used twice).
      transcriptSeq: this.bus.nextSeq(this.name, "session.transcript") +
        (this.#crashedMidExec ? 1 : 0),
      leash: this.#leash,
      // A crashed process may have given out:N to the exec it died in: start past it too.
      firstOut: this.#lastOut + 1 + (this.#crashedMidExec ? 1 : 0),
      lost: this.#lost && { reason: this.#lost.reason, names: [...this.#lost.names] },
      lane: this.#lane && {
        socket: this.#lane.socket,
        slots: [...this.#lane.slots],
        principal: this.principal,
        policyFile: this.init.policyFile?.()?.path ?? null,
        instance: this.instance,
      },
      policyStamp: this.init.policyFile?.()?.stamp ?? "",
    });
    // Every lane slot is lent again (all were zeroed above); a fresh process knows no tickets:
    // the attachments keep theirs.
    this.#lane?.freed.splice(0);
    for (const [ticket, tty] of this.#lane?.grants ?? []) {
      this.#post({ t: "lane.grant", ticket, tty });
    }
    this.#crashedMidExec = false;
  }

  /**
   * Where a process starts: the session's first directory, or after a crash the directory the
   * session was in (so a command sent after the restart runs where its sender thinks), while
   * that still exists.
   */
  #startCwd(): string {
    if (this.crashes === 0 || !isDir(this.facts.cwd)) return this.init.cwd;
    return this.facts.cwd;
  }

  /** The intake series of the current worker (issue 7); a crashed worker's is folded. */
  #intakeWorker = 0;

  #intakeFor(j: KernelJournal): { dir: string; token: string; worker: number } {
    const i = j.intakeFor(this.name);
    this.#intakeWorker = i.worker;
    return i;
  }

  /**
   * A lane exec began in the session: it becomes a task here (a claimed one keeps the task its
   * claim made), running, with the lane slot the session took.
   */
  #laneBegin(m: Extract<FromWorker, { t: "lane.begin" }>): void {
    const lane = this.#lane;
    if (lane === null || !lane.grants.has(m.ticket) || !lane.slots.includes(m.slot)) return;
    const key = laneKey(m.ticket, m.seq);
    let t = lane.claims.get(key);
    lane.claims.delete(key);
    if (!t) {
      t = this.#laneTask(m.ticket, m.seq, m.src, m.position, lane.grants.get(m.ticket)!);
      t.keepResult = false; // its client hears the result on the lane
    }
    t.laneId = m.task;
    t.slot = m.slot;
    t.flag = this.#slots.flag(m.slot);
    if (t.cancelRequested) Atomics.store(t.flag, 0, 1);
    t.state = t.cancelRequested ? "cancelling" : "running";
    t.startedNs = Date.now() * 1_000_000;
    lane.running = t;
    lane.remember(key, t);
    // A kernel exec sent before the kernel heard of this one waits behind it in the session.
    const held = this.#running;
    if (held !== null && held.state === "running") {
      held.state = "queued";
      held.startedNs = null;
    }
    t.announced = true;
    this.bus.publishDerived(this.name, t.channel, STARTED);
  }

  /** A task for lane exec `seq` of `ticket`, its journal row in the session principal's name. */
  #laneTask(
    ticket: string,
    seq: number,
    src: string,
    position: "stmt" | "value",
    tty: boolean,
  ): Task {
    const t = this.init.tasks!.create(this.name, src, position, null, tty);
    t.lane = { ticket, seq };
    this.init.journal?.notePrincipal(t, this.principal);
    return t;
  }

  /**
   * Bring the kernel's view of lane execs up to date (a lane exec's begin and done reach the
   * kernel just after its client has the answer): ask the session to say what it held back.
   * Waits at most {@link LANE_SYNC_MS} — a busy session says it when it can.
   */
  async laneSync(): Promise<void> {
    if (this.#lane === null || !this.#live || this.#closed) return;
    const n = this.#nextSync++;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await new Promise<void>((resolve) => {
      this.#syncs.set(n, resolve);
      timer = setTimeout(() => {
        this.#syncs.delete(n);
        resolve();
      }, LANE_SYNC_MS);
      this.#post({ t: "lane.sync", n });
    });
    clearTimeout(timer);
  }

  /** The error of a lane exec whose process died before it said whether it began. */
  #laneLost(why: string): RpcErrorObject {
    return {
      code: RPC.INTERNAL_ERROR,
      message: `the session process died while this exec was on its way to it (${why}; the ` +
        `session was restarted); it may have begun before it died — check its effects, and ` +
        `send it again if it did not run`,
      data: { session: this.name, restarted: true, ran: null },
    };
  }

  /** The exec lane's socket (null: this session has none). */
  get laneSocket(): string | null {
    return this.#lane?.socket ?? null;
  }

  /** A lane ticket for a new attachment (null: no lane here). */
  grantLane(tty: boolean): string | null {
    if (this.#lane === null || this.#closed) return null;
    const ticket = this.#lane.grant(tty);
    this.#post({ t: "lane.grant", ticket, tty });
    return ticket;
  }

  /** Take a ticket back (its attachment ended). */
  revokeLane(ticket: string): void {
    if (this.#lane?.grants.delete(ticket) && !this.#closed) {
      this.#post({ t: "lane.revoke", ticket });
    }
  }

  /**
   * A client gave up waiting on lane exec `seq` of `ticket` (its timeout passed, or the lane
   * dropped): its task — the one the lane began, or a new one the session is asked to leave
   * to the kernel, which then runs it in turn (`lane.unclaimed`).
   */
  claimLane(
    ticket: string,
    seq: number,
    req: {
      src: string;
      position: "stmt" | "value";
      tty: boolean;
      instance?: string;
      /** Called (it may throw: a quota) before a new task is made for the claim. */
      onNew?: () => void;
    },
  ): Task {
    const lane = this.#lane;
    if (lane === null || !lane.grants.has(ticket)) {
      throw new RpcError(RPC.INVALID_PARAMS, "this attachment has no exec lane to claim from");
    }
    const key = laneKey(ticket, seq);
    const known = lane.task(key);
    if (known) return known;
    if (req.instance !== undefined && req.instance !== this.instance) {
      // The process the lane spoke to is gone, and it never said it began this exec.
      const e = this.#laneLost(this.#lost?.reason ?? "it ended");
      throw new RpcError(e.code, e.message, e.data);
    }
    if (lane.claims.size >= MAX_LANE_CLAIMS) {
      throw new RpcError(
        RPC.INTERNAL_ERROR,
        `session "${this.visibleName}" already has ${MAX_LANE_CLAIMS} lane execs claimed and ` +
          `not yet answered; await or cancel some before claiming more`,
        { claimed: lane.claims.size, limit: MAX_LANE_CLAIMS },
      );
    }
    req.onNew?.();
    const t = this.#laneTask(ticket, seq, req.src, req.position, req.tty);
    lane.claims.set(key, t);
    if (this.#live) this.#post({ t: "lane.claim", ticket, seq });
    else {
      // A process still starting never saw this ticket's execs: the kernel runs it.
      lane.claims.delete(key);
      this.#queue.push(t);
    }
    return t;
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
    if (this.#running !== null || this.#closed || !this.#live) return;
    const t = this.#queue.shift();
    if (!t) return;
    this.#running = t;
    // A slot is owned by one running task at a time and zeroed before reuse, so a late
    // cancel of a finished task can never reach the next one (D-24).
    t.slot = this.#freeSlots.pop()!;
    t.flag = this.#slots.flag(t.slot);
    Atomics.store(t.flag, 0, t.cancelRequested ? 1 : 0);
    // Behind a lane exec it waits in the session, not yet started: queued until that ends.
    if (this.#lane?.running) t.state = t.cancelRequested ? "cancelling" : "queued";
    else this.#started(t);
    this.#post({
      t: "exec",
      task: t.id,
      src: t.src,
      position: t.position,
      elide: t.elide,
      tty: t.tty,
      slot: t.slot,
      principal: this.init.journal?.principalOf(t),
      ...(t.approved ? { approved: t.approved } : {}),
      ...(t.lane ? { lane: t.lane } : {}),
    });
  }

  /** `t` (the kernel exec in the session) starts now: running, and said so once. */
  #started(t: Task): void {
    if (t.state === "queued") t.state = "running";
    t.startedNs = Date.now() * 1_000_000;
    if (t.announced) return;
    t.announced = true;
    this.bus.publishDerived(this.name, t.channel, STARTED);
  }

  /**
   * Cancel a task of this session. A queued task is removed without running; a running one
   * gets its own flag set (seen by a busy evaluator at its next check) and a cancel message
   * (seen by awaits). Returns at once. `why` completes a queued task's error message.
   */
  cancel(t: Task, why?: string): void {
    if (t.finished) return;
    t.cancelRequested = true;
    const i = this.#queue.indexOf(t);
    if (i >= 0) {
      this.#queue.splice(i, 1);
      t.error = {
        code: RPC.RAISED,
        message: `cancelled before it started${why ? `: ${why}` : ""}`,
        data: { code: "cancelled", ref: null },
      };
      this.#terminal(t, "cancelled");
      return;
    }
    if (this.#claimed(t)) {
      // Claimed from the lane, the session's word not heard yet: it began there (its begin
      // binds the flag set then) or never will (it ends when the session says so). A session
      // that cannot even answer is stuck in something that never polls: the ping kills it —
      // unless a kernel exec is in there, which then holds it (the claim is answered after).
      t.state = "cancelling";
      if (this.#running === null) this.#pingAfterCancel(t);
      return;
    }
    if (this.#holds(t)) {
      // A stopped group cannot act on SIGINT: continue it so the kill ladder works.
      if (t.suspended) {
        for (const g of t.pgids) resumeGroup(g);
        t.suspended = false;
      }
      t.state = "cancelling";
      Atomics.store(t.flag!, 0, 1);
      this.#post({ t: "cancel", task: t.sessionId });
      // A kernel exec waiting in the session behind a lane exec is dropped when the session
      // reads the cancel; a ping would only time out behind a busy lane exec.
      if (this.#running === t && this.#lane?.running) return;
      this.#pingAfterCancel(t);
    }
  }

  /** True while `t` is in the session process (running, or waiting there behind a lane exec). */
  #holds(t: Task): boolean {
    return this.#running === t || this.#lane?.running === t || this.#claimed(t);
  }

  /** True while `t` is a claimed lane exec the session has not said it began or left. */
  #claimed(t: Task): boolean {
    return t.lane !== null && this.#lane?.claims.get(laneKey(t.lane.ticket, t.lane.seq)) === t;
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
      this.#pingTask.delete(n);
      if (this.#proc !== proc || t.finished || !this.#holds(t)) return;
      this.#kill(
        `the session did not respond within ${CANCEL_PING_MS} ms of cancelling ${t.ref}, ` +
          `so it was killed`,
      );
    }, CANCEL_PING_MS);
    this.#pings.set(n, timer);
    this.#pingTask.set(n, t);
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

  /**
   * A pong after `t`'s cancel says which task the session runs. The session posts a task's
   * `done` before it can answer a later ping, so when `t` is still running here and the pong
   * names another task (or none), the session no longer has `t`: it must not stay
   * `cancelling` forever — fail it and go on with the queue.
   */
  #checkRunning(t: Task, running: number | null, pending: number | null): void {
    const id = t.sessionId;
    if (!this.#holds(t) || this.#claimed(t) || running === id || pending === id) return;
    if (this.#lane?.running === t) this.#lane.running = null;
    else this.#running = null;
    t.error = {
      code: RPC.INTERNAL_ERROR,
      message: `the session process no longer runs ${t.ref} (it was lost before it could ` +
        `finish); the session is still there, with its bindings`,
      data: { session: this.name, task: t.ref },
    };
    this.#terminal(t, t.cancelRequested ? "cancelled" : "failed");
    this.#pump();
  }

  /** Kill the session process and everything it started; a fresh session replaces it. */
  #kill(why: string): void {
    // Its tasks end once it is gone (its status says so, with this reason): by then its lane
    // socket is closed, so an exec a client writes there afterwards fails to send and goes by
    // the kernel, rather than vanishing into a dying process (an error: "it may have begun").
    this.#killedFor ??= why;
    this.#proc.kill();
  }

  /** Why the kernel killed the current process (its status then ends its tasks). */
  #killedFor: string | null = null;

  /**
   * Stop (SIGSTOP) or continue (SIGCONT) the process groups of a running task. Throws
   * `-32020` when the task has no running child process: evaluator work itself cannot be
   * stopped from outside.
   */
  suspendTask(t: Task, stop: boolean): void {
    if (!this.#holds(t) || t.pgids.size === 0) {
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

  /** The task this session is running now, by either route (a queued exec waits behind it). */
  get busyWith(): Task | null {
    return this.#lane?.running ?? this.#running;
  }

  /** Tasks waiting behind the running one. */
  get queued(): number {
    return this.#queue.length;
  }

  #terminal(t: Task, state: "completed" | "failed" | "cancelled"): void {
    if (t.slot > 0 && t.laneId !== 0) {
      // A lane slot goes back to the lane, zeroed before the session may reuse it (D-24),
      // half the lane's slots at a time (one message, not one per exec).
      Atomics.store(t.flag!, 0, 0);
      const lane = this.#lane!;
      lane.freed.push(t.slot);
      if (lane.freed.length >= LANE_SLOTS / 2 && this.#live && !this.#closed) {
        this.#post({ t: "lane.slots", slots: lane.freed.splice(0) });
      }
      t.slot = -1;
      t.flag = null;
    } else if (t.slot > 0) {
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
        const asked = this.#pingTask.get(m.n);
        this.#pingTask.delete(m.n);
        if (asked !== undefined) this.#checkRunning(asked, m.running, m.pending ?? null);
        return;
      }
      case "done":
        return this.#onDone(m);
      case "lane.begin":
        return this.#laneBegin(m);
      case "lane.synced":
        this.#syncs.get(m.n)?.();
        this.#syncs.delete(m.n);
        return;
      case "lane.unclaimed": {
        // The session will never run it from the lane: it runs here, in turn.
        const key = laneKey(m.ticket, m.seq);
        const t = this.#lane?.claims.get(key);
        if (!t) return;
        this.#lane!.claims.delete(key);
        this.#queue.push(t);
        if (t.cancelRequested) return this.cancel(t, "cancelled while its client waited");
        return this.#pump();
      }
      case "reply": {
        const p = this.#pending.get(m.rid);
        if (!p) return;
        this.#pending.delete(m.rid);
        if (m.ok) p.resolve(m.result);
        else p.reject(new RpcError(m.error.code, m.error.message, m.error.data));
        return;
      }
      case "intake": { // a confined session's exec log (issue 16)
        const t = this.#running;
        const j = this.init.journal;
        const why = this.#proxy === null
          ? "this session keeps its journal itself"
          : this.#proxy.intake(m.line, t && j ? j.principalOf(t) : null);
        if (why !== null) j?.afterExec(this.name, { warnings: [why], error: null });
        return;
      }
      case "store": { // a confined session's content-store operation (issue 16)
        const proxy = this.#proxy;
        const rid = m.rid;
        if (proxy === null) {
          return this.#post({
            t: "storer",
            rid,
            ok: false,
            error: { code: "invalid", message: "this session opens the content store itself" },
          });
        }
        void proxy.store(m.op).then(
          (result) => this.#post({ t: "storer", rid, ok: true, result }),
          (e) =>
            this.#post({
              t: "storer",
              rid,
              ok: false,
              error: {
                code: String((e as { code?: unknown }).code ?? "io_error"),
                message: (e as Error)?.message ?? String(e),
              },
            }),
        );
        return;
      }
      case "jreq": { // a language journal/undo head (issue 7)
        const j = this.init.journal;
        const t = this.#lane?.running ?? this.#running;
        if (!j || !t) return;
        void j.answer(m, this.name, j.principalOf(t)).then((r) => this.#post(r));
        return;
      }
      case "cwd":
        this.facts = { ...this.facts, cwd: m.cwd };
        return;
      case "child": {
        const t = m.task < 0 ? this.#lane?.byId(m.task) : this.#running;
        if (!t || t.sessionId !== m.task) return;
        if (m.live) {
          t.pgids.add(m.pgid);
          // A task suspended while between children stops its next child too.
          if (t.suspended) suspendGroup(m.pgid);
        } else t.pgids.delete(m.pgid);
        return;
      }
      case "pty":
        return this.#onPtyNotice(m.notice);
      case "emit":
        // Language `channel("user.x").emit(v)` → the kernel bus (never re-injected: no echo).
        // Beyond the channel bound the event stays inside the language bus only.
        if (m.channel.startsWith("user.") && this.admitUserChannel(m.channel)) {
          this.bus.publish(this.name, m.channel, m.payload);
        }
        return;
    }
  }

  /** A PTY notice → its `pty.N` channel (protocol: screen changes, exit, close). */
  #onPtyNotice(n: PtyNotice): void {
    const num = n.pty_id.slice(4);
    const channel = `pty.${num}`;
    this.bus.publish(this.name, channel, n);
    if (n.kind !== "closed") return;
    this.ptyChildren.delete(Number(num));
    const timer = setTimeout(() => this.bus.drop(this.name, channel), PTY_CHANNEL_LINGER_MS);
    Deno.unrefTimer(timer);
  }

  /** SIGKILL what is left of the PTY programs (their sessions), when the session cannot. */
  #killPtyChildren(): void {
    for (const pid of this.ptyChildren.values()) {
      for (const sig of ["SIGCONT", "SIGKILL"]) {
        try {
          signalGroup(pid, sig);
          signalSession(pid, sig);
        } catch { /* gone */ }
      }
    }
    this.ptyChildren.clear();
  }

  /** The session process was replaced after a crash this many times (earlier PTYs are gone). */
  get epoch(): number {
    return this.crashes;
  }

  /** True once closed (kernel shutdown). */
  get closed(): boolean {
    return this.#closed;
  }

  #onDone(m: DoneMsg): void {
    const lane = m.task < 0 ? this.#lane : null;
    const t = lane ? lane.byId(m.task) : this.#running;
    if (lane) {
      lane.running = null;
      // The kernel exec that waited behind it in the session starts now.
      if (this.#running !== null && !this.#running.finished) this.#started(this.#running);
    } else this.#running = null;
    const ref = m.ok ? m.result.ref : (m.error.data as { ref?: unknown } | undefined)?.ref;
    const n = typeof ref === "string" ? Number(/^out:([0-9]+)$/.exec(ref)?.[1] ?? 0) : 0;
    if (n > this.#lastOut) this.#lastOut = n;
    if (m.facts) this.facts = m.facts;
    if (t && t.sessionId === m.task) {
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
      if (m.journal) {
        this.init.journal?.afterExec(this.name, m.journal);
        const note = journalNote(m.journal);
        if (note !== null) {
          if (m.ok) m.result.journal = note;
          else m.error.data = { ...(m.error.data as object | undefined), journal: note };
        }
      }
      complete();
    }
    this.#pump();
  }

  /** The previous worker crashed while running an exec (see {@link #spawn}). */
  #crashedMidExec = false;
  /** Why the last process died, and the root names lost with it and before (null: none yet). */
  #lost: { reason: string; names: Set<string> } | null = null;

  /**
   * The session process died or was killed: fail its tasks with a clear error, say so on the
   * session's `session.lifecycle` channel, and start a fresh process (its bindings and `out:N`
   * refs are gone; the journal ends its open exec `unfinished`).
   */
  #crash(why: string): void {
    this.crashes++;
    this.#crashedMidExec = this.#running !== null || (this.#lane?.running ?? null) !== null;
    const names = new Set(this.#lost?.names);
    for (const n of Object.keys(this.facts.names)) {
      if (names.size < MAX_LOST_NAMES) names.add(n);
    }
    this.#lost = { reason: why, names };
    const dead = this.#proc;
    dead.kill(); // a stuck process must not linger (no-op when it already ended)
    this.#endCgroup();
    for (const timer of this.#pings.values()) clearTimeout(timer);
    this.#pings.clear();
    this.#pingTask.clear();
    const laneRunning = this.#lane?.running ?? null;
    for (const t of [this.#running, laneRunning]) {
      for (const g of t?.pgids ?? []) killGroup(g);
    }
    this.#killPtyChildren(); // a dead session cannot close its terminals
    const start = this.#startCwd();
    const lost = "its bindings, environment changes and out:N refs are gone; " +
      (start === this.facts.cwd ? "it keeps its directory" : `it starts again in ${start}`);
    const message = `${why}; the session was restarted (${lost})`;
    const err: RpcErrorObject = {
      code: RPC.INTERNAL_ERROR,
      message,
      data: { session: this.name, restarted: true },
    };
    // Work that waited behind it never ran: it is not re-run on the fresh process (it may have
    // counted on what is gone), and its error says so.
    const waited: RpcErrorObject = {
      code: RPC.INTERNAL_ERROR,
      message: `this exec did not run: the session was restarted before its turn (${why}; ` +
        `${lost}); send it again if it still makes sense`,
      data: { session: this.name, restarted: true, ran: false },
    };
    const claimed = new Set(this.#lane?.claims.values());
    this.#lane?.claims.clear();
    // A kernel exec waiting behind a lane exec had not started: it did not run either.
    const ran = laneRunning ?? this.#running;
    const victims = [
      ...(laneRunning ? [laneRunning] : []),
      ...(this.#running ? [this.#running] : []),
      ...this.#queue,
      ...claimed,
    ];
    this.#running = null;
    if (this.#lane) this.#lane.running = null;
    this.#queue = [];
    const unsure = this.#laneLost(why);
    for (const t of victims) {
      t.error = t === ran ? err : claimed.has(t) ? unsure : waited;
      this.#terminal(t, t.cancelRequested ? "cancelled" : "failed");
    }
    for (const p of this.#pending.values()) p.reject(new RpcError(err.code, err.message));
    this.#pending.clear();
    this.#proxy?.close();
    this.#proxy = null;
    this.init.journal?.abandonIntake(this.#intakeWorker);
    this.bus.publish(this.name, LIFECYCLE_CHANNEL, {
      state: "restarted",
      reason: why,
      crashes: this.crashes,
      tasks_failed: victims.map((t) => t.ref),
    });
    if (!this.#closed) this.#spawn();
  }

  /** Ask the session (value.get, env, cwd, reef, pty, complete). Waits while a synchronous exec holds it. */
  async request(kind: RequestKind, params: Record<string, unknown>) {
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
    // A process still starting has no language subscribers to hear it.
    if (this.#live) this.#post({ t: "inject", channel, payload });
  }

  /**
   * Shut down: cancel everything, give running work `graceMs` to unwind (child process groups
   * get their kill ladder), then end the session process.
   */
  async close(graceMs = 3000): Promise<void> {
    if (this.#closed) return;
    // PTY programs first, while the session can still close them; what it cannot close in
    // time is killed from here.
    if (this.ptyChildren.size > 0) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        this.request("pty", { op: "close_all" }).catch(() => {}),
        new Promise<void>((r) => (timer = setTimeout(r, PTY_CLOSE_WAIT_MS))),
      ]);
      clearTimeout(timer);
      this.#killPtyChildren();
    }
    this.#closed = true;
    for (const t of [...this.#queue, ...this.#lane?.claims.values() ?? []]) this.cancel(t);
    // What is in the process: its running exec, and a kernel exec waiting behind a lane one.
    const inside = [this.#lane?.running, this.#running].filter((t): t is Task => !!t);
    if (inside.length > 0) {
      for (const t of inside) this.cancel(t);
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        Promise.all(inside.map((t) => t.done)),
        new Promise<void>((res) => (timer = setTimeout(res, graceMs))),
      ]);
      clearTimeout(timer);
      for (const t of inside) for (const g of t.pgids) killGroup(g);
    }
    for (const timer of this.#pings.values()) clearTimeout(timer);
    this.#pings.clear();
    this.#pingTask.clear();
    this.#proc.kill();
    await this.#proc.status;
    await this.#endCgroup(true);
    this.#slots.close(true);
    this.#proxy?.close();
    this.#proxy = null;
    this.#removeScratch();
    for (const p of this.#pending.values()) {
      p.reject(new RpcError(RPC.INTERNAL_ERROR, "kernel shutting down"));
    }
    this.#pending.clear();
    for (const t of inside) {
      if (!t.finished) {
        t.error = { code: RPC.INTERNAL_ERROR, message: "kernel shutting down" };
        this.#terminal(t, "cancelled");
      }
    }
    if (this.#lane) {
      try {
        Deno.removeSync(this.#lane.socket);
      } catch { /* the process removed it, or never made it */ }
    }
  }
}
