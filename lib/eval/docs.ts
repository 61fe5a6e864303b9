/**
 * One-line documentation carried by the functions that implement methods, namespace
 * functions, call forms and builtins (issue 13). The entry that dispatch calls is the entry
 * that `help` and `x.methods()` describe: a table's names come from the table itself and each
 * signature sits beside its implementation, so there is no second list to fall out of step.
 *
 * @module
 */

/** A signature (`.take(n: int) -> list`) and what it does, in one line each. */
export interface Doc {
  sig: string;
  about: string;
}

const DOCS = new WeakMap<object, Doc>();

/** Attach `sig` and `about` to `f` (a method, namespace function, call form…); returns `f`. */
export function doc<F extends object>(sig: string, about: string, f: F): F {
  DOCS.set(f, { sig, about });
  return f;
}

/** The documentation attached to `f`, if any. */
export function docOf(f: object | undefined): Doc | undefined {
  return f === undefined ? undefined : DOCS.get(f);
}

/** Carry `from`'s documentation over to its wrapper `to` (receiver guards…); returns `to`. */
export function sameDoc<F extends object>(from: object, to: F): F {
  const d = DOCS.get(from);
  if (d !== undefined) DOCS.set(to, d);
  return to;
}
