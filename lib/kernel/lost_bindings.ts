/**
 * What a session restarted after a crash no longer has. The kernel hands the fresh process the
 * root names the dead one had bound and why it died; an exec that then trips over one of them
 * (`greeting` → "command not found", `print(greeting)` → "undefined variable") is told that the
 * name was lost with the restart, not that it never existed.
 *
 * @module
 */

import type { ErrorV } from "../value/types.ts";

/** Names kept at most (a session with more root bindings is told about the first ones). */
export const MAX_LOST_NAMES = 4096;

/** The name a "not bound" error is about, or null for any other error. */
function unboundName(err: ErrorV): string | null {
  if (err.code === "undefined_var") {
    return /^undefined (?:variable|function) `([^`]+)`$/.exec(err.msg)?.[1] ?? null;
  }
  if (err.code === "not_found") return /^(\S+): command not found$/.exec(err.msg)?.[1] ?? null;
  return null;
}

/** The root names a crashed predecessor had bound, and why it died. */
export class LostBindings {
  readonly #names: Set<string>;

  constructor(readonly reason: string, names: readonly string[]) {
    this.#names = new Set(names.slice(0, MAX_LOST_NAMES));
  }

  /** The hint for an error about a name the crash took (null when it is not one of them). */
  hintFor(err: ErrorV): string | null {
    const name = unboundName(err);
    if (name === null || !this.#names.has(name)) return null;
    return `\`${name}\` was bound in this session before it was restarted (${this.reason}); ` +
      `the restart lost it with the session's other bindings — define it again`;
  }
}
