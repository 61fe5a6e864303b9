/**
 * The value layer's public face: the value model, errors, rendering, equality and ordering,
 * arithmetic, units, datetimes, coercions, JSON mapping, wire encoding, elision and selection.
 *
 * @module
 */

export * from "./types.ts";
export * from "./errors.ts";
export * from "./render.ts";
export * from "./compare.ts";
export * from "./arith.ts";
export * from "./units.ts";
export * from "./datetime.ts";
export * from "./coerce.ts";
export * from "./json.ts";
export * from "./wire.ts";
export * from "./elide.ts";
export * from "./select.ts";
