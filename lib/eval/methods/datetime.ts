/**
 * Temporal fields (language §15.7). A datetime has the calendar fields `year month day hour
 * minute second` (ints in the value's zone); a duration has the relative anchors `ago` and
 * `from_now` (now ∓ duration, overflow «datetime out of range»). They are fields, not methods:
 * the evaluator's field access calls `temporalField`, and any other name is field_missing.
 * Neither type has methods of its own beyond the universal ones (no `.str()`).
 */

import {
  addDuration,
  DATETIME_FIELDS,
  dateTimeField,
  dateTimeFromEpochNs,
} from "../../value/datetime.ts";
import { fail } from "../../value/errors.ts";
import type { DateTimeV, DurationV, Value } from "../../value/types.ts";
import type { Interp } from "../method_types.ts";

export { DATETIME_FIELDS };

/** The relative-anchor fields of a duration. */
export const DURATION_FIELDS: readonly string[] = ["ago", "from_now"];

/** The current instant from the session clock (system clock when the host has none). */
export function clockNow(ip: Interp): DateTimeV {
  return ip.now ? ip.now() : dateTimeFromEpochNs(BigInt(Date.now()) * 1_000_000n);
}

/** `dt.name`: a calendar field, else field_missing «datetime has no field `name`». */
export function datetimeField(dt: DateTimeV, name: string): Value {
  const v = dateTimeField(dt, name);
  if (v === undefined) {
    throw fail(
      "field_missing",
      `datetime has no field \`${name}\``,
      `datetime fields: ${DATETIME_FIELDS.join(", ")}`,
    );
  }
  return v;
}

/** `d.ago` / `d.from_now`, else field_missing «duration has no field `name`». */
export function durationField(ip: Interp, d: DurationV, name: string): Value {
  switch (name) {
    case "ago":
      return addDuration(clockNow(ip), -d.ns);
    case "from_now":
      return addDuration(clockNow(ip), d.ns);
  }
  throw fail(
    "field_missing",
    `duration has no field \`${name}\``,
    "duration fields: ago, from_now",
  );
}

/**
 * The field `name` of a datetime or duration receiver; undefined for other receivers (so the
 * evaluator can try its own field kinds). Unknown names on these two types are field_missing.
 */
export function temporalField(ip: Interp, recv: Value, name: string): Value | undefined {
  if (recv === null || typeof recv !== "object") return undefined;
  if (recv.t === "datetime") return datetimeField(recv, name);
  if (recv.t === "duration") return durationField(ip, recv, name);
  return undefined;
}
