/**
 * Helpers for the stream/channel tests: a fresh real Evaluator per case in a temp dir, render
 * helpers and error assertions.
 */

import assert from "node:assert/strict";
import { Evaluator } from "../../../lib/eval/mod.ts";
import type { EvaluatorOptions } from "../../../lib/eval/evaluator.ts";
import { ShoalError } from "../../../lib/value/errors.ts";
import { renderInline } from "../../../lib/value/render.ts";
import type { Value } from "../../../lib/value/types.ts";

/** A temp dir for this test file. */
export const dir: string = Deno.makeTempDirSync({ prefix: "shoal-streams-" });

/** A fresh evaluator rooted at `dir` (or `cwd`). */
export function newEv(opts: EvaluatorOptions = {}): Evaluator {
  return new Evaluator({ cwd: dir, env: {}, ...opts });
}

/** Evaluate and render inline. */
export async function run(src: string, ev: Evaluator = newEv()): Promise<string> {
  return renderInline(await ev.evalSource(src));
}

/** Evaluate and return the value. */
export async function value(src: string, ev: Evaluator = newEv()): Promise<Value> {
  return await ev.evalSource(src);
}

/** Assert `src` fails with `code` (and `needle` in msg or hint). */
export async function fails(
  src: string,
  code: string,
  needle?: string,
  ev: Evaluator = newEv(),
): Promise<ShoalError> {
  let err: unknown;
  try {
    await ev.evalSource(src);
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof ShoalError, `${src}: expected ${code}, got ${err}`);
  const se = err as ShoalError;
  assert.equal(se.err.code, code, `${src}: code of «${se.err.msg}»`);
  if (needle !== undefined) {
    const found = se.err.msg.includes(needle) || (se.err.hint ?? "").includes(needle);
    assert.ok(found, `${src}: "${needle}" not in «${se.err.msg}» / «${se.err.hint}»`);
  }
  return se;
}

/** Check a table of `[src, expected render]`. */
export async function table(cases: [string, string][]): Promise<void> {
  for (const [src, want] of cases) assert.equal(await run(src), want, src);
}
