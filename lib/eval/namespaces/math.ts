/**
 * The `math` namespace (language §13.2): float constants read as fields and functions of 1, 2
 * or 3 numbers. Every function takes ints or floats and returns a float, with Rust's `f64`
 * semantics where they differ from JS `Math`: `round` is half away from zero, `sign(±0)` is
 * `±1`, `min`/`max` ignore a NaN operand, `pow(1, nan)` is 1, `log(x, b)` is `ln x / ln b`.
 *
 * @module
 */

import { fail } from "../../value/errors.ts";
import { renderInline } from "../../value/render.ts";
import { FloatV, typeName, type Value } from "../../value/types.ts";
import type { MethodArgs } from "../method_types.ts";
import { checkArgs, type Namespace, type NsFn } from "./args.ts";
import { doc } from "../docs.ts";

/** A number argument as f64 (type_error for anything else). */
function num(who: string, args: MethodArgs, i: number): number {
  const v = args.pos[i];
  if (typeof v === "number") return v;
  if (typeof v === "bigint") return Number(v);
  if (v instanceof FloatV) return v.v;
  throw fail(
    "type_error",
    `${who} expects a number (int or float), got ${typeName(v)}`,
    null,
    args.span,
  );
}

/** Rust `f64::signum`. */
function signum(x: number): number {
  if (x !== x) return NaN;
  return x > 0 || Object.is(x, 0) ? 1 : -1;
}

/** Rust `f64::round`: half away from zero (keeps the sign of zero). */
function roundHalfAway(x: number): number {
  return signum(x) * Math.round(Math.abs(x));
}

/** Rust `f64::min`/`max`: a NaN operand is ignored. */
function ieeeMin(a: number, b: number): number {
  return a !== a ? b : b !== b ? a : Math.min(a, b);
}
function ieeeMax(a: number, b: number): number {
  return a !== a ? b : b !== b ? a : Math.max(a, b);
}

/** Rust `f64::powf` (C `pow`): `1^y` and `x^0` are 1 even for NaN, `(-1)^±inf` is 1. */
function powf(x: number, y: number): number {
  if (x === 1 || y === 0) return 1;
  if (x === -1 && (y === Infinity || y === -Infinity)) return 1;
  return Math.pow(x, y);
}

const UNARY: Record<string, (x: number) => number> = {
  sqrt: Math.sqrt,
  cbrt: Math.cbrt,
  sin: Math.sin,
  cos: Math.cos,
  tan: Math.tan,
  asin: Math.asin,
  acos: Math.acos,
  atan: Math.atan,
  ln: Math.log,
  log10: Math.log10,
  log2: Math.log2,
  exp: Math.exp,
  floor: Math.floor,
  ceil: Math.ceil,
  round: roundHalfAway,
  trunc: Math.trunc,
  abs: Math.abs,
  sign: signum,
};

const BINARY: Record<string, [[string, string], (a: number, b: number) => number]> = {
  atan2: [["y", "x"], Math.atan2],
  log: [["x", "base"], (x, b) => Math.log(x) / Math.log(b)],
  pow: [["x", "exponent"], powf],
  min: [["a", "b"], ieeeMin],
  max: [["a", "b"], ieeeMax],
  hypot: [["x", "y"], Math.hypot],
};

function clamp(_ip: unknown, args: MethodArgs): Value {
  checkArgs("math.clamp", args, ["x", "lo", "hi"]);
  const x = num("math.clamp", args, 0);
  const lo = num("math.clamp", args, 1);
  const hi = num("math.clamp", args, 2);
  if (lo !== lo || hi !== hi) {
    throw fail("arg_error", "math.clamp: bounds must not be nan", null, args.span);
  }
  if (lo > hi) {
    throw fail(
      "arg_error",
      `math.clamp: lo (${renderInline(args.pos[1])}) is greater than hi (${
        renderInline(args.pos[2])
      })`,
      "usage: math.clamp(x, lo, hi) with lo <= hi",
      args.span,
    );
  }
  return new FloatV(x !== x ? x : x < lo ? lo : x > hi ? hi : x);
}

function buildFunctions(): Map<string, NsFn> {
  const fns = new Map<string, NsFn>();
  for (const [name, f] of Object.entries(UNARY)) {
    const who = `math.${name}`;
    const fn: NsFn = (_ip, args) => {
      checkArgs(who, args, ["x"]);
      return new FloatV(f(num(who, args, 0)));
    };
    fns.set(name, doc(`${who}(x: number) -> float`, `${name} of x`, fn));
  }
  for (const [name, [params, f]] of Object.entries(BINARY)) {
    const who = `math.${name}`;
    const fn: NsFn = (_ip, args) => {
      checkArgs(who, args, params);
      return new FloatV(f(num(who, args, 0), num(who, args, 1)));
    };
    fns.set(
      name,
      doc(`${who}(${params.join(", ")}) -> float`, `${name} of ${params.join(" and ")}`, fn),
    );
  }
  fns.set("clamp", doc("math.clamp(x, lo, hi) -> float", "x limited to [lo, hi]", clamp));
  return fns;
}

/** The `math` namespace. */
export const mathNamespace: Namespace = {
  name: "math",
  functions: buildFunctions(),
  constants: new Map<string, Value>([
    ["pi", new FloatV(Math.PI)],
    ["e", new FloatV(Math.E)],
    ["tau", new FloatV(2 * Math.PI)],
    ["inf", new FloatV(Infinity)],
    ["nan", new FloatV(NaN)],
    ["sqrt2", new FloatV(Math.SQRT2)],
  ]),
};
