/**
 * A typed kernel client: one connection, one reader loop that demultiplexes responses (by id)
 * from event notifications (by channel), whole-frame writes, subscriptions that remember their
 * cursors, and reconnect-and-resume (re-attach, re-subscribe from the last seen seq).
 */

import { FrameReader, FrameWriter } from "./framing.ts";
import { RPC, RpcError } from "./errors.ts";
import { socketPath } from "./discovery.ts";
import { trustedSocket } from "./socket_trust.ts";
import type { AttachParams, AttachResult, KernelEvent } from "./protocol.ts";
import { ExecLane } from "./lane.ts";

/** Options for connecting. */
export interface ClientOptions {
  /** Explicit socket path (else discovery with `session`). */
  socket?: string;
  /** Session name used for socket discovery. */
  socketSession?: string;
  /** Attach right after connecting (and after every reconnect). */
  attach?: AttachParams;
  /** Reconnect automatically when the connection drops (default false). */
  reconnect?: boolean;
  /** Called for connection-level problems (never throws into the caller). */
  onError?: (e: unknown) => void;
  /** False: never use the session's exec lane (every exec through the kernel). */
  lane?: boolean;
}

type Pending = { resolve: (v: unknown) => void; reject: (e: unknown) => void };

/** Delivered to a subscription handler. */
export type EventHandler = (e: KernelEvent) => void;

interface Sub {
  channel: string;
  /** Last seq processed; null = none yet (first event is seq 0). */
  cursor: number | null;
  handler: EventHandler;
  /** Live events held back while a gap is being filled from `events.read`. */
  held: KernelEvent[] | null;
}

/** True for the kernel's `{dropped, latest_seq}` summary at a gap (protocol §13). */
export function isGapSummary(p: unknown): p is { dropped: number; latest_seq: number } {
  if (p === null || typeof p !== "object" || Array.isArray(p)) return false;
  const o = p as Record<string, unknown>;
  return typeof o.dropped === "number" && typeof o.latest_seq === "number" &&
    Object.keys(o).length === 2;
}

/** Error raised for calls when the connection is gone. */
export class ConnectionClosed extends Error {
  constructor() {
    super("kernel connection closed");
    this.name = "ConnectionClosed";
  }
}

/** A kernel connection. */
export class KernelClient {
  #conn: Deno.UnixConn | null = null;
  #writer: FrameWriter | null = null;
  #pending = new Map<number, Pending>();
  #nextId = 1;
  #subs = new Map<string, Sub>();
  #closed = false;
  #reconnecting: Promise<void> | null = null;
  /** Gaps (`{dropped, latest_seq}` summaries) filled from `events.read` so far. */
  gapsFilled = 0;
  /** The last attach result (null before attach). */
  attached: AttachResult | null = null;
  /** The attachment's exec lane: where and its ticket (null: none). */
  #laneInfo: { socket: string; ticket: string } | null = null;
  #lane: ExecLane | null = null;
  #laneOpening: Promise<void> | null = null;
  /** No new try to open the lane before this time (ms) after one failed. */
  #laneRetryAt = 0;
  /** The seq of the attachment's last exec (both routes carry it: the lane orders by it). */
  #execSeq = 0;
  /** Execs that went by the lane (tests and benchmarks tell the routes apart by it). */
  laneExecs = 0;

  private constructor(readonly path: string, readonly opts: ClientOptions) {}

  /** Connect (and attach when `opts.attach` is given). */
  static async connect(opts: ClientOptions = {}): Promise<KernelClient> {
    const path = socketPath({ explicit: opts.socket, session: opts.socketSession });
    const c = new KernelClient(path, opts);
    try {
      await c.#open();
    } catch (e) {
      c.close(); // a refused attach leaves no connection behind
      throw e;
    }
    return c;
  }

  async #open(): Promise<void> {
    // Never send an attach (or a source) to a socket someone else could have put there.
    const conn = await Deno.connect({ transport: "unix", path: trustedSocket(this.path) });
    this.#conn = conn;
    this.#writer = new FrameWriter(conn);
    this.#readLoop(conn);
    if (this.opts.attach) this.attached = await this.attach(this.opts.attach);
    for (const s of this.#subs.values()) {
      await this.call("events.subscribe", {
        channel: s.channel,
        ...(s.cursor === null ? {} : { since: s.cursor }),
      });
    }
  }

  async #readLoop(conn: Deno.UnixConn): Promise<void> {
    const reader = new FrameReader(conn);
    try {
      for (let f = await reader.next(); f; f = await reader.next()) {
        if (f.kind !== "line") continue;
        let msg: Record<string, unknown>;
        try {
          msg = JSON.parse(f.text);
        } catch (e) {
          this.opts.onError?.(e);
          continue;
        }
        if (msg.method === "event" && !("id" in msg)) {
          this.#dispatchEvent(msg.params as KernelEvent);
        } else this.#settle(msg);
      }
    } catch (e) {
      if (!this.#closed) this.opts.onError?.(e);
    }
    this.#onDisconnect(conn);
  }

  #settle(msg: Record<string, unknown>): void {
    const id = msg.id;
    if (typeof id !== "number") return; // responses to frames we could not parse (id null)
    const p = this.#pending.get(id);
    if (!p) return;
    this.#pending.delete(id);
    if (msg.error) {
      const e = msg.error as { code: number; message: string; data?: unknown };
      p.reject(new RpcError(e.code, e.message, e.data));
    } else p.resolve(msg.result);
  }

  #dispatchEvent(e: KernelEvent): void {
    const s = this.#subs.get(e.channel);
    if (!s) return;
    if (s.held) return void s.held.push(e); // a gap fill is in progress: keep order
    if (isGapSummary(e.payload) && s.cursor !== null) {
      // The seed's consumer algorithm: fill the gap from the channel's ring, then go on.
      s.held = [];
      this.#fillGap(s, e);
      return;
    }
    this.#deliver(s, e);
  }

  /** Deliver once per seq (replay/live overlap is dropped) and advance the cursor. */
  #deliver(s: Sub, e: KernelEvent): void {
    if (s.cursor !== null && e.seq <= s.cursor) return;
    s.cursor = e.seq;
    try {
      s.handler(e);
    } catch (err) {
      this.opts.onError?.(err);
    }
  }

  async #fillGap(s: Sub, gap: KernelEvent): Promise<void> {
    try {
      const r = await this.call<{ events: KernelEvent[] }>("events.read", {
        channel: s.channel,
        since: s.cursor,
      });
      const first = r.events[0];
      // Older events already left the ring: tell the handler what is lost for good.
      if (first === undefined || first.seq > s.cursor! + 1) {
        const lost = (first?.seq ?? gap.seq + 1) - s.cursor! - 1;
        if (lost > 0) {
          this.#deliver(s, {
            ...gap,
            seq: (first?.seq ?? gap.seq + 1) - 1,
            payload: { dropped: lost, latest_seq: (first?.seq ?? gap.seq + 1) - 1 },
          });
        }
      }
      for (const ev of r.events) this.#deliver(s, ev);
      this.gapsFilled++;
    } catch (err) {
      // Could not fill (connection gone): surface the summary itself.
      this.opts.onError?.(err);
      this.#deliver(s, gap);
    } finally {
      const held = s.held ?? [];
      s.held = null;
      for (const ev of held) this.#dispatchEvent(ev);
    }
  }

  #onDisconnect(conn: Deno.UnixConn): void {
    if (this.#conn !== conn) return;
    this.#conn = null;
    this.#writer = null;
    for (const p of this.#pending.values()) p.reject(new ConnectionClosed());
    this.#pending.clear();
    if (!this.#closed && this.opts.reconnect) this.#reconnecting ??= this.#reconnect();
  }

  async #reconnect(): Promise<void> {
    for (let delay = 50; !this.#closed; delay = Math.min(delay * 2, 2000)) {
      try {
        await this.#open();
        break;
      } catch (e) {
        this.opts.onError?.(e);
        await new Promise((r) => setTimeout(r, delay));
      }
    }
    this.#reconnecting = null;
  }

  /** Call a method; rejects with RpcError for protocol errors, ConnectionClosed when gone. */
  async call<T = unknown>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    if (method !== "exec" || this.#laneInfo === null) return await this.#rpc<T>(method, params);
    const seq = ++this.#execSeq;
    const lane = this.#usableLane();
    if (lane !== null && isPlainExec(params)) return await this.#laneExec<T>(lane, seq, params);
    return await this.#rpc<T>(method, { ...params, lane_seq: seq });
  }

  /** The open lane, or null (one is being opened when it may be). */
  #usableLane(): ExecLane | null {
    if (this.#lane?.alive) return this.#lane;
    this.#lane = null;
    const info = this.#laneInfo;
    if (info !== null && this.#laneOpening === null && Date.now() >= this.#laneRetryAt) {
      this.#laneOpening = ExecLane.open(info.socket, info.ticket).then(
        (l) => {
          if (this.#laneInfo === info && !this.#closed) this.#lane = l;
          else l.close();
        },
        () => void (this.#laneRetryAt = Date.now() + LANE_RETRY_MS),
      ).finally(() => (this.#laneOpening = null));
    }
    return null;
  }

  /** One plain exec by the lane: its answer, or the kernel's when the lane cannot give it. */
  async #laneExec<T>(lane: ExecLane, seq: number, params: Record<string, unknown>): Promise<T> {
    const src = params.src as string;
    const position = params.position as "stmt" | "value" | undefined;
    const timeout = params.timeout_ms as number | undefined;
    const t0 = Date.now();
    const sent = lane.exec({ seq, src, ...(position ? { position } : {}) });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const outcome = timeout === undefined ? await sent : await Promise.race([
      sent,
      new Promise<"timeout">((r) => (timer = setTimeout(() => r("timeout"), timeout))),
    ]);
    clearTimeout(timer);
    const claim = { seq, src, instance: lane.instance, ...(position ? { position } : {}) };
    if (outcome === "reroute" || outcome === "unsent") {
      return await this.#rpc<T>("exec", { ...params, lane_seq: seq });
    }
    // Stopped waiting: the kernel takes the exec over (the same task; it runs once).
    if (outcome === "timeout") return await this.#rpc<T>("lane.claim", claim);
    if (outcome === "lost") {
      const left = timeout === undefined
        ? {}
        : { timeout_ms: Math.max(0, timeout - (Date.now() - t0)) };
      return await this.#rpc<T>("lane.claim", { ...claim, wait: true, ...left });
    }
    if ("error" in outcome) throw outcome.error;
    this.laneExecs++;
    return outcome.ok as T;
  }

  async #rpc<T>(method: string, params: Record<string, unknown>): Promise<T> {
    if (this.#reconnecting) await this.#reconnecting;
    const writer = this.#writer;
    if (!writer || this.#closed) throw new ConnectionClosed();
    const id = this.#nextId++;
    const done = new Promise<unknown>((resolve, reject) =>
      this.#pending.set(id, { resolve, reject })
    );
    try {
      await writer.send({ jsonrpc: "2.0", id, method, params });
    } catch {
      this.#pending.delete(id);
      throw new ConnectionClosed();
    }
    return (await done) as T;
  }

  /** `session.attach` (a lane the session offers is opened behind it). */
  async attach(params: AttachParams = {}): Promise<AttachResult> {
    const noLane = this.opts.lane === false ? { lane: false } : {};
    this.attached = await this.call<AttachResult>("session.attach", { ...params, ...noLane });
    this.#lane?.close();
    this.#lane = null;
    this.#execSeq = 0;
    this.#laneRetryAt = 0;
    this.#laneInfo = this.opts.lane === false ? null : this.attached.lane ?? null;
    this.#usableLane();
    return this.attached;
  }

  /**
   * Subscribe to a channel. `since` = last seq already processed (null: live only). The cursor
   * is kept and used to resume after a reconnect.
   */
  async subscribe(channel: string, handler: EventHandler, since: number | null = null) {
    this.#subs.set(channel, { channel, cursor: since, handler, held: null });
    await this.call("events.subscribe", { channel, ...(since === null ? {} : { since }) });
  }

  /** Stop a subscription. */
  async unsubscribe(channel: string): Promise<void> {
    this.#subs.delete(channel);
    await this.call("events.unsubscribe", { channel });
  }

  /** The cursor of a subscription (last processed seq). */
  cursor(channel: string): number | null {
    return this.#subs.get(channel)?.cursor ?? null;
  }

  /** True while the socket is connected. */
  get connected(): boolean {
    return this.#conn !== null;
  }

  /** Close for good. */
  close(): void {
    this.#closed = true;
    this.#lane?.close();
    const c = this.#conn;
    this.#conn = null;
    try {
      c?.close();
    } catch { /* already closed */ }
    for (const p of this.#pending.values()) p.reject(new ConnectionClosed());
    this.#pending.clear();
  }
}

/** How long after a failed try the lane is not tried again (the session may be restarting). */
const LANE_RETRY_MS = 1000;

/** Params the lane takes as they are: a plain run of `src`, nothing else. */
function isPlainExec(p: Record<string, unknown>): boolean {
  for (const [k, v] of Object.entries(p)) {
    if (k === "src") {
      if (typeof v !== "string") return false;
    } else if (k === "position") {
      if (v !== undefined && v !== "stmt" && v !== "value") return false;
    } else if (k === "mode") {
      if (v !== undefined && v !== "run") return false;
    } else if (k === "timeout_ms") {
      if (v !== undefined && !(typeof v === "number" && Number.isSafeInteger(v) && v >= 0)) {
        return false;
      }
    } else if (v !== undefined) return false;
  }
  return typeof p.src === "string";
}

/** True when an error is the kernel saying "not attached". */
export function isNotAttached(e: unknown): boolean {
  return e instanceof RpcError && e.code === RPC.NOT_ATTACHED;
}
