/**
 * BLAKE3 of executables (lock entries, drift checks, Leash hash pins), cached on the file's
 * identity (device, inode, size, mtime) so an unchanged binary is read once per process.
 * A binary modified less than {@link RACY_MS} before it was hashed is hashed again on the
 * next look (an in-place rewrite inside one clock tick keeps its identity).
 *
 * @module
 */

import { type FileIdentity, fileIdentity, sameIdentity } from "../exec/mod.ts";
import { acquireHasher, releaseHasher } from "../store/blake3.ts";
import { RACY_MS } from "./watched.ts";

interface Entry {
  id: FileIdentity;
  settled: boolean;
  hex: string;
}

const MAX_ENTRIES = 4096;
const cache = new Map<string, Entry>();

/** The cached digest of `path` when its identity is unchanged and settled, else null. */
export function cachedDigest(path: string): string | null {
  const e = cache.get(path);
  if (e === undefined || !e.settled) return null;
  const id = fileIdentity(path);
  return sameIdentity(id, e.id) ? e.hex : null;
}

/**
 * The BLAKE3 hex digest of the file at `path` (symlinks followed). Throws the OS error when
 * it cannot be read.
 */
export async function fileDigest(path: string): Promise<string> {
  const hit = cachedDigest(path);
  if (hit !== null) return hit;
  const before = fileIdentity(path);
  const file = await Deno.open(path, { read: true });
  const h = await acquireHasher();
  let hex: string;
  try {
    const buf = new Uint8Array(1024 * 1024);
    for (;;) {
      const n = await file.read(buf);
      if (n === null) break;
      h.update(buf.subarray(0, n));
    }
    hex = h.digestHex();
  } finally {
    file.close();
    releaseHasher(h);
  }
  const after = fileIdentity(path);
  // Cache only when nothing changed while we read, and only as settled when it is old enough.
  if (before !== null && after !== null && sameIdentity(before, after)) {
    if (!cache.has(path) && cache.size >= MAX_ENTRIES) cache.clear();
    cache.set(path, { id: after, settled: Date.now() - after.mtimeMs >= RACY_MS, hex });
  }
  return hex;
}
