/**
 * The value-method tables (language §15.1–15.5, 15.7) and the lookup the dispatcher uses for
 * step (13) of §15 "the general table".
 *
 * Every method checks its own receiver and arguments, so a table may be consulted for any
 * receiver. `lookupMethod(recv, name)` returns the implementation for a receiver, or undefined
 * when no table knows the name at all (→ the dispatcher's field_missing «unknown method `.x` on
 * T» with did-you-mean hints from `KNOWN_METHODS_BY_TYPE`). A name some table knows but that does
 * not apply to the receiver resolves to a method that raises the receiver type_error the corpus
 * expects (`5.len()`, `{a: 1}.first()`, `bytes.upper()`, `5kb.abs()`, `t"…".str()`).
 *
 * Not here (owned elsewhere): path methods, glob methods, `stream`/`tee`, stream methods,
 * `feed`, `pick`, task methods, channel methods, outcome forwarding.
 */

import { type TypeName, typeName, type Value } from "../../value/types.ts";
import type { MethodFn, MethodTable } from "../method_types.ts";
import { BYTES_METHOD_NAMES, BYTES_METHODS } from "./bytes.ts";
import { NUMBER_METHOD_NAMES, NUMBER_METHODS } from "./number.ts";
import { RECORD_METHOD_NAMES, RECORD_METHODS } from "./record.ts";
import { SEQ_METHOD_NAMES, SEQ_METHODS } from "./seq.ts";
import { STR_METHOD_NAMES, STR_METHODS } from "./str.ts";
import { UNIVERSAL_METHOD_NAMES, UNIVERSAL_METHODS } from "./universal.ts";

export {
  BYTES_METHODS,
  NUMBER_METHODS,
  RECORD_METHODS,
  SEQ_METHODS,
  STR_METHODS,
  UNIVERSAL_METHODS,
};
export { countArg, isCallable } from "./args.ts";
export { EqIndex, isCollection, type Seq, trySeq } from "./seq.ts";
export { charCount, splitLines } from "./str.ts";
export { saveBytes, toStr } from "./universal.ts";

/** The tables by receiver family. */
export const METHODS = {
  seq: SEQ_METHODS,
  str: STR_METHODS,
  record: RECORD_METHODS,
  number: NUMBER_METHODS,
  bytes: BYTES_METHODS,
  universal: UNIVERSAL_METHODS,
} as const;

const has = (t: MethodTable, name: string): boolean => Object.hasOwn(t, name);

/** The family tables that apply to a receiver, most specific first. */
function tablesFor(recv: Value): readonly MethodTable[] {
  switch (typeName(recv)) {
    case "list":
    case "table":
    case "range":
      return [SEQ_METHODS];
    case "str":
      return [STR_METHODS, SEQ_METHODS]; // a str is also a sequence of its chars
    case "record":
      return [RECORD_METHODS];
    case "int":
    case "float":
      return [NUMBER_METHODS];
    case "bytes":
      return [BYTES_METHODS];
    default:
      return [];
  }
}

/**
 * Tables consulted for any receiver when its own tables lack the name: their methods check the
 * receiver themselves, so a name known for *some* type raises that method's receiver
 * type_error (`5.len()`, `{a: 1}.first()`, `5kb.abs()`) rather than "unknown method".
 */
const GENERAL: readonly MethodTable[] = [SEQ_METHODS, STR_METHODS, NUMBER_METHODS, RECORD_METHODS];

/**
 * The implementation of `recv.name(…)` from the general tables, or undefined when the name is
 * unknown everywhere (the caller reports field_missing with hints).
 */
export function lookupMethod(recv: Value, name: string): MethodFn | undefined {
  for (const t of tablesFor(recv)) if (has(t, name)) return t[name];
  if (has(UNIVERSAL_METHODS, name)) return UNIVERSAL_METHODS[name];
  for (const t of GENERAL) if (has(t, name)) return t[name];
  return undefined;
}

const NO_STR = UNIVERSAL_METHOD_NAMES.filter((n) => n !== "str" && n !== "display");
const uniq = (...lists: (readonly string[])[]): readonly string[] => [...new Set(lists.flat())];

/**
 * Known method names per receiver type for did-you-mean (§15 "Known-method tables per type").
 * Types whose methods live elsewhere (path, glob, task, stream…) are absent.
 */
export const KNOWN_METHODS_BY_TYPE: Partial<Record<TypeName, readonly string[]>> = {
  list: uniq(SEQ_METHOD_NAMES, UNIVERSAL_METHOD_NAMES),
  table: uniq(SEQ_METHOD_NAMES, UNIVERSAL_METHOD_NAMES),
  range: uniq(SEQ_METHOD_NAMES, UNIVERSAL_METHOD_NAMES),
  str: uniq(STR_METHOD_NAMES, SEQ_METHOD_NAMES, UNIVERSAL_METHOD_NAMES),
  record: uniq(RECORD_METHOD_NAMES, UNIVERSAL_METHOD_NAMES),
  int: uniq(NUMBER_METHOD_NAMES, UNIVERSAL_METHOD_NAMES),
  float: uniq(NUMBER_METHOD_NAMES, UNIVERSAL_METHOD_NAMES),
  bytes: uniq(BYTES_METHOD_NAMES, UNIVERSAL_METHOD_NAMES),
  bool: UNIVERSAL_METHOD_NAMES,
  size: NO_STR,
  duration: NO_STR,
  datetime: NO_STR,
  time: NO_STR,
};
