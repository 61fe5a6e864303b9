/**
 * A minimal real host for calling method tables directly: native JS functions wrapped as
 * ClosureV values, a temp-dir cwd, and a cancellation counter.
 */

import assert from "node:assert/strict";
import { fail, ShoalError } from "../../../lib/value/errors.ts";
import { renderInline } from "../../../lib/value/render.ts";
import { ClosureV, ListV, RecordV, type Value } from "../../../lib/value/types.ts";
import type { MaybePromise } from "../../../lib/eval/maybe.ts";
import type { Interp } from "../../../lib/eval/method_types.ts";
import { lookupMethod } from "../../../lib/eval/methods/mod.ts";

/** A native function as a callable closure value. */
export function fn(f: (...args: Value[]) => MaybePromise<Value>): ClosureV {
  return new ClosureV(null, [], null, f);
}

/** The same function, but answering through a promise (exercises the async paths). */
export function asyncFn(f: (...args: Value[]) => Value): ClosureV {
  return new ClosureV(null, [], null, (...a: Value[]) => Promise.resolve().then(() => f(...a)));
}

/** Host: callValue runs native closures; cwd is a fresh temp dir. */
export class TestInterp implements Interp {
  /** How many times checkCancelled ran. */
  checks = 0;
  /** Calls made through callValue. */
  calls = 0;
  constructor(
    readonly dir: string = Deno.makeTempDirSync({ prefix: "shoal-methods-" }),
  ) {}
  callValue(f: Value, args: Value[]): MaybePromise<Value> {
    this.calls++;
    if (f instanceof ClosureV && typeof f.impl === "function") {
      return (f.impl as (...a: Value[]) => MaybePromise<Value>)(...args);
    }
    throw fail("type_error", "not callable");
  }
  cwd(): string {
    return this.dir;
  }
  env(): Map<string, string> {
    return new Map();
  }
  checkCancelled(): void {
    this.checks++;
  }
  /** Remove the temp dir. */
  cleanup(): void {
    Deno.removeSync(this.dir, { recursive: true });
  }
}

/** Shorthand list value. */
export function L(...items: Value[]): ListV {
  return new ListV(items);
}

/** Shorthand record value. */
export function R(obj: Record<string, Value>): RecordV {
  return new RecordV(new Map(Object.entries(obj)));
}

/** Call `recv.name(pos…, named…)` through the general lookup. */
export function call(
  ip: Interp,
  recv: Value,
  name: string,
  pos: Value[] = [],
  named: Record<string, Value> = {},
): MaybePromise<Value> {
  const f = lookupMethod(recv, name);
  if (f === undefined) throw new Error(`no method .${name}`);
  return f(ip, recv, { pos, named: new Map(Object.entries(named)), span: null });
}

/** `renderInline` of the call's result (awaited). */
export async function show(
  ip: Interp,
  recv: Value,
  name: string,
  pos: Value[] = [],
  named: Record<string, Value> = {},
): Promise<string> {
  return renderInline(await call(ip, recv, name, pos, named));
}

/** Assert that `run` raises a language error with `code` whose msg or hint contains `needle`. */
export async function assertFails(
  run: () => MaybePromise<unknown>,
  code: string,
  needle?: string,
): Promise<ShoalError> {
  let err: unknown = undefined;
  try {
    await run();
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof ShoalError, `expected a ${code} error, got ${err}`);
  const se = err as ShoalError;
  assert.equal(se.err.code, code, `code of «${se.err.msg}»`);
  if (needle !== undefined) {
    const found = se.err.msg.includes(needle) || (se.err.hint ?? "").includes(needle);
    assert.ok(found, `"${needle}" not in msg «${se.err.msg}» / hint «${se.err.hint}»`);
  }
  return se;
}
