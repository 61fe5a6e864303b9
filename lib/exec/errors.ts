/**
 * The one error type of the process layer. Every failure to *start* a process (or to set
 * up its redirects) is an {@link ExecError} with a stable {@link ExecErrorKind}; a process
 * that started and then failed or was cancelled is a normal result, never an error.
 *
 * @module
 */

/**
 * Stable failure kinds (API: callers map them to language error codes).
 *
 * - `not_found` — the executable does not exist / is not on PATH (ENOENT).
 * - `permission_denied` — the file exists but cannot be executed (EACCES), e.g. no x bit
 *   or a directory.
 * - `cwd_not_found` — the working directory does not exist or is not a directory.
 * - `redirect_failed` — an stdin/stdout/stderr file could not be opened.
 * - `invalid_argument` — the options themselves are malformed (empty argv, relative cwd,
 *   NUL bytes, bad cap…).
 * - `cancelled` — the cancel signal was already raised before the process was started.
 * - `spawn_failed` — any other OS failure while starting or waiting.
 */
export type ExecErrorKind =
  | "not_found"
  | "permission_denied"
  | "cwd_not_found"
  | "redirect_failed"
  | "invalid_argument"
  | "cancelled"
  | "spawn_failed";

/** Extra data attached to an {@link ExecError}. */
export interface ExecErrorDetails {
  /** The program (argv[0] or its resolved path) or file the failure is about. */
  path?: string;
  /** The operating system's own message, e.g. `"No such file or directory (os error 2)"`. */
  osMessage?: string;
  /** A short suggestion a person can act on. */
  hint?: string;
  /** The underlying error, if any. */
  cause?: unknown;
}

/** A failure to start a process, with a stable {@link ExecErrorKind}. */
export class ExecError extends Error {
  /** Stable machine-readable kind. */
  readonly kind: ExecErrorKind;
  /** The program or file the failure is about, when there is one. */
  readonly path?: string;
  /** The operating system's message, when the failure came from the OS. */
  readonly osMessage?: string;
  /** A suggestion a person can act on. */
  readonly hint?: string;

  constructor(kind: ExecErrorKind, message: string, details: ExecErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = "ExecError";
    this.kind = kind;
    this.path = details.path;
    this.osMessage = details.osMessage;
    this.hint = details.hint;
  }
}

/** True when `e` is an {@link ExecError} (optionally of the given kind). */
export function isExecError(e: unknown, kind?: ExecErrorKind): e is ExecError {
  return e instanceof ExecError && (kind === undefined || e.kind === kind);
}

/** The OS part of a Deno error message (`"Failed to spawn 'x': Permission denied (os error 13)"` → after the colon). */
export function osMessageOf(e: unknown): string {
  const msg = e instanceof Error ? e.message : String(e);
  const m = /^Failed to spawn '.*?': (.*)$/s.exec(msg);
  return m ? m[1] : msg;
}
