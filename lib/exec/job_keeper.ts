/**
 * Why a PTY child with job control runs under a keeper shell.
 *
 * A program we start on a PTY leads its own session, so its process group has no parent
 * inside that session: the group is *orphaned*, and Linux discards the terminal's stop
 * signals (SIGTSTP from Ctrl-Z, SIGTTIN, SIGTTOU) for orphaned groups — Ctrl-Z would do
 * nothing, and a program that suspends itself (vim's Ctrl-Z) could not. A shell solves this
 * the way it does for every job: the keeper (`/bin/sh` with `set -m`) leads the session, runs
 * the program as a job in a process group of its own and gives it the terminal. When the job
 * stops, the keeper stops itself with SIGSTOP (which always works), so our waitpid(WUNTRACED)
 * on the keeper sees the stop; a SIGCONT to the keeper makes it `fg` the job again (the job
 * stays the foreground of its own PTY either way: a REPL's `bg` only stops pumping it).
 * When the job ends, the keeper ends the same way (its status, or the same signal).
 *
 * A program that *exits* with 128+N is reported as killed by signal N — the ambiguity every
 * POSIX shell has for `$?`.
 *
 * @module
 */

/** The keeper script; `$@` is the program and its arguments. */
const SCRIPT = [
  "set -m",
  '"$@"',
  "st=$?",
  // 147–150: the job stopped (SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU).
  "while :; do",
  "  case $st in 147|148|149|150) ;; *) break ;; esac",
  "  kill -STOP $$",
  "  fg >/dev/null",
  "  st=$?",
  "done",
  'if [ "$st" -gt 128 ] && [ "$st" -lt 193 ]; then',
  "  trap - $((st - 128)) 2>/dev/null",
  "  kill -$((st - 128)) $$",
  "fi",
  "exit $st",
].join("\n");

/** The POSIX shell the keeper runs in (dash, bash and busybox ash all have `set -m`). */
export const KEEPER_SHELL = "/bin/sh";

/** argv[1..] of the keeper shell running `program` with `args` as its job. */
export function keeperArgs(
  program: string,
  args: readonly (string | Uint8Array)[],
): (string | Uint8Array)[] {
  return ["-c", SCRIPT, "shoal-job", program, ...args];
}
