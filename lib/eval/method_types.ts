/**
 * The contract between the method dispatcher and method implementations.
 *
 * Method tables (`lib/eval/methods/*.ts`) map a method name to a `MethodFn`. The dispatcher
 * (language §15: dispatch order, field→method fallback, did-you-mean) picks the table by
 * receiver type; implementations check their own arguments and raise with `fail(...)`.
 */

import type { Span } from "../syntax/ast.ts";
import type { RecordV, Value } from "../value/types.ts";
import type { MaybePromise } from "./maybe.ts";

/** Evaluated call arguments. */
export interface MethodArgs {
  /** Positional arguments in order (a trailing block is the last positional, a closure). */
  pos: Value[];
  /** Named arguments (`sep: ","`). */
  named: Map<string, Value>;
  /** Span of the whole call, for error reporting. */
  span: Span | null;
}

/** What a method implementation may ask of the evaluator. */
export interface Interp {
  /** Call any callable value (closure, alias command…) with positional and named args. */
  callValue(fn: Value, args: Value[], named?: Map<string, Value>): MaybePromise<Value>;
  /** The session's current working directory (absolute). */
  cwd(): string;
  /** The session's environment (the evaluator's copy — never the process env). */
  env(): Map<string, string>;
  /** Throws the cancellation error if the running work was cancelled. Call it in long loops. */
  checkCancelled(): void;
  /**
   * The configuration snapshot the host injected for the `config` namespace (§13.2); absent or
   * null when none was injected (`config.all()` is then `{}`).
   */
  config?(): RecordV | null;
}

/** One method implementation. */
export type MethodFn = (ip: Interp, recv: Value, args: MethodArgs) => MaybePromise<Value>;

/** A receiver type's method table. */
export type MethodTable = Record<string, MethodFn>;
