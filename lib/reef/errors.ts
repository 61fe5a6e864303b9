/**
 * Reef's stable error codes (language §11.3): the evaluator turns a {@link ReefError} into a
 * language error with the same code, message and hint.
 *
 * @module
 */

/** Every code Reef raises. */
export type ReefCode =
  | "reef_unlocked"
  | "reef_drift"
  | "reef_conflict"
  | "reef_not_found"
  | "reef_provider"
  | "runner_not_found";

/** A Reef failure: a stable code, a message a person can act on, and maybe a hint. */
export class ReefError extends Error {
  readonly code: ReefCode;
  readonly hint: string | null;

  constructor(code: ReefCode, message: string, hint: string | null = null) {
    super(message);
    this.name = "ReefError";
    this.code = code;
    this.hint = hint;
  }
}

/** The message of an unknown thrown value (OS errors keep their text). */
export function reason(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
