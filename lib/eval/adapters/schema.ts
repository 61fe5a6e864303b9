/**
 * The adapter file format (subsystems §7) and its validation. A file holds `[cmd.<head>]`
 * tables, each with optional `[cmd.<head>.sub.<name>]` tables:
 *
 * | where | key | meaning |
 * |---|---|---|
 * | cmd | `bin` | the executable (default: the head; `python` → `python3`) |
 * | cmd | `class` | `cli` (default), `tui`, `daemon`, `interpreter` |
 * | cmd | `invoke_payload` | interpreter only: `arg` (default) or `stdin` — how a `head { … }` block's program is passed |
 * | cmd/sub | `ok_codes` | exit statuses that count as success (default `[0]`; a sub inherits its cmd's) |
 * | cmd/sub | `params` | parameter → type: `str bool int float path glob size size_kb duration time datetime list<T>`, `T?` optional |
 * | cmd/sub | `positional` | parameter names the positional words bind to, in order (a `list<T>` one takes the rest) |
 * | cmd/sub | `flags.short` | one-character spelling → parameter |
 * | cmd/sub | `flags.number` | parameter a `-<digits>` word binds to (`git log -5`) |
 * | cmd/sub | `flags.values` | `"attached"` (default: `--name=value`) or `"separate"` (`--name value`, for tools such as curl that refuse `=`) |
 * | cmd/sub | `invoke` | argv placed right after `bin` (replaces the sub's name); an interpreter's top-level `invoke` frames its `head { … }` blocks only (`python3 -c PROGRAM`) |
 * | cmd/sub | `consumed` | parameters validated but not forwarded (they would break the pinned format) |
 * | cmd/sub | `output.parse`, `output.type`, `output.unwrap` | parser, type hint, JSON field to return |
 * | cmd/sub | `effects` | effect templates (effects.ts) |
 * | cmd/sub | `env` | environment the tool must run with (`LC_ALL = "C"`, `GIT_PAGER = "cat"`): its output contract must not follow the user's locale or pager |
 *
 * A call whose spec declares `params` (even `{}`) is strict: an undeclared flag is an
 * `arg_error` before spawn. A spec without `params` forwards every word unchecked.
 *
 * @module
 */

import type { TypeRef } from "../../syntax/ast.ts";
import { type EffectTemplate, parseEffect } from "./effects.ts";
import { HintError, hintFields, parseHint, type TypeHint } from "./hint.ts";
import { NEEDS_FIELDS, type OutputSpec, PARSER_NAMES } from "./parsers/mod.ts";

/** The scalar parameter types. */
const PARAM_TYPES = new Set([
  "str",
  "bool",
  "int",
  "float",
  "path",
  "glob",
  "size",
  "size_kb",
  "duration",
  "time",
  "datetime",
]);

/** A declared parameter type. */
export interface ParamType {
  /** The scalar (element) type. */
  base: string;
  list: boolean;
  optional: boolean;
  /** As written (`list<path>?`). */
  text: string;
  /** The element type as a language type reference (word binding, §6.2). */
  ref: TypeRef;
}

/** The call shape of a head's top level or of one subcommand. */
export interface CallSpec {
  /** `git` or `git status` (messages). */
  label: string;
  /** Null: not declared — every word is forwarded unchecked. */
  params: ReadonlyMap<string, ParamType> | null;
  positional: readonly string[];
  short: ReadonlyMap<string, string>;
  number: string | null;
  /** How a long parameter's value is forwarded: `--name=value` or `--name value`. */
  values: "attached" | "separate";
  invoke: readonly string[] | null;
  consumed: ReadonlySet<string>;
  output: OutputSpec;
  effects: readonly EffectTemplate[];
  okCodes: readonly number[];
  env: readonly (readonly [string, string])[];
}

/** Adapter classes. */
export type AdapterClass = "cli" | "tui" | "daemon" | "interpreter";

/** One adapted command head. */
export interface AdapterSpec {
  head: string;
  bin: string;
  class: AdapterClass;
  payload: "arg" | "stdin";
  top: CallSpec;
  subs: ReadonlyMap<string, CallSpec>;
  /** The file it came from. */
  file: string;
}

const SUB_KEYS: ReadonlySet<string> = new Set([
  "ok_codes",
  "params",
  "positional",
  "flags",
  "invoke",
  "consumed",
  "output",
  "effects",
  "env",
]);
const CMD_KEYS: ReadonlySet<string> = new Set([
  ...SUB_KEYS,
  "bin",
  "class",
  "invoke_payload",
  "sub",
]);

/** A definition error (becomes a loader warning; the head is skipped). */
export class SchemaError extends Error {}

function isTable(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x) && !(x instanceof Date);
}

function strList(x: unknown, what: string): string[] {
  if (!Array.isArray(x) || !x.every((s) => typeof s === "string")) {
    throw new SchemaError(`${what} must be an array of strings`);
  }
  return x;
}

function str(x: unknown, what: string): string {
  if (typeof x !== "string") throw new SchemaError(`${what} must be a string`);
  return x;
}

/** Parse a parameter type string (`list<path>?`). */
export function parseParamType(text: string): ParamType {
  const m = /^\s*(?:list<\s*([a-z_]+)\s*(\?)?\s*>|([a-z_]+))\s*(\?)?\s*$/.exec(text);
  const base = m ? (m[1] ?? m[3]) : undefined;
  if (!m || base === undefined || !PARAM_TYPES.has(base)) {
    throw new SchemaError(
      `unknown parameter type \`${text}\` (known: ${[...PARAM_TYPES].join(" ")}, list<T>, T?)`,
    );
  }
  const list = m[1] !== undefined;
  const ref: TypeRef = { name: base, args: [], optional: false, span: [0, 0] };
  return { base, list, optional: m[4] !== undefined, text, ref };
}

function warnUnknownKeys(
  t: Record<string, unknown>,
  known: ReadonlySet<string>,
  where: string,
  warn: (w: string) => void,
): void {
  for (const k of Object.keys(t)) {
    if (!known.has(k)) warn(`${where}: unknown key \`${k}\` (ignored)`);
  }
}

function okCodes(x: unknown, what: string): number[] {
  if (
    !Array.isArray(x) || x.length === 0 ||
    !x.every((n) => Number.isInteger(n) && n >= 0 && n <= 255)
  ) {
    throw new SchemaError(`${what} must be a non-empty array of exit statuses 0-255`);
  }
  return x as number[];
}

function outputSpec(x: unknown, label: string): OutputSpec {
  if (x === undefined) return { parse: "none", hint: null, unwrap: null };
  if (!isTable(x)) throw new SchemaError(`${label}: output must be a table`);
  for (const k of Object.keys(x)) {
    if (k !== "parse" && k !== "type" && k !== "unwrap") {
      throw new SchemaError(`${label}: unknown key output.${k}`);
    }
  }
  const parse = x.parse === undefined ? "none" : str(x.parse, `${label}: output.parse`);
  if (!PARSER_NAMES.includes(parse)) {
    throw new SchemaError(
      `${label}: unknown parser \`${parse}\` (known: ${PARSER_NAMES.join(", ")})`,
    );
  }
  let hint: TypeHint | null = null;
  if (x.type !== undefined) {
    try {
      hint = parseHint(str(x.type, `${label}: output.type`));
    } catch (e) {
      if (e instanceof HintError) throw new SchemaError(`${label}: output.type: ${e.message}`);
      throw e;
    }
  }
  if (NEEDS_FIELDS.has(parse) && !(hintFields(hint)?.length)) {
    throw new SchemaError(`${label}: the ${parse} parser needs an output.type naming its fields`);
  }
  if (parse === "z-records" && !(hintFields(hint)?.length) && hint?.k !== "list") {
    throw new SchemaError(`${label}: z-records needs output.type table<{…}> or list<T>`);
  }
  const unwrap = x.unwrap === undefined ? null : str(x.unwrap, `${label}: output.unwrap`);
  if (unwrap !== null && parse !== "json") {
    throw new SchemaError(`${label}: output.unwrap applies to the json parser only`);
  }
  return { parse, hint, unwrap };
}

function envPairs(x: unknown, label: string): [string, string][] {
  if (x === undefined) return [];
  if (!isTable(x)) throw new SchemaError(`${label}: env must be a table of strings`);
  return Object.entries(x).map(([k, v]) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) {
      throw new SchemaError(`${label}: bad env name \`${k}\``);
    }
    return [k, str(v, `${label}: env.${k}`)];
  });
}

function callSpec(
  t: Record<string, unknown>,
  label: string,
  inherit: { okCodes: readonly number[]; env: readonly (readonly [string, string])[] },
): CallSpec {
  let params: Map<string, ParamType> | null = null;
  if (t.params !== undefined) {
    if (!isTable(t.params)) throw new SchemaError(`${label}: params must be a table`);
    params = new Map();
    for (const [name, ty] of Object.entries(t.params)) {
      if (!/^[A-Za-z0-9][A-Za-z0-9_]*$/.test(name)) {
        throw new SchemaError(`${label}: bad parameter name \`${name}\``);
      }
      try {
        params.set(name, parseParamType(str(ty, `${label}: params.${name}`)));
      } catch (e) {
        if (e instanceof SchemaError) {
          throw new SchemaError(`${label}: params.${name}: ${e.message}`);
        }
        throw e;
      }
    }
  }
  const declared = (name: string, what: string) => {
    if (params === null || !params.has(name)) {
      throw new SchemaError(`${label}: ${what} names undeclared parameter \`${name}\``);
    }
  };
  const positional = t.positional === undefined
    ? []
    : strList(t.positional, `${label}: positional`);
  positional.forEach((p, i) => {
    declared(p, "positional");
    if (params!.get(p)!.list && i !== positional.length - 1) {
      throw new SchemaError(`${label}: list parameter \`${p}\` must be the last positional`);
    }
  });
  const short = new Map<string, string>();
  let number: string | null = null;
  let values: "attached" | "separate" = "attached";
  if (t.flags !== undefined) {
    if (!isTable(t.flags)) throw new SchemaError(`${label}: flags must be a table`);
    for (const k of Object.keys(t.flags)) {
      if (k !== "short" && k !== "number" && k !== "values") {
        throw new SchemaError(`${label}: unknown key flags.${k}`);
      }
    }
    if (t.flags.values !== undefined) {
      const v = str(t.flags.values, `${label}: flags.values`);
      if (v !== "attached" && v !== "separate") {
        throw new SchemaError(`${label}: flags.values must be "attached" or "separate"`);
      }
      values = v;
    }
    const s = t.flags.short;
    if (s !== undefined) {
      if (!isTable(s)) throw new SchemaError(`${label}: flags.short must be a table`);
      for (const [c, p] of Object.entries(s)) {
        if (!/^[A-Za-z0-9]$/.test(c)) {
          throw new SchemaError(`${label}: flags.short key \`${c}\` is not one character`);
        }
        declared(str(p, `${label}: flags.short.${c}`), `flags.short.${c}`);
        short.set(c, p as string);
      }
    }
    if (t.flags.number !== undefined) {
      number = str(t.flags.number, `${label}: flags.number`);
      declared(number, "flags.number");
      if (params!.get(number)!.base !== "int") {
        throw new SchemaError(`${label}: flags.number must name an int parameter`);
      }
    }
  }
  const consumed = new Set(
    t.consumed === undefined ? [] : strList(t.consumed, `${label}: consumed`),
  );
  for (const c of consumed) declared(c, "consumed");
  const invoke = t.invoke === undefined ? null : strList(t.invoke, `${label}: invoke`);
  const names = new Set(params?.keys() ?? []);
  const effects = (t.effects === undefined ? [] : strList(t.effects, `${label}: effects`)).map(
    (e) => {
      try {
        return parseEffect(e, names);
      } catch (err) {
        throw new SchemaError(`${label}: ${(err as Error).message}`);
      }
    },
  );
  return {
    label,
    params,
    positional,
    short,
    number,
    values,
    invoke,
    consumed,
    output: outputSpec(t.output, label),
    effects,
    okCodes: t.ok_codes === undefined ? inherit.okCodes : okCodes(t.ok_codes, `${label}: ok_codes`),
    env: [...inherit.env, ...envPairs(t.env, label)],
  };
}

/** Validate one `[cmd.<head>]` table; throws {@link SchemaError}. */
export function adapterSpec(
  head: string,
  t: unknown,
  file: string,
  warn: (w: string) => void,
): AdapterSpec {
  if (!/^[A-Za-z0-9][A-Za-z0-9._+-]*$/.test(head)) {
    throw new SchemaError(`bad command head \`${head}\``);
  }
  if (!isTable(t)) throw new SchemaError(`cmd.${head} must be a table`);
  warnUnknownKeys(t, CMD_KEYS, `cmd.${head}`, warn);
  const cls = t.class === undefined ? "cli" : str(t.class, `cmd.${head}.class`);
  if (!["cli", "tui", "daemon", "interpreter"].includes(cls)) {
    throw new SchemaError(`cmd.${head}.class \`${cls}\` is not cli, tui, daemon or interpreter`);
  }
  const payload = t.invoke_payload === undefined
    ? "arg"
    : str(t.invoke_payload, `cmd.${head}.invoke_payload`);
  if (payload !== "arg" && payload !== "stdin") {
    throw new SchemaError(`cmd.${head}.invoke_payload must be "arg" or "stdin"`);
  }
  if (t.invoke_payload !== undefined && cls !== "interpreter") {
    throw new SchemaError(`cmd.${head}.invoke_payload applies to class = "interpreter" only`);
  }
  const baseOk = t.ok_codes === undefined ? [0] : okCodes(t.ok_codes, `cmd.${head}.ok_codes`);
  const top = callSpec(t, head, { okCodes: baseOk, env: [] });
  const subs = new Map<string, CallSpec>();
  if (t.sub !== undefined) {
    if (!isTable(t.sub)) throw new SchemaError(`cmd.${head}.sub must be a table`);
    for (const [name, st] of Object.entries(t.sub)) {
      if (!isTable(st)) throw new SchemaError(`cmd.${head}.sub.${name} must be a table`);
      warnUnknownKeys(st, SUB_KEYS, `cmd.${head}.sub.${name}`, warn);
      subs.set(name, callSpec(st, `${head} ${name}`, { okCodes: baseOk, env: top.env }));
    }
  }
  return {
    head,
    bin: t.bin === undefined ? head : str(t.bin, `cmd.${head}.bin`),
    class: cls as AdapterClass,
    payload,
    top,
    subs,
    file,
  };
}
