import { deepStrictEqual as eq, ok } from "node:assert/strict";
import {
  addDuration,
  canonicalZone,
  civilFromDays,
  dateTimeField,
  dateTimeFromEpochNs,
  daysFromCivil,
  diffDateTimes,
  DT_MAX_NS,
  DT_MIN_NS,
  fixedOffsetSeconds,
  formatDateTimeUtc,
  formatDateTimeZoned,
  formatTime,
  parseDateTime,
  parseTimeOfDay,
  resolveLocal,
  startOfDay,
  systemTimeZone,
  zoneOffsetSeconds,
} from "../../lib/value/datetime.ts";
import { DateTimeV, TimeV } from "../../lib/value/types.ts";
import { assertShoalError } from "./_helpers.ts";

const S = 1_000_000_000n;
const utc = (s: string) => formatDateTimeUtc(parseDateTime(s));

Deno.test("civil day arithmetic round-trips across eras", () => {
  eq(daysFromCivil(1970, 1, 1), 0);
  eq(daysFromCivil(2026, 7, 9), 20643);
  eq(civilFromDays(20643), [2026, 7, 9]);
  eq(civilFromDays(-1), [1969, 12, 31]);
  eq(daysFromCivil(2000, 3, 1) - daysFromCivil(2000, 2, 28), 2); // leap year
  eq(daysFromCivil(1900, 3, 1) - daysFromCivil(1900, 2, 28), 1); // not a leap year
  for (let d = -4_000_000; d <= 3_000_000; d += 997) {
    const [y, m, dd] = civilFromDays(d);
    eq(daysFromCivil(y, m, dd), d);
  }
});

Deno.test("parseDateTime: RFC 3339 with Z/offset, seconds optional → UTC", () => {
  eq(utc("2026-07-09T14:00Z"), "2026-07-09T14:00:00Z");
  eq(utc("2026-07-09T14:30:45Z"), "2026-07-09T14:30:45Z");
  eq(utc("2026-07-09T14:00+01:00"), "2026-07-09T13:00:00Z");
  eq(utc("2026-07-09T14:00:00-05:30"), "2026-07-09T19:30:00Z");
  eq(utc("2026-07-09t14:00z"), "2026-07-09T14:00:00Z");
  eq(utc("2026-07-09 14:00:00Z"), "2026-07-09T14:00:00Z");
  eq(utc("2026-07-09T14:00:00.5Z"), "2026-07-09T14:00:00.5Z");
  eq(utc("2026-07-09T14:00:00.123456789Z"), "2026-07-09T14:00:00.123456789Z");
  eq(utc("2026-07-09T14:00:00.120Z"), "2026-07-09T14:00:00.12Z");
  eq(utc("2026-07-09T23:59:60Z"), "2026-07-09T23:59:59Z");
  eq(utc("1969-12-31T23:59:59.5Z"), "1969-12-31T23:59:59.5Z");
  eq(parseDateTime("2026-07-09T14:00+01:00").zone, "UTC");
  eq(parseDateTime("2026-07-09T14:00Z").ns, 1783605600n * S);
});

Deno.test("parseDateTime: date-only is midnight UTC", () => {
  eq(utc("2026-07-09"), "2026-07-09T00:00:00Z");
  eq(parseDateTime("2026-07-09").ns, parseDateTime("2026-07-09T00:00Z").ns);
  eq(utc("2024-02-29"), "2024-02-29T00:00:00Z");
});

Deno.test("parseDateTime: zoned forms keep their zone", () => {
  const p = parseDateTime("2026-07-09T14:00:00+02:00[Europe/Paris]");
  eq(p.zone, "Europe/Paris");
  eq(formatDateTimeUtc(p), "2026-07-09T12:00:00Z");
  eq(formatDateTimeZoned(p), "2026-07-09T14:00:00+02:00[Europe/Paris]");
  const q = parseDateTime("2026-01-09T14:00[Europe/Paris]"); // no offset: resolved in the zone
  eq(formatDateTimeUtc(q), "2026-01-09T13:00:00Z");
  eq(parseDateTime("2026-07-09T14:00Z[Asia/Tokyo]").zone, "Asia/Tokyo");
  eq(
    formatDateTimeZoned(parseDateTime("2026-07-09T14:00Z[Asia/Tokyo]")),
    "2026-07-09T23:00:00+09:00[Asia/Tokyo]",
  );
  eq(parseDateTime("2026-07-09T14:00[UTC]").zone, "UTC");
  eq(parseDateTime("2026-07-09T14:00:00+05:30[+05:30]").zone, "+05:30");
  eq(parseDateTime("2026-07-09[America/New_York]").ns, parseDateTime("2026-07-09T04:00Z").ns);
  // A written offset that disagrees with the zone is rejected, not reinterpreted.
  assertShoalError(() => parseDateTime("2026-07-09T14:00+05:00[Europe/Paris]"), "arg_error");
  assertShoalError(
    () => parseDateTime("2026-07-09T14:00[Not/AZone]"),
    "arg_error",
    "invalid datetime",
  );
});

Deno.test("parseDateTime: invalid text → arg_error «invalid datetime `x`»", () => {
  for (
    const bad of [
      "",
      "yesterday",
      "2026-13-01",
      "2026-02-30",
      "2025-02-29",
      "2026-07-09T24:00Z",
      "2026-07-09T14:60Z",
      "2026-07-09T14:00", // no offset, no zone
      "2026-7-9",
      "2026-07-09T14Z",
      " 2026-07-09",
      "2026-07-09T14:00+1",
    ]
  ) {
    assertShoalError(() => parseDateTime(bad), "arg_error", `invalid datetime \`${bad}\``);
  }
});

Deno.test("formatting: UTC Z form, years outside 0..9999, zoned JSON form", () => {
  eq(formatDateTimeUtc(new DateTimeV(0n)), "1970-01-01T00:00:00Z");
  eq(formatDateTimeUtc(new DateTimeV(-1n)), "1969-12-31T23:59:59.999999999Z");
  eq(formatDateTimeUtc(new DateTimeV(DT_MAX_NS)), "9999-12-30T22:00:00.999999999Z");
  eq(formatDateTimeUtc(new DateTimeV(DT_MIN_NS)), "-009999-01-02T01:59:59Z");
  eq(formatDateTimeZoned(parseDateTime("2026-07-09T14:00Z")), "2026-07-09T14:00:00+00:00[UTC]");
  eq(
    formatDateTimeZoned(new DateTimeV(1783605600n * S + 250_000_000n, "-03:30")),
    "2026-07-09T10:30:00.25-03:30[-03:30]",
  );
});

Deno.test("fields in the value's zone (§15.7)", () => {
  const d = parseDateTime("2026-07-09T14:30:45Z");
  eq(
    ["year", "month", "day", "hour", "minute", "second"].map((n) => dateTimeField(d, n)),
    [2026, 7, 9, 14, 30, 45],
  );
  eq(dateTimeField(d, "nope"), undefined);
  eq(dateTimeField(d, "nanos"), undefined);
  const tokyo = new DateTimeV(d.ns, "Asia/Tokyo");
  eq(dateTimeField(tokyo, "day"), 9);
  eq(dateTimeField(tokyo, "hour"), 23);
  const ny = new DateTimeV(d.ns, "America/New_York");
  eq(dateTimeField(ny, "hour"), 10);
  const fixed = new DateTimeV(d.ns, "-14:30");
  eq([dateTimeField(fixed, "day"), dateTimeField(fixed, "hour")], [9, 0]);
  const midnight = parseDateTime("2026-01-01T00:00:00Z");
  eq(dateTimeField(midnight, "hour")! + dateTimeField(midnight, "second")!, 0);
});

Deno.test("zones: fixed offsets, canonical names, DST offsets and resolution", () => {
  eq(fixedOffsetSeconds("+02:00"), 7200);
  eq(fixedOffsetSeconds("-0530"), -19800);
  eq(fixedOffsetSeconds("UTC"), 0);
  eq(fixedOffsetSeconds("Europe/Paris"), null);
  eq(canonicalZone("europe/paris"), "Europe/Paris");
  eq(canonicalZone("+0200"), "+02:00");
  eq(canonicalZone("Nowhere/Land"), null);
  const summer = Number(parseDateTime("2026-07-01T00:00Z").ns / S);
  const winter = Number(parseDateTime("2026-01-01T00:00Z").ns / S);
  eq(zoneOffsetSeconds("Europe/Paris", summer), 7200);
  eq(zoneOffsetSeconds("Europe/Paris", winter), 3600);
  eq(zoneOffsetSeconds("Asia/Kolkata", summer), 19800);
  // Spring forward in Paris 2026-03-29 02:00 → 03:00: 02:30 does not exist and moves forward.
  const gapLocal = daysFromCivil(2026, 3, 29) * 86400 + 2.5 * 3600;
  eq(
    formatDateTimeUtc(new DateTimeV(BigInt(resolveLocal("Europe/Paris", gapLocal)) * S)),
    "2026-03-29T01:30:00Z",
  );
  // Fall back in New York 2026-11-01 02:00 → 01:00: 01:30 happens twice; take the earlier.
  const foldLocal = daysFromCivil(2026, 11, 1) * 86400 + 1.5 * 3600;
  eq(
    formatDateTimeUtc(new DateTimeV(BigInt(resolveLocal("America/New_York", foldLocal)) * S)),
    "2026-11-01T05:30:00Z",
  );
  ok(systemTimeZone().length > 0);
  ok(canonicalZone(systemTimeZone()) !== null);
});

Deno.test("datetime ± duration and differences with range checks", () => {
  const t = parseDateTime("2026-07-09T14:00Z");
  eq(formatDateTimeUtc(addDuration(t, 3600n * S)), "2026-07-09T15:00:00Z");
  eq(diffDateTimes(t, parseDateTime("2026-07-09T12:30Z")), 5400n * S);
  eq(addDuration(new DateTimeV(0n, "Asia/Tokyo"), 1n).zone, "Asia/Tokyo");
  assertShoalError(
    () => addDuration(new DateTimeV(DT_MAX_NS), 1n),
    "overflow",
    "datetime out of range",
  );
  assertShoalError(
    () => addDuration(new DateTimeV(DT_MIN_NS), -1n),
    "overflow",
    "datetime out of range",
  );
  assertShoalError(
    () => diffDateTimes(new DateTimeV(DT_MAX_NS), new DateTimeV(DT_MIN_NS)),
    "overflow",
    "duration overflow",
  );
  assertShoalError(() => dateTimeFromEpochNs(DT_MAX_NS + 1n, "UTC"), "overflow");
  eq(dateTimeFromEpochNs(5n, "UTC").ns, 5n);
  eq(dateTimeFromEpochNs(5n).zone, systemTimeZone());
});

Deno.test("startOfDay is local midnight in the value's zone", () => {
  const t = parseDateTime("2026-07-09T14:30:45.5Z");
  eq(formatDateTimeUtc(startOfDay(t)), "2026-07-09T00:00:00Z");
  eq(formatDateTimeUtc(startOfDay(new DateTimeV(t.ns, "Asia/Tokyo"))), "2026-07-08T15:00:00Z");
  eq(
    formatDateTimeUtc(startOfDay(new DateTimeV(t.ns, "America/New_York"))),
    "2026-07-09T04:00:00Z",
  );
  const late = parseDateTime("2026-07-09T23:30Z");
  eq(formatDateTimeUtc(startOfDay(new DateTimeV(late.ns, "Asia/Tokyo"))), "2026-07-09T15:00:00Z");
  eq(startOfDay(new DateTimeV(t.ns, "Asia/Tokyo")).zone, "Asia/Tokyo");
  const before = parseDateTime("1969-12-31T12:00Z");
  eq(formatDateTimeUtc(startOfDay(before)), "1969-12-31T00:00:00Z");
});

Deno.test("times of day: parse H:MM[:SS][am|pm], render HH:MM[:SS]", () => {
  const t = (s: string) => {
    const v = parseTimeOfDay(s);
    return v === null ? null : formatTime(v);
  };
  eq(t("10:00am"), "10:00");
  eq(t("10:00AM"), "10:00");
  eq(t("23:15"), "23:15");
  eq(t("10:30:15pm"), "22:30:15");
  eq(t("9:05am"), "09:05");
  eq(t("0:00"), "00:00");
  eq(t("12am"), null);
  eq(t("12:00am"), "00:00");
  eq(t("12:00pm"), "12:00");
  eq(t("12:30PM"), "12:30");
  for (
    const bad of [
      "13:00pm",
      "0:00am",
      "24:00",
      "10:60",
      "10:00:60",
      "10:0",
      "100:00",
      "1:00xm",
      "",
      "10",
    ]
  ) {
    eq(parseTimeOfDay(bad), null, bad);
  }
  eq(formatTime(new TimeV(1, 2, 3, 400_000_000)), "01:02:03.4");
  eq(formatTime(new TimeV(1, 2, 0, 5)), "01:02:00.000000005");
});
