/**
 * The libc symbols confinement needs (Landlock syscalls, `prctl`, the seccomp filter, the
 * launcher's `execve`), opened once per process. Kept apart from `libc.ts`, whose load also
 * builds the spawn attributes a launcher about to `execve` has no use for.
 *
 * @module
 */

import { openLibc } from "./libc.ts";

const SYMBOLS = {
  syscall3: { name: "syscall", parameters: ["i64", "buffer", "u64", "u64"], result: "i64" },
  syscall4: { name: "syscall", parameters: ["i64", "i64", "i64", "buffer", "u64"], result: "i64" },
  open: { parameters: ["buffer", "i32"], result: "i32" },
  close: { parameters: ["i32"], result: "i32" },
  prctl: { parameters: ["i32", "u64", "u64", "u64", "u64"], result: "i32" },
  /** `prctl` whose third argument is a pointer (`PR_SET_SECCOMP`'s `struct sock_fprog`). */
  prctlPtr: { name: "prctl", parameters: ["i32", "u64", "buffer", "u64", "u64"], result: "i32" },
  execve: { parameters: ["buffer", "buffer", "buffer"], result: "i32" },
  __errno_location: { parameters: [], result: "pointer" },
} as const;

/** The symbols of {@link confineLibc}. */
export type ConfineLibc = Deno.DynamicLibrary<typeof SYMBOLS>["symbols"];

let lib: ConfineLibc | null | undefined;

/** The symbols, or null where they cannot be had (not Linux, no `--allow-ffi`). */
export function confineLibc(): ConfineLibc | null {
  if (lib === undefined) lib = openLibc(SYMBOLS);
  return lib;
}

/** errno of the calling thread, right after a failed call. */
export function confineErrno(l: ConfineLibc): number {
  const p = l.__errno_location();
  return p === null ? 0 : new Deno.UnsafePointerView(p).getInt32();
}
