/**
 * One client connection: frame reading, JSON-RPC envelope checks, routing, and concurrent
 * request handling (several requests may be in flight on one connection; responses are
 * matched by id and written as whole frames).
 */

import { FrameReader, FrameWriter, MAX_FRAME } from "../client/framing.ts";
import { RPC, RpcError } from "../client/errors.ts";
import { type Envelope, errorResponse, parseEnvelope, type WireId } from "../client/envelope.ts";

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

let nextConnId = 1;

/** How often a half-closed connection with requests in flight is checked for its peer. */
const PEER_PROBE_MS = 100;

const EMPTY = new Uint8Array(0);

/**
 * Serve one connection until the peer goes away. Never throws.
 *
 * End of input is not the end of the conversation: a client that half-closes its side
 * (`shutdown(SHUT_WR)`) after its requests still gets every response. The connection stays
 * open until its requests are answered, or until the peer has gone for good — which an empty
 * write tells (it fails with EPIPE only once the peer closed its reading side too); only then
 * does `closed` fire and the connection's waits, subscriptions and queued execs end.
 */
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
  let drained: (() => void) | null = null;
  const send = (msg: unknown) => state.writer.send(msg).catch(() => {});
  const reply = (id: WireId, body: { result: unknown } | { error: unknown }) =>
    send({ jsonrpc: "2.0", id, ...body });
  const track = (p: Promise<unknown>) => {
    inFlight++;
    p.finally(() => {
      inFlight--;
      const f = slotFree;
      slotFree = null;
      f?.();
      if (inFlight === 0) drained?.();
    });
  };
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
      const env = parseEnvelope(frame.text, { badUtf8: frame.badUtf8 });
      if (env.kind === "batch") {
        // The kernel serves one request per frame; a batch is answered element by element,
        // in one array, each under its own id.
        const out = env.items.flatMap((e) => batchRefusal(e));
        if (out.length) await send(out);
        continue;
      }
      if (env.kind === "invalid") {
        if (!env.silent) await reply(env.id, { error: env.error });
        continue;
      }
      if (env.kind === "response") {
        await reply(env.id, {
          error: new RpcError(
            RPC.INVALID_REQUEST,
            "invalid request: the kernel sends no requests, so it takes no responses",
          ).toJSON(),
        });
        continue;
      }
      while (inFlight >= MAX_IN_FLIGHT) await new Promise<void>((r) => (slotFree = r));
      track(handleMessage(env, methods, state, reply, onError));
    }
    // Input ended (EOF or a half-close): answer what is in flight unless the peer is gone.
    while (inFlight > 0) {
      const settled = new Promise<void>((r) => (drained = r));
      const tick = new Promise<"tick">((r) => setTimeout(() => r("tick"), PEER_PROBE_MS));
      if (await Promise.race([settled, tick]) !== "tick") break;
      if (!(await peerReads(conn))) break;
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

/** Whether the peer still reads: an empty write fails (EPIPE) once it closed for good. */
async function peerReads(conn: Deno.Conn): Promise<boolean> {
  try {
    await conn.write(EMPTY);
    return true;
  } catch {
    return false;
  }
}

/** The answer to one element of a batch the kernel does not serve. */
function batchRefusal(e: Envelope): unknown[] {
  if (e.kind === "invalid") return e.silent ? [] : [errorResponse(e.id, e.error)];
  if (e.kind !== "request") return [];
  return [
    errorResponse(
      e.id,
      new RpcError(
        RPC.INVALID_REQUEST,
        "invalid request: the kernel does not serve batches; send one request per line",
      ).toJSON(),
    ),
  ];
}

async function handleMessage<A>(
  env: Extract<Envelope, { kind: "request" | "notification" }>,
  methods: Methods<A>,
  state: ConnState<A>,
  reply: (id: WireId, body: { result: unknown } | { error: unknown }) => Promise<void>,
  onError: (e: unknown) => void,
): Promise<void> {
  const fail = (e: RpcError) =>
    env.kind === "request" ? reply(env.id, { error: e.toJSON() }) : Promise.resolve();
  const method = methods.get(env.method);
  if (!method) return void await fail(new RpcError(RPC.METHOD_NOT_FOUND, "method not found"));
  if (method.requiresAttach && state.attachment === null) {
    return void await fail(new RpcError(RPC.NOT_ATTACHED, "attach to a session first"));
  }
  try {
    const result = await method.handler(env.params, state);
    if (env.kind === "request") await reply(env.id, { result: result ?? null });
  } catch (e) {
    if (e instanceof RpcError) return void await fail(e);
    onError(e);
    await fail(new RpcError(RPC.INTERNAL_ERROR, `internal error: ${(e as Error)?.message ?? e}`));
  }
}
