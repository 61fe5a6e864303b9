/**
 * The kernel's side of a confined session's journal (issue 16; the session side is
 * `journal_ports.ts`): it writes the session's intake lines into that session's own intake
 * series — with the session and principal the kernel knows, whatever the line says — and runs
 * its content-store operations, bounded (one blob read at most `BLOB_READ_CAP`, a few streams at
 * a time, one chunk buffered per stream).
 *
 * @module
 */

import {
  BLOB_READ_CAP,
  type ContentStore,
  type IntakeBegin,
  type IntakeFinish,
  type IntakeWhole,
  IntakeWriter,
} from "../store/mod.ts";
import type { StoreOp } from "./session_messages.ts";

/** Put streams one session may have open at once. */
export const MAX_STORE_STREAMS = 4;

/** A refusal with a store-like code (the session raises it as the store would). */
export class ProxyRefusal extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
  }
}

interface OpenStream {
  controller: ReadableStreamDefaultController<Uint8Array>;
  /** Resolves when the store wants the next chunk. */
  wanted: Promise<void>;
  want: () => void;
  done: Promise<{ ref: string; size: number }>;
}

/** One confined session worker's journal, written by the kernel. */
export class JournalProxy {
  readonly #writer: IntakeWriter;
  readonly #streams = new Map<number, OpenStream>();
  #nextStream = 1;

  constructor(
    readonly cas: ContentStore,
    intake: { dir: string; token: string; worker: number },
    readonly session: string,
  ) {
    this.#writer = new IntakeWriter(intake.dir, intake.token, intake.worker);
  }

  /**
   * Write one intake line of the session's running exec, whose principal is `principal`.
   * Returns a problem to report (the line was not written) or null.
   */
  intake(line: unknown, principal: string | null): string | null {
    const l = line as IntakeBegin | IntakeFinish | IntakeWhole;
    if (
      l === null || typeof l !== "object" || !Number.isSafeInteger(l.k) ||
      (l.t !== "b" && l.t !== "f" && l.t !== "x")
    ) {
      return "the session sent a malformed journal line (not logged)";
    }
    if (l.t !== "f") {
      if (l.row === null || typeof l.row !== "object") return "a journal line without its row";
      // The row's attribution is the kernel's, never the session's word.
      l.row.session = this.session;
      l.row.principal = principal ?? "";
    }
    try {
      this.#writer.append(l);
      return null;
    } catch (e) {
      return `writing the journal intake failed: ${(e as Error).message}`;
    }
  }

  /** Run one store operation; throws {@link ProxyRefusal} or the store's own error. */
  async store(op: StoreOp): Promise<unknown> {
    switch (op.op) {
      case "put": {
        const r = await this.cas.put(Uint8Array.fromBase64(op.b64), { fsync: op.fsync === true });
        return { ref: r.ref, size: r.size };
      }
      case "open":
        return { id: this.#open(op.fsync === true) };
      case "chunk": {
        const s = this.#stream(op.id);
        s.controller.enqueue(Uint8Array.fromBase64(op.b64));
        // Acknowledge once the store asks for more: one chunk is buffered per stream.
        if ((s.controller.desiredSize ?? 0) <= 0) await s.wanted;
        return null;
      }
      case "close": {
        const s = this.#stream(op.id);
        this.#streams.delete(op.id);
        s.controller.close();
        return await s.done;
      }
      case "abort": {
        const s = this.#streams.get(op.id);
        this.#streams.delete(op.id);
        s?.controller.error(new ProxyRefusal("aborted", "the session aborted the put"));
        await s?.done.catch(() => {});
        return null;
      }
      case "get":
        return { b64: (await this.cas.get(op.ref, { maxBytes: BLOB_READ_CAP })).toBase64() };
      case "range": {
        if (!(Number.isSafeInteger(op.length) && op.length >= 0 && op.length <= BLOB_READ_CAP)) {
          throw new ProxyRefusal("invalid", `a blob read may be at most ${BLOB_READ_CAP} bytes`);
        }
        return { b64: (await this.cas.getRange(op.ref, op.offset, op.length)).data.toBase64() };
      }
      case "refresh":
        return await this.cas.refresh(op.ref);
      default:
        throw new ProxyRefusal("invalid", "unknown store operation");
    }
  }

  #stream(id: number): OpenStream {
    const s = this.#streams.get(id);
    if (!s) throw new ProxyRefusal("invalid", `no open put stream ${id}`);
    return s;
  }

  #open(fsync: boolean): number {
    if (this.#streams.size >= MAX_STORE_STREAMS) {
      throw new ProxyRefusal("busy", `at most ${MAX_STORE_STREAMS} puts may stream at once`);
    }
    const id = this.#nextStream++;
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    const s = {} as OpenStream;
    const rearm = () => {
      s.wanted = new Promise((r) => (s.want = r));
    };
    rearm();
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        controller = c;
      },
      pull() {
        const w = s.want;
        rearm();
        w();
      },
    }, { highWaterMark: 1 });
    s.controller = controller;
    s.done = this.cas.putStream(stream, { fsync }).then((r) => ({ ref: r.ref, size: r.size }));
    s.done.catch(() => {});
    this.#streams.set(id, s);
    return id;
  }

  /** The worker is gone: end its intake segment and drop its streams. */
  close(): void {
    for (const s of this.#streams.values()) {
      try {
        s.controller.error(new ProxyRefusal("aborted", "the session went away"));
      } catch { /* already closed */ }
    }
    this.#streams.clear();
    this.#writer.close();
  }
}
