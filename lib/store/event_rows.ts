/**
 * Durable event log (protocol §13) for the `journal` and `session.transcript`
 * channels. A stream is a (channel, scope) pair — the scope is a session name,
 * or "" for kernel-wide events (D-21) — with dense sequence numbers from 0
 * that continue across restarts (the next number lives in `event_channel`, so
 * trimming old events never resets a stream). The kernel replays from it
 * after a restart (D-20).
 *
 * A caller that must assign sequence numbers synchronously (the kernel's event
 * bus) can seed counters from {@link listChannels}, assign them itself and pass
 * `seq` to {@link appendEvent}: the store checks it is the next one, so the
 * stream stays dense and a second writer is detected instead of interleaved.
 *
 * @module
 */

import { invalid, StoreError } from "./errors.ts";
import { EVENT_READ_DEFAULT, EVENT_READ_MAX } from "./limits.ts";
import type { Conn, Param } from "./sqlite_conn.ts";
import type { AppendedEvent, EventInput, StoredEvent } from "./types.ts";
import * as v from "./validate.ts";

/** Channels the kernel persists. Any valid channel name may be stored. */
export const DURABLE_CHANNELS: readonly string[] = ["journal", "session.transcript"];

function channelName(ch: unknown): string {
  if (typeof ch !== "string" || !/^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,127}$/.test(ch)) {
    throw invalid(
      `channel must be a name like journal or session.transcript, got ${JSON.stringify(ch)}`,
      { field: "channel" },
    );
  }
  return ch;
}

function scopeOf(scope: unknown): string {
  if (scope === undefined || scope === null) return "";
  return v.text("scope", scope, 256);
}

/** Append one event; returns its sequence number. Atomic on its own or inside a batch. */
export function appendEvent(c: Conn, e: EventInput): AppendedEvent {
  if (typeof e !== "object" || e === null) throw invalid("an event must be an object");
  const channel = channelName(e.channel);
  const scope = scopeOf(e.scope);
  const payload = v.json("payload", e.payload);
  const ts = e.ts === undefined ? Date.now() : v.ms("ts", e.ts);
  const want = e.seq === undefined ? null : v.count("seq", e.seq);
  return c.tx("appendEvent", () => {
    const row = c.stmt("SELECT next_seq FROM event_channel WHERE channel = ? AND scope = ?").get(
      channel,
      scope,
    ) as { next_seq: number } | undefined;
    const seq = row ? row.next_seq : (c.stmt(
      "SELECT coalesce(max(seq) + 1, 0) AS n FROM event WHERE channel = ? AND scope = ?",
    ).get(channel, scope) as { n: number }).n;
    if (want !== null && want !== seq) {
      throw new StoreError(
        "event_seq_conflict",
        `event ${channel}${
          scope ? ` (${scope})` : ""
        } seq ${want} is not the next one (${seq}); another writer appended to this stream`,
        { channel, scope, seq: want, next: seq },
      );
    }
    c.stmt("INSERT INTO event (channel, scope, seq, ts, payload) VALUES (?, ?, ?, ?, ?)")
      .run(channel, scope, seq, ts, payload);
    c.stmt(
      `INSERT INTO event_channel (channel, scope, next_seq) VALUES (?, ?, ?)
       ON CONFLICT (channel, scope) DO UPDATE SET next_seq = excluded.next_seq`,
    ).run(channel, scope, seq + 1);
    return { channel, scope, seq, ts };
  });
}

interface EventRow {
  channel: string;
  scope: string;
  seq: number;
  ts: number;
  payload: string;
}

function toEvent(r: EventRow): StoredEvent {
  return {
    channel: r.channel,
    scope: r.scope,
    seq: r.seq,
    ts: r.ts,
    payload: JSON.parse(r.payload),
  };
}

function sinceOf(since: unknown): number {
  if (since === undefined || since === null) return -1;
  if (typeof since !== "number" || !Number.isSafeInteger(since) || since < -1) {
    throw invalid("since must be a sequence number (an integer ≥ 0)", { field: "since" });
  }
  return since;
}

/** Read options. */
export interface ReadOptions {
  /** The stream's scope: a session name, or "" (default) for kernel-wide events. */
  scope?: string;
}

/**
 * Events with `seq > since` (exclusive; omit for "from the start"), oldest
 * first, at most `limit` (default 256, clamped to 4096): page forward by
 * passing the last seq you got.
 */
export function readSince(
  c: Conn,
  channel: string,
  since?: number | null,
  limit?: number,
  opts: ReadOptions = {},
): StoredEvent[] {
  const params: Param[] = [channelName(channel), scopeOf(opts.scope), sinceOf(since)];
  params.push(v.limit(limit, EVENT_READ_DEFAULT, EVENT_READ_MAX));
  return (c.stmt(
    `SELECT channel, scope, seq, ts, payload FROM event
     WHERE channel = ? AND scope = ? AND seq > ? ORDER BY seq LIMIT ?`,
  ).all(...params) as unknown as EventRow[]).map(toEvent);
}

/** Options of {@link readLatest}. */
export interface LatestOptions extends ReadOptions {
  /** Only events with `seq > since`. */
  since?: number | null;
}

/** The newest `limit` events (with `seq > since` when given), returned oldest first. */
export function readLatest(
  c: Conn,
  channel: string,
  limit?: number,
  opts: LatestOptions = {},
): StoredEvent[] {
  const params: Param[] = [channelName(channel), scopeOf(opts.scope), sinceOf(opts.since)];
  params.push(v.limit(limit, EVENT_READ_DEFAULT, EVENT_READ_MAX));
  return (c.stmt(
    `SELECT channel, scope, seq, ts, payload FROM event
     WHERE channel = ? AND scope = ? AND seq > ? ORDER BY seq DESC LIMIT ?`,
  ).all(...params) as unknown as EventRow[]).map(toEvent).reverse();
}

/** The last assigned sequence number of a stream, or null if it never had an event. */
export function lastSeq(c: Conn, channel: string, opts: ReadOptions = {}): number | null {
  const row = c.stmt("SELECT next_seq FROM event_channel WHERE channel = ? AND scope = ?").get(
    channelName(channel),
    scopeOf(opts.scope),
  ) as { next_seq: number } | undefined;
  return row ? row.next_seq - 1 : null;
}

/** A stream and the seq its next event gets. */
export interface ChannelState {
  /** Channel name. */
  channel: string;
  /** Scope ("" = kernel-wide). */
  scope: string;
  /** Sequence number of the next append. */
  nextSeq: number;
}

/** Every stream that ever had an event (to seed in-memory counters at start). */
export function listChannels(c: Conn): ChannelState[] {
  return (c.stmt("SELECT channel, scope, next_seq FROM event_channel ORDER BY channel, scope")
    .all() as unknown as Array<{ channel: string; scope: string; next_seq: number }>).map((r) => ({
      channel: r.channel,
      scope: r.scope,
      nextSeq: r.next_seq,
    }));
}
