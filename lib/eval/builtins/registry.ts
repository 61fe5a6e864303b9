/**
 * The builtin command registry (language §9.1 steps 4–6, §14).
 *
 * A builtin is either *structured* (its value is wrapped in a successful outcome and `>`/`>>`
 * redirects write the value's bytes) or *special* (its value is returned bare: `pwd`, `cd`,
 * `exit`, `jobs`…). Subsystems register theirs with `registerBuiltin`; the dispatcher finds
 * them by head name.
 *
 * @module
 */

import type { CmdExpr, Span } from "../../syntax/ast.ts";
import type { Value } from "../../value/types.ts";
import type { MaybePromise } from "../maybe.ts";
import type { Scope } from "../scope.ts";
import type { Evaluator } from "../evaluator.ts";
import type { MethodArgs } from "../method_types.ts";
import type { ArgItem, FlagTable } from "./flags.ts";

/** Command arguments after generic collection: values in order, flags apart. */
export interface CmdArgs {
  /** Positional values: words as str, path words as path, globs expanded, `(expr)` values. */
  pos: Value[];
  /**
   * `--name` → true, `--name=v` → v, `-abc` → a, b, c → true each; for a builtin with a
   * `flags` table, its keys (`-n 3` → `lines: "3"`).
   */
  flags: Map<string, Value>;
  /** Every word in order (flags as written), for reading GNU-style flags. */
  items: ArgItem[];
  /** Span of the whole command. */
  span: Span;
}

/** What a builtin sees of its invocation. */
export interface BuiltinCtx {
  ev: Evaluator;
  cmd: CmdExpr;
  sc: Scope;
  /** Statement position (language §7.2). */
  stmtPos: boolean;
}

/** A builtin command. */
export interface Builtin {
  /** Structured builtins yield outcomes (§10.3); special heads yield their value bare. */
  structured: boolean;
  /**
   * When set, the builtin receives no pre-collected arguments and reads `ctx.cmd.args`
   * itself (e.g. to keep globs unexpanded).
   */
  rawArgs?: boolean;
  run(ctx: BuiltinCtx, args: CmdArgs): MaybePromise<Value>;
  /**
   * The GNU-style flags it reads (issue 13). With a table, unknown flags are errors, GNU
   * flags it lacks run the external program instead, and `--help` prints `help <name>`.
   */
  flags?: FlagTable;
}

const REGISTRY = new Map<string, Builtin>();

/** Register (or replace) the builtin `name`. */
export function registerBuiltin(name: string, b: Builtin): void {
  REGISTRY.set(name, b);
}

/** The builtin registered under `name`. */
export function getBuiltin(name: string): Builtin | undefined {
  return REGISTRY.get(name);
}

/** Every registered builtin name. */
export function registeredBuiltins(): string[] {
  return [...REGISTRY.keys()];
}

/**
 * Every canonical builtin head (language §14), registered or not: the candidates of the
 * «did you mean 'x'?» hint for unknown commands.
 */
export const BUILTIN_HEADS: readonly string[] = [
  "echo",
  "ls",
  "cat",
  "mkdir",
  "touch",
  "cp",
  "mv",
  "rm",
  "stat",
  "which",
  "env",
  "sleep",
  "head",
  "ln",
  "pwd",
  "cd",
  "pushd",
  "popd",
  "dirs",
  "j",
  "jump",
  "run",
  "source",
  "exit",
  "quit",
  "jobs",
  "assert",
  "save",
  "open",
  "interact",
  "plan",
  "apply",
  "explain",
  "undo",
  "journal",
  "history",
  "reef",
  "help",
];

/** True when `name` is a registered builtin or a canonical head. */
export function isBuiltinHead(name: string): boolean {
  return REGISTRY.has(name);
}

/** A call form that runs before any binding (`retry(…)`, `path(…)`, `assert(…)` — §7.5). */
export type CallForm = (ev: Evaluator, args: MethodArgs, sc: Scope) => MaybePromise<Value>;

/** Registered call forms by name. */
export const CALL_FORMS: Map<string, CallForm> = new Map();

/** Register a special form / constructor for `name(args)` (consulted before bindings). */
export function registerCallForm(name: string, f: CallForm): void {
  CALL_FORMS.set(name, f);
}
