/**
 * Event methods (protocol §13.3): `events.read`, `events.publish` (user.* only),
 * `events.subscribe` and `events.unsubscribe`, with per-connection subscription bounds.
 *
 * @module
 */

import { RPC, RpcError } from "../../client/errors.ts";
import type { Lease } from "../quotas.ts";
import type { Subscription } from "../event_bus.ts";
import { invalid, optUint, reqString } from "./params.ts";
import { att, type Conn, type KernelServices, laneSynced, type P, type Register } from "./types.ts";
import { APPROVAL_SCOPE } from "../leash_service.ts";

/** Largest client-published event payload (compact JSON characters). */
export const MAX_PAYLOAD = 65536;
/** Subscriptions one connection may hold. */
export const MAX_SUBSCRIPTIONS = 256;

function validChannel(p: P, method: string): string {
  const ch = reqString(p, "channel", method);
  if (ch === "" || ch.length > 256) throw invalid("`channel` must be 1–256 characters");
  return ch;
}

/** A `pty.N` channel is readable only by the PTY's principal (D-14; else "unknown PTY"). */
function checkPtyChannel(k: KernelServices, channel: string, conn: Conn): void {
  const m = /^pty\.([1-9][0-9]*)$/.exec(channel);
  if (m === null) return;
  const a = att(conn);
  if (!k.ptys.owns(`pty:${m[1]}`, a.session, a.principal)) {
    throw new RpcError(RPC.UNKNOWN_PTY, "unknown or closed pty_id", { pty_id: `pty:${m[1]}` });
  }
}

/**
 * The bus scope a connection reads `channel` in: its session's, except `approval` for a
 * principal who may approve other principals' plans — that reads the kernel-wide approval
 * stream (every request, decision and policy report; issue 15).
 */
function scopeOf(k: KernelServices, conn: Conn, channel: string): string {
  const a = att(conn);
  if (channel === "approval" && k.leash?.policies().isApprover(a.principal)) return APPROVAL_SCOPE;
  return a.session.name;
}

/** Add the events family; returns the live subscription count (for `kernel.stats`). */
export function addEventMethods(add: Register, k: KernelServices): () => number {
  /** Per-connection subscriptions: channel → subscription (one per channel). */
  const subsOf = new WeakMap<Conn, Map<string, { scope: string; sub: Subscription }>>();
  const liveSubs = new Set<Subscription>();
  /** Each subscription's share of its principal's quota (D-31). */
  const leases = new WeakMap<Subscription, Lease>();
  const unsubscribe = (scope: string, channel: string, sub: Subscription) => {
    liveSubs.delete(sub);
    leases.get(sub)?.release();
    k.bus.unsubscribe(scope, channel, sub);
  };

  add("events.read", async (p, conn) => {
    await laneSynced(conn);
    const channel = validChannel(p, "events.read");
    checkPtyChannel(k, channel, conn);
    const since = p.since === undefined || p.since === null ? null : optUint(p, "since")!;
    const limit = optUint(p, "limit");
    // Durable channels read from the journal what the ring does not hold (D-20).
    const events = await k.bus.history(
      scopeOf(k, conn, channel),
      channel,
      since,
      limit ?? undefined,
    );
    return { channel, events };
  });

  add("events.publish", (p, conn) => {
    const channel = validChannel(p, "events.publish");
    if (!channel.startsWith("user.") || channel.length <= 5) {
      throw invalid("only user.* channels may be published by clients", { channel });
    }
    const payload = p.payload === undefined ? null : p.payload;
    // The ring keeps 1,024 events per channel: a bounded payload keeps it bounded too.
    const len = JSON.stringify(payload).length;
    if (len > MAX_PAYLOAD) {
      throw invalid(
        `payload of ${len} bytes exceeds the ${MAX_PAYLOAD}-byte event limit; publish a ` +
          `reference (a path or out:N) instead`,
        { channel, len, limit: MAX_PAYLOAD },
      );
    }
    const a = att(conn);
    const s = a.session;
    k.quotas.check(a.principal, "event_bytes", len);
    if (!s.admitUserChannel(channel)) {
      throw invalid(
        `session "${s.name}" already has ${s.userChannels.size} user.* channels (the limit); ` +
          `reuse one`,
        { channel, limit: s.userChannels.size },
      );
    }
    const e = k.bus.publish(s.name, channel, payload);
    k.quotas.retainEvent(a.principal, s.name, channel, len);
    s.inject(channel, payload);
    return { channel, seq: e.seq, ts: e.ts };
  });

  add("events.subscribe", async (p, conn) => {
    await laneSynced(conn);
    const channel = validChannel(p, "events.subscribe");
    checkPtyChannel(k, channel, conn);
    const since = p.since === undefined || p.since === null ? null : optUint(p, "since")!;
    const scope = scopeOf(k, conn, channel);
    let subs = subsOf.get(conn);
    if (!subs) {
      const mine = new Map<string, { scope: string; sub: Subscription }>();
      subsOf.set(conn, mine);
      subs = mine;
      conn.cleanups.add(() => {
        for (const [ch, s] of mine) unsubscribe(s.scope, ch, s.sub);
        mine.clear();
      });
    }
    const old = subs.get(channel);
    let lease: Lease;
    if (old) {
      // A re-subscribe keeps its place in the quota.
      lease = leases.get(old.sub)!;
      leases.delete(old.sub);
      unsubscribe(old.scope, channel, old.sub);
    } else if (subs.size >= MAX_SUBSCRIPTIONS) {
      throw invalid(
        `this connection already has ${MAX_SUBSCRIPTIONS} subscriptions; unsubscribe first`,
        { limit: MAX_SUBSCRIPTIONS },
      );
    } else lease = k.quotas.take(att(conn).principal, "subscriptions");
    const sub = k.bus.subscribe(
      scope,
      channel,
      since,
      (e) => conn.writer.send({ jsonrpc: "2.0", method: "event", params: e }),
    );
    liveSubs.add(sub);
    leases.set(sub, lease);
    subs.set(channel, { scope, sub });
    return { channel, subscribed: true };
  });

  add("events.unsubscribe", (p, conn) => {
    const channel = validChannel(p, "events.unsubscribe");
    const s = subsOf.get(conn)?.get(channel);
    if (s) {
      unsubscribe(s.scope, channel, s.sub);
      subsOf.get(conn)!.delete(channel);
    }
    return { channel, subscribed: false, was_subscribed: s !== undefined };
  });

  return () => liveSubs.size;
}
