/**
 * Undo records (storage side): typed inverses of reversible mutations, each
 * with the filesystem state it expects before it may be replayed. The prior
 * bytes of a `restore_bytes` inverse are kept alive as a blob ref of the row.
 *
 * @module
 */

import { isAbsolute } from "node:path";
import { invalid, StoreError } from "./errors.ts";
import { parseRef, toRef } from "./refs.ts";
import { type Conn, idOf, type Param } from "./sqlite_conn.ts";
import type { UndoCheck, UndoFilter, UndoInput, UndoKind, UndoRecord } from "./types.ts";
import * as v from "./validate.ts";

function absPath(name: string, p: unknown): string {
  const s = v.text(name, p, 64 * 1024, false);
  if (!isAbsolute(s)) throw invalid(`${name} must be an absolute path`, { field: name });
  return s;
}

function check(i: number, c: unknown): UndoCheck {
  const at = `precondition[${i}]`;
  if (typeof c !== "object" || c === null) throw invalid(`${at} must be an object`);
  const u = c as Record<string, unknown>;
  const path = absPath(`${at}.path`, u.path);
  switch (u.expect) {
    case "absent":
      return { path, expect: "absent" };
    case "dir":
      return u.mtimeMs === undefined
        ? { path, expect: "dir" }
        : { path, expect: "dir", mtimeMs: v.ms(`${at}.mtimeMs`, u.mtimeMs) };
    case "file": {
      const out: UndoCheck = { path, expect: "file", size: v.count(`${at}.size`, u.size) };
      if (u.mtimeMs !== undefined) out.mtimeMs = v.ms(`${at}.mtimeMs`, u.mtimeMs);
      if (u.blake3 !== undefined) out.blake3 = parseRef(u.blake3 as string);
      return out;
    }
    default:
      throw invalid(`${at}.expect must be absent, file or dir`);
  }
}

/** Validate an undo input; returns normalised kind, data and precondition. */
function validate(input: UndoInput): {
  journalId: number;
  kind: UndoKind;
  data: Record<string, string>;
  precondition: UndoCheck[];
  prior: string | null;
} {
  if (typeof input !== "object" || input === null) throw invalid("recordUndo expects an object");
  const journalId = v.rowId("journalId", input.journalId);
  const d = input.data as unknown as Record<string, unknown>;
  if (typeof d !== "object" || d === null) throw invalid("data must be an object");
  if (!Array.isArray(input.precondition) || input.precondition.length === 0) {
    throw invalid("precondition must be a non-empty array of checks");
  }
  if (input.precondition.length > 64) throw invalid("precondition may have at most 64 checks");
  const precondition = input.precondition.map((c, i) => check(i, c));
  switch (input.kind) {
    case "trash_move":
      return {
        journalId,
        kind: input.kind,
        data: {
          original: absPath("data.original", d.original),
          trash: absPath("data.trash", d.trash),
        },
        precondition,
        prior: null,
      };
    case "restore_bytes": {
      const prior = parseRef(d.prior as string);
      return {
        journalId,
        kind: input.kind,
        data: { path: absPath("data.path", d.path), prior: toRef(prior) },
        precondition,
        prior,
      };
    }
    case "move_back":
      return {
        journalId,
        kind: input.kind,
        data: { from: absPath("data.from", d.from), to: absPath("data.to", d.to) },
        precondition,
        prior: null,
      };
    default:
      throw invalid("kind must be trash_move, restore_bytes or move_back");
  }
}

interface UndoRow {
  id: number;
  journal_id: number;
  kind: UndoKind;
  data: string;
  precondition: string;
  created_at: number;
  applied_at: number | null;
}

function toRecord(r: UndoRow): UndoRecord {
  return {
    id: r.id,
    journalId: r.journal_id,
    kind: r.kind,
    data: JSON.parse(r.data),
    precondition: JSON.parse(r.precondition),
    createdAt: r.created_at,
    appliedAt: r.applied_at,
  } as UndoRecord;
}

/** Hash of a `restore_bytes` input's prior blob (for the existence check before writing). */
export function priorHashOf(input: UndoInput): string | null {
  return input && input.kind === "restore_bytes" ? parseRef(input.data?.prior) : null;
}

/** Store an undo record for a journal row. */
export function recordUndo(c: Conn, input: UndoInput): UndoRecord {
  const u = validate(input);
  return c.tx("recordUndo", () => {
    if (!c.stmt("SELECT 1 FROM journal WHERE id = ?").get(u.journalId)) {
      throw new StoreError("journal_not_found", `no journal entry ${u.journalId}`, {
        id: u.journalId,
      });
    }
    const r = c.stmt(
      `INSERT INTO undo_record (journal_id, kind, data, precondition, created_at)
       VALUES (?, ?, ?, ?, ?)`,
    ).run(u.journalId, u.kind, JSON.stringify(u.data), JSON.stringify(u.precondition), Date.now());
    if (u.prior) {
      c.stmt("INSERT OR IGNORE INTO blob_ref (journal_id, hash, role) VALUES (?, ?, 'undo')")
        .run(u.journalId, u.prior);
    }
    return getUndo(c, idOf(r.lastInsertRowid))!;
  });
}

/** One undo record, or null. */
export function getUndo(c: Conn, id: number): UndoRecord | null {
  const r = c.stmt("SELECT * FROM undo_record WHERE id = ?").get(v.rowId("id", id)) as
    | UndoRow
    | undefined;
  return r ? toRecord(r) : null;
}

/** Undo records, newest first (the order inverses are replayed in). */
export function listUndo(c: Conn, filter: UndoFilter = {}): UndoRecord[] {
  const where: string[] = [];
  const params: Param[] = [];
  if (filter.journalId !== undefined) {
    where.push("journal_id = ?");
    params.push(v.rowId("journalId", filter.journalId));
  }
  if (filter.pending !== undefined) {
    if (typeof filter.pending !== "boolean") throw invalid("pending must be a boolean");
    where.push(filter.pending ? "applied_at IS NULL" : "applied_at IS NOT NULL");
  }
  params.push(v.limit(filter.limit));
  const sql = `SELECT * FROM undo_record ${
    where.length ? "WHERE " + where.join(" AND ") : ""
  } ORDER BY id DESC LIMIT ?`;
  return (c.stmt(sql).all(...params) as unknown as UndoRow[]).map(toRecord);
}

/** Mark a record applied (once). */
export function markApplied(c: Conn, id: number, at?: number): UndoRecord {
  v.rowId("id", id);
  const when = at === undefined ? Date.now() : v.ms("at", at);
  return c.tx("markApplied", () => {
    const r = getUndo(c, id);
    if (!r) throw new StoreError("undo_not_found", `no undo record ${id}`, { id });
    if (r.appliedAt !== null) {
      throw new StoreError(
        "undo_already_applied",
        `undo record ${id} was already applied at ${new Date(r.appliedAt).toISOString()}`,
        { id, appliedAt: r.appliedAt },
      );
    }
    c.stmt("UPDATE undo_record SET applied_at = ? WHERE id = ?").run(when, id);
    return { ...r, appliedAt: when };
  });
}
