/**
 * Helpers for the command-layer tests: a fresh evaluator rooted in a real temp dir, and
 * running a program to its value or its language error.
 *
 * @module
 */

import { Evaluator, type EvaluatorOptions } from "../../../lib/eval/mod.ts";
import type { Value } from "../../../lib/value/types.ts";
import { ShoalError } from "../../../lib/value/errors.ts";
import { renderInline } from "../../../lib/value/render.ts";

export const dec = new TextDecoder();
export const enc = new TextEncoder();

/** Run `fn` with a fresh temp dir (canonical path) that is removed afterwards. */
export async function withTempDir<T>(fn: (dir: string) => T | Promise<T>): Promise<T> {
  const dir = Deno.realPathSync(await Deno.makeTempDir({ prefix: "shoal-cmd-test-" }));
  try {
    return await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Diagnostics (glob lints…) the sessions below wrote, newest last. */
export const lints: string[] = [];

/** A session rooted at `cwd` with a copy of the process environment; stderr → `lints`. */
export function session(cwd: string, opts: EvaluatorOptions = {}): Evaluator {
  return new Evaluator({
    cwd,
    env: Deno.env.toObject(),
    ...opts,
    ports: { stderr: (t) => lints.push(t), ...opts.ports },
  });
}

/** Evaluate `src` to its value. */
export async function run(ev: Evaluator, src: string): Promise<Value> {
  return await ev.evalSource(src);
}

/** Evaluate `src` and render the value inline. */
export async function show(ev: Evaluator, src: string): Promise<string> {
  return renderInline(await ev.evalSource(src));
}

/** Evaluate `src`, expecting a language error; returns it. */
export async function error(ev: Evaluator, src: string): Promise<ShoalError["err"]> {
  try {
    await ev.evalSource(src);
  } catch (e) {
    if (e instanceof ShoalError) return e.err;
    throw e;
  }
  throw new Error(`expected an error from: ${src}`);
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Poll `cond` every 10 ms for at most `ms`; returns whether it became true. */
export async function waitFor(cond: () => boolean, ms = 10_000): Promise<boolean> {
  const deadline = performance.now() + ms;
  while (!cond()) {
    if (performance.now() > deadline) return false;
    await sleep(10);
  }
  return true;
}

/** True when `pid` is gone or only a zombie. */
export function isDead(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
    return state === "Z" || state === "X";
  } catch {
    return true;
  }
}
