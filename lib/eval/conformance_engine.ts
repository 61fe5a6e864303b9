/**
 * The engine the conformance harness loads (spec/conformance.md §4): one fresh evaluator per
 * case, script mode, cwd = the case's temp dir, env copied from the process, statement sink
 * discarded, no journal.
 *
 * @module
 */

import { ParseError } from "../syntax/errors.ts";
import { renderInline } from "../value/render.ts";
import { Evaluator } from "./mod.ts";
import { toErrorValue } from "./errors.ts";

/** What running one case produced. */
export type CaseResult =
  | { kind: "value"; rendered: string }
  | { kind: "error"; code: string; msg: string; hint?: string }
  | { kind: "parse_error"; msg: string; hint?: string };

/** Run one case's source in a fresh session rooted at `cwd`. */
export async function runCase(src: string, cwd: string): Promise<CaseResult> {
  const ev = new Evaluator({ cwd, env: Deno.env.toObject() });
  let program;
  try {
    program = ev.parse(src);
  } catch (e) {
    if (e instanceof ParseError) {
      return { kind: "parse_error", msg: e.msg, ...(e.hint ? { hint: e.hint } : {}) };
    }
    const err = toErrorValue(e);
    return { kind: "error", code: err.code, msg: err.msg };
  }
  try {
    const v = await ev.evalProgram(program);
    return { kind: "value", rendered: renderInline(v) };
  } catch (e) {
    const err = toErrorValue(e);
    return { kind: "error", code: err.code, msg: err.msg, ...(err.hint ? { hint: err.hint } : {}) };
  }
}
