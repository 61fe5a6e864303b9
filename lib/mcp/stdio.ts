/**
 * The MCP stdio transport on Deno's own stdin/stdout (no Node stream layer): newline-delimited
 * JSON-RPC read with the bounded frame reader (16 MiB lines), whole-frame writes, `onclose` at
 * stdin EOF. Every frame goes through the envelope parser the kernel uses
 * (`lib/client/envelope.ts`), so a malformed line is -32700 (id null), an invalid but parseable
 * one -32600 (or -32602 for by-position params) under its own id, invalid UTF-8 is refused, and
 * ids come back verbatim — big integers included — whatever the SDK can represent. A JSON-RPC
 * batch (2025-03-26 clients send them) is served: its messages go to the SDK one by one and
 * their responses come back together as one array. At stdin EOF, requests already received
 * (the last line may lack its newline) are answered first, for up to {@link DRAIN_MS}.
 * An optional `inspect` hook sees every inbound message first, in order, before the SDK does.
 */

import type { JSONRPCMessage, MessageExtraInfo, Transport } from "@modelcontextprotocol/server";
import { type ByteReader, FrameReader, FrameWriter, MAX_FRAME } from "../client/framing.ts";
import { type Envelope, errorResponse, parseEnvelope, type WireId } from "../client/envelope.ts";
import { RPC, type RpcErrorObject } from "../client/errors.ts";

/** How long requests in flight at stdin EOF may take to be answered before the transport closes. */
export const DRAIN_MS = 5000;

type Obj = Record<string, unknown>;

/** A batch being served: its responses, gathered until every request in it is answered. */
interface Batch {
  waiting: Set<string>;
  responses: unknown[];
  /** True while its messages are still being delivered (a fast answer must not end it). */
  delivering: boolean;
}

/** The facade's error objects always carry `data` (null when absent, protocol §15.2). */
function fault(id: WireId, e: RpcErrorObject): Obj {
  return errorResponse(id, { ...e, data: e.data ?? null });
}

/** Ids the SDK cannot carry (null, big or fractional numbers) travel as these strings. */
const SURROGATE = `\u0000shoal-id:${crypto.randomUUID()}:`;

/**
 * A request the facade answers without the SDK's dispatch (`fastExec` in server.ts): null when
 * it is not one of those, else the response body — `{result}` or `{error}` — once it is known.
 */
export type FastPath = (
  msg: Obj,
  signal: AbortSignal,
) => Promise<{ result: unknown } | { error: RpcErrorObject }> | null;

/** Newline JSON-RPC over Deno.stdin/Deno.stdout. */
export class DenoStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  #writer: FrameWriter;
  #closed = false;
  #started = false;
  #ended!: () => void;
  /** Surrogate → the id the client sent. */
  #surrogates = new Map<string, WireId>();
  /** The client's id (keyed) → its surrogate, for `notifications/cancelled`. */
  #bySent = new Map<string, string>();
  #nextSurrogate = 1;
  /** Requests delivered and not yet answered (keyed ids), and batches waiting on them. */
  #inFlight = new Set<string>();
  #batches = new Map<string, Batch>();
  #idle: (() => void) | null = null;
  /** Served without the SDK, set by the facade (null: every request goes to the SDK). */
  fast: FastPath | null = null;
  /** Fast-path requests in flight (keyed ids), to abort on `notifications/cancelled`. */
  #fastAborts = new Map<string, AbortController>();
  /** Resolves once the transport is closed (stdin EOF or `close()`), whoever owns `onclose`. */
  readonly ended: Promise<void> = new Promise((r) => (this.#ended = r));

  constructor(
    readonly inspect?: (m: JSONRPCMessage) => Promise<void>,
    readonly input: ByteReader = Deno.stdin,
    output: { write(p: Uint8Array): Promise<number> } = Deno.stdout,
  ) {
    this.#writer = new FrameWriter(output);
  }

  start(): Promise<void> {
    if (this.#started) throw new Error("DenoStdioTransport already started");
    this.#started = true;
    this.#readLoop();
    return Promise.resolve();
  }

  async #readLoop(): Promise<void> {
    const reader = new FrameReader(this.input, MAX_FRAME);
    try {
      for (let f = await reader.next(); f && !this.#closed; f = await reader.next()) {
        if (f.kind === "oversize") {
          this.#write(fault(null, {
            code: RPC.INVALID_REQUEST,
            message: `message of ${f.bytes} bytes exceeds the ${MAX_FRAME}-byte limit`,
          }));
          continue;
        }
        const env = parseEnvelope(f.text, { badUtf8: f.badUtf8 });
        if (env.kind === "batch") await this.#serveBatch(env.items);
        else if (env.kind === "invalid") {
          if (!env.silent) this.#write(fault(env.id, env.error));
        } else await this.#deliver(env);
      }
    } catch (e) {
      if (!this.#closed) this.onerror?.(e as Error);
    }
    await this.#drain();
    await this.close();
  }

  /** Wait (bounded) until every request received so far is answered. */
  async #drain(): Promise<void> {
    if (this.#inFlight.size === 0 || this.#closed) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      new Promise<void>((r) => (this.#idle = r)),
      new Promise<void>((r) => (timer = setTimeout(r, DRAIN_MS))),
    ]);
    clearTimeout(timer);
  }

  /** Hand one message to the SDK (after `inspect`), with an id it can carry. */
  async #deliver(env: Exclude<Envelope, { kind: "batch" | "invalid" }>, batch?: Batch) {
    const msg = { ...env.msg } as Obj;
    if (env.kind === "request" && !batch && this.#serveFast(env.id, msg)) return;
    if (env.kind === "request") {
      const key = this.#carry(msg, env.id);
      this.#inFlight.add(key);
      if (batch) {
        batch.waiting.add(key);
        this.#batches.set(key, batch);
      }
    } else if (env.kind === "notification" && env.method === "notifications/cancelled") {
      const p = env.params as Obj;
      // Like the SDK: a cancelled request is stopped and never answered.
      this.#fastAborts.get(idKey(p.requestId as WireId))?.abort();
      const s = this.#bySent.get(idKey(p.requestId as WireId));
      if (s !== undefined) msg.params = { ...p, requestId: s };
    }
    if (this.inspect) {
      await this.inspect(msg as JSONRPCMessage).catch((e) => this.onerror?.(e as Error));
    }
    this.onmessage?.(msg as JSONRPCMessage);
  }

  /** Serve `msg` on the fast path when it is one of its requests (an id the SDK could carry). */
  #serveFast(id: WireId, msg: Obj): boolean {
    if (this.fast === null) return false;
    if (!(typeof id === "string" || (typeof id === "number" && Number.isSafeInteger(id)))) {
      return false;
    }
    const key = idKey(id);
    if (this.#inFlight.has(key)) return false; // a duplicate id: the SDK's rules apply
    const ac = new AbortController();
    const answer = this.fast(msg, ac.signal);
    if (answer === null) return false;
    this.#inFlight.add(key);
    this.#fastAborts.set(key, ac);
    void answer.catch((e) => ({
      error: { code: RPC.INTERNAL_ERROR, message: `internal error: ${e?.message ?? e}` },
    })).then((body) => {
      this.#fastAborts.delete(key);
      if (ac.signal.aborted || this.#closed) return this.#settled(key);
      const out = "result" in body
        ? { result: body.result, jsonrpc: "2.0", id }
        : { jsonrpc: "2.0", id, error: body.error };
      this.#respond(key, out).then(() => this.#settled(key), () => this.#settled(key));
    });
    return true;
  }

  /**
   * Give `msg` an id the SDK can carry (a string or a safe integer): others travel as a
   * surrogate string mapped back in {@link send}. Returns the key the response is expected under.
   */
  #carry(msg: Obj, id: WireId): string {
    if (typeof id === "string" || (typeof id === "number" && Number.isSafeInteger(id))) {
      if (!id.toString().startsWith(SURROGATE)) return idKey(id);
    }
    const s = `${SURROGATE}${this.#nextSurrogate++}`;
    this.#surrogates.set(s, id);
    this.#bySent.set(idKey(id), s);
    msg.id = s;
    return idKey(s);
  }

  async #serveBatch(items: Envelope[]): Promise<void> {
    const batch: Batch = { waiting: new Set(), responses: [], delivering: true };
    const deliver: Array<Exclude<Envelope, { kind: "batch" | "invalid" }>> = [];
    for (const e of items) {
      // (An array inside a batch is an invalid element, never a batch of its own.)
      if (e.kind === "invalid") {
        if (!e.silent) batch.responses.push(fault(e.id, e.error));
      } else if (e.kind !== "batch") deliver.push(e);
    }
    for (const e of deliver) await this.#deliver(e, batch);
    batch.delivering = false;
    if (batch.waiting.size === 0 && batch.responses.length > 0) this.#write(batch.responses);
  }

  #write(msg: unknown): void {
    this.#writer.send(msg).catch(() => {});
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) return Promise.reject(new Error("stdio transport is closed"));
    const m = message as Obj;
    if (!("method" in m) && "id" in m) {
      const key = idKey(m.id as WireId);
      let out: Obj = m;
      const sent = this.#surrogates.get(m.id as string);
      if (sent !== undefined) {
        this.#surrogates.delete(m.id as string);
        this.#bySent.delete(idKey(sent));
        out = { ...m, id: sent };
      }
      // Settled once written: the drain at EOF must not close the transport before it is out.
      const written = this.#respond(key, out);
      void written.then(() => this.#settled(key), () => this.#settled(key));
      return written;
    }
    return this.#writer.send(message);
  }

  /** Write a response, or add it to its batch (written whole with the batch's last one). */
  #respond(key: string, out: Obj): Promise<void> {
    const batch = this.#batches.get(key);
    if (!batch) return this.#writer.send(out);
    this.#batches.delete(key);
    batch.waiting.delete(key);
    batch.responses.push(out);
    if (batch.waiting.size > 0 || batch.delivering) return Promise.resolve();
    return this.#writer.send(batch.responses);
  }

  #settled(key: string): void {
    this.#inFlight.delete(key);
    if (this.#inFlight.size === 0) {
      const f = this.#idle;
      this.#idle = null;
      f?.();
    }
  }

  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    this.onclose?.();
    this.#ended();
    return Promise.resolve();
  }
}

/** A map key for an id (a raw number's text, or the JSON of a string/number/null). */
function idKey(id: WireId): string {
  return id !== null && typeof id === "object" ? id.rawJSON : JSON.stringify(id);
}
