/**
 * Argument checking shared by the method tables.
 *
 * Every method validates its own arguments (the dispatcher only finds the function), so the
 * wording of arity/type errors lives here once: `arg_error` for a wrong number of arguments or
 * a missing required one, `type_error` for an argument of the wrong type (language §11.3).
 */

import { fail } from "../../value/errors.ts";
import { type Int, isInt, type TypeName, typeName, type Value } from "../../value/types.ts";
import type { MethodArgs, MethodTable } from "../method_types.ts";
import { sameDoc } from "../docs.ts";

/** Reject named arguments other than `allowed` («.m has no named argument `x`»). */
export function checkNamed(name: string, args: MethodArgs, allowed: readonly string[] = []): void {
  if (args.named.size === 0) return;
  for (const k of args.named.keys()) {
    if (!allowed.includes(k)) {
      throw fail("arg_error", `.${name} has no named argument \`${k}\``, null, args.span);
    }
  }
}

/**
 * Check the positional count is within [min, max] and that no unexpected named argument was
 * given. Too many → «.m takes no arguments» / «.m expects at most N arguments, got M».
 */
export function arity(
  name: string,
  args: MethodArgs,
  min: number,
  max: number,
  named: readonly string[] = [],
): void {
  checkNamed(name, args, named);
  const n = args.pos.length;
  if (n > max) {
    const msg = max === 0
      ? `.${name} takes no arguments`
      : `.${name} expects at most ${max} argument${max === 1 ? "" : "s"}, got ${n}`;
    throw fail("arg_error", msg, null, args.span);
  }
  if (n < min) {
    throw fail(
      "arg_error",
      `.${name} expects ${min === max ? "" : "at least "}${min} argument${
        min === 1 ? "" : "s"
      }, got ${n}`,
      null,
      args.span,
    );
  }
}

/** Positional argument `i`, else named argument `key`, else `undefined`. */
export function argAt(args: MethodArgs, i: number, key?: string): Value | undefined {
  if (i < args.pos.length) return args.pos[i];
  return key === undefined ? undefined : args.named.get(key);
}

/** True for values `ip.callValue` can call. */
export function isCallable(v: Value): boolean {
  return v !== null && typeof v === "object" && (v.t === "closure" || v.t === "command");
}

/** The required function argument of a higher-order method. */
export function fnArg(name: string, args: MethodArgs, i = 0): Value {
  const f = args.pos[i];
  if (f === undefined) {
    throw fail(
      "arg_error",
      `.${name} requires a function argument`,
      `e.g. .${name}(x => …)`,
      args.span,
    );
  }
  if (!isCallable(f)) {
    throw fail(
      "type_error",
      `.${name} expects a function, found ${typeName(f)}`,
      null,
      args.span,
    );
  }
  return f;
}

/**
 * A non-negative count argument (`take`, `skip`, `first(n)`, `chunks`, `tee`…). Anything but a
 * non-negative int is a type_error. Counts beyond the safe range are clamped (no collection is
 * that long).
 */
export function countArg(name: string, v: Value, span: MethodArgs["span"] = null): number {
  if (!isInt(v)) {
    throw fail(
      "type_error",
      `.${name} expects a non-negative int, found ${typeName(v)}`,
      null,
      span,
    );
  }
  if (v < 0) {
    throw fail("type_error", `.${name} expects a non-negative int, found ${v}`, null, span);
  }
  return typeof v === "bigint" ? Number.MAX_SAFE_INTEGER : v;
}

/** A required str argument; missing → arg_error «.m requires a <what> argument». */
export function strArg(name: string, args: MethodArgs, i: number, what: string): string {
  const v = args.pos[i];
  if (v === undefined) {
    throw fail("arg_error", `.${name} requires a ${what} argument`, null, args.span);
  }
  if (typeof v !== "string") {
    throw fail(
      "type_error",
      `.${name} expects a str ${what}, found ${typeName(v)}`,
      null,
      args.span,
    );
  }
  return v;
}

/** An int argument as a JS number (ints beyond the safe range saturate). */
export function intToIndex(v: Int): number {
  if (typeof v === "number") return v;
  return v < 0n ? -Number.MAX_SAFE_INTEGER : Number.MAX_SAFE_INTEGER;
}

/**
 * What a receiver offers instead when a method does not apply to it («bytes has .str(),
 * .lines() …»). Installed by the dispatcher, which knows every table (no import cycle).
 */
let receiverHint: (t: TypeName, name: string) => string | null = () => null;

/** Install the receiver-mismatch hint (called once by dispatch.ts). */
export function setReceiverHint(f: (t: TypeName, name: string) => string | null): void {
  receiverHint = f;
}

/**
 * Wrap every method of a table with a receiver check, so a method reached for the wrong
 * receiver (`5.upper()`, `[1].keys()`) raises type_error «.m expects <what>, found T» instead of
 * misbehaving. Dispatchers may then consult the table for any receiver.
 */
export function guardReceiver(
  what: string,
  accepts: (v: Value) => boolean,
  table: MethodTable,
): MethodTable {
  const out: MethodTable = {};
  for (const [name, f] of Object.entries(table)) {
    out[name] = sameDoc(f, (ip, recv, args) => {
      if (!accepts(recv)) {
        throw fail(
          "type_error",
          `.${name} expects ${what}, found ${typeName(recv)}`,
          receiverHint(typeName(recv), name),
          args.span,
        );
      }
      return f(ip, recv, args);
    });
  }
  return out;
}
