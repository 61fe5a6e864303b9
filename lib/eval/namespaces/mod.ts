/**
 * Namespaces (language §13): the unbound root names `json yaml toml csv math os config`.
 *
 * The evaluator intercepts `ns.member` (field) and `ns.member(args)` (call) when `ns` is one of
 * `NAMESPACE_NAMES` and is not shadowed by a binding, and hands them to `namespaceMember`.
 * (`env` and `secret` are evaluator state, not namespaces here.)
 *
 * Misuse is field_missing (§13.2): a function read as a field («`json.parse` is a function —
 * call it: `json.parse(…)`»), an unknown math field («`math.x` is not a constant…»), a call of
 * an unknown member or of a constant («unknown method `ns.m`»).
 *
 * @module
 */

import type { Span } from "../../syntax/ast.ts";
import { fail } from "../../value/errors.ts";
import type { Value } from "../../value/types.ts";
import { nearest } from "../errors.ts";
import type { MaybePromise } from "../maybe.ts";
import type { Interp, MethodArgs } from "../method_types.ts";
import type { Namespace } from "./args.ts";
import { configNamespace } from "./config.ts";
import { csvNamespace } from "./csv.ts";
import { jsonNamespace } from "./json.ts";
import { mathNamespace } from "./math.ts";
import { osNamespace } from "./os.ts";
import { tomlNamespace } from "./toml.ts";
import { yamlNamespace } from "./yaml.ts";

export type { Namespace, NsFn } from "./args.ts";

const NAMESPACES: Map<string, Namespace> = new Map(
  [
    jsonNamespace,
    yamlNamespace,
    tomlNamespace,
    csvNamespace,
    mathNamespace,
    osNamespace,
    configNamespace,
  ].map((ns) => [ns.name, ns]),
);

/** True when `name` is a namespace root (`json`, `math`, …). */
export function isNamespaceName(name: string): boolean {
  return NAMESPACES.has(name);
}

/** The root names the evaluator intercepts when unshadowed (a live view of the registry). */
export function namespaceNames(): string[] {
  return [...NAMESPACES.keys()];
}

/** Add or replace a namespace (e.g. `http`, provided by the network subsystem). */
export function registerNamespace(ns: Namespace): void {
  NAMESPACES.set(ns.name, ns);
}

/** The namespace table for a root name (undefined for any other name). */
export function namespaceTable(name: string): Namespace | undefined {
  return NAMESPACES.get(name);
}

/** «did you mean `json.parse`?», or the member list when nothing is close. */
function membersHint(ns: Namespace, member: string, kind: "call" | "field"): string {
  const names = kind === "call"
    ? [...ns.functions.keys()]
    : [...(ns.constants?.keys() ?? []), ...ns.functions.keys()];
  const near = nearest(member, names);
  if (near !== null) {
    return ns.functions.has(near)
      ? `did you mean ${ns.name}.${near}()?`
      : `did you mean ${ns.name}.${near}?`;
  }
  const fns = [...ns.functions.keys()].map((f) => `${f}()`);
  const consts = kind === "field" ? [...(ns.constants?.keys() ?? [])] : [];
  return `${ns.name} has: ${[...consts, ...fns].join(", ")}`;
}

/** `ns.member` read as a field. */
function field(ip: Interp, ns: Namespace, member: string, span: Span | null): Value {
  if (ns.field) return ns.field(ip, member);
  const c = ns.constants?.get(member);
  if (c !== undefined) return c;
  if (ns.functions.has(member)) {
    throw fail(
      "field_missing",
      `\`${ns.name}.${member}\` is a function — call it: \`${ns.name}.${member}(…)\``,
      null,
      span,
    );
  }
  if (ns.constants) {
    throw fail(
      "field_missing",
      `\`${ns.name}.${member}\` is not a constant (${ns.name} constants: ${
        [...ns.constants.keys()].join(", ")
      })`,
      membersHint(ns, member, "field"),
      span,
    );
  }
  throw fail(
    "field_missing",
    `unknown member \`${ns.name}.${member}\``,
    membersHint(ns, member, "field"),
    span,
  );
}

/** `ns.member(args)`. */
function call(ip: Interp, ns: Namespace, member: string, args: MethodArgs): MaybePromise<Value> {
  const fn = ns.functions.get(member);
  if (fn !== undefined) return fn(ip, args);
  const hint = ns.constants?.has(member)
    ? `\`${ns.name}.${member}\` is a constant — drop the parentheses: \`${ns.name}.${member}\``
    : membersHint(ns, member, "call");
  throw fail("field_missing", `unknown method \`${ns.name}.${member}\``, hint, args.span);
}

/**
 * Evaluate a namespace member: a field read when `args` is null (`math.pi`, `config.key`),
 * else a call (`json.parse(text)`). `ns` must satisfy `isNamespaceName`. Errors follow §13.2.
 */
export function namespaceMember(
  ip: Interp,
  ns: string,
  member: string,
  args: MethodArgs | null,
  span: Span | null = args?.span ?? null,
): MaybePromise<Value> {
  const table = NAMESPACES.get(ns);
  if (table === undefined) {
    throw fail("undefined_var", `\`${ns}\` is not a namespace`, null, span);
  }
  return args === null ? field(ip, table, member, span) : call(ip, table, member, args);
}
