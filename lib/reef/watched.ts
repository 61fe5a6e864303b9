/**
 * Small files (manifests, locks) read once and re-read only when they change: each read is
 * keyed on the file's identity (device, inode, size, mtime). File-system clocks are coarse
 * (a few ms), so a file whose mtime is younger than {@link RACY_MS} at the time we read it is
 * "unsettled": it is re-read on every later look until it has aged (git's "racy clean" rule).
 * Two edits inside one clock tick are therefore still seen.
 *
 * @module
 */

import { type FileIdentity, fileIdentity, sameIdentity } from "../exec/mod.ts";

/** How long after its mtime a file may change without its identity changing. */
export const RACY_MS = 1000;

/** Manifests and locks larger than this are refused (a tool list is a few hundred bytes). */
export const MAX_FILE_BYTES = 1024 * 1024;

/** A read attempt. */
export type FileRead =
  | { ok: true; text: string }
  | { ok: false; missing: boolean; error: string };

interface Entry<T> {
  id: FileIdentity | null;
  settled: boolean;
  text: string | null;
  value: T;
}

/** True when an identity read at `nowMs` may still hide an edit. */
export function unsettled(id: FileIdentity | null, nowMs: number): boolean {
  return id !== null && nowMs - id.mtimeMs < RACY_MS;
}

/** Read `path` as UTF-8 text, bounded. Never throws. */
export function readSmallFile(path: string, id: FileIdentity | null): FileRead {
  if (id === null) return { ok: false, missing: true, error: "No such file or directory" };
  if (id.kind !== "file") return { ok: false, missing: false, error: "not a regular file" };
  if (id.size > MAX_FILE_BYTES) {
    return { ok: false, missing: false, error: `larger than ${MAX_FILE_BYTES} bytes` };
  }
  try {
    const bytes = Deno.readFileSync(path);
    if (bytes.length > MAX_FILE_BYTES) {
      return { ok: false, missing: false, error: `larger than ${MAX_FILE_BYTES} bytes` };
    }
    return { ok: true, text: new TextDecoder("utf-8", { fatal: true }).decode(bytes) };
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      return { ok: false, missing: true, error: "No such file or directory" };
    }
    return { ok: false, missing: false, error: e instanceof Error ? e.message : String(e) };
  }
}

/** A bounded cache of parsed small files, each re-parsed only when its content changed. */
export class WatchedFiles<T> {
  readonly #parse: (path: string, read: FileRead) => T;
  readonly #max: number;
  readonly #entries = new Map<string, Entry<T>>();

  constructor(parse: (path: string, read: FileRead) => T, max = 1024) {
    this.#parse = parse;
    this.#max = max;
  }

  /** The parsed content of `path` now (a missing file is parsed too, as missing). */
  get(path: string): T {
    const id = fileIdentity(path);
    const e = this.#entries.get(path);
    if (e !== undefined && e.settled && sameIdentity(e.id, id)) return e.value;
    const now = Date.now();
    const read = readSmallFile(path, id);
    const text = read.ok ? read.text : null;
    let value: T;
    if (e !== undefined && text !== null && e.text === text) value = e.value;
    else value = this.#parse(path, read);
    if (e === undefined && this.#entries.size >= this.#max) this.#entries.clear();
    this.#entries.set(path, { id, settled: !unsettled(id, now), text, value });
    return value;
  }

  /** Forget `path` (after writing it ourselves). */
  forget(path: string): void {
    this.#entries.delete(path);
  }
}
