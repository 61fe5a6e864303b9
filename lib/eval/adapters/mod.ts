/**
 * Adapters (subsystems §7): declarative wrappers that give the tools people run typed results.
 * The catalog lives in `adapters/*.toml` (one file per head, written from each tool's own
 * documentation); hosts that load it pass `adapters: true` to the evaluator.
 *
 * ```ts
 * const ev = new Evaluator({ cwd, adapters: true });
 * await ev.evalSource("(git status).out.where(.state == 'modified')");
 * ```
 *
 * For Leash: {@link declaredEffects} gives the effects an adapted command declares, from its
 * source, before it runs.
 *
 * @module
 */

export {
  AdapterCatalog,
  BUNDLED_DIR,
  catalogDirs,
  loadCatalog,
  NO_ADAPTERS,
  parseAdapterFile,
} from "./catalog.ts";
export type { AdapterSource } from "./host.ts";
export { adapterFor, declaredEffects, runAdapted, runAdaptedBlock } from "./run.ts";
export { bindCall, flagSpelling, type Token } from "./bind.ts";
export { hostPort, instantiateEffects, parseEffect, UNKNOWN } from "./effects.ts";
export { type OutputSpec, ParseFailure, parseOutput, PARSER_NAMES } from "./parsers/mod.ts";
export { parseHint, type TypeHint } from "./hint.ts";
export type { AdapterSpec, CallSpec, ParamType } from "./schema.ts";

import { OutcomeV, type Value } from "../../value/types.ts";

/**
 * True for the outcome of an external program that carries a parsed value — an adapted
 * command. Hosts show such an outcome as its value, not as the tool's machine-format stdout.
 */
export function hasAdaptedValue(v: Value): boolean {
  return v instanceof OutcomeV && v.parsed !== undefined && v.pid !== 0;
}
