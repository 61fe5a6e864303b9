/**
 * Change detection for small state files (the policy file, `tokens.json`): a `stat` signature
 * (inode, size, mtime, ctime) compared on use. A stat costs ≈2 µs here, so callers check before
 * every decision that depends on the file — an edit takes effect on the very next exec or
 * attach, with no watcher thread and no window.
 *
 * @module
 */

/** A file's signature now, as text (`""`: absent or unreadable); another process compares it. */
export function fileStamp(path: string): string {
  return new FileVersion(path).stamp;
}

/** Tracks one file's signature: `changed()` is true once per change. */
export class FileVersion {
  // The numbers of the last stat (NaN: absent or unreadable), compared without allocating.
  #ino = NaN;
  #size = NaN;
  #mtime = NaN;
  #ctime = NaN;

  constructor(readonly path: string) {
    this.changed();
  }

  /** The signature seen by the last `changed()` (`""`: absent or unreadable). */
  get stamp(): string {
    if (Number.isNaN(this.#ino)) return "";
    return `${this.#ino}:${this.#size}:${this.#mtime}:${this.#ctime}`;
  }

  /** True (once) when the file changed since the last call or construction. */
  changed(): boolean {
    let ino = NaN, size = NaN, mtime = NaN, ctime = NaN;
    try {
      const s = Deno.statSync(this.path);
      ino = s.ino ?? 0;
      size = s.size;
      mtime = s.mtime?.getTime() ?? 0;
      ctime = s.ctime?.getTime() ?? 0;
    } catch { /* absent or unreadable: all NaN */ }
    const same = (a: number, b: number) => a === b || (Number.isNaN(a) && Number.isNaN(b));
    if (
      same(ino, this.#ino) && same(size, this.#size) && same(mtime, this.#mtime) &&
      same(ctime, this.#ctime)
    ) return false;
    this.#ino = ino;
    this.#size = size;
    this.#mtime = mtime;
    this.#ctime = ctime;
    return true;
  }
}
