/**
 * Pins: hard GC roots with an owner, a reason and an optional expiry, so that
 * e.g. a task's spill blobs can be released together when the task ends.
 *
 * @module
 */

import { invalid } from "./errors.ts";
import { parseRef } from "./refs.ts";
import type { Conn, Param } from "./sqlite_conn.ts";
import type { Pin } from "./types.ts";
import * as v from "./validate.ts";

/** Input of `pin`. */
export interface PinInput {
  /** Blob hash or ref. */
  hash: string;
  /** Who holds the pin. */
  owner: string;
  /** Why (shown in listings). */
  reason?: string;
  /** Expiry (ms since the epoch); omit for a pin that never expires. */
  expiresAt?: number | null;
}

/** Filters of `listPins`. */
export interface PinFilter {
  /** Only pins of this blob. */
  hash?: string;
  /** Only pins of this owner. */
  owner?: string;
  /** Default 100, clamped to 1000. */
  limit?: number;
}

interface PinRow {
  hash: string;
  owner: string;
  reason: string;
  created_at: number;
  expires_at: number | null;
}

function toPin(r: PinRow): Pin {
  return {
    hash: r.hash,
    owner: r.owner,
    reason: r.reason,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
  };
}

/** Pin a blob for an owner (idempotent: re-pinning updates reason and expiry). */
export function pin(c: Conn, input: PinInput): Pin {
  if (typeof input !== "object" || input === null) throw invalid("pin expects an object");
  const hash = parseRef(input.hash);
  const owner = v.text("owner", input.owner, 256, false);
  const reason = input.reason === undefined ? "" : v.text("reason", input.reason, 1024);
  const expiresAt = input.expiresAt === undefined || input.expiresAt === null
    ? null
    : v.ms("expiresAt", input.expiresAt);
  return c.tx("pin", () => {
    c.stmt(
      `INSERT INTO pin (hash, owner, reason, created_at, expires_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (hash, owner) DO UPDATE SET reason = excluded.reason,
         expires_at = excluded.expires_at`,
    ).run(hash, owner, reason, Date.now(), expiresAt);
    return toPin(
      c.stmt("SELECT * FROM pin WHERE hash = ? AND owner = ?").get(
        hash,
        owner,
      ) as unknown as PinRow,
    );
  });
}

/** Remove one owner's pin of a blob. Returns whether a pin was removed. */
export function unpin(c: Conn, hash: string, owner: string): boolean {
  const h = parseRef(hash);
  const o = v.text("owner", owner, 256, false);
  return c.tx(
    "unpin",
    () => Number(c.stmt("DELETE FROM pin WHERE hash = ? AND owner = ?").run(h, o).changes) > 0,
  );
}

/** Remove every pin of an owner (e.g. when a session or task ends). Returns the count. */
export function unpinOwner(c: Conn, owner: string): number {
  const o = v.text("owner", owner, 256, false);
  return c.tx("unpinOwner", () => Number(c.stmt("DELETE FROM pin WHERE owner = ?").run(o).changes));
}

/** List pins, newest first. */
export function listPins(c: Conn, filter: PinFilter = {}): Pin[] {
  const where: string[] = [];
  const params: Param[] = [];
  if (filter.hash !== undefined) {
    where.push("hash = ?");
    params.push(parseRef(filter.hash));
  }
  if (filter.owner !== undefined) {
    where.push("owner = ?");
    params.push(v.text("owner", filter.owner, 256));
  }
  params.push(v.limit(filter.limit));
  const sql = `SELECT * FROM pin ${
    where.length ? "WHERE " + where.join(" AND ") : ""
  } ORDER BY created_at DESC, hash LIMIT ?`;
  return (c.stmt(sql).all(...params) as unknown as PinRow[]).map(toPin);
}
