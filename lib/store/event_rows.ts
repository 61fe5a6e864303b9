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
import { fromSqlite } from "./sqlite_errors.ts";
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

/** A validated event, ready to store. */
interface Checked {
  channel: string;
  scope: string;
  payload: string;
  ts: number;
  want: number | null;
}

function check(e: EventInput): Checked {
  if (typeof e !== "object" || e === null) throw invalid("an event must be an object");
  return {
    channel: channelName(e.channel),
    scope: scopeOf(e.scope),
    payload: v.json("payload", e.payload),
    ts: e.ts === undefined ? Date.now() : v.ms("ts", e.ts),
    want: e.seq === undefined ? null : v.count("seq", e.seq),
  };
}

/** The stream's next seq as stored (its counter, or past its newest event). */
function storedNext(c: Conn, channel: string, scope: string): number {
  const row = c.stmt("SELECT next_seq FROM event_channel WHERE channel = ? AND scope = ?").get(
    channel,
    scope,
  ) as { next_seq: number } | undefined;
  return row ? row.next_seq : (c.stmt(
    "SELECT coalesce(max(seq) + 1, 0) AS n FROM event WHERE channel = ? AND scope = ?",
  ).get(channel, scope) as { n: number }).n;
}

function seqConflict(e: Checked, next: number): StoreError {
  return new StoreError(
    "event_seq_conflict",
    `event ${e.channel}${
      e.scope ? ` (${e.scope})` : ""
    } seq ${e.want} is not the next one (${next}); another writer appended to this stream`,
    { channel: e.channel, scope: e.scope, seq: e.want, next },
  );
}

function insert(c: Conn, e: Checked, seq: number): void {
  c.stmt("INSERT INTO event (channel, scope, seq, ts, payload) VALUES (?, ?, ?, ?, ?)")
    .run(e.channel, e.scope, seq, e.ts, e.payload);
}

function setNext(c: Conn, channel: string, scope: string, next: number): void {
  c.stmt(
    `INSERT INTO event_channel (channel, scope, next_seq) VALUES (?, ?, ?)
     ON CONFLICT (channel, scope) DO UPDATE SET next_seq = excluded.next_seq`,
  ).run(channel, scope, next);
}

/**
 * Numbers this connection gave to events it could not store but that were delivered anyway
 * ({@link recordEvent}), per stream: never given again. (A number of a transaction that rolled
 * back was never delivered, and is given again.)
 */
const handedOut = new WeakMap<Conn, Map<string, number>>();

function handOut(c: Conn, channel: string, scope: string, next: number): void {
  let m = handedOut.get(c);
  if (!m) handedOut.set(c, m = new Map());
  const key = `${scope}\u0000${channel}`;
  if ((m.get(key) ?? 0) < next) m.set(key, next);
}

/** The next number this connection gives a stream's event it numbers itself. */
function nextNumber(c: Conn, channel: string, scope: string): number {
  const stored = storedNext(c, channel, scope);
  const given = handedOut.get(c)?.get(`${scope}\u0000${channel}`) ?? 0;
  return Math.max(stored, given);
}

/** Append one event; returns its sequence number. Atomic on its own or inside a batch. */
export function appendEvent(c: Conn, e: EventInput): AppendedEvent {
  const ev = check(e);
  return c.tx("appendEvent", () => {
    let seq: number;
    if (ev.want === null) seq = nextNumber(c, ev.channel, ev.scope);
    else {
      seq = storedNext(c, ev.channel, ev.scope);
      if (ev.want !== seq) throw seqConflict(ev, seq);
    }
    insert(c, ev, seq);
    setNext(c, ev.channel, ev.scope, seq + 1);
    return { channel: ev.channel, scope: ev.scope, seq, ts: ev.ts };
  });
}

/**
 * Number and store an event, answering with its number even when it could not be stored (then
 * `error` says why, and the number is never given again: the kernel delivers the event live
 * under it); `seq` is null when it could not even be numbered. Never throws. The journal thread
 * numbers the `journal` channel this way — its fold's exec events are numbered by
 * {@link appendEvent} in the fold's transaction, the kernel's own events after them — so one
 * stream never has two numberers. Runs outside any transaction of the caller's.
 */
export function recordEvent(
  c: Conn,
  e: EventInput,
): { seq: number | null; ts: number; error: { code: string; message: string } | null } {
  const failure = (err: unknown) => {
    const se = err instanceof StoreError ? err : fromSqlite(err, "storing an event");
    return { code: se.code, message: se.message };
  };
  let ev: Checked;
  let seq: number;
  try {
    ev = check(e);
    if (ev.want !== null) throw invalid("recordEvent numbers the event itself: pass no seq");
    seq = nextNumber(c, ev.channel, ev.scope);
  } catch (err) {
    return { seq: null, ts: Date.now(), error: failure(err) };
  }
  try {
    c.tx("recordEvent", () => {
      insert(c, ev, seq);
      setNext(c, ev.channel, ev.scope, seq + 1);
    });
    return { seq, ts: ev.ts, error: null };
  } catch (err) {
    handOut(c, ev.channel, ev.scope, seq + 1); // it is delivered under this number
    return { seq, ts: ev.ts, error: failure(err) };
  }
}

/**
 * Store an event its producer numbered itself — a session worker numbers its transcript events
 * and logs each with its exec in the journal intake, so the fold stores them together. Stored
 * when `seq` is at or past the stream's next (a gap is an event whose exec could not be
 * logged); refused, returned rather than thrown, when it is behind (another writer) or invalid.
 */
export function storeNumbered(c: Conn, e: EventInput & { seq: number }): StoreError | null {
  let ev: Checked;
  try {
    ev = check(e);
  } catch (err) {
    return err instanceof StoreError ? err : invalid((err as Error).message);
  }
  const seq = ev.want!;
  const next = storedNext(c, ev.channel, ev.scope);
  if (seq < next) return seqConflict(ev, next);
  insert(c, ev, seq);
  setNext(c, ev.channel, ev.scope, seq + 1);
  return null;
}

/** One slot of {@link appendEvents}: the appended event, or why this one was refused. */
export type AppendOutcome =
  | { ok: true; event: AppendedEvent }
  | { ok: false; error: { code: string; message: string } };

/**
 * Append several events in one savepoint, each standing alone: an invalid event or a seq
 * that is not its stream's next is refused in its slot and never drops another. Each
 * stream's counter is read and written once per call, not once per event.
 */
export function appendEvents(c: Conn, list: readonly EventInput[]): AppendOutcome[] {
  if (!Array.isArray(list)) throw invalid("events must be an array");
  return c.tx("appendEvents", () => {
    const next = new Map<string, { channel: string; scope: string; seq: number }>();
    const out = list.map((e): AppendOutcome => {
      let ev: Checked;
      try {
        ev = check(e);
      } catch (err) {
        const code = err instanceof StoreError ? err.code : "invalid_input";
        return { ok: false, error: { code, message: (err as Error).message } };
      }
      const key = `${ev.scope}\u0000${ev.channel}`;
      let st = next.get(key);
      if (!st) {
        st = { channel: ev.channel, scope: ev.scope, seq: storedNext(c, ev.channel, ev.scope) };
        next.set(key, st);
      }
      if (ev.want !== null && ev.want !== st.seq) {
        const se = seqConflict(ev, st.seq);
        return { ok: false, error: { code: se.code, message: se.message } };
      }
      insert(c, ev, st.seq);
      return {
        ok: true,
        event: { channel: ev.channel, scope: ev.scope, seq: st.seq++, ts: ev.ts },
      };
    });
    for (const st of next.values()) setNext(c, st.channel, st.scope, st.seq);
    return out;
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
