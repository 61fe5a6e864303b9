/**
 * Control-flow completions. `break`/`continue`/`return` travel as returned `Ctl` values (not
 * exceptions) from statement runners up to the loop or call that consumes them; `exit` is rare
 * and unwinds everything, so it is an exception that language `try` never catches.
 *
 * @module
 */

import type { Value } from "../value/types.ts";

/** A pending `break`, `continue` or `return`. */
export class Ctl {
  constructor(readonly kind: "break" | "continue" | "return", readonly value: Value = null) {}
}

/** The shared `break` completion. */
export const BREAK: Ctl = new Ctl("break");
/** The shared `continue` completion. */
export const CONTINUE: Ctl = new Ctl("continue");

/** `exit [n]` / `quit [n]` in flight. */
export class ExitSignal {
  constructor(readonly code: number) {}
}
