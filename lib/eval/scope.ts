/**
 * Lexical environments (language §7.3).
 *
 * A scope is a parent-linked map of name → cell. Cells are shared, so closures capture by
 * reference: a later assignment to a captured `var` is visible to the closure. The map is
 * created lazily — most block and loop-iteration scopes never declare anything, and creating
 * a `Map` per iteration would dominate tight loops.
 *
 * @module
 */

import type { Value } from "../value/types.ts";

/** One binding. */
export interface Cell {
  v: Value;
  readonly mut: boolean;
}

/** A lexical scope. */
export class Scope {
  vars: Map<string, Cell> | null = null;
  constructor(readonly parent: Scope | null) {}

  /** Declare (or re-declare, replacing) `name` in this scope. */
  declare(name: string, v: Value, mut = false): void {
    (this.vars ??= new Map()).set(name, { v, mut });
  }

  /** The nearest cell for `name`, or undefined. */
  lookup(name: string): Cell | undefined {
    // deno-lint-ignore no-this-alias
    let s: Scope | null = this;
    do {
      const vars: Map<string, Cell> | null = s.vars;
      if (vars !== null) {
        const c = vars.get(name);
        if (c !== undefined) return c;
      }
      s = s.parent;
    } while (s !== null);
    return undefined;
  }

  /** True when `name` is bound anywhere up the chain. */
  has(name: string): boolean {
    return this.lookup(name) !== undefined;
  }

  /** Every name visible from here (nearest first, no duplicates). */
  names(): string[] {
    const seen = new Set<string>();
    // deno-lint-ignore no-this-alias
    for (let s: Scope | null = this; s !== null; s = s.parent) {
      if (s.vars) { for (const k of s.vars.keys()) seen.add(k); }
    }
    return [...seen];
  }
}
