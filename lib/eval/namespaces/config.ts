/**
 * The `config` namespace (language §13.2): a read-only view of the configuration snapshot the
 * host injected into the evaluator (`Interp.config()`), never a file walk. `config.all()` is the
 * whole snapshot (`{}` without one), `config.get(key)` and the field form `config.key` one
 * top-level key (`null` when absent — unlike record fields). `config.all` without parentheses
 * is the field form too: it reads a key named `all`.
 *
 * @module
 */

import { RecordV, type Value } from "../../value/types.ts";
import type { Interp, MethodArgs } from "../method_types.ts";
import { checkArgs, type Namespace, strArg } from "./args.ts";
import { doc } from "../docs.ts";

const EMPTY = new RecordV(new Map());

function snapshot(ip: Interp): RecordV {
  return ip.config?.() ?? EMPTY;
}

function lookup(ip: Interp, key: string): Value {
  return snapshot(ip).fields.get(key) ?? null;
}

function all(ip: Interp, args: MethodArgs): Value {
  checkArgs("config.all", args, []);
  return snapshot(ip);
}

function get(ip: Interp, args: MethodArgs): Value {
  checkArgs("config.get", args, ["key"]);
  return lookup(ip, strArg("config.get", args, 0, "key"));
}

/** The `config` namespace. */
export const configNamespace: Namespace = {
  name: "config",
  functions: new Map([
    ["all", doc("config.all() -> record", "the host's configuration snapshot", all)],
    ["get", doc("config.get(key: str) -> value", "one configuration key, or null", get)],
  ]),
  field: lookup,
};
