/**
 * Spawn pinning for a confined session (issue 16, protocol §11.4): when a principal's
 * `proc_spawn` list is non-empty, each program the session starts must match a grant — its
 * BLAKE3 hash, its full argv0 or its basename (`*`: anything) — checked on the file that will
 * run: argv0 resolved on PATH and through symlinks, and that resolved path is what is started.
 *
 * Honest limits: it is a preflight. A file swapped between the check and the exec is not seen
 * (TOCTOU) — but a pinned binary beneath one of the principal's write or delete roots is
 * refused outright, so the principal's own code cannot do the swap; someone outside the sandbox
 * still could. Programs started by a child (a shell's commands) are not pinned: only what the
 * session itself spawns.
 *
 * Hashes are remembered per file identity (device, inode, size, mtime, ctime): a swap by rename
 * or an in-place write changes it, so an unchanged binary is hashed once.
 *
 * @module
 */

import { basename } from "node:path";
import { which } from "../exec/mod.ts";
import { beneath } from "../exec/sandbox_spec.ts";
import { hashFile } from "../store/mod.ts";

/** Identities remembered (bounded; oldest out first). */
const MAX_REMEMBERED = 512;

/** A spawn the pins allow: the path to start, or why it is refused. */
export type PinVerdict = { ok: true; path: string } | { ok: false; reason: string };

/** The spawn pins of one principal. */
export class SpawnPins {
  readonly #grants: Set<string>;
  readonly #hashes: boolean;
  readonly #known = new Map<string, { identity: string; hash: string }>();

  /** `writable`: the principal's lowered write and delete roots. */
  constructor(pins: readonly string[], readonly writable: readonly string[]) {
    this.#grants = new Set(pins);
    this.#hashes = pins.some((p) => /^[0-9a-f]{64}$/.test(p));
  }

  /** True when anything is pinned. */
  get active(): boolean {
    return this.#grants.size > 0 && !this.#grants.has("*");
  }

  /** Check `argv0` as the session would start it (PATH and cwd of the spawn). */
  async check(argv0: string, path: string | undefined, cwd: string): Promise<PinVerdict> {
    const found = which(argv0, path, cwd);
    if (found === null) return { ok: false, reason: `${argv0}: not found on PATH` };
    let real: string;
    try {
      real = Deno.realPathSync(found);
    } catch (e) {
      return { ok: false, reason: `${argv0}: cannot resolve ${found}: ${(e as Error).message}` };
    }
    const named = this.#grants.has(argv0) || this.#grants.has(basename(argv0)) ||
      this.#grants.has(found) || this.#grants.has(real);
    if (!named && !this.#hashes) {
      return { ok: false, reason: `${argv0} is not in this principal's proc_spawn list` };
    }
    if (this.writable.some((r) => beneath(real, r))) {
      return {
        ok: false,
        reason: `${real} lies where this principal can write: a pinned program must not (it ` +
          `could be swapped between the check and the start)`,
      };
    }
    if (named) return { ok: true, path: real };
    const hash = await this.#hash(real);
    if (hash !== null && this.#grants.has(hash)) return { ok: true, path: real };
    return {
      ok: false,
      reason: `${real} (BLAKE3 ${hash ?? "unreadable"}) matches no binary pinned in this ` +
        "principal's proc_spawn list",
    };
  }

  async #hash(path: string): Promise<string | null> {
    const identity = identityOf(path);
    if (identity === null) return null;
    const k = this.#known.get(path);
    if (k?.identity === identity) return k.hash;
    const hash = await hashFile(path).catch(() => null);
    if (hash === null) return null;
    // Remembered only when the file did not change while it was read.
    if (identityOf(path) === identity) {
      if (this.#known.size >= MAX_REMEMBERED) this.#known.delete(this.#known.keys().next().value!);
      this.#known.set(path, { identity, hash });
    }
    return hash;
  }
}

function identityOf(path: string): string | null {
  try {
    const st = Deno.statSync(path);
    return `${st.dev}:${st.ino}:${st.size}:${st.mtime?.getTime()}:${st.ctime?.getTime()}`;
  } catch {
    return null;
  }
}
