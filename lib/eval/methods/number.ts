/**
 * Number methods (language §15.5): `abs` (checked for ints), `round`/`floor`/`ceil` with an
 * optional count of decimal places. Ints are unchanged by rounding; `round` is half away from
 * zero (Rust `f64::round`).
 */

import { fail } from "../../value/errors.ts";
import { FloatV, I64_MIN, mkInt, typeName, type Value } from "../../value/types.ts";
import type { MethodArgs, MethodTable } from "../method_types.ts";
import { arity, countArg } from "./args.ts";
import { doc } from "../docs.ts";

/** The type_error for a number method on anything but int/float. */
export function notNumber(recv: Value, span: MethodArgs["span"]): Error {
  return fail("type_error", `expected number, found ${typeName(recv)}`, null, span);
}

/** Rust `f64::round`: half away from zero. */
export function roundHalfAway(x: number): number {
  const t = Math.trunc(x);
  return Math.abs(x - t) >= 0.5 ? t + Math.sign(x) : t;
}

function rounding(name: string, op: (x: number) => number) {
  return (_ip: unknown, recv: Value, args: MethodArgs): Value => {
    arity(name, args, 0, 1);
    const places = args.pos.length === 0 ? 0 : countArg(name, args.pos[0], args.span);
    if (typeof recv === "number" || typeof recv === "bigint") return recv;
    if (recv === null || typeof recv !== "object" || recv.t !== "float") {
      throw notNumber(recv, args.span);
    }
    const x = recv.v;
    if (places === 0) return new FloatV(op(x));
    const scale = 10 ** places;
    const scaled = x * scale;
    // More places than the float can hold: rounding is the identity (no spurious inf/NaN).
    if (!Number.isFinite(scale) || !Number.isFinite(scaled)) return recv;
    return new FloatV(op(scaled) / scale);
  };
}

/** Number methods by name (receiver: int or float). */
export const NUMBER_METHODS: MethodTable = {
  abs: doc(".abs() -> int | float", "the absolute value", (_ip, recv, args) => {
    arity("abs", args, 0, 0);
    if (typeof recv === "number") return Math.abs(recv);
    if (typeof recv === "bigint") {
      if (recv === I64_MIN) {
        throw fail("overflow", "integer overflow: abs(-9223372036854775808)", null, args.span);
      }
      return mkInt(recv < 0n ? -recv : recv);
    }
    if (recv !== null && typeof recv === "object" && recv.t === "float") {
      return new FloatV(Math.abs(recv.v));
    }
    throw notNumber(recv, args.span);
  }),
  round: doc(
    ".round(digits = 0) -> int | float",
    "rounded half away from zero",
    rounding("round", roundHalfAway),
  ),
  floor: doc(".floor(digits = 0) -> int | float", "rounded down", rounding("floor", Math.floor)),
  ceil: doc(".ceil(digits = 0) -> int | float", "rounded up", rounding("ceil", Math.ceil)),
};

/** The number method names (for did-you-mean). */
export const NUMBER_METHOD_NAMES: readonly string[] = Object.keys(NUMBER_METHODS);
