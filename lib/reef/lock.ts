/**
 * `reef.lock` (subsystems §6): one `[tool.NAME]` table per locked tool with `name`, `version`,
 * `provider`, `path`, `blake3` and `resolved_at`. It records this host's binaries (paths and
 * content hashes), so it is a local materialisation, not a portable dependency lock.
 *
 * A lock that does not parse is kept as an error (never silently treated as empty, never
 * overwritten except by `reef lock --refresh`). Writes are atomic (temp file + rename).
 *
 * @module
 */

import { parse as parseToml } from "smol-toml";
import { dirname } from "node:path";
import { reason, ReefError } from "./errors.ts";
import { type FileRead, WatchedFiles } from "./watched.ts";

/** One locked tool. */
export interface LockEntry {
  name: string;
  /** Exact version, or `"unknown"`. */
  version: string;
  provider: string;
  /** Absolute path of the executable. */
  path: string;
  /** BLAKE3 hex of the executable's bytes when locked. */
  blake3: string;
  /** RFC 3339 UTC. */
  resolved_at: string;
}

/** What reading a lock gave. */
export type LockRead =
  | { ok: true; entries: ReadonlyMap<string, LockEntry> }
  | { ok: false; missing: true }
  | { ok: false; missing: false; error: string };

const FIELDS = ["version", "provider", "path", "blake3", "resolved_at"] as const;

function isTable(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

/** Parse lock text (throws nothing). */
export function parseLock(read: FileRead): LockRead {
  if (!read.ok) return read.missing ? read : { ok: false, missing: false, error: read.error };
  let doc: Record<string, unknown>;
  try {
    doc = parseToml(read.text) as Record<string, unknown>;
  } catch (e) {
    return { ok: false, missing: false, error: `invalid TOML: ${reason(e).split("\n")[0]}` };
  }
  const entries = new Map<string, LockEntry>();
  const tools = doc.tool ?? {};
  if (!isTable(tools)) return { ok: false, missing: false, error: "[tool] is not a table" };
  for (const [key, v] of Object.entries(tools)) {
    if (!isTable(v)) return { ok: false, missing: false, error: `[tool.${key}] is not a table` };
    const e: Record<string, string> = {};
    for (const f of FIELDS) {
      const x = v[f];
      const text = x instanceof Date ? x.toISOString() : x;
      if (typeof text !== "string") {
        return { ok: false, missing: false, error: `[tool.${key}] has no string \`${f}\`` };
      }
      e[f] = text;
    }
    if (!e.path.startsWith("/")) {
      return { ok: false, missing: false, error: `[tool.${key}] path is not absolute` };
    }
    const name = typeof v.name === "string" ? v.name : key;
    entries.set(key, { name, ...e } as unknown as LockEntry);
  }
  return { ok: true, entries };
}

const locks = new WatchedFiles<LockRead>((_path, read) => parseLock(read));

/** The lock at `path` as it is on disk now (cached on the file's identity). */
export function readLock(path: string): LockRead {
  return locks.get(path);
}

const BARE_KEY = /^[A-Za-z0-9_-]+$/;

function key(k: string): string {
  return BARE_KEY.test(k) ? k : JSON.stringify(k);
}

/** The lock's text: entries sorted by name, a header saying what the file is. */
export function renderLock(entries: ReadonlyMap<string, LockEntry>): string {
  let out = "# Reef lock: the binaries this host resolved for the manifest's tools (paths and\n" +
    "# BLAKE3 hashes are host-local). Written by `reef lock`; refresh with `reef lock --refresh`.\n";
  for (const name of [...entries.keys()].sort()) {
    const e = entries.get(name)!;
    out += `\n[tool.${key(name)}]\n`;
    out += `name = ${JSON.stringify(e.name)}\n`;
    for (const f of FIELDS) out += `${f} = ${JSON.stringify(e[f])}\n`;
  }
  return out;
}

/** How Reef replaces a file (a journaling host records the write; default {@link writeAtomic}). */
export type FileWriter = (path: string, text: string) => void;

/** Write the lock (atomically by default). */
export function writeLock(
  path: string,
  entries: ReadonlyMap<string, LockEntry>,
  write: FileWriter = writeAtomic,
): void {
  try {
    write(path, renderLock(entries));
  } finally {
    locks.forget(path);
  }
}

/** Replace `path` with `text` atomically; failure is `reef_provider`. */
export function writeAtomic(path: string, text: string): void {
  const tmp = `${dirname(path)}/.${path.slice(path.lastIndexOf("/") + 1)}.${Deno.pid}-${
    crypto.randomUUID().slice(0, 8)
  }.tmp`;
  try {
    const f = Deno.openSync(tmp, { write: true, createNew: true, mode: 0o644 });
    try {
      const bytes = new TextEncoder().encode(text);
      for (let off = 0; off < bytes.length;) off += f.writeSync(bytes.subarray(off));
      f.syncSync();
    } finally {
      f.close();
    }
    Deno.renameSync(tmp, path);
  } catch (e) {
    try {
      Deno.removeSync(tmp);
    } catch {
      // it may never have been created
    }
    throw new ReefError("reef_provider", `writing ${path}: ${reason(e)}`);
  }
}
