/**
 * Standard input and output on the event loop. `Deno.stdin.read` runs each read on a
 * blocking-pool thread, so every request a host writes wakes that thread first and the event
 * loop second; `node:net` over fd 0 polls the pipe (or socket) in the event loop itself, one
 * wake-up per request (what the session process does for its own stdin). Responses go out the
 * same way over fd 1 (written at once when the pipe has room, queued when it is full — never a
 * blocking write that would stall the facade). A terminal, a regular file or anything else
 * `node:net` cannot take stays on `Deno.stdin` / `Deno.stdout`.
 *
 * @module
 */

import net from "node:net";
import type { ByteReader, ByteWriter } from "../client/framing.ts";

/** Bytes held unread before the socket is paused (the host then waits on a full pipe). */
const HIGH_WATER = 1 << 20;

/**
 * Pull-style reads over a paused `node:net` socket: `read` resolves with bytes copied from
 * the oldest chunk that arrived, or null once the socket ended (or failed: a read error on
 * stdin means no more input, as with `Deno.stdin`).
 */
class SocketReader implements ByteReader {
  #chunks: Uint8Array[] = [];
  #held = 0;
  #paused = false;
  #ended = false;
  #wake: (() => void) | null = null;

  constructor(readonly sock: net.Socket) {
    sock.on("data", (chunk: Uint8Array) => {
      this.#chunks.push(chunk);
      this.#held += chunk.length;
      if (this.#held > HIGH_WATER && !this.#paused) {
        this.#paused = true;
        sock.pause();
      }
      this.#notify();
    });
    const end = () => {
      this.#ended = true;
      this.#notify();
    };
    sock.on("end", end);
    sock.on("close", end);
    sock.on("error", end);
  }

  #notify(): void {
    const w = this.#wake;
    this.#wake = null;
    w?.();
  }

  async read(p: Uint8Array): Promise<number | null> {
    while (this.#chunks.length === 0) {
      if (this.#ended) return null;
      await new Promise<void>((r) => (this.#wake = r));
    }
    const head = this.#chunks[0];
    const n = Math.min(head.length, p.length);
    p.set(head.subarray(0, n));
    if (n === head.length) this.#chunks.shift();
    else this.#chunks[0] = head.subarray(n);
    this.#held -= n;
    if (this.#paused && this.#held <= HIGH_WATER / 2) {
      this.#paused = false;
      this.sock.resume();
    }
    return n;
  }
}

/** Our stdin for the MCP transport: on the event loop when it is a pipe or socket. */
export function stdinReader(): ByteReader {
  if (Deno.stdin.isTerminal()) return Deno.stdin;
  try {
    return new SocketReader(new net.Socket({ fd: 0, readable: true, writable: false }));
  } catch {
    return Deno.stdin; // "Unsupported fd type" (a regular file, /dev/null…)
  }
}

/** Our stdout for the MCP transport: on the event loop when it is a pipe or socket. */
export function stdoutWriter(): ByteWriter {
  if (Deno.stdout.isTerminal()) return Deno.stdout;
  let sock: net.Socket;
  try {
    sock = new net.Socket({ fd: 1, readable: false, writable: true });
  } catch {
    return Deno.stdout;
  }
  return {
    // Resolves once the bytes are handed to the OS, so frames stay whole and in order.
    write: (p) =>
      new Promise((resolve, reject) =>
        sock.write(p, (e?: Error | null) => e ? reject(e) : resolve(p.length))
      ),
  };
}
