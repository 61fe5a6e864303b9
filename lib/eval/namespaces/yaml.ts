/**
 * The `yaml` namespace (language §13.2): `yaml.parse(text)`, `yaml.stringify(v)`, both through
 * the JSON model (§13.1) — YAML-only types (binary, sets) are not produced, and values without
 * a JSON form are lowered the way `json.stringify` lowers them. Output is block style
 * (`a: 1\n`, `- 1\n`), never folded.
 *
 * @module
 */

import YAML, { Scalar } from "yaml";
import { fail } from "../../value/errors.ts";
import { jsonToValue, toJsonModel } from "../../value/json.ts";
import type { Value } from "../../value/types.ts";
import type { MethodArgs } from "../method_types.ts";
import { checkArgs, firstLine, type Namespace, strArg } from "./args.ts";
import { doc } from "../docs.ts";

function parse(_ip: unknown, args: MethodArgs): Value {
  checkArgs("yaml.parse", args, ["text"]);
  const text = strArg("yaml.parse", args, 0, "text");
  let data: unknown;
  try {
    // Big-int mode tells ints (bigint) from floats (number); maps keep their key order.
    data = YAML.parse(text, { intAsBigInt: true, mapAsMap: true });
  } catch (e) {
    throw fail("arg_error", `yaml.parse: ${firstLine(e).replace(/:$/, "")}`, null, args.span);
  }
  return jsonToValue(data, { bigintInts: true });
}

/** A JSON-model value as YAML document data (Maps keep key order; floats keep a `.0`). */
function toYamlData(v: Value): unknown {
  if (v === null || typeof v !== "object") return v;
  switch (v.t) {
    case "float": {
      if (!Number.isFinite(v.v)) return null; // the JSON model has no nan/inf
      const s = new Scalar(v.v);
      s.minFractionDigits = 1;
      return s;
    }
    case "list":
      return v.items.map(toYamlData);
    case "record": {
      const m = new Map<string, unknown>();
      for (const [k, x] of v.fields) m.set(k, toYamlData(x));
      return m;
    }
  }
  return null; // unreachable: toJsonModel leaves only the kinds above
}

function stringify(_ip: unknown, args: MethodArgs): Value {
  checkArgs("yaml.stringify", args, ["value"]);
  const data = toYamlData(toJsonModel(args.pos[0]));
  return YAML.stringify(data, { lineWidth: 0, indentSeq: false });
}

/** The `yaml` namespace. */
export const yamlNamespace: Namespace = {
  name: "yaml",
  functions: new Map([
    ["parse", doc("yaml.parse(text: str) -> value", "YAML text as values", parse)],
    ["stringify", doc("yaml.stringify(v) -> str", "a value as YAML text", stringify)],
  ]),
};
