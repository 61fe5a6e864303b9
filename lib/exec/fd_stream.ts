/**
 * Web streams over raw non-blocking pipe fds (the parent ends of a directly spawned
 * child's stdio). Reads and writes are synchronous syscalls on the JS thread; only
 * waiting for readiness leaves it (see {@link FdReactor}). Each stream owns its fd and
 * closes it at EOF, on error, on cancel/abort and on close.
 *
 * @module
 */

import type { FdReactor } from "./fd_reactor.ts";
import { EAGAIN, EINTR, type LibcHandle } from "./libc.ts";

/** Bytes the default reader asks for per read (the default Linux pipe capacity). */
const CHUNK = 64 * 1024;
const F_SETPIPE_SZ = 1031;
/**
 * Capacity of a pipe once a read found it full: the writer runs ahead further and we wait
 * (one thread hop each) 16× less often — 50 MB through `cat`: 80 → 55 ms. 1 MiB is the
 * unprivileged maximum (/proc/sys/fs/pipe-max-size).
 */
const GROWN_PIPE = 1 << 20;
/**
 * Grown pipes count against the user's pipe-buffer budget (`pipe-user-pages-soft`, 64 MiB
 * by default), beyond which *every* new pipe of the user gets 2 pages; so only a few at once.
 */
const MAX_GROWN = 8;
let grownNow = 0;

/** One owned fd: closed once, deregistered from the reactor first. */
class OwnedFd {
  #open = true;
  #growTried = false;
  #grown = false;
  constructor(readonly fd: number, readonly c: LibcHandle, readonly reactor: FdReactor) {}

  get open(): boolean {
    return this.#open;
  }

  /** Called when a read filled the whole buffer: enlarge the pipe (once, best effort). */
  filled(): void {
    if (this.#growTried) return;
    this.#growTried = true;
    if (grownNow >= MAX_GROWN) return;
    if (this.c.fn.fcntl(this.fd, F_SETPIPE_SZ, BigInt(GROWN_PIPE)) < 0) return;
    grownNow++;
    this.#grown = true;
  }

  close(): void {
    if (!this.#open) return;
    this.#open = false;
    if (this.#grown) grownNow--;
    this.reactor.forget(this.fd);
    this.c.fn.close(this.fd);
  }
}

/** Direct reads of a pipe behind an {@link fdReadable} stream, bypassing the stream. */
export interface FdSource {
  /** Read into `view`: bytes read, 0 at EOF or once closed; throws on a read error. */
  read(view: Uint8Array): Promise<number>;
  /** Close the fd (idempotent); later reads return 0. */
  close(): void;
}

const sources = new WeakMap<ReadableStream<Uint8Array>, FdSource>();

/**
 * The direct source behind `stream`, when it is one of ours: a drain that owns the stream
 * reads the fd itself and skips the stream machinery (~0.1 ms per child, and per chunk).
 * The caller must hold the stream's lock so nobody else reads it.
 */
export function fdSourceOf(stream: ReadableStream<Uint8Array>): FdSource | undefined {
  return sources.get(stream);
}

/**
 * A byte stream reading `fd` to EOF. Supports BYOB reads (bytes land directly in the
 * caller's buffer); no read-ahead, so an unread pipe back-pressures the writer.
 */
export function fdReadable(
  fd: number,
  c: LibcHandle,
  reactor: FdReactor,
): ReadableStream<Uint8Array> {
  const own = new OwnedFd(fd, c, reactor);
  const source: FdSource = {
    async read(view) {
      while (own.open) {
        const n = Number(c.fn.read(fd, view, BigInt(view.byteLength)));
        if (n > 0) {
          if (n === view.byteLength) own.filled();
          return n;
        }
        if (n === 0) break;
        const e = c.errno();
        if (e === EAGAIN) await reactor.readable(fd);
        else if (e !== EINTR) {
          own.close();
          throw new Error(`read from child pipe: ${c.osMessage(e)}`);
        }
      }
      own.close();
      return 0;
    },
    close: () => own.close(),
  };
  const stream = new ReadableStream({
    type: "bytes",
    autoAllocateChunkSize: CHUNK,
    async pull(controller) {
      const req = controller.byobRequest!;
      try {
        const n = await source.read(req.view as Uint8Array);
        if (n > 0) return req.respond(n);
        controller.close();
        req.respond(0);
      } catch (e) {
        // A read error, or the stream was cancelled meanwhile (then this is a no-op).
        try {
          controller.error(e);
        } catch {
          // already finished
        }
      }
    },
    cancel() {
      own.close();
    },
  }) as ReadableStream<Uint8Array>;
  sources.set(stream, source);
  return stream;
}

/**
 * A sink writing to `fd`; closing it closes the fd (EOF for the reader). Aborting closes
 * it at once, even while a write waits for the reader to make room.
 */
export function fdWritable(
  fd: number,
  c: LibcHandle,
  reactor: FdReactor,
): WritableStream<Uint8Array> {
  const own = new OwnedFd(fd, c, reactor);
  return new WritableStream<Uint8Array>({
    start(controller) {
      // Fires on abort() immediately, not after the in-flight write (which may never end).
      controller.signal.addEventListener("abort", () => own.close(), { once: true });
    },
    async write(input: unknown) {
      if (!ArrayBuffer.isView(input)) throw new TypeError("child stdin takes bytes (Uint8Array)");
      const chunk = input instanceof Uint8Array
        ? input
        : new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
      let off = 0;
      while (off < chunk.length) {
        if (!own.open) throw new Error("write to child stdin: closed");
        const part = off === 0 ? chunk : chunk.subarray(off);
        const n = Number(c.fn.write(fd, part, BigInt(part.length)));
        if (n >= 0) {
          off += n;
          continue;
        }
        const e = c.errno();
        if (e === EAGAIN) await reactor.writable(fd);
        else if (e !== EINTR) throw new Error(`write to child stdin: ${c.osMessage(e)}`);
      }
    },
    close() {
      own.close();
    },
    abort() {
      own.close();
    },
  });
}
