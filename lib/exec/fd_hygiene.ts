/**
 * Keep inherited file descriptors out of children.
 *
 * `Deno.Command` children inherit every fd of ours that lacks FD_CLOEXEC — typically fds
 * a parent process handed to us (deno-notes §2 pitfall 9). Entry points call
 * {@link closeInheritedFds} once at start; it marks fds ≥ 3 close-on-exec through
 * `close_range(3, ~0, CLOSE_RANGE_CLOEXEC)` (Linux ≥ 5.11) so they stay usable by us but
 * never reach a child.
 *
 * @module
 */

import { openLibc } from "./libc.ts";

const CLOSE_RANGE_CLOEXEC = 1 << 2;

type CloseRange = (first: number, last: number, flags: number) => number;

let closeRange: CloseRange | null | undefined; // undefined: not tried yet; null: unavailable

function loadCloseRange(): CloseRange | null {
  if (closeRange !== undefined) return closeRange;
  const lib = openLibc({ close_range: { parameters: ["u32", "u32", "i32"], result: "i32" } });
  closeRange = lib === null ? null : (a, b, c) => lib.close_range(a, b, c);
  return closeRange;
}

/**
 * Mark every fd ≥ 3 of this process close-on-exec. Returns true when that was done,
 * false when FFI or `close_range` is unavailable (the call is then a harmless no-op).
 * Safe to call any number of times; each call covers fds opened since the last one.
 */
export function closeInheritedFds(): boolean {
  const fn = loadCloseRange();
  if (fn === null) return false;
  try {
    return fn(3, 0xffffffff, CLOSE_RANGE_CLOEXEC) === 0;
  } catch {
    return false;
  }
}
