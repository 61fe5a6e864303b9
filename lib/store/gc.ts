/**
 * Retention: expire old journal rows (TTL) and keep the CAS under a byte
 * budget, never deleting a blob that a journal row or an unexpired pin
 * references.
 *
 * Order of work (apply):
 * 1. scan the CAS files (hash, size, mtime);
 * 2. one database transaction deletes expired rows/events/pins and picks the
 *    unreferenced blobs (`gc_rows.ts`), then commits;
 * 3. each picked file is moved aside to a tombstone; a file whose mtime moved
 *    since the scan (a put reused it) or that became referenced meanwhile is
 *    moved back; the rest are unlinked;
 * 4. stale temp files and tombstones are cleaned (a tombstone whose blob is
 *    missing is restored, never dropped).
 *
 * A dry run does 1–2 with the transaction rolled back and touches no file.
 *
 * @module
 */

import { basename, join } from "node:path";
import type { ContentStore } from "./cas.ts";
import { invalid, ioError } from "./errors.ts";
import type { JournalClient } from "./journal_client.ts";
import { GC_GRACE_MS_DEFAULT } from "./limits.ts";
import type { GcOptions, GcReport } from "./types.ts";

const TOMB_PREFIX = ".gc-";

function optMs(name: string, v: unknown): number | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0) {
    throw invalid(`${name} must be a non-negative integer`, { field: name });
  }
  return v;
}

/** Run GC over a content store and its journal. Dry run unless `apply: true`. */
export async function runGc(
  cas: ContentStore,
  journal: JournalClient,
  opts: GcOptions = {},
): Promise<GcReport> {
  if (typeof opts !== "object" || opts === null) throw invalid("gc options must be an object");
  const ttl = optMs("ttlMs", opts.ttlMs);
  const budget = optMs("budgetBytes", opts.budgetBytes);
  const grace = optMs("graceMs", opts.graceMs) ?? GC_GRACE_MS_DEFAULT;
  const now = optMs("now", opts.now) ?? Date.now();
  const apply = opts.apply === true;
  if (opts.apply !== undefined && typeof opts.apply !== "boolean") {
    throw invalid("apply must be a boolean");
  }
  const graceCutoff = now - grace;

  const candidates: Array<[string, number, number]> = [];
  let casBytes = 0;
  for await (const b of cas.listBlobs()) {
    candidates.push([b.hash, b.storedSize, b.mtimeMs]);
    casBytes += b.storedSize;
  }
  const plan = await journal.call("gcPlan", {
    cutoff: ttl === null ? null : now - ttl,
    now,
    graceCutoff,
    budgetBytes: budget,
    casBytes,
    candidates,
    apply,
  });

  const temps: string[] = [];
  for await (const t of cas.listTemps()) {
    if (t.mtimeMs < graceCutoff && !cas.isActiveTemp(t.path)) temps.push(t.path);
  }

  const kept: string[] = [];
  let freed = plan.blobs.reduce((n, b) => n + b.storedSize, 0);
  if (apply && plan.blobs.length > 0) {
    const scanned = new Map(plan.blobs.map((b) => [b.hash, b.mtimeMs]));
    const tombs = new Map<string, string>();
    for (const b of plan.blobs) {
      const tomb = join(cas.tmpDir, `${TOMB_PREFIX}${b.hash}-${crypto.randomUUID()}`);
      try {
        await Deno.rename(cas.pathOf(b.hash), tomb);
        tombs.set(b.hash, tomb);
      } catch (e) {
        if (e instanceof Deno.errors.NotFound) continue; // already gone
        throw ioError(e, "moving a blob aside for GC", cas.pathOf(b.hash));
      }
    }
    // A put that reused a blob after our scan refreshed its mtime first.
    const restore = new Set<string>();
    for (const [hash, tomb] of tombs) {
      const st = await Deno.lstat(tomb).catch(() => null);
      if (st && (st.mtime?.getTime() ?? 0) !== scanned.get(hash)) restore.add(hash);
    }
    const live = await journal.call("referencedAmong", [...tombs.keys()], Date.now());
    for (const h of live) restore.add(h);
    for (const [hash, tomb] of tombs) {
      if (restore.has(hash)) {
        await restoreTomb(cas, hash, tomb);
        kept.push(hash);
      } else {
        await Deno.remove(tomb).catch((e) => {
          if (!(e instanceof Deno.errors.NotFound)) throw ioError(e, "deleting a blob", tomb);
        });
      }
      cas.forget(hash);
    }
    const keptSet = new Set(kept);
    freed = plan.blobs.filter((b) => tombs.has(b.hash) && !keptSet.has(b.hash))
      .reduce((n, b) => n + b.storedSize, 0);
    for (const t of temps) await cleanTemp(cas, t);
  } else if (apply) {
    for (const t of temps) await cleanTemp(cas, t);
  }

  return {
    applied: apply,
    journal: plan.journal,
    blobs: plan.blobs,
    kept,
    bytesFreed: freed,
    casBytesBefore: casBytes,
    casBytesAfter: casBytes - freed,
    budgetMet: budget === null || casBytes - freed <= budget,
    tempFiles: temps.length,
  };
}

/** Put a tombstoned blob back, unless a fresh copy was stored meanwhile. */
async function restoreTomb(cas: ContentStore, hash: string, tomb: string): Promise<void> {
  const dest = cas.pathOf(hash);
  try {
    await Deno.lstat(dest);
    await Deno.remove(tomb); // a new put already re-created it
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw ioError(e, "restoring a blob", dest);
    await Deno.mkdir(join(cas.dir, hash.slice(0, 2)), { recursive: true, mode: 0o700 });
    await Deno.rename(tomb, dest);
  }
}

/** Remove an old temp file; a leftover tombstone of a missing blob is restored instead. */
async function cleanTemp(cas: ContentStore, path: string): Promise<void> {
  const name = basename(path);
  const m = /^\.gc-([0-9a-f]{64})-/.exec(name);
  try {
    if (m && !(await cas.has(m[1]))) {
      // A GC crashed between moving it aside and deciding: keep the data.
      await restoreTomb(cas, m[1], path);
      return;
    }
    await Deno.remove(path);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw ioError(e, "removing a temp file", path);
  }
}
