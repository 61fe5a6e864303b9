/**
 * An exec shim for what `Deno.Command` cannot do itself: pass argv bytes that are not
 * UTF-8 (Deno only takes strings), start a child inside a cgroup before it runs any code,
 * and give it one fd for stdout and stderr (`&> f`). It is `/bin/sh` running a fixed script that joins the cgroup, rebuilds argv
 * from octal escapes and `exec`s the program — the pid stays the same and no caller text is
 * ever interpreted as shell code (escapes are produced here, byte by byte).
 *
 * @module
 */

const SHELL = "/bin/sh";

// $1: cgroup.procs path or ""; $2: "1" to send stderr to stdout (`&> f` keeps the order of
// the two streams only when both are one fd); then one encoded item per argv element:
//   "S<text>" — literal text; "B<\ooo…>" — bytes as printf octal escapes.
// `$(…)` strips trailing newlines, hence the appended "x" that is removed afterwards.
const SCRIPT = [
  'if [ -n "$1" ]; then { echo $$ > "$1"; } 2>/dev/null; fi',
  "merge=$2",
  "shift 2",
  "n=$#",
  'while [ "$n" -gt 0 ]; do',
  "  a=$1; shift",
  '  case $a in B*) a=$(printf "${a#B}x"); a=${a%x} ;; *) a=${a#S} ;; esac',
  '  set -- "$@" "$a"',
  "  n=$((n - 1))",
  "done",
  'if [ "$merge" = 1 ]; then exec "$@" 2>&1; else exec "$@"; fi',
].join("\n");

/** Encode one argv element for {@link trampoline}. */
function encode(item: string | Uint8Array): string {
  if (typeof item === "string") return "S" + item;
  let out = "B";
  for (const b of item) out += "\\" + b.toString(8).padStart(3, "0");
  return out;
}

/** What the shim should do besides exec. */
export interface TrampolineOptions {
  /** A `cgroup.procs` file to join first. */
  cgroupProcs: string | null;
  /** Make fd 2 a copy of fd 1. */
  mergeStderr: boolean;
}

/**
 * The `Deno.Command` program and args that run `program` with `args` (strings, or bytes
 * that are not UTF-8), doing what `opts` asks first.
 */
export function trampoline(
  program: string,
  args: readonly (string | Uint8Array)[],
  opts: TrampolineOptions,
): { program: string; args: string[] } {
  return {
    program: SHELL,
    args: [
      "-c",
      SCRIPT,
      "shoal-exec",
      opts.cgroupProcs ?? "",
      opts.mergeStderr ? "1" : "0",
      encode(program),
      ...args.map(encode),
    ],
  };
}
