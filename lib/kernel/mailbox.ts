/**
 * One-way message delivery between the kernel's main thread and a session Worker through
 * shared memory. The sender writes a JSON message into a shared slot and `Atomics.notify`s;
 * the receiver wakes through `Atomics.waitAsync`. That skips what `postMessage` costs per
 * message in Deno (structured-clone serialisation, and a MessageEvent dispatched on the
 * receiving side), which is most of an exec's thread-hop cost for small results.
 *
 * A message that does not fit the slot, or finds the previous one not yet taken, travels by
 * `postMessage` instead (as `"<seq>:<json>"`). Every message carries a sequence number and the
 * receiver delivers strictly in order, so the two paths never reorder.
 *
 * @module
 */

/** Int32 header: [0] slot state (0 empty, 1 full), [1] byte length, [2] seq, [3] closed. */
const HEADER_BYTES = 16;
/** Payload bytes per slot; bigger messages go by `postMessage`. */
export const SLOT_BYTES = 16 * 1024;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A fresh shared slot (one per direction per worker). */
export function mailboxBuffer(): SharedArrayBuffer {
  return new SharedArrayBuffer(HEADER_BYTES + SLOT_BYTES);
}

/** The writing end. `fallback` posts the `"<seq>:<json>"` text the slot could not take. */
export class MailboxSender {
  readonly #i32: Int32Array;
  readonly #data: Uint8Array;
  #seq = 0;

  constructor(sab: SharedArrayBuffer, readonly fallback: (text: string) => void) {
    this.#i32 = new Int32Array(sab, 0, HEADER_BYTES / 4);
    this.#data = new Uint8Array(sab, HEADER_BYTES);
  }

  /** Send one message (JSON-serialisable). Never blocks. */
  send(m: unknown): void {
    const json = JSON.stringify(m);
    const seq = ++this.#seq;
    const i32 = this.#i32;
    if (Atomics.load(i32, 0) === 0 && json.length <= SLOT_BYTES) {
      const r = encoder.encodeInto(json, this.#data);
      if (r.read === json.length) {
        i32[1] = r.written;
        i32[2] = seq;
        Atomics.store(i32, 0, 1); // publishes the bytes and header written above
        Atomics.notify(i32, 0);
        return;
      }
    }
    this.fallback(`${seq}:${json}`);
  }
}

/** The reading end: delivers each message's JSON text once, in send order. */
export class MailboxReceiver {
  readonly #i32: Int32Array;
  readonly #data: Uint8Array;
  #next = 1;
  /** Messages that arrived ahead of an earlier one still in flight on the other path. */
  readonly #held = new Map<number, string>();

  constructor(sab: SharedArrayBuffer, readonly deliver: (json: string) => void) {
    this.#i32 = new Int32Array(sab, 0, HEADER_BYTES / 4);
    this.#data = new Uint8Array(sab, HEADER_BYTES);
    this.#arm();
  }

  /** A message that came by `postMessage` (`"<seq>:<json>"`). Ignored once closed. */
  fromPost(text: string): void {
    if (Atomics.load(this.#i32, 3) !== 0) return; // a late message of a terminated worker
    const i = text.indexOf(":");
    this.#accept(Number(text.slice(0, i)), text.slice(i + 1));
  }

  /** Stop waiting (the worker is gone): nothing more is delivered, by either path. */
  close(): void {
    Atomics.store(this.#i32, 3, 1);
    Atomics.notify(this.#i32, 0);
  }

  #arm(): void {
    const i32 = this.#i32;
    while (Atomics.load(i32, 3) === 0) {
      const w = Atomics.waitAsync(i32, 0, 0);
      if (w.async) {
        w.value.then(() => {
          try {
            this.#take();
          } finally {
            this.#arm();
          }
        });
        return;
      }
      this.#take(); // already full: take it and wait again
    }
  }

  /** Take the slot's message, if any. */
  #take(): void {
    const i32 = this.#i32;
    if (Atomics.load(i32, 3) === 0 && Atomics.load(i32, 0) === 1) {
      const text = decoder.decode(this.#data.subarray(0, i32[1]));
      const seq = i32[2];
      Atomics.store(i32, 0, 0);
      this.#accept(seq, text);
    }
  }

  #accept(seq: number, json: string): void {
    if (seq !== this.#next) {
      this.#held.set(seq, json);
      return;
    }
    this.#next++;
    this.deliver(json);
    for (let t = this.#held.get(this.#next); t !== undefined; t = this.#held.get(this.#next)) {
      this.#held.delete(this.#next++);
      this.deliver(t);
    }
  }
}
