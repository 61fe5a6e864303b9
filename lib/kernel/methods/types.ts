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
import type { Quotas } from "../quotas.ts";

/** One connection's attachment. */
export interface Attachment {
  session: SessionHost;
  principal: string;
  tty: boolean;
  kind: string;
}

/** What the method handlers need from the kernel. */
export interface KernelServices {
  bus: EventBus;
  tasks: TaskRegistry;
  /** The journal and content store (null: this kernel keeps none). (issue 7) */
  journal?: KernelJournal | null;
  /**
   * The named session, created (and started) on first use — confined to what `principal` may
   * touch; a session created by a principal under another confinement is refused.
   */
  session(name: string, principal: string): Promise<SessionHost>;
  /**
   * Per-principal quotas (D-31): sessions, tasks, subscriptions and event bytes are counted
   * here; plans and PTYs are counted by their owners through the same `take`/`release`.
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

/** A registrar over `m` that refuses to register a name twice (families must not collide). */
export function registrar(m: Methods<Attachment>): Register {
  return (name, handler, requiresAttach = true) => {
    if (m.has(name)) throw new Error(`kernel method ${name} registered twice`);
    m.set(name, { handler, requiresAttach });
  };
}

/** The connection's attachment (the router checked it exists). */
export function att(conn: Conn): Attachment {
  return conn.attachment!;
}
