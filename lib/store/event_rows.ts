/**
 * Durable event log (protocol §13) for the `journal` and `session.transcript`
 * channels: dense per-channel sequence numbers from 0 that continue across
 * restarts (the next number lives in `event_channel`, so trimming old events
 * never resets a channel), and reads the kernel replays from (D-20).
 *
 * @module
 */

import { invalid } from "./errors.ts";
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

/** Append one event; returns its sequence number. Atomic on its own or inside a batch. */
export function appendEvent(c: Conn, e: EventInput): AppendedEvent {
  if (typeof e !== "object" || e === null) throw invalid("an event must be an object");
  const channel = channelName(e.channel);
  const payload = v.json("payload", e.payload);
  const session = v.optText("session", e.session, 256);
  const ts = e.ts === undefined ? Date.now() : v.ms("ts", e.ts);
  return c.tx("appendEvent", () => {
    const row = c.stmt("SELECT next_seq FROM event_channel WHERE channel = ?").get(channel) as
      | { next_seq: number }
      | undefined;
    const seq = row ? row.next_seq : (c.stmt(
      "SELECT coalesce(max(seq) + 1, 0) AS n FROM event WHERE channel = ?",
    ).get(channel) as { n: number }).n;
    c.stmt("INSERT INTO event (channel, seq, ts, session, payload) VALUES (?, ?, ?, ?, ?)")
      .run(channel, seq, ts, session, payload);
    c.stmt(
      `INSERT INTO event_channel (channel, next_seq) VALUES (?, ?)
       ON CONFLICT (channel) DO UPDATE SET next_seq = excluded.next_seq`,
    ).run(channel, seq + 1);
    return { channel, seq, ts };
  });
}

interface EventRow {
  channel: string;
  seq: number;
  ts: number;
  session: string | null;
  payload: string;
}

function toEvent(r: EventRow): StoredEvent {
  return {
    channel: r.channel,
    seq: r.seq,
    ts: r.ts,
    session: r.session,
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
  /** Only events scoped to this session. */
  session?: string;
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
  const ch = channelName(channel);
  const params: Param[] = [ch, sinceOf(since)];
  let sql = "SELECT channel, seq, ts, session, payload FROM event WHERE channel = ? AND seq > ?";
  if (opts.session !== undefined) {
    sql += " AND session = ?";
    params.push(v.text("session", opts.session, 256));
  }
  sql += " ORDER BY seq LIMIT ?";
  params.push(v.limit(limit, EVENT_READ_DEFAULT, EVENT_READ_MAX));
  return (c.stmt(sql).all(...params) as unknown as EventRow[]).map(toEvent);
}

/** The newest `limit` events, returned oldest first. */
export function readLatest(
  c: Conn,
  channel: string,
  limit?: number,
  opts: ReadOptions = {},
): StoredEvent[] {
  const ch = channelName(channel);
  const params: Param[] = [ch];
  let sql = "SELECT channel, seq, ts, session, payload FROM event WHERE channel = ?";
  if (opts.session !== undefined) {
    sql += " AND session = ?";
    params.push(v.text("session", opts.session, 256));
  }
  sql += " ORDER BY seq DESC LIMIT ?";
  params.push(v.limit(limit, EVENT_READ_DEFAULT, EVENT_READ_MAX));
  return (c.stmt(sql).all(...params) as unknown as EventRow[]).map(toEvent).reverse();
}

/** The last assigned sequence number of a channel, or null if it never had an event. */
export function lastSeq(c: Conn, channel: string): number | null {
  const row = c.stmt("SELECT next_seq FROM event_channel WHERE channel = ?").get(
    channelName(channel),
  ) as { next_seq: number } | undefined;
  return row ? row.next_seq - 1 : null;
}
