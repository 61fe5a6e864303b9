/**
 * Change detection for small state files (the policy file, `tokens.json`): a `stat` signature
 * (inode, size, mtime, ctime) compared on use. A stat costs ≈2 µs here, so callers check before
 * every decision that depends on the file — an edit takes effect on the very next exec or
 * attach, with no watcher thread and no window.
 *
 * @module
 */

/** A file's identity and version as far as `stat` tells; "absent" when it does not exist. */
export function statSignature(path: string): string {
  try {
    const s = Deno.statSync(path);
    return `${s.ino}:${s.size}:${s.mtime?.getTime()}:${s.ctime?.getTime()}`;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return "absent";
    return `error:${(e as Error).message}`;
  }
}

/** Tracks one file's signature: `changed()` is true once per change. */
export class FileVersion {
  #sig: string;

  constructor(readonly path: string) {
    this.#sig = statSignature(path);
  }

  /** The signature seen last. */
  get signature(): string {
    return this.#sig;
  }

  /** True (once) when the file changed since the last call or construction. */
  changed(): boolean {
    const s = statSignature(this.path);
    if (s === this.#sig) return false;
    this.#sig = s;
    return true;
  }
}
