/**
 * The PTYs of one session, kept where the session's evaluator runs (its Worker today), so a
 * session moved into a process of its own — and confined there — takes its PTY children with
 * it into the same sandbox. The kernel's main thread routes `pty.*` requests here (ids,
 * ownership and quotas are its business, lib/kernel/pty_registry.ts); this side spawns through
 * the session's own resolution (`resolveSpawn`: its cwd, env and resolver), drives the
 * terminals and answers with protocol-shaped results.
 *
 * @module
 */

import type { Evaluator } from "../eval/mod.ts";
import { resolveSpawn } from "../eval/mod.ts";
import {
  cgroupKillAvailable,
  DEFAULT_TERM,
  isExecError,
  openPty,
  sessionMembers,
} from "../exec/mod.ts";
import { RPC, RpcError } from "../client/errors.ts";
import { ShoalError } from "../value/errors.ts";
import { AgentPty, type MatchIn, type PtyNotice } from "./pty_session.ts";

/** The spawn gate of PTY programs (see {@link SessionPtys}). */
export type PtyGate = (
  program: string,
  env: Record<string, string>,
  cwd: string,
) => Promise<{ refuse: "deny" | "approval"; why: string } | null>;

/** A request from the main thread (`params.op` says which). */
export type PtyOp =
  | {
    op: "open";
    id: number;
    cmd: string;
    args: string[];
    cols: number;
    rows: number;
    env: Record<string, string>;
    scrollback: number;
  }
  | { op: "send"; id: number; bytes: string }
  | {
    op: "read";
    id: number;
    wait_for?: string;
    until_exit?: boolean;
    flags?: string;
    match?: MatchIn;
    timeout_ms?: number;
    scrollback?: [number] | [number, number];
  }
  | { op: "resize"; id: number; cols: number; rows: number }
  | { op: "close"; id: number }
  | { op: "list" }
  | { op: "close_all" };

const unknown = (id: number) =>
  new RpcError(RPC.UNKNOWN_PTY, "unknown or closed pty_id", { pty_id: `pty:${id}` });

/** The session's PTYs. */
export class SessionPtys {
  readonly #ptys = new Map<number, AgentPty>();

  /**
   * `gate` is the session's spawn gate for PTY programs (Leash, D-38): null when the resolved
   * program may start, else a refusal raised as -32010 (deny) or -32011 (approval).
   */
  constructor(
    readonly ev: Evaluator,
    readonly notify: (n: PtyNotice) => void,
    readonly gate: PtyGate = () => Promise.resolve(null),
  ) {}

  /** Open PTYs (tests, diagnostics). */
  get size(): number {
    return this.#ptys.size;
  }

  /**
   * The process groups of everything running on the PTYs (each program's session: a shell's
   * jobs lead groups of their own) — live work the session's stray sweep must spare.
   */
  groups(): Set<number> {
    const out = new Set<number>();
    for (const p of this.#ptys.values()) {
      out.add(p.pid);
      for (const m of sessionMembers(p.pid) ?? []) out.add(m.pgid);
    }
    return out;
  }

  #get(id: number): AgentPty {
    const p = this.#ptys.get(id);
    if (p === undefined) throw unknown(id);
    return p;
  }

  /** Answer one request. Throws RpcError. */
  async handle(m: PtyOp): Promise<unknown> {
    switch (m.op) {
      case "open":
        return await this.#open(m);
      case "send":
        return { pty_id: `pty:${m.id}`, sent: await this.#send(m.id, m.bytes) };
      case "read": {
        const p = this.#get(m.id);
        return await p.read({
          waitFor: m.wait_for === undefined ? undefined : new RegExp(m.wait_for, m.flags),
          untilExit: m.until_exit,
          match: m.match,
          timeoutMs: m.timeout_ms,
          scrollback: m.scrollback,
        });
      }
      case "resize":
        return { pty_id: `pty:${m.id}`, ...this.#get(m.id).resize(m.cols, m.rows) };
      case "close": {
        const p = this.#get(m.id);
        this.#ptys.delete(m.id);
        return { pty_id: p.ref, closed: true, exit: await p.close() };
      }
      case "list":
        return {
          ptys: [...this.#ptys.values()].sort((a, b) => a.id - b.id).map((p) => p.summary()),
        };
      case "close_all": {
        const all = [...this.#ptys.values()];
        this.#ptys.clear();
        await Promise.allSettled(all.map((p) => p.close()));
        return { closed: all.length };
      }
    }
  }

  async #open(m: Extract<PtyOp, { op: "open" }>): Promise<unknown> {
    const display = [m.cmd, ...m.args].join(" ");
    const failed = (message: string, data: Record<string, unknown> = {}) =>
      new RpcError(RPC.PTY_SPAWN_FAILED, message, { cmd: display, ...data });
    let pty;
    try {
      const { argv, env } = await resolveSpawn(
        this.ev,
        [m.cmd, ...m.args],
        Object.entries(m.env),
        [0, 0],
      );
      env.TERM ??= DEFAULT_TERM;
      const head = typeof argv[0] === "string" ? argv[0] : new TextDecoder().decode(argv[0]);
      const no = await this.gate(head, env, this.ev.cwd());
      if (no !== null) {
        throw new RpcError(
          no.refuse === "deny" ? RPC.LEASH_DENIED : RPC.APPROVAL_REQUIRED,
          `leash: ${no.why}`,
          { cmd: display },
        );
      }
      pty = openPty({
        argv,
        cwd: this.ev.cwd(),
        env,
        cols: m.cols,
        rows: m.rows,
        // A cgroup also takes what left the session (setsid daemons) when the PTY closes.
        killScope: cgroupKillAvailable() ? "cgroup" : "group",
      });
    } catch (e) {
      if (e instanceof RpcError) throw e;
      if (e instanceof ShoalError) throw failed(e.err.msg, { code: e.err.code });
      if (isExecError(e)) {
        throw failed(e.message, { kind: e.kind, ...(e.hint ? { hint: e.hint } : {}) });
      }
      throw failed(`cannot start ${m.cmd}: ${(e as Error)?.message ?? e}`);
    }
    const p = new AgentPty(m.id, pty, display, m.scrollback, this.notify);
    this.#ptys.set(m.id, p);
    return { pty_id: p.ref, pid: p.pid, cols: pty.cols, rows: pty.rows, cmd: display };
  }

  async #send(id: number, base64: string): Promise<number> {
    const p = this.#get(id);
    try {
      return await p.send(Uint8Array.fromBase64(base64));
    } catch (e) {
      throw new RpcError(RPC.INTERNAL_ERROR, `pty write failed: ${(e as Error).message}`, {
        pty_id: p.ref,
      });
    }
  }
}
