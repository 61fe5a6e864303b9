/**
 * The `json` namespace (language §13.2): `json.parse(text)`, `json.stringify(v, pretty)`.
 *
 * @module
 */

import { fail } from "../../value/errors.ts";
import { parseJsonText, stringifyValue } from "../../value/json.ts";
import { typeName, type Value } from "../../value/types.ts";
import type { MethodArgs } from "../method_types.ts";
import { checkArgs, type Namespace, rethrowAs, strArg } from "./args.ts";
import { doc } from "../docs.ts";

function parse(_ip: unknown, args: MethodArgs): Value {
  checkArgs("json.parse", args, ["text"]);
  const text = strArg("json.parse", args, 0, "text");
  try {
    return parseJsonText(text);
  } catch (e) {
    rethrowAs("json.parse", e, args);
  }
}

/** The `pretty` flag: second positional or `pretty:` named, a bool either way. */
function prettyFlag(args: MethodArgs): boolean {
  const named = args.named.get("pretty");
  const pos = args.pos[1];
  if (named !== undefined && pos !== undefined) {
    throw fail("arg_error", "json.stringify: `pretty` given twice", null, args.span);
  }
  const v = named ?? pos ?? false;
  if (typeof v !== "boolean") {
    throw fail(
      "arg_error",
      `json.stringify expects \`pretty\` to be a bool, got ${typeName(v)}`,
      "usage: json.stringify(value, pretty: true)",
      args.span,
    );
  }
  return v;
}

function stringify(_ip: unknown, args: MethodArgs): Value {
  checkArgs("json.stringify", args, ["value", "pretty"], 1, ["pretty"]);
  return stringifyValue(args.pos[0], prettyFlag(args));
}

/** The `json` namespace. */
export const jsonNamespace: Namespace = {
  name: "json",
  functions: new Map([
    ["parse", doc("json.parse(text: str) -> value", "JSON text as records, lists, tables", parse)],
    [
      "stringify",
      doc("json.stringify(v, pretty: bool = false) -> str", "a value as JSON text", stringify),
    ],
  ]),
};
