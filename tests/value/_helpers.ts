/** Shared assertions for the value-layer tests. */

import { ok } from "node:assert/strict";
import { ShoalError } from "../../lib/value/errors.ts";
import { ListV, RecordV, type Value } from "../../lib/value/types.ts";

/** A record from an object's fields, in their order. */
export const rec = (o: Record<string, Value>): RecordV => new RecordV(new Map(Object.entries(o)));

/** A list of the given items. */
export const list = (...items: Value[]): ListV => new ListV(items);

/** Assert that `f` throws a ShoalError with `code` whose msg or hint contains `needle`. */
export function assertShoalError(f: () => unknown, code: string, needle?: string): ShoalError {
  let caught: unknown;
  try {
    f();
  } catch (e) {
    caught = e;
  }
  ok(caught instanceof ShoalError, `expected a ShoalError(${code}), got ${String(caught)}`);
  const err = (caught as ShoalError).err;
  ok(err.code === code, `expected code ${code}, got ${err.code}: ${err.msg}`);
  if (needle !== undefined) {
    ok(
      err.msg.includes(needle) || (err.hint ?? "").includes(needle),
      `expected «${needle}» in «${err.msg}» / «${err.hint}»`,
    );
  }
  return caught as ShoalError;
}
