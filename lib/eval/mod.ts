/**
 * The evaluator's public face.
 *
 * ```ts
 * import { Evaluator } from "./lib/eval/mod.ts";
 * const ev = new Evaluator({ cwd: "/tmp" });
 * const v = await ev.evalSource("let x = 2\nx * 3"); // 6
 * ```
 *
 * `evalProgram` / `evalSource` return a value synchronously when nothing in the program waits
 * (pure computation), else a promise. Language errors are thrown as `ShoalError`; parse errors
 * as `ParseError`; any other exception is an internal bug (hosts report code `internal`).
 *
 * @module
 */

import type { Program } from "../syntax/ast.ts";
import { type Binding, bindingScope, parse } from "../syntax/mod.ts";
import type { Value } from "../value/types.ts";
import type { MaybePromise } from "./maybe.ts";
import { Evaluator as Core, type EvaluatorOptions } from "./evaluator.ts";
// Streams and channels plug into the dispatcher and hooks (language §16).
import "./streams/mod.ts";
import "./channels/mod.ts";
// Command builtins and path methods (registered once the evaluator module is initialised:
// scripts.ts installs evaluator hooks).
import "./builtins/fs.ts";
import "./builtins/dirstack.ts";
import "./builtins/scripts.ts";
import "./builtins/journal.ts"; // journal/history/undo heads (issue 7)
import "./builtins/reef.ts"; // which and reef (issue 18)

export {
  type EvalHooks,
  type EvaluatorOptions,
  installHooks,
  type TaskState,
} from "./evaluator.ts";
export {
  type Builtin,
  BUILTIN_HEADS,
  type BuiltinCtx,
  type CallForm,
  type CmdArgs,
  registerBuiltin,
  registerCallForm,
} from "./builtins/registry.ts";
export { registerMethods } from "./dispatch.ts";
export { defaultPorts, denoFs, type FsPort, nullSink, type Ports, systemClock } from "./ports.ts";
export { isStackOverflow, toErrorValue } from "./errors.ts";
export { isPromise, type MaybePromise } from "./maybe.ts";

/** A session evaluator with source-level entry points. */
export class Evaluator extends Core {
  constructor(opts: EvaluatorOptions = {}) {
    super(opts);
  }

  #scope: { names: unknown; repl: boolean; bindings: ReadonlyMap<string, Binding> } | null = null;

  /** Parse `src` in the session's binding context (REPL or script mode). */
  parse(src: string): Program {
    // The parser's session scope is rebuilt only when the bound names changed (boundNames()
    // returns the same object until then): O(1) per parse, not O(bindings).
    const names = this.boundNames();
    if (this.#scope?.names !== names || this.#scope.repl !== this.repl) {
      const bindings = bindingScope({
        repl: this.repl,
        valueNames: names.values,
        commandNames: names.commands,
      });
      this.#scope = { names, repl: this.repl, bindings };
    }
    return parse(src, { repl: this.repl, bindings: this.#scope.bindings });
  }

  /** Parse and evaluate `src`. Throws `ParseError` before evaluating anything. */
  evalSource(src: string): MaybePromise<Value> {
    return this.evalProgram(this.parse(src));
  }
}
