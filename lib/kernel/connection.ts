/**
 * One client connection: frame reading, JSON-RPC envelope checks, routing, and concurrent
 * request handling (several requests may be in flight on one connection; responses are
 * matched by id and written as whole frames).
 */

import { FrameReader, FrameWriter, MAX_FRAME } from "../client/framing.ts";
import { RPC, RpcError } from "../client/errors.ts";

/** Requests handled at once per connection; reading pauses beyond it (backpressure). */
export const MAX_IN_FLIGHT = 64;

/** Per-connection state visible to method handlers. */
export interface ConnState<A> {
  /** Monotonic connection id. */
  readonly id: number;
  /** The current attachment (null before `session.attach`). */
  attachment: A | null;
  /** Writes whole frames (responses and event notifications). */
  readonly writer: FrameWriter;
  /** Fired when the connection ends (subscriptions, waits and timers clean up here). */
  readonly closed: AbortSignal;
  /** Cleanups to run at close (subscriptions register themselves). */
  readonly cleanups: Set<() => void>;
}

/** A method handler. Throw `RpcError` for protocol errors. */
export type Handler<A> = (params: Record<string, unknown>, conn: ConnState<A>) => unknown;

/** A routed method. */
export interface Method<A> {
  handler: Handler<A>;
  /** False only for `session.attach`, `parse`, `complete`. */
  requiresAttach: boolean;
}

/** Method table. */
export type Methods<A> = Map<string, Method<A>>;

type Id = string | number | null;

let nextConnId = 1;

/** Serve one connection until the peer goes away. Never throws. */
export async function serveConnection<A>(
  conn: Deno.Conn,
  methods: Methods<A>,
  onError: (e: unknown) => void = () => {},
): Promise<void> {
  const ac = new AbortController();
  const state: ConnState<A> = {
    id: nextConnId++,
    attachment: null,
    writer: new FrameWriter(conn),
    closed: ac.signal,
    cleanups: new Set(),
  };
  const reader = new FrameReader(conn, MAX_FRAME);
  let inFlight = 0;
  let slotFree: (() => void) | null = null;
  const reply = (id: Id, body: { result: unknown } | { error: unknown }) =>
    state.writer.send({ jsonrpc: "2.0", id, ...body }).catch(() => {});
  try {
    while (true) {
      const frame = await reader.next();
      if (!frame) break;
      if (frame.kind === "oversize") {
        await reply(null, {
          error: new RpcError(
            RPC.INVALID_REQUEST,
            `frame of ${frame.bytes} bytes exceeds the ${MAX_FRAME}-byte limit`,
            { limit: MAX_FRAME },
          ).toJSON(),
        });
        continue;
      }
      let msg: unknown;
      try {
        msg = JSON.parse(frame.text);
      } catch (e) {
        await reply(null, {
          error: new RpcError(RPC.PARSE_ERROR_JSON, "parse error: malformed JSON", {
            detail: (e as Error).message,
          }).toJSON(),
        });
        continue;
      }
      while (inFlight >= MAX_IN_FLIGHT) await new Promise<void>((r) => (slotFree = r));
      inFlight++;
      handleMessage(msg, methods, state, reply, onError).finally(() => {
        inFlight--;
        const f = slotFree;
        slotFree = null;
        f?.();
      });
    }
  } catch (e) {
    if (
      !(e instanceof Deno.errors.BadResource || e instanceof Deno.errors.ConnectionReset ||
        e instanceof Deno.errors.Interrupted)
    ) {
      onError(e);
    }
  } finally {
    reader.close(); // a peer gone mid-line leaves no spill file open
    ac.abort();
    for (const c of state.cleanups) {
      try {
        c();
      } catch (e) {
        onError(e);
      }
    }
    state.cleanups.clear();
    try {
      conn.close();
    } catch { /* already closed */ }
  }
}

function isId(x: unknown): x is Id {
  return x === null || typeof x === "string" || typeof x === "number";
}

async function handleMessage<A>(
  msg: unknown,
  methods: Methods<A>,
  state: ConnState<A>,
  reply: (id: Id, body: { result: unknown } | { error: unknown }) => Promise<void>,
  onError: (e: unknown) => void,
): Promise<void> {
  if (msg === null || typeof msg !== "object" || Array.isArray(msg)) {
    await reply(null, {
      error: new RpcError(RPC.INVALID_REQUEST, "invalid request: expected a JSON object")
        .toJSON(),
    });
    return;
  }
  const m = msg as Record<string, unknown>;
  const hasId = "id" in m;
  const id: Id = hasId && isId(m.id) ? m.id : null;
  const fail = (e: RpcError) => hasId ? reply(id, { error: e.toJSON() }) : Promise.resolve();
  if (hasId && !isId(m.id)) {
    await reply(null, {
      error: new RpcError(
        RPC.INVALID_REQUEST,
        "invalid request: id must be a string, number or null",
      ).toJSON(),
    });
    return;
  }
  if (m.jsonrpc !== "2.0") {
    return void await fail(new RpcError(RPC.INVALID_REQUEST, "invalid JSON-RPC version"));
  }
  if (typeof m.method !== "string") {
    return void await fail(
      new RpcError(RPC.INVALID_REQUEST, "invalid request: method must be a string"),
    );
  }
  let params: Record<string, unknown> = {};
  if (m.params !== undefined && m.params !== null) {
    if (typeof m.params !== "object" || Array.isArray(m.params)) {
      return void await fail(new RpcError(RPC.INVALID_PARAMS, "params must be an object"));
    }
    params = m.params as Record<string, unknown>;
  }
  const method = methods.get(m.method);
  if (!method) return void await fail(new RpcError(RPC.METHOD_NOT_FOUND, "method not found"));
  if (method.requiresAttach && state.attachment === null) {
    return void await fail(new RpcError(RPC.NOT_ATTACHED, "attach to a session first"));
  }
  try {
    const result = await method.handler(params, state);
    if (hasId) await reply(id, { result: result ?? null });
  } catch (e) {
    if (e instanceof RpcError) return void await fail(e);
    onError(e);
    await fail(new RpcError(RPC.INTERNAL_ERROR, `internal error: ${(e as Error)?.message ?? e}`));
  }
}
