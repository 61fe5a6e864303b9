/**
 * The exec lane, session side (issue 16): an unconfined session process serves its attached
 * clients' plain execs on a socket of its own, so such an exec makes two hops (client →
 * session → client) instead of four through the kernel. The kernel stays the authority: it
 * hands each attachment a ticket (`session.attach` → `lane`), tells the session which tickets
 * are good, owns every task (the session announces each lane exec with `lane.begin` before it
 * runs and reports its `done` after answering), lends the cancel slots lane execs use, and
 * takes over whatever the lane cannot do: the session answers `reroute` (the client sends the
 * same exec through the kernel) when it is busy, when the client's earlier execs have not all
 * reached it, when the policy file changed since the kernel last read it, or when the request
 * is anything but a well-formed plain exec.
 *
 * Ordering: every exec of an attachment carries its `seq` (1, 2, …) on whichever route it
 * takes; the session runs a lane exec only when it has seen every earlier one, so an exec can
 * never overtake an earlier one of the same client. A client that gave up waiting on the lane
 * (`timeout_ms`, a dropped connection) asks the kernel to claim the exec (`lane.claim`); the
 * session either already began it (the kernel has its task) or marks it claimed and never
 * runs it from the lane (the kernel runs it instead) — one place decides, so it runs once.
 *
 * @module
 */

import { FrameReader, FrameWriter } from "../client/framing.ts";
import { RPC } from "../client/errors.ts";
import { LANE_REROUTE } from "../client/lane.ts";
import type { ElideSpec } from "../value/elide.ts";
import type { DoneMsg, FromWorker } from "./session_messages.ts";

/** Claimed seqs a ticket remembers (each is dropped once the session has seen past it). */
const MAX_CLAIMED = 1024;

/** One plain exec as the lane takes it. */
export interface LaneExec {
  seq: number;
  src: string;
  position: "stmt" | "value";
  elide: ElideSpec | null;
}

/** What the lane needs of the session process. */
export interface LaneHooks {
  /** True while an exec runs or waits in this process. */
  busy(): boolean;
  /** False when the policy file changed since the kernel sent the policy this session has. */
  policyFresh(): boolean;
  /** Run one exec as task `task` (negative: a lane id) with cancel slot `slot`. */
  run(req: LaneExec, task: number, slot: number, tty: boolean): Promise<DoneMsg>;
  /** Send a message to the kernel. */
  post(m: FromWorker): void;
  /** Send a message the kernel need not hear at once (it goes with the next one). */
  postSoon(m: FromWorker): void;
  /** Write now what `postSoon` held back. */
  flush(): void;
}

interface Grant {
  tty: boolean;
  /** The highest exec seq of this attachment the session has seen, on either route. */
  lastSeq: number;
  /** Seqs the kernel claimed before the session began them: never run from the lane. */
  claimed: Set<number>;
  conns: Set<Deno.Conn>;
}

/** Parse a lane exec's params; null for anything but a well-formed plain exec. */
function laneExec(p: unknown): LaneExec | null {
  if (p === null || typeof p !== "object" || Array.isArray(p)) return null;
  const o = p as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    if (!["seq", "src", "position", "elide"].includes(k)) return null;
  }
  const { seq, src, position, elide } = o;
  if (typeof seq !== "number" || !Number.isSafeInteger(seq) || seq < 1) return null;
  if (typeof src !== "string") return null;
  if (position !== undefined && position !== "stmt" && position !== "value") return null;
  // An elision spec is checked by the kernel (its error is the one to give): lane only the plain.
  if (elide !== undefined && elide !== null) return null;
  return { seq, src, position: position ?? "stmt", elide: null };
}

/** The lane server of one session process. */
export class SessionLane {
  readonly #grants = new Map<string, Grant>();
  readonly #slots: number[];
  #nextId = 1;
  #listener: Deno.Listener | null = null;

  constructor(
    readonly path: string,
    slots: number[],
    readonly hooks: LaneHooks,
    readonly instance: string,
  ) {
    this.#slots = [...slots];
    this.#low = Math.floor(slots.length / 2);
  }

  /** Below this many free slots the held-back reports go now (the kernel lends them back). */
  readonly #low: number;

  /** Listen on the lane socket (a stale one of a dead predecessor is replaced). */
  listen(): void {
    try {
      Deno.removeSync(this.path);
    } catch { /* none */ }
    this.#listener = Deno.listen({ transport: "unix", path: this.path });
    void this.#accept(this.#listener);
  }

  async #accept(l: Deno.Listener): Promise<void> {
    try {
      for await (const conn of l) void this.#serve(conn);
    } catch { /* closed */ }
  }

  /** The kernel's word on tickets, slots and claims. */
  grant(ticket: string, tty: boolean): void {
    if (!this.#grants.has(ticket)) {
      this.#grants.set(ticket, { tty, lastSeq: 0, claimed: new Set(), conns: new Set() });
    }
  }

  revoke(ticket: string): void {
    const g = this.#grants.get(ticket);
    this.#grants.delete(ticket);
    for (const c of g?.conns ?? []) {
      try {
        c.close();
      } catch { /* closed */ }
    }
  }

  /** Cancel slots the kernel zeroed and lends back. */
  returnSlots(slots: number[]): void {
    for (const slot of slots) if (!this.#slots.includes(slot)) this.#slots.push(slot);
  }

  /** An exec of `ticket` reached the session through the kernel. */
  seen(ticket: string, seq: number): void {
    const g = this.#grants.get(ticket);
    if (!g) return;
    if (seq > g.lastSeq) g.lastSeq = seq;
    for (const s of g.claimed) if (s <= g.lastSeq) g.claimed.delete(s);
  }

  /**
   * The kernel claims exec `seq` of `ticket`: unless it began here already (the kernel has its
   * task then), it never will, and the kernel is told to run it itself.
   */
  claim(ticket: string, seq: number): void {
    const g = this.#grants.get(ticket);
    if (g && seq <= g.lastSeq) return this.hooks.flush(); // begun here (or routed): say so now
    if (g && g.claimed.size < MAX_CLAIMED) g.claimed.add(seq);
    this.hooks.post({ t: "lane.unclaimed", ticket, seq });
  }

  async #serve(conn: Deno.Conn): Promise<void> {
    const reader = new FrameReader(conn);
    const writer = new FrameWriter(conn);
    const answer = (id: unknown, body: { result: unknown } | { error: unknown }) =>
      writer.send({ jsonrpc: "2.0", id, ...body }).catch(() => {});
    let grant: Grant | null = null;
    let ticket = "";
    try {
      for (let f = await reader.next(); f; f = await reader.next()) {
        if (f.kind !== "line") break;
        let m: { id?: unknown; method?: unknown; params?: Record<string, unknown> };
        try {
          m = JSON.parse(f.text);
        } catch {
          break;
        }
        if (grant === null) {
          // The first frame names the ticket the kernel gave at attach; nothing else is heard.
          ticket = String(m.params?.ticket ?? "");
          grant = m.method === "hello" ? this.#grants.get(ticket) ?? null : null;
          if (grant === null) {
            await answer(m.id, {
              error: { code: RPC.AUTH_FAILED, message: "unknown or revoked lane ticket" },
            });
            break;
          }
          grant.conns.add(conn);
          // The process it speaks to: a claim after the lane dropped says which one it was.
          await answer(m.id, { result: { instance: this.instance } });
          continue;
        }
        if (!this.#grants.has(ticket)) break; // revoked meanwhile
        void this.#exec(grant, ticket, m, answer);
      }
    } catch { /* the peer went away */ }
    grant?.conns.delete(conn);
    try {
      conn.close();
    } catch { /* closed */ }
  }

  async #exec(
    g: Grant,
    ticket: string,
    m: { id?: unknown; method?: unknown; params?: Record<string, unknown> },
    answer: (id: unknown, body: { result: unknown } | { error: unknown }) => Promise<void>,
  ): Promise<void> {
    const req = m.method === "exec" ? laneExec(m.params) : null;
    if (
      req === null || this.hooks.busy() || this.#slots.length === 0 ||
      g.lastSeq !== req.seq - 1 || g.claimed.has(req.seq) || !this.hooks.policyFresh()
    ) {
      return await answer(m.id, { error: { code: LANE_REROUTE, message: "reroute" } });
    }
    g.lastSeq = req.seq;
    const slot = this.#slots.pop()!;
    if (this.#slots.length < this.#low) this.hooks.flush();
    const task = -(this.#nextId++);
    // Said with the next message, within a few ms, or from the evaluator's busy hook
    // (`postSoon`): back-to-back short execs reach the kernel a batch per wake-up.
    this.hooks.postSoon({
      t: "lane.begin",
      ticket,
      seq: req.seq,
      task,
      slot,
      src: req.src,
      position: req.position,
    });
    const done = await this.hooks.run(req, task, slot, g.tty);
    // The client hears first; the kernel's bookkeeping (task, events, journal) follows, with
    // the next message.
    await answer(m.id, done.ok ? { result: done.result } : { error: done.error });
    this.hooks.postSoon(done);
  }

  /** Stop listening (the process is ending). */
  close(): void {
    try {
      this.#listener?.close();
    } catch { /* closed */ }
  }
}
