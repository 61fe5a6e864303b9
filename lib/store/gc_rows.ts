/**
 * Database half of retention: delete expired journal rows, events and pins,
 * then decide which blob files are unreferenced and may go. Runs in one
 * savepoint that is released (apply) or rolled back (dry run), so a dry run
 * reports exactly what an apply would do and changes nothing.
 *
 * @module
 */

import { fromSqlite } from "./sqlite_errors.ts";
import type { Conn } from "./sqlite_conn.ts";
import type { GcBlob, GcReport } from "./types.ts";

/** Input of the database GC step (built by `gc.ts`). */
export interface GcPlanInput {
  /** Rows/events/blobs older than this (ms) expire; null = no TTL. */
  cutoff: number | null;
  /** Now (ms), for pin expiry. */
  now: number;
  /** Blobs with mtime at or after this (ms) are never chosen. */
  graceCutoff: number;
  /** Byte budget for the CAS, or null. */
  budgetBytes: number | null;
  /** CAS bytes on disk now. */
  casBytes: number;
  /** Every blob file: `[hash, storedSize, mtimeMs]`. */
  candidates: Array<[string, number, number]>;
  /** Commit (true) or roll back (false). */
  apply: boolean;
}

/** Output of the database GC step. */
export interface GcPlan {
  /** Journal-side deletions. */
  journal: GcReport["journal"];
  /** Blobs to delete, in order. */
  blobs: GcBlob[];
  /** Whether the byte budget is reached after deleting `blobs`. */
  budgetMet: boolean;
}

function count(c: Conn, sql: string): number {
  return (c.stmt(sql).get() as { n: number }).n;
}

/** Plan (and with `apply`, perform) the database side of GC. */
export function gcPlan(c: Conn, p: GcPlanInput): GcPlan {
  const db = c.db;
  try {
    db.exec("SAVEPOINT gc");
  } catch (e) {
    throw fromSqlite(e, "gc");
  }
  try {
    const journal = { requests: 0, statements: 0, undo: 0, events: 0, pins: 0 };
    journal.pins = Number(
      c.stmt("DELETE FROM pin WHERE expires_at IS NOT NULL AND expires_at <= ?").run(p.now).changes,
    );
    if (p.cutoff !== null) {
      const rowsBefore = count(c, "SELECT count(*) AS n FROM journal");
      const undoBefore = count(c, "SELECT count(*) AS n FROM undo_record");
      // Statements, effects, blob refs and undo records go with their request (FK cascade).
      journal.requests = Number(
        c.stmt(
          "DELETE FROM journal WHERE kind = 'request' AND started_at < ? AND status != 'running'",
        ).run(p.cutoff).changes,
      );
      journal.statements = rowsBefore - count(c, "SELECT count(*) AS n FROM journal") -
        journal.requests;
      journal.undo = undoBefore - count(c, "SELECT count(*) AS n FROM undo_record");
      journal.events = Number(c.stmt("DELETE FROM event WHERE ts < ?").run(p.cutoff).changes);
    }
    // Unreferenced, unpinned, out of the grace window: oldest first.
    const free = c.stmt(
      `SELECT hash, size, mtime FROM (
         SELECT json_extract(value, '$[0]') AS hash, json_extract(value, '$[1]') AS size,
                json_extract(value, '$[2]') AS mtime
         FROM json_each(?)) AS cand
       WHERE mtime < ?
         AND NOT EXISTS (SELECT 1 FROM blob_ref AS r WHERE r.hash = cand.hash)
         AND NOT EXISTS (SELECT 1 FROM pin AS p WHERE p.hash = cand.hash
                         AND (p.expires_at IS NULL OR p.expires_at > ?))
       ORDER BY mtime, hash`,
    ).all(JSON.stringify(p.candidates), p.graceCutoff, p.now) as Array<
      { hash: string; size: number; mtime: number }
    >;
    const blobs: GcBlob[] = [];
    let remaining = p.casBytes;
    const rest: typeof free = [];
    for (const b of free) {
      if (p.cutoff !== null && b.mtime < p.cutoff) {
        blobs.push({ hash: b.hash, storedSize: b.size, mtimeMs: b.mtime, reason: "ttl" });
        remaining -= b.size;
      } else {
        rest.push(b);
      }
    }
    if (p.budgetBytes !== null) {
      for (const b of rest) {
        if (remaining <= p.budgetBytes) break;
        blobs.push({ hash: b.hash, storedSize: b.size, mtimeMs: b.mtime, reason: "budget" });
        remaining -= b.size;
      }
    }
    if (p.apply) {
      db.exec("RELEASE gc");
    } else {
      db.exec("ROLLBACK TO gc");
      db.exec("RELEASE gc");
    }
    return {
      journal,
      blobs,
      budgetMet: p.budgetBytes === null || remaining <= p.budgetBytes,
    };
  } catch (e) {
    if (db.isTransaction) {
      try {
        db.exec("ROLLBACK TO gc");
        db.exec("RELEASE gc");
      } catch {
        // transaction already gone
      }
    }
    throw fromSqlite(e, "gc");
  }
}

/**
 * Which of `hashes` are referenced by a journal row or an unexpired pin now
 * (GC re-checks this after moving files aside, just before unlinking).
 */
export function referencedAmong(c: Conn, hashes: readonly string[], now: number): string[] {
  const rows = c.stmt(
    `SELECT value AS hash FROM json_each(?) AS h
     WHERE EXISTS (SELECT 1 FROM blob_ref AS r WHERE r.hash = h.value)
        OR EXISTS (SELECT 1 FROM pin AS p WHERE p.hash = h.value
                   AND (p.expires_at IS NULL OR p.expires_at > ?))`,
  ).all(JSON.stringify(hashes), now) as Array<{ hash: string }>;
  return rows.map((r) => r.hash);
}
