/**
 * Filesystem fingerprints for undo preconditions, and the staleness check
 * that re-stats (and re-hashes) every target before an inverse may run.
 *
 * @module
 */

import { acquireHasher, releaseHasher } from "./blake3.ts";
import { invalid, ioError } from "./errors.ts";
import { IO_CHUNK } from "./limits.ts";
import type { UndoCheck, UndoFreshness, UndoRecord } from "./types.ts";

/** BLAKE3 hex of a file's bytes, streamed. */
export async function hashFile(path: string): Promise<string> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true });
  } catch (e) {
    throw ioError(e, `reading ${path}`, path);
  }
  const h = await acquireHasher();
  try {
    const buf = new Uint8Array(IO_CHUNK);
    for (;;) {
      const n = await file.read(buf);
      if (n === null) break;
      h.update(buf.subarray(0, n));
    }
    return h.digestHex();
  } catch (e) {
    throw ioError(e, `hashing ${path}`, path);
  } finally {
    releaseHasher(h);
    file.close();
  }
}

async function lstatOrNull(path: string): Promise<Deno.FileInfo | null> {
  try {
    return await Deno.lstat(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw ioError(e, `inspecting ${path}`, path);
  }
}

/**
 * The current state of `path` as a precondition check: `absent`, `dir`
 * (with mtime) or `file` (size, mtime and, unless `hash: false`, BLAKE3).
 * @throws {StoreError} `invalid_input` for a symlink or a special file (never fingerprinted).
 */
export async function fingerprint(
  path: string,
  opts: { hash?: boolean } = {},
): Promise<UndoCheck> {
  const st = await lstatOrNull(path);
  if (!st) return { path, expect: "absent" };
  if (st.isSymlink) throw invalid(`refusing to fingerprint a symlink: ${path}`, { path });
  const mtimeMs = st.mtime?.getTime();
  if (st.isDirectory) {
    return mtimeMs === undefined ? { path, expect: "dir" } : { path, expect: "dir", mtimeMs };
  }
  if (!st.isFile) throw invalid(`not a regular file or directory: ${path}`, { path });
  const out: UndoCheck = { path, expect: "file", size: st.size };
  if (mtimeMs !== undefined) out.mtimeMs = mtimeMs;
  if (opts.hash !== false) out.blake3 = await hashFile(path);
  return out;
}

/** Why `check` no longer holds, or null if it does. */
export async function checkOne(check: UndoCheck): Promise<string | null> {
  const st = await lstatOrNull(check.path);
  if (check.expect === "absent") {
    return st ? "something now exists where nothing was expected" : null;
  }
  if (!st) return `it no longer exists (expected a ${check.expect})`;
  if (st.isSymlink) return "it is now a symlink";
  const mtimeMs = st.mtime?.getTime();
  if (check.expect === "dir") {
    if (!st.isDirectory) return "it is no longer a directory";
    if (check.mtimeMs !== undefined && mtimeMs !== check.mtimeMs) {
      return "the directory was modified since";
    }
    return null;
  }
  if (!st.isFile) return "it is no longer a regular file";
  if (st.size !== check.size) return `its size changed from ${check.size} to ${st.size} bytes`;
  if (check.mtimeMs !== undefined && mtimeMs !== check.mtimeMs) {
    return "it was modified since (mtime changed)";
  }
  if (check.blake3 !== undefined && (await hashFile(check.path)) !== check.blake3) {
    return "its contents changed since";
  }
  return null;
}

/**
 * Is an undo record still safe to apply? Re-stats and, where the record has a
 * hash, re-hashes each target. An applied record is always stale.
 */
export async function checkStale(
  record: Pick<UndoRecord, "precondition" | "appliedAt">,
): Promise<UndoFreshness> {
  if (record.appliedAt !== null && record.appliedAt !== undefined) {
    return {
      state: "stale",
      reason: `already applied at ${new Date(record.appliedAt).toISOString()}`,
    };
  }
  if (!Array.isArray(record.precondition)) throw invalid("record.precondition must be an array");
  for (const check of record.precondition) {
    const why = await checkOne(check);
    if (why !== null) return { state: "stale", reason: `${check.path}: ${why}`, path: check.path };
  }
  return { state: "fresh" };
}
