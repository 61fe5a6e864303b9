/**
 * Applying undo records (the typed inverses the fs builtins recorded, issue 7): `trash_move`
 * moves the trashed entry back, `move_back` moves a moved entry back, `restore_bytes` writes
 * the prior bytes (from the CAS, verified) back atomically. Every record of the target journal
 * row is checked for staleness *before* any of them runs, so a stale target changes nothing;
 * records apply newest first and are marked applied one by one.
 *
 * Shared by the language (`undo`, `undo ID` in a kernel session) and `shoal undo ID`.
 *
 * @module
 */

import { dirname, join } from "node:path";
import type { Store, UndoRecord } from "../store/mod.ts";

/** Why an undo did not run: `stale_undo`, `not_found` (nothing to undo) or `io_error`. */
export class UndoError extends Error {
  constructor(readonly code: "stale_undo" | "not_found" | "io_error", message: string) {
    super(message);
    this.name = "UndoError";
  }
}

/** What an undo did. */
export interface UndoReport {
  /** The journal row whose inverses ran. */
  journalId: number;
  /** One line per inverse: `{kind, path}` (path = where the entry is again). */
  undone: Array<{ kind: string; path: string; record: number }>;
}

/**
 * Undo journal row `journalId` (or, when null, the newest row that still has pending inverses).
 * `principal`, when given, limits the choice to rows of that principal.
 */
export async function applyUndo(
  store: Store,
  journalId: number | null,
  principal: string | null = null,
): Promise<UndoReport> {
  let id = journalId;
  if (id === null) {
    // The newest pending record (of the principal's rows, when scoped; the newest 1,000
    // pending records are considered).
    const recs = await store.undo.listUndo({ pending: true, limit: principal === null ? 1 : 1000 });
    for (const r of recs) {
      if (principal === null || (await store.journal.get(r.journalId))?.principal === principal) {
        id = r.journalId;
        break;
      }
    }
    if (id === null) throw new UndoError("not_found", "undo: nothing to undo in this journal");
  }
  const row = await store.journal.get(id);
  if (row === null) throw new UndoError("not_found", `undo: no journal entry ${id}`);
  if (principal !== null && row.principal !== principal) {
    throw new UndoError("not_found", `undo: no journal entry ${id} of principal ${principal}`);
  }
  const all = await store.undo.listUndo({ journalId: id, limit: 1000 });
  const pending = all.filter((r) => r.appliedAt === null);
  if (all.length === 0) {
    throw new UndoError("not_found", `undo: journal entry ${id} has no recorded inverse`);
  }
  if (pending.length === 0) {
    throw new UndoError("stale_undo", `undo: journal entry ${id} was already undone`);
  }
  // Newest first (replay order); all checked before any runs.
  for (const r of pending) {
    const f = await store.undo.checkStale(r);
    if (f.state === "stale") {
      throw new UndoError(
        "stale_undo",
        `undo ${id}: ${f.reason}; refusing to overwrite newer state`,
      );
    }
  }
  const undone: UndoReport["undone"] = [];
  for (const r of pending) {
    undone.push({ kind: r.kind, path: await inverse(store, r), record: r.id });
    await store.undo.markApplied(r.id);
  }
  return { journalId: id, undone };
}

async function inverse(store: Store, r: UndoRecord): Promise<string> {
  try {
    switch (r.kind) {
      case "trash_move":
        await Deno.rename(r.data.trash, r.data.original);
        return r.data.original;
      case "move_back":
        await Deno.rename(r.data.from, r.data.to);
        return r.data.to;
      case "restore_bytes": {
        const bytes = await store.cas.get(r.data.prior);
        const tmp = join(dirname(r.data.path), `.shoal-undo-${crypto.randomUUID()}`);
        const st = await Deno.stat(r.data.path).catch(() => null);
        await Deno.writeFile(tmp, bytes, { mode: st?.mode ?? 0o644 });
        try {
          await Deno.rename(tmp, r.data.path);
        } catch (e) {
          await Deno.remove(tmp).catch(() => {});
          throw e;
        }
        return r.data.path;
      }
    }
  } catch (e) {
    if (e instanceof UndoError) throw e;
    throw new UndoError("io_error", `undo record ${r.id}: ${(e as Error).message}`);
  }
}
