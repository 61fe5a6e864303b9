/**
 * The cancel flags a kernel shares with one session process: a small file mapped into both
 * (`FileMap`), one Int32 per slot. The kernel sets a task's slot to cancel it; the evaluator
 * reads the slot at every check, so even a session busy in a tight loop sees the cancel without
 * its event loop running. Slot 0 stays 0 and is installed between tasks.
 *
 * Where files cannot be mapped (no FFI), both sides fall back to process-local flags: the
 * session then sets its own flag when the kernel's cancel message arrives, and a session too
 * busy to read that message is killed by the kernel (session_host.ts).
 *
 * @module
 */

import { join } from "node:path";
import { FileMap } from "../store/file_map.ts";

/** Cancel slots per session: slot 0 is the idle slot; one is held per running task. */
export const SLOTS = 64;

/** One session's cancel slots. */
export class CancelSlots {
  readonly #map: FileMap | null;
  readonly #buffer: ArrayBufferLike;

  private constructor(map: FileMap | null, readonly path: string | null) {
    this.#map = map;
    this.#buffer = map?.buffer ?? new SharedArrayBuffer(SLOTS * 4);
  }

  /** The kernel side: a new slot file in `dir` (private to the kernel), or local flags. */
  static create(dir: string | null, name: string): CancelSlots {
    if (dir !== null) {
      const path = join(dir, `${name}.${crypto.randomUUID()}.slots`);
      const map = FileMap.create(path, SLOTS * 4);
      if (map !== null) return new CancelSlots(map, path);
    }
    return new CancelSlots(null, null);
  }

  /** The session side: map the kernel's slot file (`path` null or unmappable: local flags). */
  static open(path: string | null): CancelSlots {
    const map = path === null ? null : FileMap.open(path, SLOTS * 4);
    return new CancelSlots(map, map === null ? null : path);
  }

  /** True when the flags are shared with the other process. */
  get shared(): boolean {
    return this.#map !== null;
  }

  /** The flag of slot `i` (element 0 ≠ 0 means "stop"). */
  flag(i: number): Int32Array {
    if (!Number.isInteger(i) || i < 0 || i >= SLOTS) throw new RangeError(`bad slot ${i}`);
    return new Int32Array(this.#buffer, i * 4, 1);
  }

  /** Unmap; the kernel side also removes the file. Views taken earlier must not be used. */
  close(removeFile = false): void {
    this.#map?.close();
    if (removeFile && this.path !== null) {
      try {
        Deno.removeSync(this.path);
      } catch { /* already gone */ }
    }
  }
}
