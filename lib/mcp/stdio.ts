/**
 * The MCP stdio transport on Deno's own stdin/stdout (no Node stream layer): newline-delimited
 * JSON-RPC read with the bounded frame reader (16 MiB lines), whole-frame writes, `onclose` at
 * stdin EOF. Malformed lines are answered with -32700 (id null) and reading continues (§15.2).
 * An optional `inspect` hook sees every inbound message first, in order, before the SDK does.
 */

import {
  deserializeMessage,
  type JSONRPCMessage,
  type MessageExtraInfo,
  type Transport,
} from "@modelcontextprotocol/server";
import { type ByteReader, FrameReader, FrameWriter, MAX_FRAME } from "../client/framing.ts";

/** Newline JSON-RPC over Deno.stdin/Deno.stdout. */
export class DenoStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  #writer: FrameWriter;
  #closed = false;
  #started = false;
  #ended!: () => void;
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
          this.#reply(-32600, `message of ${f.bytes} bytes exceeds the ${MAX_FRAME}-byte limit`);
          continue;
        }
        let msg: JSONRPCMessage;
        try {
          msg = deserializeMessage(f.text);
        } catch (e) {
          this.#reply(-32700, "parse error", { detail: (e as Error).message.slice(0, 500) });
          continue;
        }
        if (this.inspect) {
          await this.inspect(msg).catch((e) => this.onerror?.(e as Error));
        }
        this.onmessage?.(msg);
      }
    } catch (e) {
      if (!this.#closed) this.onerror?.(e as Error);
    }
    await this.close();
  }

  #reply(code: number, message: string, data: unknown = null): void {
    this.#writer.send({ jsonrpc: "2.0", id: null, error: { code, message, data } })
      .catch(() => {});
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) return Promise.reject(new Error("stdio transport is closed"));
    return this.#writer.send(message);
  }

  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    this.onclose?.();
    this.#ended();
    return Promise.resolve();
  }
}
