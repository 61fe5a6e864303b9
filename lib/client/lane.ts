/**
 * The exec lane, client side (issue 16): a second connection, straight to the attached
 * session's process, for plain execs — two hops instead of four through the kernel. The kernel
 * hands the socket and a ticket out at attach (`AttachResult.lane`); the session may answer
 * `reroute` (the client then sends the exec through the kernel) and the client, when it stops
 * waiting (a timeout, a dropped lane), claims the exec from the kernel (`lane.claim`) — see
 * `lib/kernel/session_lane.ts` for the rules that keep each exec run once and in order.
 *
 * @module
 */

import { FrameReader, FrameWriter } from "./framing.ts";
import { RpcError } from "./errors.ts";
import { trustedSocket } from "./socket_trust.ts";

/** The session's "send it through the kernel" answer (mirrors `session_lane.ts`). */
export const LANE_REROUTE = -32095;

/** How one lane exec ended. */
export type LaneOutcome =
  | { ok: unknown }
  | { error: RpcError }
  | "reroute"
  // Never delivered (the lane was gone before it was written, or the write failed): the
  // session cannot have seen it, so the kernel may simply run it.
  | "unsent"
  // Written, then the lane went away before an answer: it may have begun.
  | "lost";

/** One plain exec, as the lane takes it. */
export interface LaneRequest {
  seq: number;
  src: string;
  position?: "stmt" | "value";
}

/** An open exec lane. */
export class ExecLane {
  readonly #conn: Deno.UnixConn;
  readonly #writer: FrameWriter;
  readonly #pending = new Map<number, (o: LaneOutcome) => void>();
  #nextId = 1;
  #alive = true;
  /** The session process this lane speaks to (a claim names it). */
  instance = "";

  private constructor(conn: Deno.UnixConn) {
    this.#conn = conn;
    this.#writer = new FrameWriter(conn);
  }

  /** Connect and present the ticket; rejects when the session does not take it. */
  static async open(socket: string, ticket: string): Promise<ExecLane> {
    const conn = await Deno.connect({ transport: "unix", path: trustedSocket(socket) });
    const lane = new ExecLane(conn);
    void lane.#read();
    const hello = await lane.#send("hello", { ticket });
    if (typeof hello === "string" || "error" in hello) {
      lane.close();
      throw typeof hello === "string" ? new Error("the session closed its exec lane") : hello.error;
    }
    lane.instance = String((hello.ok as { instance?: unknown } | null)?.instance ?? "");
    return lane;
  }

  /** False once the lane's connection is gone. */
  get alive(): boolean {
    return this.#alive;
  }

  /** Send one plain exec. */
  exec(req: LaneRequest): Promise<LaneOutcome> {
    return this.#send("exec", { ...req });
  }

  #send(method: string, params: Record<string, unknown>): Promise<LaneOutcome> {
    if (!this.#alive) return Promise.resolve("unsent");
    const id = this.#nextId++;
    const out = new Promise<LaneOutcome>((resolve) => this.#pending.set(id, resolve));
    this.#writer.send({ jsonrpc: "2.0", id, method, params }).catch(() => {
      // A frame cut short by the failure is never read as one.
      this.#pending.get(id)?.("unsent");
      this.#pending.delete(id);
      this.#lost();
    });
    return out;
  }

  async #read(): Promise<void> {
    const reader = new FrameReader(this.#conn);
    try {
      for (let f = await reader.next(); f; f = await reader.next()) {
        if (f.kind !== "line") continue;
        const m = JSON.parse(f.text) as {
          id?: number;
          result?: unknown;
          error?: { code: number; message: string; data?: unknown };
        };
        const settle = typeof m.id === "number" ? this.#pending.get(m.id) : undefined;
        if (!settle) continue;
        this.#pending.delete(m.id!);
        if (m.error === undefined) settle({ ok: m.result });
        else if (m.error.code === LANE_REROUTE) settle("reroute");
        else settle({ error: new RpcError(m.error.code, m.error.message, m.error.data) });
      }
    } catch { /* the session went away */ }
    this.#lost();
  }

  #lost(): void {
    this.#alive = false;
    for (const settle of this.#pending.values()) settle("lost");
    this.#pending.clear();
    try {
      this.#conn.close();
    } catch { /* closed */ }
  }

  /** Close the lane (pending execs end `lost`). */
  close(): void {
    this.#lost();
  }
}
