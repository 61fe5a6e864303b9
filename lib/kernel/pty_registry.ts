/**
 * The kernel's view of PTYs (protocol §12, D-14, D-31): the global `pty:N` counter, which
 * session and principal each PTY belongs to, and the per-principal quota. The PTYs themselves
 * live in their session's evaluator host (session_ptys.ts); this table only routes. A PTY of
 * another session or principal is "unknown" (`-32022`), exactly like one that never existed.
 *
 * @module
 */

import { quotaExceeded } from "./quota_error.ts";
import { RPC, RpcError } from "../client/errors.ts";
import type { SessionHost } from "./session_host.ts";

/** Open PTYs one principal may hold at once (kernel-wide, over all its sessions). */
export const MAX_PTYS_PER_PRINCIPAL = 64;
/** Closed PTYs remembered so a repeated `pty.close` answers like the first one. */
const CLOSED_REMEMBERED = 1024;

/** One PTY as the main thread knows it. */
export interface PtyEntry {
  id: number;
  ref: string;
  session: SessionHost;
  principal: string;
  /** The session host's worker generation at open (a crashed worker's PTYs are gone). */
  epoch: number;
  /** The program's pid, once open. */
  pid: number | null;
}

/** What a repeated close answers. */
interface ClosedEntry {
  session: SessionHost;
  principal: string;
  result: unknown;
}

/** `pty:N` or `N` → N; null when it is neither. */
export function ptyNumber(ref: string): number | null {
  const m = /^(?:pty:)?([1-9][0-9]{0,15})$/.exec(ref);
  return m ? Number(m[1]) : null;
}

const unknownPty = (ref: string) =>
  new RpcError(RPC.UNKNOWN_PTY, "unknown or closed pty_id", { pty_id: ref });

/** The table. */
export class PtyRegistry {
  #next = 1;
  readonly #entries = new Map<number, PtyEntry>();
  readonly #closed = new Map<number, ClosedEntry>();

  constructor(readonly limit = MAX_PTYS_PER_PRINCIPAL) {}

  /** Entries whose worker is gone (crashed or shut down) no longer exist. */
  #live(e: PtyEntry | undefined): e is PtyEntry {
    if (e === undefined) return false;
    if (e.session.epoch === e.epoch && !e.session.closed) return true;
    this.#entries.delete(e.id);
    return false;
  }

  /** Open PTYs of `principal` (stale entries swept on the way). */
  countOf(principal: string): number {
    let n = 0;
    for (const e of [...this.#entries.values()]) {
      if (this.#live(e) && e.principal === principal) n++;
    }
    return n;
  }

  /** Take a number for a PTY about to open. Throws `-32040` over the principal's quota. */
  reserve(session: SessionHost, principal: string, cmd: string): PtyEntry {
    const open = this.countOf(principal);
    if (open >= this.limit) {
      throw quotaExceeded("ptys", principal, open, this.limit, {
        why: `${principal} already has ${open} open PTYs (the limit)`,
        data: { cmd },
      });
    }
    const id = this.#next++;
    const e: PtyEntry = {
      id,
      ref: `pty:${id}`,
      session,
      principal,
      epoch: session.epoch,
      pid: null,
    };
    this.#entries.set(id, e);
    return e;
  }

  /** The PTY `ref` of this session and principal. Throws `-32022` for any other. */
  get(ref: string, session: SessionHost, principal: string): PtyEntry {
    const n = ptyNumber(ref);
    const e = n === null ? undefined : this.#entries.get(n);
    if (!this.#live(e) || e.session !== session || e.principal !== principal) throw unknownPty(ref);
    return e;
  }

  /** The answer of an earlier close of `ref` by the same owner, if remembered. */
  closedResult(ref: string, session: SessionHost, principal: string): unknown {
    const n = ptyNumber(ref);
    const c = n === null ? undefined : this.#closed.get(n);
    return c && c.session === session && c.principal === principal ? c.result : undefined;
  }

  /** Forget `e` (closed, or its open failed); remember the close `result` when given. */
  release(e: PtyEntry, result?: unknown): void {
    this.#entries.delete(e.id);
    e.session.ptyChildren.delete(e.id);
    if (result === undefined) return;
    this.#closed.set(e.id, { session: e.session, principal: e.principal, result });
    if (this.#closed.size > CLOSED_REMEMBERED) {
      this.#closed.delete(this.#closed.keys().next().value!);
    }
  }

  /** True when `ref` belongs to this session and principal (open or remembered closed). */
  owns(ref: string, session: SessionHost, principal: string): boolean {
    const n = ptyNumber(ref);
    if (n === null) return false;
    const e = this.#entries.get(n);
    if (this.#live(e)) return e.session === session && e.principal === principal;
    const c = this.#closed.get(n);
    return c !== undefined && c.session === session && c.principal === principal;
  }

  /** Numbers of the open PTYs `principal` has in `session` (for `pty.list`). */
  idsOf(session: SessionHost, principal: string): Set<number> {
    const out = new Set<number>();
    for (const e of [...this.#entries.values()]) {
      if (this.#live(e) && e.session === session && e.principal === principal) out.add(e.id);
    }
    return out;
  }
}
