/**
 * Readiness of raw fds (child pipes, pidfds) for the direct spawn path: one epoll instance
 * per isolate, waited on by a single `epoll_wait` on Deno's blocking pool while anything
 * waits, so any number of children costs one pool thread and one thread hop per wake-up.
 *
 * Registrations are one-shot and re-armed by the next wait; a stale event (an fd closed
 * and its number reused) only causes a spurious wake-up, which every caller tolerates by
 * retrying its non-blocking read/write/waitpid. Nothing is pending when nothing waits, so
 * an idle reactor never keeps the process (or a test) alive; and it holds no fds then
 * either (the epoll fd and its eventfd are opened per busy period), because a terminated
 * worker — a closed kernel session — could never close them.
 *
 * @module
 */

import { ENOENT, type LibcHandle, O_CLOEXEC, O_NONBLOCK } from "./libc.ts";

const EPOLLIN = 0x001;
const EPOLLOUT = 0x004;
const EPOLLONESHOT = 1 << 30;
const CTL_ADD = 1;
const CTL_DEL = 2;
const CTL_MOD = 3;
const EEXIST = 17;
const MAX_EVENTS = 64;
/** `struct epoll_event` is packed on x86_64 (12 bytes, data at 4), natural elsewhere. */
const PACKED = Deno.build.arch === "x86_64";
const EVENT_SIZE = PACKED ? 12 : 16;
const DATA_OFFSET = PACKED ? 4 : 8;

interface Waiter {
  resolve(): void;
  reject(e: unknown): void;
}

/** An epoll reactor; get the shared one with {@link reactorFor}. */
export class FdReactor {
  readonly #c: LibcHandle;
  #epfd = -1;
  #wakeFd = -1;
  readonly #waiters = new Map<number, Waiter>();
  readonly #armed = new Set<number>();
  #running = false;
  #one = new Uint8Array(EVENT_SIZE);
  #oneView = new DataView(this.#one.buffer);
  #events = new Uint8Array(EVENT_SIZE * MAX_EVENTS);
  #eventsView = new DataView(this.#events.buffer);
  #word = new BigUint64Array(1);

  constructor(c: LibcHandle) {
    this.#c = c;
  }

  /** Open the epoll fd and its wake-up eventfd, unless open. */
  #open(): void {
    if (this.#epfd >= 0) return;
    const c = this.#c;
    const epfd = c.fn.epoll_create1(O_CLOEXEC);
    if (epfd < 0) throw new Error(`epoll_create1: ${c.osMessage(c.errno())}`);
    const wakeFd = c.fn.eventfd(0, O_CLOEXEC | O_NONBLOCK);
    if (wakeFd < 0) {
      const e = c.errno();
      c.fn.close(epfd);
      throw new Error(`eventfd: ${c.osMessage(e)}`);
    }
    this.#epfd = epfd;
    this.#wakeFd = wakeFd;
    this.#ctl(CTL_ADD, wakeFd, EPOLLIN);
  }

  /** Close both (only when no epoll_wait is in flight); registrations go with them. */
  #close(): void {
    if (this.#epfd < 0) return;
    this.#c.fn.close(this.#epfd);
    this.#c.fn.close(this.#wakeFd);
    this.#epfd = this.#wakeFd = -1;
    this.#armed.clear();
  }

  /** Resolves once `fd` is readable (or at EOF/error), or when {@link forget} is called. */
  readable(fd: number): Promise<void> {
    return this.#wait(fd, EPOLLIN);
  }

  /** Resolves once `fd` is writable (or the reader is gone), or on {@link forget}. */
  writable(fd: number): Promise<void> {
    return this.#wait(fd, EPOLLOUT);
  }

  /** Drop `fd` (call before closing it): deregister it and wake its waiter, if any. */
  forget(fd: number): void {
    if (this.#armed.delete(fd)) this.#ctlQuiet(CTL_DEL, fd, 0);
    const w = this.#waiters.get(fd);
    if (w === undefined) return;
    this.#waiters.delete(fd);
    w.resolve();
    // The pending epoll_wait would otherwise keep the event loop alive with nothing to do.
    if (this.#running && this.#waiters.size === 0) {
      this.#word[0] = 1n;
      this.#c.fn.write(this.#wakeFd, this.#word, 8n);
    }
  }

  #wait(fd: number, events: number): Promise<void> {
    if (this.#waiters.has(fd)) return Promise.reject(new Error(`fd ${fd} already has a waiter`));
    try {
      this.#open();
    } catch (e) {
      return Promise.reject(e);
    }
    const flags = events | EPOLLONESHOT;
    if (this.#armed.has(fd)) {
      this.#ctl(CTL_MOD, fd, flags);
    } else {
      this.#ctl(CTL_ADD, fd, flags);
      this.#armed.add(fd);
    }
    const p = new Promise<void>((resolve, reject) => this.#waiters.set(fd, { resolve, reject }));
    if (!this.#running) this.#run();
    return p;
  }

  #ctl(op: number, fd: number, events: number): void {
    const err = this.#ctlQuiet(op, fd, events);
    if (err === 0) return;
    // A closed-and-reused number may be stale in #armed, or live in epoll: retry the other way.
    if (op === CTL_MOD && err === ENOENT && this.#ctlQuiet(CTL_ADD, fd, events) === 0) return;
    if (op === CTL_ADD && err === EEXIST && this.#ctlQuiet(CTL_MOD, fd, events) === 0) return;
    throw new Error(`epoll_ctl(${op}, fd ${fd}): ${this.#c.osMessage(err)}`);
  }

  #ctlQuiet(op: number, fd: number, events: number): number {
    this.#oneView.setUint32(0, events, true);
    this.#oneView.setBigUint64(DATA_OFFSET, BigInt(fd), true);
    return this.#c.fn.epoll_ctl(this.#epfd, op, fd, this.#one) === 0 ? 0 : this.#c.errno();
  }

  async #run(): Promise<void> {
    this.#running = true;
    let failures = 0;
    try {
      while (this.#waiters.size > 0) {
        // What is ready already needs no trip through the pool thread: a child's pipes hang
        // up a moment before its pidfd fires, and 2.3 trips per `true` became ~1.
        let n = this.#c.fn.epoll_wait_now(this.#epfd, this.#events, MAX_EVENTS, 0);
        if (n === 0) n = await this.#c.fn.epoll_wait(this.#epfd, this.#events, MAX_EVENTS, -1);
        if (n < 0) {
          // EINTR; errno is not readable from here, so give up only if it persists.
          if (++failures > 100) throw new Error("epoll_wait keeps failing");
          continue;
        }
        failures = 0;
        for (let i = 0; i < n; i++) {
          const fd = this.#eventsView.getUint32(i * EVENT_SIZE + DATA_OFFSET, true);
          if (fd === this.#wakeFd) {
            this.#c.fn.read(this.#wakeFd, this.#word, 8n);
            continue;
          }
          const w = this.#waiters.get(fd);
          if (w === undefined) continue;
          this.#waiters.delete(fd);
          w.resolve();
        }
      }
    } catch (e) {
      const waiters = [...this.#waiters.values()];
      this.#waiters.clear();
      for (const w of waiters) w.reject(e);
    } finally {
      this.#running = false;
      this.#close(); // nothing waits (the loop's condition), and nothing is in flight
    }
  }
}

let shared: FdReactor | undefined;

/** The reactor of this isolate, created on first use. */
export function reactorFor(c: LibcHandle): FdReactor {
  return shared ??= new FdReactor(c);
}
