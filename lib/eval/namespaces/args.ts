/**
 * Argument checking shared by the namespace members (`json.parse(…)`, `math.sqrt(…)`, …) and
 * the namespace-function types.
 *
 * @module
 */

import { fail, ShoalError } from "../../value/errors.ts";
import { typeName, type Value } from "../../value/types.ts";
import type { MaybePromise } from "../maybe.ts";
import type { Interp, MethodArgs } from "../method_types.ts";

/** A namespace function: `ns.member(args)`. */
export type NsFn = (ip: Interp, args: MethodArgs) => MaybePromise<Value>;

/** One namespace: its callable members and its constants (fields). */
export interface Namespace {
  /** The root name (`json`, `math`, …). */
  readonly name: string;
  /** Callable members. */
  readonly functions: ReadonlyMap<string, NsFn>;
  /** Constant members read as fields (`math.pi`). */
  readonly constants?: ReadonlyMap<string, Value>;
  /**
   * Field access handler that replaces the constant/function rules (config projects the
   * snapshot's top-level keys, `null` when absent).
   */
  readonly field?: (ip: Interp, member: string) => Value;
}

/** «1 argument» / «2 arguments». */
function plural(n: number): string {
  return n === 1 ? "1 argument" : `${n} arguments`;
}

/**
 * Check positional arity and named arguments of `who(params…)`. `required` positionals must be
 * present, at most `params.length` may be given; named arguments must be in `named`.
 * Violations are arg_error.
 */
export function checkArgs(
  who: string,
  args: MethodArgs,
  params: readonly string[],
  required: number = params.length,
  named: readonly string[] = [],
): void {
  const n = args.pos.length;
  if (n < required) {
    const missing = params[n];
    throw fail(
      "arg_error",
      `${who} requires argument \`${missing}\``,
      `usage: ${who}(${params.join(", ")})`,
      args.span,
    );
  }
  if (n > params.length) {
    throw fail(
      "arg_error",
      params.length === 0
        ? `${who} takes no arguments`
        : `${who} takes at most ${plural(params.length)}, got ${n}`,
      params.length === 0 ? null : `usage: ${who}(${params.join(", ")})`,
      args.span,
    );
  }
  for (const k of args.named.keys()) {
    if (!named.includes(k)) {
      throw fail(
        "arg_error",
        params.length === 0 && named.length === 0
          ? `${who} takes no arguments`
          : `${who}: unknown argument \`${k}\``,
        named.length > 0 ? `known named arguments: ${named.join(", ")}` : null,
        args.span,
      );
    }
  }
}

/** A str argument (arg_error naming the parameter otherwise). */
export function strArg(who: string, args: MethodArgs, i: number, param: string): string {
  const v = args.pos[i];
  if (typeof v !== "string") {
    throw fail(
      "arg_error",
      `${who} expects \`${param}\` to be a str, got ${typeName(v)}`,
      null,
      args.span,
    );
  }
  return v;
}

/** Re-raise a language error from inside `who` with `who: ` in front of its message. */
export function rethrowAs(who: string, e: unknown, args: MethodArgs): never {
  if (e instanceof ShoalError) {
    throw fail(e.err.code, `${who}: ${e.err.msg}`, e.err.hint, args.span);
  }
  throw e;
}

/** The first line of a library error message (parsers append multi-line code frames). */
export function firstLine(e: unknown): string {
  const msg = e instanceof Error ? e.message : String(e);
  const nl = msg.indexOf("\n");
  return (nl < 0 ? msg : msg.slice(0, nl)).trim();
}
