/**
 * The journal's two stores as a session sees them — the content store ({@link CasPort}) and
 * the journal intake ({@link IntakePort}) — and their kernel-proxied implementations for a
 * confined session (issue 16), which cannot see either: the state directory is not in its
 * mount namespace. A proxied session sends each intake line and each blob operation to the
 * kernel over its stdout, which writes and answers on its behalf; the kernel checks what it is
 * asked to log (the session and principal of a row are the kernel's own, never the session's
 * word), so a confined principal can neither write another session's journal nor tamper with
 * the store.
 *
 * "Logged before the result is delivered" holds as it does for a direct writer: an intake line
 * is on the session's stdout, in order, before the exec's `done` message, and the kernel writes
 * each line to the intake when it reads it, before it handles anything after it — a session
 * that dies right after sending still had its line written.
 *
 * @module
 */

import type { IntakeBegin, IntakeFinish, IntakeWhole } from "../store/mod.ts";
import type { FromWorker, StoreOp, StoreReplyMsg } from "./session_messages.ts";

/** What a session needs from the content store. `ContentStore` is one. */
export interface CasPort {
  /** Where the session's capture spills go before they are stored. */
  readonly tmpDir: string;
  put(bytes: Uint8Array, opts?: { fsync?: boolean }): Promise<{ ref: string; size: number }>;
  putStream(stream: ReadableStream<Uint8Array>): Promise<{ ref: string; size: number }>;
  get(ref: string): Promise<Uint8Array>;
  getRange(ref: string, offset: number, length: number): Promise<{ data: Uint8Array }>;
  refresh(ref: string): Promise<boolean>;
}

/** What a session's exec log needs from the intake. `IntakeWriter` is one. */
export interface IntakePort {
  nextKey(): number;
  append(line: IntakeBegin | IntakeFinish | IntakeWhole): void;
}

/** Bytes of one `putStream` chunk message (base64 on the wire: 4/3 of it). */
export const STORE_CHUNK_BYTES = 1024 * 1024;

/** An error as the content store raises it (`code`: `blob_not_found`, `bad_ref`, …). */
class StoreFailure extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
    this.name = "StoreError";
  }
}

/** Intake lines sent to the kernel, which writes them (a confined session). */
export class ProxiedIntake implements IntakePort {
  #next = 1;

  constructor(readonly post: (m: FromWorker) => void) {}

  nextKey(): number {
    return this.#next++;
  }

  /** The line is in the pipe, ahead of anything sent later, when this returns. */
  append(line: IntakeBegin | IntakeFinish | IntakeWhole): void {
    this.post({ t: "intake", line });
  }
}

/** Content-store operations asked of the kernel (a confined session). */
export class ProxiedCas implements CasPort {
  readonly #pending = new Map<
    number,
    { resolve: (v: unknown) => void; reject: (e: unknown) => void }
  >();
  #nextRid = 1;

  constructor(readonly post: (m: FromWorker) => void, readonly tmpDir: string) {}

  #ask(op: StoreOp): Promise<unknown> {
    const rid = this.#nextRid++;
    return new Promise((resolve, reject) => {
      this.#pending.set(rid, { resolve, reject });
      this.post({ t: "store", rid, op });
    });
  }

  /** The kernel answered. */
  reply(m: StoreReplyMsg): void {
    const p = this.#pending.get(m.rid);
    if (!p) return;
    this.#pending.delete(m.rid);
    if (m.ok) p.resolve(m.result);
    else p.reject(new StoreFailure(m.error.code, m.error.message));
  }

  async put(bytes: Uint8Array, opts: { fsync?: boolean } = {}) {
    if (bytes.length <= STORE_CHUNK_BYTES) {
      return await this.#ask({ op: "put", b64: bytes.toBase64(), fsync: opts.fsync === true }) as {
        ref: string;
        size: number;
      };
    }
    return await this.putStream(ReadableStream.from([bytes]), opts);
  }

  async putStream(stream: ReadableStream<Uint8Array>, opts: { fsync?: boolean } = {}) {
    const { id } = await this.#ask({ op: "open", fsync: opts.fsync === true }) as { id: number };
    try {
      for await (const chunk of stream) {
        for (let off = 0; off < chunk.length; off += STORE_CHUNK_BYTES) {
          const part = chunk.subarray(off, off + STORE_CHUNK_BYTES);
          // One chunk in flight: the kernel holds at most one chunk per stream.
          await this.#ask({ op: "chunk", id, b64: part.toBase64() });
        }
      }
    } catch (e) {
      await this.#ask({ op: "abort", id }).catch(() => {});
      throw e;
    }
    return await this.#ask({ op: "close", id }) as {
      ref: string;
      size: number;
    };
  }

  async get(ref: string): Promise<Uint8Array> {
    const r = await this.#ask({ op: "get", ref }) as { b64: string };
    return Uint8Array.fromBase64(r.b64);
  }

  async getRange(ref: string, offset: number, length: number): Promise<{ data: Uint8Array }> {
    const r = await this.#ask({ op: "range", ref, offset, length }) as { b64: string };
    return { data: Uint8Array.fromBase64(r.b64) };
  }

  async refresh(ref: string): Promise<boolean> {
    return await this.#ask({ op: "refresh", ref }) as boolean;
  }
}
