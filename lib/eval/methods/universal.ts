/**
 * Methods every receiver has (language §15.1): `tap`/`also`, `json`, `save`/`append`, `str`,
 * `display`. (`feed` needs the process layer and is dispatched by the evaluator.)
 */

import { dirname, isAbsolute, join } from "node:path";
import { fail } from "../../value/errors.ts";
import { stringifyValue } from "../../value/json.ts";
import { formatFloat } from "../../value/render.ts";
import { typeName, type Value } from "../../value/types.ts";
import { then } from "../maybe.ts";
import type { Interp, MethodArgs, MethodTable } from "../method_types.ts";
import { arity, fnArg } from "./args.ts";
import { journaledWrite } from "../journal_port.ts";
import { fsOf } from "../fs_port.ts";
import { doc } from "../docs.ts";
import { isNotFound, osReason } from "../builtins/fs_util.ts";

const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const LOSSY_UTF8 = new TextDecoder("utf-8", { ignoreBOM: true });
const ENCODER = new TextEncoder();

/**
 * `.str()` / `.display()` conversion: str itself; path its text; bytes decoded (strict for
 * `str` → utf8_error, lossy for `display`); int/float/bool their inline form; anything else
 * type_error «cannot convert T to str» with the interpolation hint.
 */
export function toStr(v: Value, lossy: boolean, span: MethodArgs["span"] = null): string {
  switch (typeof v) {
    case "string":
      return v;
    case "number":
    case "bigint":
    case "boolean":
      return String(v);
  }
  if (v !== null) {
    switch (v.t) {
      case "float":
        return formatFloat(v.v);
      case "path":
        return v.path;
      case "bytes":
        if (lossy) return LOSSY_UTF8.decode(v.data);
        try {
          return STRICT_UTF8.decode(v.data);
        } catch {
          throw fail(
            "utf8_error",
            "bytes are not valid UTF-8",
            "use .display() for a lossy conversion",
            span,
          );
        }
    }
  }
  throw fail(
    "type_error",
    `cannot convert ${typeName(v)} to str`,
    'use string interpolation instead: "{x}" renders any value',
    span,
  );
}

/** The bytes `save`/`append` write: str and bytes raw, anything else compact JSON. */
export function saveBytes(v: Value): Uint8Array {
  if (typeof v === "string") return ENCODER.encode(v);
  if (v !== null && typeof v === "object" && v.t === "bytes") return v.data;
  return ENCODER.encode(stringifyValue(v));
}

/** Resolve a str/path argument against the session cwd. */
export function resolvePathArg(
  ip: Interp,
  name: string,
  v: Value | undefined,
  span: MethodArgs["span"],
): string {
  if (v === undefined) throw fail("arg_error", `.${name} requires a path argument`, null, span);
  let p: string;
  if (typeof v === "string") p = v;
  else if (v !== null && typeof v === "object" && v.t === "path") p = v.path;
  else throw fail("type_error", `.${name} expects a str or path, found ${typeName(v)}`, null, span);
  return isAbsolute(p) ? p : join(ip.cwd(), p);
}

function writer(name: "save" | "append") {
  return (ip: Interp, recv: Value, args: MethodArgs): Value => {
    arity(name, args, 1, 1);
    const target = resolvePathArg(ip, name, args.pos[0], args.span);
    const data = saveBytes(recv);
    try {
      // Journaled: the prior bytes become a restore inverse (issue 7).
      journaledWrite(
        ip,
        target,
        () => fsOf(ip).writeFile(target, data, { append: name === "append" }),
      );
    } catch (e) {
      // A missing directory is the usual cause; say which, and how to make it.
      const hint = isNotFound(e) ? `create its directory first: mkdir -p ${dirname(target)}` : null;
      throw fail("custom", `${name} ${target}: ${osReason(e)}`, hint, args.span);
    }
    return recv;
  };
}

function tap(name: string) {
  return (ip: Interp, recv: Value, args: MethodArgs) => {
    arity(name, args, 1, 1);
    const f = fnArg(name, args);
    return then(ip.callValue(f, [recv]), () => recv);
  };
}

/** Universal methods by name (any receiver). */
export const UNIVERSAL_METHODS: MethodTable = {
  tap: doc(".tap(f) -> value", "call f on the value, return the value unchanged", tap("tap")),
  also: doc(".also(f) -> value", "same as .tap(f)", tap("also")),

  json: doc(".json() -> str", "compact JSON text", (_ip, recv, args) => {
    arity("json", args, 0, 0);
    return stringifyValue(recv);
  }),

  save: doc(
    ".save(path) -> value",
    "write to a file (str/bytes raw, else JSON), replacing it",
    writer("save"),
  ),
  append: doc(
    ".append(path) -> value",
    "add to the end of a file (str/bytes raw, else JSON)",
    writer("append"),
  ),

  str: doc(".str() -> str", "as text (bytes/paths must be valid UTF-8)", (_ip, recv, args) => {
    arity("str", args, 0, 0);
    return toStr(recv, false, args.span);
  }),

  display: doc(
    ".display() -> str",
    "as text, never failing (invalid UTF-8 replaced)",
    (_ip, recv, args) => {
      arity("display", args, 0, 0);
      return toStr(recv, true, args.span);
    },
  ),
};

/** The universal method names (for did-you-mean); `feed` is dispatched by the evaluator. */
export const UNIVERSAL_METHOD_NAMES: readonly string[] = [
  ...Object.keys(UNIVERSAL_METHODS),
  "feed",
];
