/**
 * The session process of one named session (architecture: "sessions never share a thread with
 * the kernel"; issue 16: nor a process). It owns the evaluator, the transcript (`out:N`) and the
 * session's PTYs (`session_ptys.ts`: their programs run inside the session's confinement), runs
 * the execs the kernel hands it one at a time, and answers `value.get`, `env`, `cwd`, `reef` and `pty`
 * requests itself. Everything it sends back is bounded wire JSON or rendered text — never a value.
 *
 * It talks to the kernel over its stdin and stdout, one JSON message per line (`serveSession`);
 * nothing else in the process may write to stdout. Its memory, a spin and a crash stay inside
 * it: the kernel limits its heap, kills it when it does not answer a cancel, and starts a fresh
 * one.
 *
 * @module
 */

import { createHash } from "node:crypto";
import { Evaluator } from "../eval/mod.ts";
import { toErrorValue } from "../eval/errors.ts";
import { outcomeOut as deriveOut } from "../eval/outcome.ts";
import { ParseError } from "../syntax/mod.ts";
import { BytesV, type ErrorV, OutcomeV, TableV, typeName, type Value } from "../value/types.ts";
import { fail } from "../value/errors.ts";
import { joinPath, pageAt, pagedRender } from "./paged_render.ts";
import { statementLabel, statementText } from "./statement_text.ts";
import { elide, elisionCount, HARD_CAP, resolveBudget, uriWithPath } from "../value/elide.ts";
import { parsePath, SelectError, selectPath, sliceValue } from "../value/select.ts";
import { decodeWire, utf8Length } from "../value/wire.ts";
import { jsonToValue } from "../value/json.ts";
import { RPC, RpcError, type RpcErrorObject } from "../client/errors.ts";
import type { CaptureOptions } from "../exec/mod.ts";
import { killStrays, spawnCapture } from "../exec/mod.ts";
import {
  type DoneMsg,
  type ExecMsg,
  type FromWorker,
  type InitMsg,
  type RequestMsg,
  type SessionFacts,
  type ToWorker,
  transcriptPayload,
  type TranscriptSummary,
} from "./session_messages.ts";
import { evalByStatement, SessionJournal, type StmtFacts } from "./session_journal.ts";
import { CancelSlots } from "./cancel_slots.ts";
import { parseErrorObject, parseRpcError } from "./parse_error.ts";
import { LineSplitter } from "./line_splitter.ts";
import { LostBindings } from "./lost_bindings.ts";
import { type LaneHooks, SessionLane } from "./session_lane.ts";
import { journalNote } from "./journal_messages.ts";
import { fileStamp } from "../leash/file_watch.ts";
import type { JournalDone } from "./journal_messages.ts";
import { type IntakeEvent, IntakeWriter } from "../store/mod.ts";
import { ExecLog } from "./exec_log.ts";
import { isPromise } from "../eval/maybe.ts";
import { reefView } from "../eval/reef_view.ts";
import { ProxiedCas, ProxiedIntake } from "./journal_ports.ts";
import { forbidInspection } from "../exec/landlock.ts";
import { SpawnPins } from "./spawn_pin.ts";
import { completeAt } from "../eval/complete.ts";
import { configSnapshotFor } from "../config/mod.ts";
import { type PtyOp, SessionPtys } from "./session_ptys.ts";
import { type Evaluator as EvalCore, installHooks } from "../eval/evaluator.ts";
import { which } from "../exec/mod.ts";
import { hashFile } from "../store/mod.ts";
import type { Program, Span } from "../syntax/ast.ts";
import {
  canonicalEffects,
  type Checked,
  type Effect,
  evaluatorHost,
  parseEffects,
  SessionLeash,
} from "../leash/mod.ts";

const outcomeOut = (o: OutcomeV): Value => deriveOut(o, null);
const lossy = new TextDecoder();

/** Text the statement sink and diagnostics may collect per exec before it is cut. */
const SINK_CAP = 65536;
/** Lines/rows a `value.get` render of an explicit slice may show (the 64 KiB wall still holds). */
const SLICE_ROWS = 5000;

let ev: Evaluator;
/** The session's PTYs (pty.* requests; issue 17). */
let ptys: SessionPtys;
const transcript = new Map<number, Value>();
let nextOut = 1;
let lastCwd = "";

/** The running task, its cancel slot and an abort for awaits. */
let current: { task: number; flag: Int32Array; abort: AbortController } | null = null;
/** The cancel slots shared with the kernel; slot 0 (never set) is installed between tasks. */
let slots: CancelSlots;
let idleFlag: Int32Array;
/** The session's journal side (null: the kernel keeps no journal). (issue 7) */
let journal: SessionJournal | null = null;
/** Where this worker logs its execs for the journal (`exec_log.ts`). */
let execLog: ExecLog | null = null;
/** A confined session's content store, proxied by the kernel (issue 16). */
let proxiedCas: ProxiedCas | null = null;
/** A confined session's spawn pins (issue 16; null: nothing pinned). */
let pins: SpawnPins | null = null;
/** The seq of this session's next `session.transcript` event (journaling workers number them). */
let transcriptSeq = 0;
let sessionName = "";
/** The session principal's policy, checked here before each exec (issue 15; null: none). */
let leash: SessionLeash | null = null;
/** Statement-sink lines and diagnostics of the running exec (bounded). */
let sinkText = "";
let diagText = "";
/** The diagnostics already in `diagText` this exec (the same note from a loop is said once). */
const diagSeen = new Set<string>();
/** Distinct diagnostics one exec keeps (`diagText` is bounded anyway; this bounds the set). */
const MAX_DIAG_SEEN = 256;

/** What a crashed predecessor had bound (null: this process is the session's first). */
let lost: LostBindings | null = null;
/** The cgroup the kernel placed this process in alone (null: none, or not ours to sweep). */
let ownCgroup: string | null = null;
/** How long a command runs before the kernel hears of its process group. */
const REPORT_CHILD_AFTER_MS = 25;
/** Process groups of commands running now (spawned tasks' among them). */
const liveGroups = new Set<number>();
/** Whether the running exec's client is a terminal (renders keep to its width then). */
let execTty = false;
/** The running exec's source (what a statement's output is labelled with). */
let execSrc = "";
/** Whether a statement's output in the running exec came under its source's label. */
let execLabelled = false;
/** Whether the running exec started any command (no sweep is needed otherwise). */
let commandsRan = false;

/** A diagnostic of the running exec (shown with its result); the same one is said once. */
function diagnose(text: string): void {
  if (diagSeen.size < MAX_DIAG_SEEN && !diagSeen.has(text)) {
    diagSeen.add(text);
    diagText = appendBounded(diagText, text);
  }
}

/** What to use instead of leaving a process behind (said with each "stopped" note). */
const KEEP_RUNNING = "nothing a command starts outlives its exec; a server or other program " +
  "that must keep running: pty.open / shoal_pty_open (it runs until pty.close)";

/**
 * After an exec that ran commands: SIGKILL what they left in this session's cgroup outside any
 * running command's group — setsid escapers, daemons — so no process outlives its exec, and say
 * so (an agent that backgrounded a server must not think it is up).
 */
function sweepStrays(): void {
  if (!commandsRan || ownCgroup === null) return void (commandsRan = false);
  // PTY programs (and their shells' jobs) are live work too (issue 17).
  const n = killStrays(
    ownCgroup,
    ptys.size > 0 ? new Set([...liveGroups, ...ptys.groups()]) : liveGroups,
  );
  commandsRan = false;
  if (n > 0) {
    diagnose(
      `shoal: stopped ${n === 1 ? "a process" : `${n} processes`} that left ${
        n === 1 ? "its" : "their"
      } command's process group (setsid, a daemon) as the exec ended — ${KEEP_RUNNING}\n`,
    );
  }
}

const lineEncoder = new TextEncoder();

/** Write message lines to the kernel, whole, before this returns. */
function writeLines(text: string): void {
  const bytes = lineEncoder.encode(text);
  for (let off = 0; off < bytes.length;) off += Deno.stdout.writeSync(bytes.subarray(off));
}

/** Send one message to the kernel (after what {@link postSoon} held back). */
function post(m: FromWorker): void {
  const text = deferred + JSON.stringify(m) + "\n";
  deferred = "";
  writeLines(text);
}

/** Lines held back by {@link postSoon}, written before the next message. */
let deferred = "";
let deferredAt = 0;
/** The pending flush (one at a time: a timer set and cleared per message still wakes the loop). */
let deferTimer: ReturnType<typeof setTimeout> | null = null;
/** How long a held-back line waits for company at most. */
const DEFER_MS = 5;

/**
 * Send a message the kernel need not hear at once — a lane exec's begin and done: an exec that
 * ends within {@link DEFER_MS} costs the kernel one wake-up after its client has the answer,
 * not two while the client waits (measured: 104–112 µs → 80 µs a lane exec on the 2-core
 * machine). It goes with the next message (a child, a journal request: whatever names the
 * task reaches the kernel after its begin), when the timer fires, or — an exec that holds the
 * event loop — from the evaluator's busy hook, so a spinning exec is a task the kernel can
 * cancel through its flag within a few milliseconds.
 */
function postSoon(m: FromWorker): void {
  if (deferred === "") deferredAt = performance.now();
  deferred += JSON.stringify(m) + "\n";
  deferTimer ??= setTimeout(() => {
    deferTimer = null;
    flushDeferred();
  }, DEFER_MS);
}

/** Write what {@link postSoon} held back. */
function flushDeferred(): void {
  if (deferred === "") return;
  const text = deferred;
  deferred = "";
  writeLines(text);
}

function appendBounded(buf: string, text: string): string {
  if (buf.length >= SINK_CAP) return buf;
  const s = buf + text;
  return s.length > SINK_CAP ? s.slice(0, SINK_CAP) : s;
}

/** Sleep that a cancel interrupts at once (the evaluator's own timers would wait it out). */
function cancellableSleep(ms: number): Promise<void> {
  const cur = current;
  if (cur === null) return new Promise((r) => setTimeout(r, Math.max(0, ms)));
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(fail("cancelled", "cancelled"));
    };
    const timer = setTimeout(() => {
      cur.abort.signal.removeEventListener("abort", onAbort);
      resolve();
    }, Math.max(0, ms));
    if (cur.abort.signal.aborted) return onAbort();
    cur.abort.signal.addEventListener("abort", onAbort, { once: true });
  });
}

async function init(m: InitMsg): Promise<void> {
  // Journal (issue 7): this worker opens the shared content store itself.
  sessionName = m.session;
  nextOut = m.firstOut ?? 1;
  // A confined session (issue 16): nothing it starts may inspect it or speak in its name.
  if (m.confined && !forbidInspection()) {
    console.error("cannot make the confined session non-dumpable: refusing to run");
    Deno.exit(126);
  }
  if (m.journal) {
    // Confined, it reaches neither store itself: the kernel writes for it (journal_ports.ts).
    const proxied = m.journal.proxied;
    proxiedCas = proxied ? new ProxiedCas(post, proxied.spillDir) : null;
    journal = await SessionJournal.open(m.journal, post, proxiedCas ?? undefined);
    const i = m.journal.intake;
    execLog = new ExecLog(
      proxied ? new ProxiedIntake(post) : new IntakeWriter(i.dir, i.token, i.worker),
    );
    transcriptSeq = m.transcriptSeq ?? 0;
    // An exec that did something a crash must not hide has its running row logged first.
    journal.onEffect = () => execLog?.begun();
  }
  if (m.leash) leash = new SessionLeash(m.leash);
  if (leash && m.confined) leash.sandboxed = true;
  pins = m.pins ? new SpawnPins(m.pins.grants, m.pins.writable) : null;
  slots = CancelSlots.open(m.slots);
  ownCgroup = m.cgroup ?? null;
  lost = m.lost ? new LostBindings(m.lost.reason, m.lost.names) : null;
  idleFlag = slots.flag(0);
  ev = new Evaluator({
    // Kernel sessions load the adapter catalog like every host (upstream loaded none).
    adapters: true,
    cancel: idleFlag,
    cwd: m.cwd,
    env: m.env,
    // `config.get/all` shows the resolved shoal.toml, as in the CLI (issue 14).
    config: configSnapshotFor(m.cwd, m.env),
    stateDir: m.stateDir ?? null,
    ports: {
      sink: (v, from) => {
        const reader = { cwd: ev.cwd(), tty: execTty };
        const body = statementText(v, reader);
        const label = from && body !== ""
          ? statementLabel({ stmt: from, src: execSrc }, reader)
          : "";
        if (label !== "") execLabelled = true;
        const text = label + body;
        sinkText = appendBounded(sinkText, text);
      },
      stderr: diagnose,
      clock: {
        nowNs: () => BigInt(Date.now()) * 1_000_000n,
        zone: () => Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC",
        sleep: cancellableSleep,
      },
      process: {
        // Children also stop when the kernel posts a cancel (not only when the evaluator's
        // 50 ms flag poll notices).
        // …and a confined session's spawn pins (issue 16).
        capture: (opts: CaptureOptions) =>
          pins?.active ? pinned(pins, opts).then(capture) : capture(opts),
      },
      journal: journal ?? undefined,
    },
  });
  installHooks({ gateProgram });
  // A busy exec still lets the kernel hear that it runs (`postSoon`), and — one that computes
  // for long without waiting on anything (the out-of-memory reproduction) — logs its running
  // row, so a crash leaves it `unfinished` in the journal rather than absent.
  ev.onBusy = () => {
    if (deferred !== "" && performance.now() - deferredAt >= DEFER_MS) flushDeferred();
    execLog?.begun();
  };
  // Language `channel("user.x").emit(v)` → the kernel bus, as a bounded tagged wire payload.
  ev.onUserEmit = (channel, payload) => {
    const wire = elide(payload, `shoal://events/${channel}`, resolveBudget(null), outcomeOut);
    post({ t: "emit", channel, payload: wire });
  };
  ptys = new SessionPtys(
    ev,
    (notice) => post({ t: "pty", notice }),
    (program, env, cwd) =>
      leash === null ? Promise.resolve(null) : leash.ptySpawn(program, () => {
        const path = program.includes("/") ? program : which(program, env.PATH, cwd);
        return path === null ? Promise.resolve("") : hashFile(path);
      }),
  );
  lastCwd = ev.cwd();
  lastFacts = facts();
  factsAt = ev.factsVersion();
  policyStamp = m.policyStamp ?? "";
  if (m.lane) {
    policyFile = m.lane.policyFile;
    lanePrincipal = m.lane.principal;
    lane = new SessionLane(m.lane.socket, m.lane.slots, laneHooks, m.lane.instance);
    try {
      lane.listen();
    } catch (e) {
      // Without its lane the session still serves everything through the kernel.
      console.error(`exec lane unavailable: ${(e as Error)?.message ?? e}`);
      lane = null;
    }
  }
  post({ t: "ready", facts: lastFacts });
}

/**
 * The process port: children also stop when the kernel posts a cancel (not only when the
 * evaluator's 50 ms flag poll notices); a policy host's spawn gate runs first (issue 15).
 */
async function capture(opts: CaptureOptions) {
  const sig = current?.abort.signal;
  const signal = sig && opts.signal ? AbortSignal.any([sig, opts.signal]) : sig ?? opts.signal;
  const argv0 = opts.argv[0];
  const name = typeof argv0 === "string" ? argv0 : lossy.decode(argv0);
  if (leash !== null) {
    const why = await leash.spawn(name, () => {
      const path = which(name, opts.env?.PATH, opts.cwd);
      return path === null ? Promise.resolve("") : hashFile(path);
    });
    if (why !== null) throw fail("spawn_denied", `leash: ${why}`);
  }
  journal?.effect({ kind: "proc_spawn", bin_hash: "", argv0: name });
  // Report the child's process group to the kernel (task.suspend/resume, and killing it should
  // this process die) once it has run for a moment: most commands end sooner, and two messages
  // per spawn cost the kernel a wake-up each.
  const task = current?.task ?? 0;
  let pgid = 0;
  let reported = false;
  let reportTimer: ReturnType<typeof setTimeout> | undefined;
  const onSpawn = (pid: number) => {
    pgid = pid;
    liveGroups.add(pid);
    commandsRan = true;
    opts.onSpawn?.(pid);
    if (!task) return;
    reportTimer = setTimeout(() => {
      reported = true;
      post({ t: "child", task, pgid, live: true });
    }, REPORT_CHILD_AFTER_MS);
  };
  // Journal (issue 7): stdout beyond the capture cap spills into the content store.
  const spill = journal ? journal.spillOptions(opts) : {};
  // Nothing a command leaves running in its group outlives it (issue 16); strays that left
  // the group (setsid) go when the exec ends (`sweepStrays`).
  return await spawnCapture({ reapOnExit: true, ...opts, signal, onSpawn, ...spill }).then(
    (r) => {
      if (r.leftRunning) {
        diagnose(`shoal: stopped what ${name} left running in the background — ${KEEP_RUNNING}\n`);
      }
      return journal ? journal.ingestSpill(r) : r;
    },
  ).finally(() => {
    liveGroups.delete(pgid);
    clearTimeout(reportTimer);
    if (reported) post({ t: "child", task, pgid, live: false });
  });
}

/** A confined session's spawn gate (issue 16): the pinned program, or a refusal. */
async function pinned(p: SpawnPins, opts: CaptureOptions): Promise<CaptureOptions> {
  const argv0 = opts.argv[0];
  const name = typeof argv0 === "string" ? argv0 : lossy.decode(argv0);
  const v = await p.check(name, opts.env?.PATH, opts.cwd);
  if (!v.ok) throw fail("spawn_denied", `sandbox: ${v.reason}`);
  return { ...opts, argv: [v.path, ...opts.argv.slice(1)] };
}

/**
 * A program a nested evaluator reads from a file (`.shl`, `use`, `source`) is checked as it is
 * now, against what the running exec was allowed or approved for (D-12).
 */
function gateProgram(child: EvalCore, program: Program, what: string, span: Span | null): void {
  if (leash === null) return;
  const why = leash.nested(program, evaluatorHost(child), what);
  if (why !== null) {
    throw fail("permission", `leash: ${why}`, "plan the exec again (exec mode plan)", span);
  }
}

/** Hex SHA-256 of the sorted `NAME=value` lines of the session environment (D-9). */
function envHash(): string {
  const env = ev.env();
  const names = [...env.keys()].sort();
  const h = createHash("sha256");
  for (const n of names) h.update(`${n}=${env.get(n)}\n`);
  return h.digest("hex");
}

let lastEnv = new Map<string, string>();
let lastFacts: SessionFacts | null = null;
/** `ev.factsVersion()` when `lastFacts` was taken. */
let factsAt = -1;

function envChanged(): boolean {
  const env = ev.env();
  if (env.size !== lastEnv.size) return true;
  for (const [k, v] of env) if (lastEnv.get(k) !== v) return true;
  return false;
}

/** Current facts; the env hash is recomputed only when the environment changed. */
function facts(): SessionFacts {
  const names: Record<string, string> = {};
  for (const n of ev.root.names()) {
    const v = ev.root.lookup(n)?.v;
    names[n] = v === undefined ? "null" : typeName(v);
  }
  let hash = lastFacts?.env_hash ?? "";
  if (lastFacts === null || envChanged()) {
    hash = envHash();
    lastEnv = new Map(ev.env());
  }
  return { cwd: ev.cwd(), env_hash: hash, names };
}

/** Facts to report after an exec: undefined when nothing changed (the common case). */
function changedFacts(): SessionFacts | undefined {
  // O(1) unless a binding, assignment or the environment changed (then O(bindings)).
  const at = ev.factsVersion();
  if (lastFacts !== null && at === factsAt && ev.cwd() === lastFacts.cwd) return undefined;
  factsAt = at;
  const f = facts();
  const p = lastFacts;
  lastFacts = f;
  if (p === null || p.cwd !== f.cwd || p.env_hash !== f.env_hash) return f;
  const a = Object.keys(p.names);
  const b = Object.keys(f.names);
  if (a.length !== b.length) return f;
  for (const k of b) if (p.names[k] !== f.names[k]) return f;
  return undefined;
}

function summarize(v: Value): TranscriptSummary {
  const type = typeName(v);
  if (v instanceof OutcomeV) return { type, ok: v.ok, cmd: v.cmd };
  const n = elisionCount(v);
  return type === "list" || type === "table" || type === "record" || type === "str" ||
      type === "bytes"
    ? { type, n }
    : { type };
}

function errorData(err: ErrorV, ref: string, uri: string): Record<string, unknown> {
  return {
    code: err.code,
    span: err.span ? { start: err.span[0], end: err.span[1] } : null,
    hint: lost?.hintFor(err) ?? err.hint,
    status: err.status,
    stderr: err.stderr ?? (diagText === "" ? null : diagText),
    ref,
    uri,
  };
}

/** True from an exec's start until its done is made (lane execs run only when false). */
let inExec = false;
/** A kernel exec that arrived while a lane exec ran: it runs next (the kernel sends one). */
let pendingKernel: ExecMsg | null = null;
/** The exec lane (`session_lane.ts`; null: none). */
let lane: SessionLane | null = null;
/** The policy file and its signature as of the policy this process has (lane execs check it). */
let policyFile: string | null = null;
/** Who the lane's execs run for (the session's principal: their journal rows). */
let lanePrincipal = "";
let policyStamp = "";

/** Run a kernel exec and post its done, then whatever waited behind it. */
async function runExec(m: ExecMsg): Promise<void> {
  // What a lane exec held back is said first: this exec may hold the event loop for good.
  flushDeferred();
  if (m.lane) lane?.seen(m.lane.ticket, m.lane.seq);
  if (inExec) {
    pendingKernel = m;
    return;
  }
  post(await execute(m));
  runPending();
}

function runPending(): void {
  const next = pendingKernel;
  pendingKernel = null;
  if (next !== null) void runExec(next).catch((e) => internalDone(next, e));
}

/** The done of an exec that failed outside the evaluator's own guard (its task still ends). */
function internalError(task: number, e: unknown): DoneMsg {
  current = null;
  inExec = false;
  return {
    t: "done",
    task,
    ok: false,
    error: { code: RPC.INTERNAL_ERROR, message: `internal error: ${(e as Error)?.message ?? e}` },
    cancelled: false,
  };
}

/** Never lose a task: a kernel exec that failed that way is still answered. */
function internalDone(m: ExecMsg, e: unknown): void {
  post(internalError(m.task, e));
  runPending();
}

/** The lane's view of this process. */
const laneHooks: LaneHooks = {
  busy: () => inExec || pendingKernel !== null,
  policyFresh: () => policyFile === null || fileStamp(policyFile) === policyStamp,
  post,
  postSoon,
  flush: flushDeferred,
  async run(req, task, slot, tty) {
    const m: ExecMsg = {
      t: "exec",
      task,
      src: req.src,
      position: req.position,
      elide: req.elide,
      tty,
      slot,
      principal: lanePrincipal,
    };
    let done: DoneMsg;
    try {
      done = await execute(m);
    } catch (e) {
      done = internalError(task, e);
    }
    // The note the kernel adds to a kernel exec's answer when its record is not whole.
    const note = done.journal ? journalNote(done.journal) : null;
    if (note !== null) {
      if (done.ok) done.result.journal = note;
      else done.error.data = { ...(done.error.data as object | undefined), journal: note };
    }
    queueMicrotask(runPending);
    return done;
  },
};

/** Evaluate one exec (its journal rows logged) and make its done message. */
async function execute(m: ExecMsg): Promise<DoneMsg> {
  inExec = true;
  const flag = slots.flag(m.slot);
  execTty = m.tty;
  execSrc = m.src;
  execLabelled = false;
  // Local flags (no shared mapping) are reset here; a shared slot was reset by the kernel.
  if (!slots.shared) Atomics.store(flag, 0, 0);
  current = { task: m.task, flag, abort: new AbortController() };
  ev.setCancelFlag(flag);
  sinkText = "";
  diagText = "";
  diagSeen.clear();
  let done: DoneMsg;
  journal?.startExec();
  exec = { t0: performance.now(), stmts: [], value: undefined, raised: null, derived: null };
  try {
    done = await evaluate(m, flag);
  } catch (e) {
    // Never lose a task: anything unexpected becomes an internal error reply.
    done = {
      t: "done",
      task: m.task,
      facts: changedFacts(),
      ok: false,
      error: { code: RPC.INTERNAL_ERROR, message: `internal error: ${(e as Error)?.message ?? e}` },
      cancelled: Atomics.load(flag, 0) !== 0,
    };
  }
  // Journal (issue 7): outputs (large ones into the CAS), statements, effects, undo inverses,
  // and the transcript event, logged with the exec so that one is durable iff the other is.
  if (journal) {
    let ev: IntakeEvent | undefined;
    if (done.ok) {
      ev = {
        channel: "session.transcript",
        seq: transcriptSeq++,
        ts: Date.now(),
        payload: transcriptPayload(done),
      };
      done.transcript = { seq: ev.seq, ts: ev.ts };
    }
    done.journal = await journalFinish(journal, m, done, ev);
  }
  current = null;
  if (leash) leash.authority = null;
  sweepStrays();
  ev.setCancelFlag(idleFlag);
  sinkText = "";
  diagText = "";
  diagSeen.clear();
  inExec = false;
  return done;
}

/**
 * Leash (issue 15): derive the exec's effects under the session's state and judge them — or,
 * in approved mode, compare them with the approved plan. A refusal is the exec's RPC error;
 * nothing runs. Without a journal, a principal whose policy allows everything skips the
 * derivation (nothing would read it).
 */
function leashCheck(m: ExecMsg, program: Program): RpcErrorObject | null {
  if (leash === null || (journal === null && m.approved === undefined && leash.policy?.allowAll)) {
    return null;
  }
  // Same source, cwd and bindings/environment: a filesystem-independent derivation is reused.
  const key = `${ev.factsVersion()}\u0000${ev.cwd()}\u0000${m.src}`;
  const c: Checked = leash.check(program, evaluatorHost(ev), key);
  exec.derived = c.effects;
  const data = { effects: c.effects, reversibility: c.reversibility, verdict: c.verdict };
  if (m.approved !== undefined) {
    const why = leash.approve(c, m.approved);
    if (why !== null) {
      return { code: RPC.LEASH_DENIED, message: why, data: { ...data, planned: m.approved } };
    }
    leash.authority = { kind: "approved", effects: m.approved };
    return null;
  }
  if (c.verdict === "deny") {
    return {
      code: RPC.LEASH_DENIED,
      message: `leash denied execution: the policy of ${leash.principal} does not grant these ` +
        `effects`,
      data,
    };
  }
  if (c.verdict === "approval_required") {
    return {
      code: RPC.APPROVAL_REQUIRED,
      message: 'approval required; plan first: exec {mode: "plan"}, then an approver\'s ' +
        "cap.request {plan_ref}, then plan.apply {plan_ref}",
      data,
    };
  }
  leash.authority = { kind: "policy" };
  return null;
}

async function evaluate(m: ExecMsg, flag: Int32Array): Promise<DoneMsg> {
  let program;
  try {
    program = ev.parse(m.src);
  } catch (e) {
    if (!(e instanceof ParseError)) throw e;
    jbegin(m, null);
    exec.raised = toErrorValue(fail("parse_error", e.msg, e.hint ?? null));
    return {
      t: "done",
      task: m.task,
      facts: changedFacts(),
      ok: false,
      error: parseErrorObject(e),
      cancelled: false,
    };
  }
  jbegin(m, program);
  const refused = leashCheck(m, program);
  if (refused !== null) {
    exec.raised = toErrorValue(
      fail(
        refused.code === RPC.APPROVAL_REQUIRED ? "approval_required" : "leash_denied",
        refused.message,
      ),
    );
    return {
      t: "done",
      task: m.task,
      facts: changedFacts(),
      ok: false,
      error: refused,
      cancelled: false,
    };
  }
  let value: Value;
  let raised: ErrorV | null = null;
  try {
    // Statement by statement, journaled or not: each statement's facts, and the statement a
    // non-final value came from (its output is labelled with it).
    const run = evalByStatement(ev, program, m.position, exec.stmts, toErrorValue);
    // It waits on something (a process, a timer): from here a crash leaves a running row.
    if (isPromise(run)) execLog?.begun();
    value = await run;
  } catch (e) {
    raised = toErrorValue(e);
    value = raised;
  }
  sweepStrays(); // before the result is made: what it stopped is said with it
  exec.value = value;
  exec.raised = raised;
  const n = nextOut++;
  transcript.set(n, value);
  const ref = `out:${n}`;
  const uri = `shoal://out/${n}`;
  const cancelled = Atomics.load(flag, 0) !== 0;
  if (raised) {
    return {
      t: "done",
      task: m.task,
      facts: changedFacts(),
      ok: false,
      error: { code: RPC.RAISED, message: raised.msg, data: errorData(raised, ref, uri) },
      cancelled,
    };
  }
  const budget = resolveBudget(m.elide);
  const wire = elide(value, uri, budget, outcomeOut);
  const isOutcome = value instanceof OutcomeV;
  // Once an earlier statement's output was labelled, the final value is too.
  const last = program.body.at(-1);
  const reader = { cwd: ev.cwd(), tty: m.tty };
  const finalLabel = execLabelled && last ? statementLabel({ stmt: last, src: m.src }, reader) : "";
  const shown = pagedRender(value, {
    ref,
    path: "",
    offset: 0,
    cwd: ev.cwd(),
    tty: m.tty,
    before: sinkText + finalLabel,
    // Nothing streams a kernel session's diagnostics as they come (a terminal attached with
    // `shoal attach` saw none): every reader gets them with the value.
    after: diagText,
  });
  return {
    t: "done",
    task: m.task,
    facts: changedFacts(),
    ok: true,
    n,
    result: { ref, uri, value: wire, ...shown },
    summary: summarize(value),
    outcomeFailed: isOutcome && !(value as OutcomeV).ok,
    signalled: isOutcome && (value as OutcomeV).signal !== null,
  };
}

// ---- journal (issue 7) -------------------------------------------------------------------

/** What the running exec did, for its journal record. */
let exec: {
  t0: number;
  stmts: StmtFacts[];
  value: Value | undefined;
  raised: ErrorV | null;
  /** Its derived effects (the journal row's effects column; issue 15). */
  derived: Effect[] | null;
} = {
  t0: 0,
  stmts: [],
  value: undefined,
  raised: null,
  derived: null,
};

/** Start the exec's journal log (its begin line waits for an effect or a wait: `ExecLog`). */
function jbegin(m: ExecMsg, program: unknown): void {
  execLog?.start({
    session: sessionName,
    principal: m.principal ?? "",
    source: m.src,
    cwd: ev.cwd(),
    ast: program,
    envHash: lastFacts?.env_hash || null,
    startedAt: Date.now(),
  });
}

/**
 * Log the finished exec (outcome, statements, undo inverses) to the intake before its result
 * is delivered: a client that saw a result finds its row in the journal, even after a crash.
 */
async function journalFinish(
  j: SessionJournal,
  m: ExecMsg,
  done: DoneMsg,
  ev: IntakeEvent | undefined,
): Promise<JournalDone> {
  const rec = await journalRecord(j, m, done);
  // The row's effects: what the plan derived, plus anything observed it did not name.
  if (exec.derived !== null) {
    rec.effects = canonicalEffects([...exec.derived, ...(parseEffects(rec.effects) ?? [])]);
  }
  if (execLog) return execLog.finish(rec, ev);
  return { warnings: rec.warnings.splice(0), error: "this session keeps no exec log" };
}

function journalRecord(j: SessionJournal, m: ExecMsg, done: DoneMsg) {
  return j.record(
    exec.value,
    exec.raised,
    done.ok ? done.result.value : undefined,
    done.ok ? done.result.render : "",
    exec.stmts,
    m.src,
    exec.t0,
    !done.ok && done.cancelled,
    outcomeOut,
  );
}

/** A published payload as a language value: tagged wire JSON decodes, plain JSON maps. */
function payloadValue(p: unknown): Value {
  if (
    p !== null && typeof p === "object" && !Array.isArray(p) &&
    typeof (p as { $?: unknown }).$ === "string"
  ) {
    return decodeWire(p);
  }
  return jsonToValue(p);
}

// ---- requests ----------------------------------------------------------------------------

function parseRef(ref: string): number | null {
  const m = /^(?:out:|shoal:\/\/out\/)([1-9][0-9]*)$/.exec(ref);
  return m ? Number(m[1]) : null;
}

async function valueGet(p: Record<string, unknown>): Promise<unknown> {
  const ref = p.ref as string;
  const n = parseRef(ref);
  const v0 = n === null ? undefined : transcript.get(n);
  if (v0 === undefined) throw new RpcError(RPC.UNKNOWN_REF, "unknown value ref", { ref });
  const canon = `out:${n}`;
  let uri = `shoal://out/${n}`;
  let v = v0;
  const path = typeof p.path === "string" ? p.path : "";
  if (path !== "") {
    try {
      v = selectPath(v, parsePath(path), outcomeOut);
    } catch (e) {
      if (e instanceof SelectError) {
        throw new RpcError(RPC.BAD_PATH_OR_SLICE, e.message, { ref: canon, path });
      }
      throw e;
    }
    uri = uriWithPath(uri, path.startsWith(".") ? path.slice(1) : path);
  }
  if (Array.isArray(p.slice)) {
    const [a, b] = p.slice as [number, number];
    try {
      // Lazy content-store bytes slice from the CAS, not their in-memory prefix (issue 7).
      v = journal && SessionJournal.isLazy(v)
        ? await journal.lazySlice(v, a, b, canon)
        : sliceValue(v, a, b);
    } catch (e) {
      if (e instanceof SelectError) {
        throw new RpcError(RPC.BAD_PATH_OR_SLICE, e.message, { ref: canon });
      }
      throw e;
    }
  }
  const format = (p.format as string | undefined) ?? "json";
  if (format === "render") return renderPage(v, v0, canon, path, p, !!p.tty);
  if (format === "raw") {
    if (journal && SessionJournal.isLazy(v) && v.size <= HARD_CAP) {
      v = await journal.lazySlice(v, 0, v.size, canon);
    }
    return rawOf(v, canon);
  }
  const budget = resolveBudget(p.elide as Record<string, number> | null);
  return { ref: canon, value: elide(v, uri, budget, outcomeOut) };
}

/**
 * `format: "render"`: the selected value rendered for reading; an explicit slice is shown whole
 * (up to the render wall), and `more` names the next page of the original value when it goes on.
 */
function renderPage(
  v: Value,
  v0: Value,
  ref: string,
  path: string,
  p: Record<string, unknown>,
  tty: boolean,
): unknown {
  const slice = Array.isArray(p.slice) ? p.slice as [number, number] : null;
  const place = { ref, path: joinPath(path), offset: slice?.[0] ?? 0, cwd: ev.cwd(), tty };
  if (!slice) return { ref, ...pagedRender(v, place) };
  // Does the value go on after the slice?
  let whole: Value = v0;
  let goesOn = false;
  try {
    if (path !== "") whole = selectPath(v0, parsePath(path), outcomeOut);
    goesOn = elisionCount(sliceValue(whole, slice[1], slice[1] + 1)) > 0;
  } catch { /* not sliceable after all: no next page */ }
  // A text page that stops inside a line ends at the line before it, so pages join by lines.
  let end = slice[1];
  if (goesOn && typeof v === "string" && !v.endsWith("\n")) {
    const nl = v.lastIndexOf("\n");
    if (nl > 0) {
      v = v.slice(0, nl);
      end = slice[0] + [...v].length + 1;
    }
  } else if (goesOn && v instanceof BytesV && v.ref === null && v.data.at(-1) !== 10) {
    const nl = v.data.lastIndexOf(10);
    if (nl > 0) {
      v = new BytesV(v.data.subarray(0, nl));
      end = slice[0] + nl + 1;
    }
  }
  // A page is a piece of the text: whether the piece ends in a newline says nothing.
  const page = pagedRender(v, { ...place, maxRows: SLICE_ROWS, piece: true });
  if (page.more || !goesOn) return { ref, ...page };
  const text = typeof whole === "string" || whole instanceof BytesV;
  const unit = text ? "lines" : whole instanceof TableV ? "rows" : "items";
  return { ref, ...page, more: pageAt(ref, place.path, end, unit, null) };
}

/** `format: "raw"`, bounded by the hard cap (D-7): bigger payloads must be sliced. */
function rawOf(v: Value, ref: string): unknown {
  const tooBig = (len: number) =>
    new RpcError(
      RPC.BAD_PATH_OR_SLICE,
      `raw payload of ${len} bytes exceeds the ${HARD_CAP}-byte hard cap; fetch it in slices`,
      { ref, len, hard_cap: HARD_CAP },
    );
  if (typeof v === "string") {
    const len = utf8Length(v);
    if (len > HARD_CAP) throw tooBig(len);
    return { ref, raw: v };
  }
  if (v instanceof BytesV) {
    if (v.size > HARD_CAP) throw tooBig(v.size);
    if (v.ref !== null && v.size > v.data.length) {
      throw new RpcError(RPC.UNKNOWN_REF, "content-addressed bytes are not readable here", {
        ref,
        code: "not_found",
      });
    }
    if (v.data.length > HARD_CAP) throw tooBig(v.data.length);
    return { ref, raw_base64: v.data.toBase64() };
  }
  throw new RpcError(
    RPC.BAD_PATH_OR_SLICE,
    `format "raw" applies to str/bytes, not ${typeName(v)}`,
    { ref },
  );
}

/** `session.env` (protocol §4.1): names always; values only when `env_read` of all is allowed. */
function envView(): unknown {
  const env = ev.env();
  const names = [...env.keys()].sort();
  const policy = leash?.policy;
  const granted = leash === null ||
    (policy != null && policy.effectVerdict({ kind: "env_read", names }) === "allow");
  if (!granted) return { granted: false, names };
  const out: Record<string, string> = {};
  for (const n of names) out[n] = env.get(n)!;
  return { granted: true, names, env: out };
}

/**
 * `explain` and plan mode (issue 15): the AST, effects, reversibility and this principal's
 * verdict of source (parsed in the session's binding context) or of a client's AST.
 */
function deriveView(p: Record<string, unknown>): unknown {
  let program: Program;
  if (typeof p.src === "string") {
    try {
      program = ev.parse(p.src);
    } catch (e) {
      if (!(e instanceof ParseError)) throw e;
      throw parseRpcError(e);
    }
  } else {
    const a = p.ast as Program;
    if (a === null || typeof a !== "object" || a.kind !== "Program" || !Array.isArray(a.body)) {
      throw new RpcError(RPC.INVALID_PARAMS, "invalid ast: expected a Program node {kind, body}");
    }
    program = a;
  }
  const l = leash ?? new SessionLeash({ principal: "", policy: null, home: "", generation: 0 });
  let c: Checked;
  try {
    c = l.check(program, evaluatorHost(ev));
  } catch (e) {
    if (typeof p.src === "string") throw e;
    throw new RpcError(RPC.INVALID_PARAMS, `invalid ast: ${(e as Error)?.message ?? e}`);
  }
  return {
    ast_version: 2,
    ast: program,
    effects: c.effects,
    reversibility: c.reversibility,
    verdict: leash === null ? "allow" : c.verdict,
  };
}

async function answer(m: RequestMsg): Promise<void> {
  try {
    let result: unknown;
    if (m.kind === "value.get") result = await valueGet(m.params);
    else if (m.kind === "pty") result = await ptys.handle(m.params as PtyOp);
    else if (m.kind === "env") result = envView();
    else if (m.kind === "reef") result = reefView(ev);
    else if (m.kind === "derive") result = deriveView(m.params);
    // Completion with the session's own bindings, cwd and environment (paths, PATH).
    else if (m.kind === "complete") {
      result = completeAt(String(m.params.src), m.params.cursor as number | undefined, {
        names: facts().names,
        cwd: ev.cwd(),
        env: ev.env(),
      });
    } else result = { display: ev.cwd() };
    post({ t: "reply", rid: m.rid, ok: true, result });
  } catch (e) {
    const error: RpcErrorObject = e instanceof RpcError
      ? e.toJSON()
      : { code: RPC.INTERNAL_ERROR, message: `internal error: ${(e as Error)?.message ?? e}` };
    post({ t: "reply", rid: m.rid, ok: false, error });
  }
}

// Report cwd changes made mid-exec (`cd` then a long command) so `session.cwd` stays live.
setInterval(() => {
  if (ev === undefined) return;
  const c = ev.cwd();
  if (c !== lastCwd) {
    lastCwd = c;
    post({ t: "cwd", cwd: c });
  }
}, 200);

// A stray rejection in language code (an unawaited task, a host hook) must not kill the
// session: report it with the running exec's diagnostics instead.
globalThis.addEventListener("unhandledrejection", (e) => {
  e.preventDefault();
  const r = e.reason;
  diagText = appendBounded(
    diagText,
    `unhandled rejection: ${r instanceof Error ? r.message : String(r)}\n`,
  );
});

/** How long a running exec may take to unwind once the kernel has gone. */
const ORPHAN_GRACE_MS = 3000;

/**
 * Serve the kernel on stdin/stdout until stdin closes (the kernel went away): then cancel the
 * running exec — its children get their kill ladder — and exit.
 */
export async function serveSession(): Promise<never> {
  // Only `post` may write to stdout: stray console output would corrupt the message stream.
  console.log = console.info = console.debug = console.error;
  const lines = new LineSplitter((line) => dispatch(JSON.parse(line) as ToWorker));
  // node:net over fd 0 reads the pipe in the event loop; Deno.stdin.read takes a blocking-pool
  // thread hop per read (measured: ~10–20 µs more per exec round trip).
  const { default: net } = await import("node:net");
  const sock = new net.Socket({ fd: 0, readable: true, writable: false });
  await new Promise<void>((resolve) => {
    sock.on("data", (chunk: Uint8Array) => lines.push(chunk));
    sock.on("end", resolve);
    sock.on("error", resolve);
    sock.on("close", resolve);
  });
  const cur = current;
  if (cur !== null) {
    Atomics.store(cur.flag, 0, 1);
    cur.abort.abort();
    const deadline = Date.now() + ORPHAN_GRACE_MS;
    while (current !== null && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  Deno.exit(0);
}

function dispatch(m: ToWorker): void {
  switch (m.t) {
    case "init":
      return void init(m);
    case "jreply":
      return journal?.reply(m);
    case "storer":
      return proxiedCas?.reply(m);
    case "exec":
      return void runExec(m).catch((e) => internalDone(m, e));
    case "cancel":
      if (pendingKernel?.task === m.task) {
        // It waited behind a lane exec and never started.
        pendingKernel = null;
        return post({
          t: "done",
          task: m.task,
          ok: false,
          error: {
            code: RPC.RAISED,
            message: "cancelled before it started",
            data: { code: "cancelled", ref: null },
          },
          cancelled: true,
        });
      }
      // Also set the flag here: without a shared mapping (no FFI) this is the only way it is set.
      if (current?.task === m.task) {
        Atomics.store(current.flag, 0, 1);
        current.abort.abort();
      }
      return;
    case "ping":
      return post({
        t: "pong",
        n: m.n,
        running: current?.task ?? null,
        pending: pendingKernel?.task ?? null,
      });
    case "req":
      return void answer(m);
    case "policy":
      if (leash) leash.update(m.leash);
      else leash = new SessionLeash(m.leash);
      policyStamp = m.policyStamp ?? "";
      return;
    case "lane.grant":
      return lane?.grant(m.ticket, m.tty);
    case "lane.revoke":
      return lane?.revoke(m.ticket);
    case "lane.slots":
      return lane?.returnSlots(m.slots);
    case "lane.sync": // what the lane held back, then the answer: the kernel is up to date
      return post({ t: "lane.synced", n: m.n });
    case "lane.claim":
      if (lane) lane.claim(m.ticket, m.seq);
      else post({ t: "lane.unclaimed", ticket: m.ticket, seq: m.seq });
      return;
    case "inject":
      // `events.publish` → the language bus; injected events never come back (no echo).
      return ev.injectUserEvent(m.channel, payloadValue(m.payload));
  }
}
