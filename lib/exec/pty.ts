/**
 * Programs on a pseudo-terminal: the child leads a new session whose controlling terminal is
 * the PTY's slave side (so job control, `tty`, `stty size`, Ctrl-C and SIGWINCH behave as in
 * a real terminal), and we hold the master side.
 *
 * Built on the direct spawn path (FFI posix_spawn with POSIX_SPAWN_SETSID, the slave opened
 * as fd 0 after setsid): the same resolution, cwd/env rules, errors, cgroups and kill ladder
 * as captured children. The master is non-blocking; reads and writes are synchronous
 * syscalls on the JS thread, and waiting for readiness goes through the isolate's one epoll
 * reactor — an idle PTY costs no CPU and no thread. The exit is seen on a pidfd; with
 * `jobControl` the reaper also reports stops and continues (Ctrl-Z, `fg`).
 *
 * ```ts
 * const pty = openPty({ argv: ["python3"], cwd: "/tmp", env: { PATH: "/usr/bin", TERM: "xterm-256color" } });
 * await pty.write("print(6 * 7)\r");
 * const buf = new Uint8Array(4096);
 * const n = await pty.read(buf); // raw terminal output, escape sequences included
 * await pty.close();             // SIGKILL to the whole session, reaped
 * ```
 *
 * @module
 */

import { Cgroup } from "./cgroup.ts";
import { spawnError } from "./child.ts";
import { ExecError } from "./errors.ts";
import { type FdReactor, reactorFor } from "./fd_reactor.ts";
import {
  EAGAIN,
  EINTR,
  EIO,
  type LibcHandle,
  loadLibc,
  O_CLOEXEC,
  O_NOCTTY,
  O_NONBLOCK,
  O_RDWR,
} from "./libc.ts";
import { KEEPER_SHELL, keeperArgs } from "./job_keeper.ts";
import { reap, spawnOnTerminal } from "./posix_spawn.ts";
import { prepare, type Prepared } from "./prepare.ts";
import { signalGroup, signalSession, type SignalSpec } from "./process_group.ts";
import { Supervisor } from "./supervisor.ts";
import type { ExitInfo, KillScope, SpawnOptions } from "./types.ts";

/** The `TERM` a caller should give programs on our PTYs when it has none of its own. */
export const DEFAULT_TERM = "xterm-256color";
/** Largest terminal dimension the kernel accepts (`struct winsize` holds 16 bits). */
export const MAX_DIMENSION = 65535;

const F_SETFL = 4;
const F_DUPFD_CLOEXEC = 1030;
const TCGETS = 0x5401n;
const TCSETS = 0x5402n;
const TIOCGPGRP = 0x540fn;
const FIONREAD = 0x541bn;
const TIOCGWINSZ = 0x5413n;
const TIOCSWINSZ = 0x5414n;
/** c_iflag IUTF8: the line editor erases whole UTF-8 characters (terminals set it too). */
const IUTF8 = 0o40000;

/** Options of {@link openPty}: those of a spawn (no stdin: the terminal is stdin). */
export interface PtyOptions extends Omit<SpawnOptions, "stdin"> {
  /** Columns, 1–65535 (default 80). */
  cols?: number;
  /** Rows, 1–65535 (default 24). */
  rows?: number;
  /**
   * Job control, for a REPL that parks a foreground program on Ctrl-Z and resumes it on
   * `fg`/`bg`: the program runs as a job under a keeper shell (job_keeper.ts explains why a
   * direct child could not be stopped from its terminal), and stops and continues are
   * reported ({@link Pty.onJobState}). {@link Pty.pid} is then the keeper's; the program's
   * group is {@link Pty.jobGroup}. Default false.
   */
  jobControl?: boolean;
}

/** Where {@link Pty.signal} sends a signal. */
export type PtySignalTarget =
  /** The child's own process group (it leads it: pgid = pid). */
  | "group"
  /** The terminal's foreground process group (a job a shell on the PTY runs right now). */
  | "foreground"
  /** Every process of the child's session, whichever group it is in. */
  | "session";

/** The child's state as job control sees it. */
export type PtyJobState = "running" | "stopped" | "exited";

/** A job-control change ({@link Pty.onJobState}). */
export interface PtyJobChange {
  state: PtyJobState;
  /**
   * The stopping signal when it is known (a child stopped by {@link Pty.suspend} without job
   * control: `"SIGSTOP"`); null otherwise — the keeper does not learn which signal stopped
   * its job.
   */
  signal: string | null;
}

function checkDimension(name: string, v: unknown, fallback: number): number {
  if (v === undefined) return fallback;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1 || v > MAX_DIMENSION) {
    throw new ExecError(
      "invalid_argument",
      `${name} must be a whole number from 1 to ${MAX_DIMENSION}, got ${String(v)}`,
    );
  }
  return v;
}

function requireLibc(what: string): LibcHandle {
  const c = loadLibc();
  if (c !== null) return c;
  throw new ExecError("spawn_failed", `${what}: pseudo-terminals are unavailable here`, {
    hint: "PTYs need Linux with glibc ≥ 2.29, a kernel with pidfds (≥ 5.3) and --allow-ffi",
  });
}

/** The master side and the name of the slave side of a fresh PTY. */
function openMaster(c: LibcHandle, cols: number, rows: number): { fd: number; slave: string } {
  const L = c.fn;
  const fd = L.posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) throw new Error(`posix_openpt: ${c.osMessage(c.errno())}`);
  try {
    if (L.grantpt(fd) !== 0) throw new Error(`grantpt: ${c.osMessage(c.errno())}`);
    if (L.unlockpt(fd) !== 0) throw new Error(`unlockpt: ${c.osMessage(c.errno())}`);
    const name = new Uint8Array(128);
    const rc = L.ptsname_r(fd, name, BigInt(name.length));
    if (rc !== 0) throw new Error(`ptsname_r: ${c.osMessage(rc)}`);
    setWinsize(c, fd, cols, rows);
    // termios set through the master apply to the slave; best effort.
    const t = new Uint8Array(64);
    if (L.ioctl(fd, TCGETS, t) === 0) {
      const view = new DataView(t.buffer);
      view.setUint32(0, view.getUint32(0, true) | IUTF8, true);
      L.ioctl(fd, TCSETS, t);
    }
    return { fd, slave: new TextDecoder().decode(name.subarray(0, name.indexOf(0))) };
  } catch (e) {
    L.close(fd);
    throw e;
  }
}

function setWinsize(c: LibcHandle, fd: number, cols: number, rows: number): void {
  // struct winsize { ws_row, ws_col, ws_xpixel, ws_ypixel }
  const ws = new Uint16Array([rows, cols, 0, 0]);
  if (c.fn.ioctl(fd, TIOCSWINSZ, new Uint8Array(ws.buffer)) !== 0) {
    throw new Error(`TIOCSWINSZ: ${c.osMessage(c.errno())}`);
  }
}

/**
 * Start `opts.argv` on a new pseudo-terminal. Resolution (the given env's PATH and cwd),
 * validation and errors are those of {@link spawnCapture}; the env is used as given (pass
 * `TERM`, e.g. {@link DEFAULT_TERM}). Throws {@link ExecError} when nothing could be started.
 */
export function openPty(opts: PtyOptions): Pty {
  const prep = prepare({ ...opts, stdin: undefined });
  const cols = checkDimension("cols", opts.cols, 80);
  const rows = checkDimension("rows", opts.rows, 24);
  const name = prep.displayArgv[0];
  if (opts.signal?.aborted) {
    throw new ExecError("cancelled", `${name} was cancelled before it started`);
  }
  const c = requireLibc(name);
  let master: { fd: number; slave: string };
  try {
    master = openMaster(c, cols, rows);
  } catch (e) {
    throw new ExecError("spawn_failed", `${name}: cannot open a pseudo-terminal: ${e}`, {
      osMessage: (e as Error).message,
      hint: "too many open terminals or files? close some PTYs",
      cause: e,
    });
  }
  const cgroup = prep.killScope === "cgroup" ? Cgroup.create() : null;
  const launched = opts.jobControl
    ? { ...prep, program: KEEPER_SHELL, args: keeperArgs(prep.program, prep.args) }
    : prep;
  let spawned: { pid: number; pidfd: number };
  try {
    spawned = spawnOnTerminal(c, launched, master.slave, cgroup);
  } catch (e) {
    c.fn.close(master.fd);
    cgroup?.remove();
    throw spawnError(prep, e);
  }
  // A second fd on the master for writes: the reactor has one waiter per fd, and a reader
  // waits on the first most of the time.
  c.fn.fcntl(master.fd, F_SETFL, BigInt(O_NONBLOCK)); // shared by both fds (one description)
  let writeFd = c.fn.fcntl(master.fd, F_DUPFD_CLOEXEC, 3n);
  if (writeFd < 0) writeFd = master.fd; // out of fds: share it (writes then never wait)
  return new Pty(c, prep, master.fd, writeFd, spawned, cgroup, cols, rows, opts);
}

/** A program on a pseudo-terminal; see {@link openPty}. */
export class Pty {
  /**
   * Process id of the child we started and reap: also its process group and session id.
   * With `jobControl` it is the keeper shell's (see {@link jobGroup} for the program's).
   */
  readonly pid: number;
  /** The executable started (absolute path). */
  readonly program: string;
  /** argv as given (bytes decoded lossily). */
  readonly argv: readonly string[];
  /** Wall-clock ms at spawn. */
  readonly startedAt: number;
  /** The kill scope in force. */
  readonly killScope: KillScope;
  /** Settles once the child has been reaped (stops do not settle it). */
  readonly exit: Promise<ExitInfo>;

  readonly #c: LibcHandle;
  readonly #reactor: FdReactor;
  readonly #readFd: number;
  readonly #writeFd: number;
  readonly #cgroup: Cgroup | null;
  readonly #sup: Supervisor;
  #cols: number;
  #rows: number;
  #state: PtyJobState = "running";
  #exitInfo: ExitInfo | null = null;
  #closed = false;
  #closing: Promise<ExitInfo> | null = null;
  #eof = false;
  #listeners = new Set<(c: PtyJobChange) => void>();
  /** Job control: the program runs as a job of a keeper shell (job_keeper.ts). */
  readonly #keeper: boolean;
  #jobGroup: number | null = null;

  /** Use {@link openPty}. */
  constructor(
    c: LibcHandle,
    prep: Prepared,
    readFd: number,
    writeFd: number,
    spawned: { pid: number; pidfd: number },
    cgroup: Cgroup | null,
    cols: number,
    rows: number,
    opts: PtyOptions,
  ) {
    this.#c = c;
    this.#reactor = reactorFor(c);
    this.#readFd = readFd;
    this.#writeFd = writeFd;
    this.#cgroup = cgroup;
    this.#cols = cols;
    this.#rows = rows;
    this.pid = spawned.pid;
    this.program = prep.program;
    this.argv = prep.displayArgv;
    this.startedAt = Date.now();
    this.killScope = cgroup !== null ? "cgroup" : "group";
    this.#keeper = opts.jobControl === true;
    if (!this.#keeper) this.#jobGroup = this.pid;
    opts.onSpawn?.(this.pid);
    // The keeper relays a job's stop by stopping itself with SIGSTOP: its own signal says
    // nothing about which one stopped the job.
    const jobs = this.#keeper
      ? {
        onStop: () => this.#setState("stopped", null),
        onContinue: () => this.#setState("running", null),
      }
      : undefined;
    this.exit = reap(c, this.#reactor, this.pid, spawned.pidfd, jobs).then((info) => {
      this.#exitInfo = info;
      this.#setState("exited", null);
      return info;
    });
    this.#sup = new Supervisor(
      this.pid,
      prep.graceMs,
      cgroup,
      opts.signal,
      prep.timeoutMs,
      () => this.#exitInfo === null,
    );
    // Never an unhandled rejection when nobody awaits `exit` (only a failing wait rejects).
    this.exit.catch(() => {}).finally(() => this.#sup.dispose());
  }

  #setState(state: PtyJobState, signal: string | null): void {
    if (this.#state === state) return;
    this.#state = state;
    for (const fn of this.#listeners) {
      try {
        fn({ state, signal });
      } catch {
        // a listener's failure is its own
      }
    }
  }

  /** Process group id (= {@link pid}). */
  get pgid(): number {
    return this.pid;
  }

  /** Current columns. */
  get cols(): number {
    return this.#cols;
  }

  /** Current rows. */
  get rows(): number {
    return this.#rows;
  }

  /** `"running"`, `"stopped"` (job control only) or `"exited"` (reaped). */
  get state(): PtyJobState {
    return this.#state;
  }

  /** How the child ended, once reaped (null before). */
  get exitInfo(): ExitInfo | null {
    return this.#exitInfo;
  }

  /** True once {@link close} was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Call `fn` on every job-control change (stopped, running again, exited). Stops and
   * continues are only seen with `jobControl: true`; the exit always is. Returns an
   * unsubscribe function.
   */
  onJobState(fn: (change: PtyJobChange) => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  /**
   * Read raw terminal output into `view`, waiting until some is available: the byte count,
   * or 0 at the end (every slave fd closed — the child and all it started are gone) or once
   * {@link close} was called. One reader at a time. A background process that keeps the
   * terminal open after the child exited keeps the end from coming: watch {@link exit} and
   * drain with {@link readNow}.
   */
  async read(view: Uint8Array): Promise<number> {
    for (;;) {
      const n = this.readNow(view);
      if (n >= 0) return n;
      await this.#reactor.readable(this.#readFd);
    }
  }

  /** Like {@link read} without waiting: -1 when nothing is available right now. */
  readNow(view: Uint8Array): number {
    if (this.#closed || this.#eof) return 0;
    for (;;) {
      const n = Number(this.#c.fn.read(this.#readFd, view, BigInt(view.byteLength)));
      if (n > 0) return n;
      if (n === 0) break;
      const e = this.#c.errno();
      if (e === EAGAIN) return -1;
      if (e === EINTR) continue;
      if (e === EIO) break; // the slave side is closed for good
      throw new Error(`read from pty: ${this.#c.osMessage(e)}`);
    }
    this.#eof = true;
    return 0;
  }

  /** Output bytes waiting to be read right now (0 once closed or at the end). */
  pending(): number {
    if (this.#closed || this.#eof) return 0;
    const n = new Int32Array(1);
    return this.#c.fn.ioctl(this.#readFd, FIONREAD, new Uint8Array(n.buffer)) === 0 ? n[0] : 0;
  }

  /**
   * The raw output as a byte stream (escape sequences included) — the REPL's passthrough to
   * the real terminal. It ends like {@link read}; cancelling it only stops reading.
   */
  readable(chunkSize = 65536): ReadableStream<Uint8Array> {
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        const buf = new Uint8Array(chunkSize);
        const n = await this.read(buf);
        if (n === 0) controller.close();
        else controller.enqueue(buf.subarray(0, n));
      },
    });
  }

  /**
   * Write `data` to the terminal (what a person types: `"\r"` is Enter, `"\x03"` Ctrl-C),
   * waiting while the terminal's input buffer is full. Throws once closed, or when the
   * terminal is gone.
   */
  async write(data: Uint8Array | string): Promise<void> {
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
    let off = 0;
    while (off < bytes.length) {
      if (this.#closed) throw new Error("write to pty: closed");
      const part = off === 0 ? bytes : bytes.subarray(off);
      const n = Number(this.#c.fn.write(this.#writeFd, part, BigInt(part.length)));
      if (n >= 0) {
        off += n;
        continue;
      }
      const e = this.#c.errno();
      if (e === EINTR) continue;
      if (e !== EAGAIN) throw new Error(`write to pty: ${this.#c.osMessage(e)}`);
      if (this.#writeFd === this.#readFd) {
        await new Promise((r) => setTimeout(r, 10)); // no fd of its own to wait on
      } else await this.#reactor.writable(this.#writeFd);
    }
  }

  /** Set the terminal size (the foreground job gets SIGWINCH). Throws for a bad size. */
  resize(cols: number, rows: number): void {
    cols = checkDimension("cols", cols, 80);
    rows = checkDimension("rows", rows, 24);
    if (this.#closed) throw new Error("resize pty: closed");
    setWinsize(this.#c, this.#readFd, cols, rows);
    this.#cols = cols;
    this.#rows = rows;
  }

  /** The size the terminal reports (what `stty size` shows). */
  size(): { cols: number; rows: number } {
    const ws = new Uint16Array(4);
    if (this.#c.fn.ioctl(this.#readFd, TIOCGWINSZ, new Uint8Array(ws.buffer)) !== 0) {
      throw new Error(`TIOCGWINSZ: ${this.#c.osMessage(this.#c.errno())}`);
    }
    return { rows: ws[0], cols: ws[1] };
  }

  /**
   * The terminal's foreground process group: the program's own group, or the group of the job
   * a shell on the terminal runs in the foreground (the keeper's while its job is stopped).
   * Null once closed or when unknown.
   */
  foregroundGroup(): number | null {
    if (this.#closed) return null;
    const pg = new Int32Array(1);
    if (this.#c.fn.ioctl(this.#readFd, TIOCGPGRP, new Uint8Array(pg.buffer)) !== 0) return null;
    return pg[0] > 0 ? pg[0] : null;
  }

  /**
   * The program's process group: {@link pid}, or with `jobControl` the group the keeper made
   * for it (null until the keeper has started it).
   */
  jobGroup(): number | null {
    if (this.#jobGroup === null) {
      const fg = this.foregroundGroup();
      if (fg !== null && fg !== this.pid) this.#jobGroup = fg;
    }
    return this.#jobGroup;
  }

  /**
   * Send `sig` to the program's group ({@link jobGroup}, the default), the terminal's
   * foreground group, or every process of the session. False when nothing was there to
   * receive it (or after {@link close}).
   */
  signal(sig: SignalSpec, target: PtySignalTarget = "group"): boolean {
    if (this.#closed) return false;
    if (target === "session") return signalSession(this.pid, sig) > 0;
    const pgid = target === "foreground"
      ? this.foregroundGroup() ?? this.jobGroup() ?? this.pid
      : this.jobGroup() ?? this.pid;
    return signalGroup(pgid, sig);
  }

  /** Stop the program's group (SIGSTOP); with `jobControl` the keeper reports the stop. */
  suspend(): boolean {
    return this.signal("SIGSTOP");
  }

  /**
   * Continue a stopped program (`fg`/`bg`): SIGCONT to its group, or with `jobControl` to the
   * keeper, which continues its job in the foreground of its terminal again.
   */
  resume(): boolean {
    if (this.#closed) return false;
    return this.#keeper ? signalGroup(this.pid, "SIGCONT") : this.signal("SIGCONT");
  }

  /**
   * Start the kill ladder (SIGINT → grace → SIGTERM → grace → SIGKILL to the group; also what
   * `signal`/`timeoutMs` of the options start). Idempotent; see {@link close} for a hard stop.
   */
  cancel(): void {
    this.#sup.cancel();
  }

  /**
   * End it: SIGCONT and SIGKILL to the child's group, every other process of its session and
   * its cgroup; reap; close the master. Idempotent; resolves with how the child ended.
   */
  close(): Promise<ExitInfo> {
    this.#closing ??= (async () => {
      this.#kill();
      let info: ExitInfo;
      try {
        info = await this.exit;
      } catch {
        info = { status: null, signal: "SIGKILL" }; // waiting failed: it was killed all the same
      }
      // Whatever it started and left behind (in its session or cgroup) goes too.
      this.#kill();
      this.#closed = true;
      this.#releaseFds();
      this.#cgroup?.remove();
      return info;
    })();
    return this.#closing;
  }

  #kill(): void {
    for (const sig of ["SIGCONT", "SIGKILL"]) {
      try {
        signalGroup(this.pid, sig);
        signalSession(this.pid, sig);
      } catch {
        // gone
      }
    }
    this.#cgroup?.kill();
  }

  #releaseFds(): void {
    const L = this.#c.fn;
    // forget() wakes a waiting reader or writer, which then sees `closed`.
    this.#reactor.forget(this.#readFd);
    if (this.#writeFd !== this.#readFd) {
      this.#reactor.forget(this.#writeFd);
      L.close(this.#writeFd);
    }
    L.close(this.#readFd);
  }

  /** {@link close}. */
  [Symbol.asyncDispose](): Promise<ExitInfo> {
    return this.close();
  }
}
