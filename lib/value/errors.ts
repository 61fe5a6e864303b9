/**
 * Raising language errors from anywhere below the evaluator.
 *
 * A `ShoalError` is the JS exception that carries an `ErrorV`; `try`/`catch` in the language
 * catches it and binds the `ErrorV`. Any other JS exception escaping a value operation is a
 * bug, and hosts report it as `internal`.
 */

import type { Span } from "../syntax/ast.ts";
import { ErrorV } from "./types.ts";

/** A language error in flight. */
export class ShoalError extends Error {
  constructor(readonly err: ErrorV) {
    super(`${err.code}: ${err.msg}`);
    this.name = "ShoalError";
  }
}

/** Build a `ShoalError` (throw it): `throw fail("type_error", "…", "hint")`. */
export function fail(
  code: string,
  msg: string,
  hint: string | null = null,
  span: Span | null = null,
): ShoalError {
  return new ShoalError(new ErrorV(code, msg, hint, null, null, span));
}
