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

/**
 * A lexical scope. The first binding lives inline: the scope object is itself the cell of its
 * first name (`k0`, `v`, `mut`). Most scopes (a call with one parameter, a loop iteration, a
 * lambda) bind at most one name, and a `Map` plus a cell object per scope would dominate calls
 * and loops.
 */
export class Scope implements Cell {
  /**
   * Bumped by every root-scope declaration and every assignment (any scope): a host that
   * reports the root bindings re-reads them only when this moved (O(1) per exec otherwise).
   */
  static changes = 0;
  k0: string | null = null;
  v: Value = null;
  mut = false;
  vars: Map<string, Cell> | null = null;
  /** `call`: the parameter scope of a closure call (marks a fn/lambda body). */
  constructor(readonly parent: Scope | null, readonly call = false) {}

  /** True inside a closure body: some scope up the chain is a call scope. */
  inCallBody(): boolean {
    // deno-lint-ignore no-this-alias
    for (let s: Scope | null = this; s !== null; s = s.parent) if (s.call) return true;
    return false;
  }

  /** Declare (or re-declare, replacing) `name` in this scope. */
  declare(name: string, v: Value, mut = false): void {
    if (this.parent === null) Scope.changes++;
    if (this.k0 === null || this.k0 === name) {
      this.k0 = name;
      this.v = v;
      this.mut = mut;
    } else (this.vars ??= new Map()).set(name, { v, mut });
  }

  /** The nearest cell for `name`, or undefined. */
  lookup(name: string): Cell | undefined {
    // deno-lint-ignore no-this-alias
    let s: Scope | null = this;
    do {
      if (s.k0 === name) return s;
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
      if (s.k0 !== null) seen.add(s.k0);
      if (s.vars) { for (const k of s.vars.keys()) seen.add(k); }
    }
    return [...seen];
  }
}
