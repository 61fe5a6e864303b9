/**
 * Record methods (language §15.4). Records are immutable: `set`/`merge` build new records
 * (an existing key keeps its position, new keys are appended).
 */

import { fail } from "../../value/errors.ts";
import { ListV, RecordV, typeName, type Value } from "../../value/types.ts";
import type { MethodArgs, MethodTable } from "../method_types.ts";
import { argAt, arity, guardReceiver, strArg } from "./args.ts";
import { doc } from "../docs.ts";

function fields(recv: Value): Map<string, Value> {
  return (recv as RecordV).fields;
}

function sizeMethod(name: string) {
  return (_ip: unknown, recv: Value, args: MethodArgs): Value => {
    arity(name, args, 0, 0);
    const n = fields(recv).size;
    return name === "is_empty" ? n === 0 : n;
  };
}

/** Record methods by name (receiver: record). */
export const RECORD_METHODS: MethodTable = guardReceiver("a record", (v) => v instanceof RecordV, {
  len: doc(".len() -> int", "number of fields", sizeMethod("len")),
  count: doc(".count() -> int", "number of fields", sizeMethod("count")),
  is_empty: doc(".is_empty() -> bool", "true for {}", sizeMethod("is_empty")),

  keys: doc(".keys() -> list<str>", "the field names", (_ip, recv, args) => {
    arity("keys", args, 0, 0);
    return new ListV([...fields(recv).keys()]);
  }),

  values: doc(".values() -> list", "the field values", (_ip, recv, args) => {
    arity("values", args, 0, 0);
    return new ListV([...fields(recv).values()]);
  }),

  items: doc(".items() -> list", "[[key, value], …]", (_ip, recv, args) => {
    arity("items", args, 0, 0);
    return new ListV(Array.from(fields(recv), ([k, v]) => new ListV([k, v])));
  }),

  get: doc(
    ".get(key: str, default = null) -> value",
    "the field, or default when missing",
    (_ip, recv, args) => {
      arity("get", args, 1, 2, ["default"]);
      const key = args.pos[0];
      if (typeof key !== "string") {
        throw fail(
          "type_error",
          `get expects record+str or list+int, found record+${typeName(key)}`,
          null,
          args.span,
        );
      }
      const v = fields(recv).get(key);
      return v === undefined ? argAt(args, 1, "default") ?? null : v;
    },
  ),

  contains: doc(".contains(key: str) -> bool", "true if the field exists", (_ip, recv, args) => {
    arity("contains", args, 0, 1);
    return fields(recv).has(strArg("contains", args, 0, "key"));
  }),

  set: doc(".set(key: str, value) -> record", "a copy with the field set", (_ip, recv, args) => {
    arity("set", args, 0, 2);
    if (args.pos.length === 0) {
      throw fail("arg_error", ".set requires a key argument: .set(key, value)", null, args.span);
    }
    const key = strArg("set", args, 0, "key");
    if (args.pos.length < 2) {
      throw fail("arg_error", ".set requires a value argument: .set(key, value)", null, args.span);
    }
    const out = new Map(fields(recv));
    out.set(key, args.pos[1]);
    return new RecordV(out);
  }),

  merge: doc(
    ".merge(other: record) -> record",
    "a copy with other's fields on top",
    (_ip, recv, args) => {
      arity("merge", args, 1, 1);
      const other = args.pos[0];
      if (other === null || typeof other !== "object" || other.t !== "record") {
        throw fail(
          "type_error",
          `.merge expects a record, found ${typeName(other)}`,
          null,
          args.span,
        );
      }
      if (other.fields.size === 0) return recv;
      const out = new Map(fields(recv));
      for (const [k, v] of other.fields) out.set(k, v);
      return new RecordV(out);
    },
  ),
});

/** The record method names (for did-you-mean). */
export const RECORD_METHOD_NAMES: readonly string[] = Object.keys(RECORD_METHODS);
