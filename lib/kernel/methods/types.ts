/**
 * What every kernel method family shares: the attachment, the services handlers call, and the
 * registrar a family adds its methods through.
 *
 * @module
 */

import type { ConnState, Handler, Methods } from "../connection.ts";
import type { EventBus } from "../event_bus.ts";
import type { KernelJournal } from "../kernel_journal.ts";
import type { SessionHost } from "../session_host.ts";
import type { TaskRegistry } from "../tasks.ts";
import type { PtyRegistry } from "../pty_registry.ts";
import type { KernelLeash } from "../leash_service.ts";
import type { Quotas } from "../quotas.ts";

/** One connection's attachment. */
export interface Attachment {
  session: SessionHost;
  principal: string;
  tty: boolean;
  kind: string;
  /** Token metadata (issue 15): echoed at attach, not enforced (D-18). */
  profile: string;
  caps: string[];
  /** The token this attachment used (re-checked before each request), or null. */
  tokenId: string | null;
  /** Its exec-lane ticket (`session_lane.ts`; null: it has none). */
  lane?: string | null;
}

/** What the method handlers need from the kernel. */
export interface KernelServices {
  bus: EventBus;
  tasks: TaskRegistry;
  /** Which PTY belongs to which session and principal; the quota (issue 17). */
  ptys: PtyRegistry;
  /** The journal and content store (null: this kernel keeps none). (issue 7) */
  journal?: KernelJournal | null;
  /** Leash: policies, tokens and plans (null: a kernel without it — benchmarks). */
  leash?: KernelLeash | null;
  /**
   * The session `name` of `principal` (one per pair, D-13), created on first use — in `cwd`
   * when given (the attaching client's directory), else the kernel's.
   */
  session(name: string, principal: string, cwd?: string | null): Promise<SessionHost>;
  /**
   * Per-principal quotas (D-31): sessions, tasks, subscriptions and event bytes are counted
   * here; plans and PTYs by their owners (the plan store, the PTY registry) with these limits.
   */
  quotas: Quotas;
  /** Tasks that may wait per session (default `MAX_QUEUED`). */
  maxQueued?: number;
  /** Connections currently open (debug counters). */
  stats(): Record<string, number>;
}

/** A connection as the handlers see it. */
export type Conn = ConnState<Attachment>;

/** Decoded params (missing or null params arrive as `{}`). */
export type P = Record<string, unknown>;

/** Adds one method to the table; `requiresAttach` defaults to true. */
export type Register = (
  name: string,
  handler: Handler<Attachment>,
  requiresAttach?: boolean,
) => void;

/**
 * A registrar over `m` that refuses to register a name twice (families must not collide). A
 * method that needs an attachment first re-checks a token attachment's token (`recheck`), so a
 * revoked bearer stops working on its next request.
 */
export function registrar(
  m: Methods<Attachment>,
  recheck?: (conn: Conn) => Promise<void> | undefined,
): Register {
  return (name, handler, requiresAttach = true) => {
    if (m.has(name)) throw new Error(`kernel method ${name} registered twice`);
    const h: Handler<Attachment> = requiresAttach && recheck
      ? (p, conn) => {
        if (!conn.attachment?.tokenId) return handler(p, conn);
        const wait = recheck(conn); // undefined: checked already, nothing to wait for
        return wait === undefined ? handler(p, conn) : wait.then(() => handler(p, conn));
      }
      : handler;
    m.set(name, { handler: h, requiresAttach });
  };
}

/** The connection's attachment (the router checked it exists). */
export function att(conn: Conn): Attachment {
  return conn.attachment!;
}

/**
 * Before a read of task or event state: what this attachment's lane execs did is known here
 * (a lane exec's client has its answer a moment before the kernel hears of it).
 */
export async function laneSynced(conn: Conn): Promise<void> {
  const a = conn.attachment;
  if (a?.lane) await a.session.laneSync();
}
