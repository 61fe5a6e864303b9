/**
 * Datetimes and times of day (language spec §4, §15.7, §19.5, §19.8).
 *
 * A `DateTimeV` is an instant (ns since the Unix epoch) plus the zone it is viewed in: `"UTC"`,
 * a fixed offset such as `"+02:00"`, or an IANA name. Calendar math is done here with integer
 * civil-date algorithms; `Intl.DateTimeFormat` is consulted only for an IANA zone's UTC offset
 * at an instant (formatters are cached per zone).
 */

import { fail } from "./errors.ts";
import { DateTimeV, I64_MAX, I64_MIN, TimeV } from "./types.ts";

const NS_PER_SEC = 1_000_000_000n;

/** Earliest representable instant, in seconds (−9999-01-02T01:59:59Z, as in the reference). */
export const DT_MIN_SECS = -377705023201;
/** Latest representable instant, in seconds (9999-12-30T22:00:00Z, as in the reference). */
export const DT_MAX_SECS = 253402207200;
/** Earliest representable instant in ns. */
export const DT_MIN_NS = BigInt(DT_MIN_SECS) * NS_PER_SEC;
/** Latest representable instant in ns. */
export const DT_MAX_NS = BigInt(DT_MAX_SECS) * NS_PER_SEC + 999_999_999n;

// ---------------------------------------------------------------------------------------------
// Civil calendar (proleptic Gregorian), days relative to 1970-01-01.

/** Days since 1970-01-01 of a civil date. */
export function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** The civil date `[year, month, day]` of a day count since 1970-01-01. */
export function civilFromDays(days: number): [number, number, number] {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  return [y, m, d];
}

function daysInMonth(y: number, m: number): number {
  if (m === 2) return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28;
  return m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31;
}

/** Split ns since the epoch into whole seconds (floored) and the nanosecond remainder. */
function splitNs(ns: bigint): [number, number] {
  let secs = ns / NS_PER_SEC;
  let nanos = ns - secs * NS_PER_SEC;
  if (nanos < 0n) {
    secs -= 1n;
    nanos += NS_PER_SEC;
  }
  return [Number(secs), Number(nanos)];
}

// ---------------------------------------------------------------------------------------------
// Zones

const FIXED_OFFSET = /^([+-])(\d{2})(?::?(\d{2}))?(?::?(\d{2}))?$/;
const fixedCache = new Map<string, number | null>();

/** Seconds east of UTC of a fixed-offset zone text (`+02:00`, `-0530`, `Z`, `UTC`), else null. */
export function fixedOffsetSeconds(zone: string): number | null {
  if (zone === "UTC" || zone === "Z" || zone === "z") return 0;
  let v = fixedCache.get(zone);
  if (v !== undefined) return v;
  const m = FIXED_OFFSET.exec(zone);
  v = null;
  if (m) {
    const h = Number(m[2]), mi = Number(m[3] ?? "0"), s = Number(m[4] ?? "0");
    if (h <= 25 && mi <= 59 && s <= 59) v = (m[1] === "-" ? -1 : 1) * (h * 3600 + mi * 60 + s);
  }
  fixedCache.set(zone, v);
  return v;
}

const formatters = new Map<string, Intl.DateTimeFormat | null>();
const UTC_NAMES = new Set(["Etc/UTC", "Etc/GMT", "GMT", "Etc/Universal", "Etc/Zulu", "UCT"]);

function zoneFormatter(zone: string): Intl.DateTimeFormat | null {
  let f = formatters.get(zone);
  if (f !== undefined) return f;
  try {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      era: "short",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
  } catch {
    f = null;
  }
  formatters.set(zone, f);
  return f;
}

/**
 * The canonical spelling of a zone, or null when it is not a zone: `UTC`, a fixed offset
 * (normalised to `±HH:MM`), or an IANA name as the platform spells it (`europe/paris` →
 * `Europe/Paris`).
 */
export function canonicalZone(zone: string): string | null {
  if (zone === "UTC" || zone === "Z" || zone === "z") return "UTC";
  const off = fixedOffsetSeconds(zone);
  if (off !== null) return formatOffset(off);
  const f = zoneFormatter(zone);
  return f === null ? null : f.resolvedOptions().timeZone;
}

let systemZone: string | undefined;

/** The host's IANA time zone name (`UTC` when the platform reports none). */
export function systemTimeZone(): string {
  if (systemZone === undefined) {
    systemZone = new Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  }
  return systemZone;
}

/** Offset of `zone` from UTC, in seconds, at the instant `secs` (seconds since the epoch). */
export function zoneOffsetSeconds(zone: string, secs: number): number {
  const fixed = fixedOffsetSeconds(zone);
  if (fixed !== null) return fixed;
  if (UTC_NAMES.has(zone)) return 0; // the usual system zone on servers: skip Intl

  const f = zoneFormatter(zone);
  if (f === null) return 0;
  let y = 0, mo = 1, d = 1, h = 0, mi = 0, s = 0, bc = false;
  for (const p of f.formatToParts(new Date(secs * 1000))) {
    switch (p.type) {
      case "era":
        bc = p.value === "BC" || p.value === "B";
        break;
      case "year":
        y = Number(p.value);
        break;
      case "month":
        mo = Number(p.value);
        break;
      case "day":
        d = Number(p.value);
        break;
      case "hour":
        h = Number(p.value) % 24;
        break;
      case "minute":
        mi = Number(p.value);
        break;
      case "second":
        s = Number(p.value);
        break;
    }
  }
  if (bc) y = 1 - y;
  return daysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s - secs;
}

/**
 * The instant (seconds) of a local wall-clock time in `zone`. Ambiguous times (a fall-back
 * fold) take the earlier instant and skipped times (a spring-forward gap) are pushed forward
 * by the gap, like Temporal/jiff's "compatible" disambiguation.
 */
export function resolveLocal(zone: string, localSecs: number): number {
  const fixed = fixedOffsetSeconds(zone);
  if (fixed !== null) return localSecs - fixed;
  const before = zoneOffsetSeconds(zone, localSecs - 86400);
  const after = zoneOffsetSeconds(zone, localSecs + 86400);
  const t1 = localSecs - before;
  const ok1 = zoneOffsetSeconds(zone, t1) === before;
  if (before === after) return ok1 ? t1 : localSecs - zoneOffsetSeconds(zone, t1);
  const t2 = localSecs - after;
  const ok2 = zoneOffsetSeconds(zone, t2) === after;
  if (ok1 && ok2) return Math.min(t1, t2);
  if (ok1) return t1;
  if (ok2) return t2;
  return t1; // in a gap: interpret with the offset in force before it
}

// ---------------------------------------------------------------------------------------------
// Formatting

function pad2(n: number): string {
  return n < 10 ? "0" + n : String(n);
}

function formatYear(y: number): string {
  if (y >= 0 && y <= 9999) return String(y).padStart(4, "0");
  return (y < 0 ? "-" : "+") + String(Math.abs(y)).padStart(6, "0");
}

function formatFraction(nanos: number): string {
  if (nanos === 0) return "";
  return "." + String(nanos).padStart(9, "0").replace(/0+$/, "");
}

/** `±HH:MM` (with `:SS` when the offset has seconds). */
export function formatOffset(secs: number): string {
  const sign = secs < 0 ? "-" : "+";
  const a = Math.abs(secs);
  const h = Math.floor(a / 3600), m = Math.floor((a % 3600) / 60), s = a % 60;
  return `${sign}${pad2(h)}:${pad2(m)}${s ? ":" + pad2(s) : ""}`;
}

/** `YYYY-MM-DDTHH:MM:SS[.fff]` of a local second count plus nanos. */
function formatLocal(localSecs: number, nanos: number): string {
  const days = Math.floor(localSecs / 86400);
  const sod = localSecs - days * 86400;
  const [y, m, d] = civilFromDays(days);
  return `${formatYear(y)}-${pad2(m)}-${pad2(d)}T${pad2(Math.floor(sod / 3600))}:${
    pad2(Math.floor((sod % 3600) / 60))
  }:${pad2(sod % 60)}${formatFraction(nanos)}`;
}

/** The instant in UTC, RFC 3339 with `Z`, seconds always, minimal fractional digits. */
export function formatDateTimeUtc(dt: DateTimeV): string {
  const [secs, nanos] = splitNs(dt.ns);
  return formatLocal(secs, nanos) + "Z";
}

/** The zoned form used by JSON: `2026-07-09T14:00:00+00:00[UTC]` (local time, offset, zone). */
export function formatDateTimeZoned(dt: DateTimeV): string {
  const [secs, nanos] = splitNs(dt.ns);
  const off = zoneOffsetSeconds(dt.zone, secs);
  return `${formatLocal(secs + off, nanos)}${formatOffset(off)}[${dt.zone}]`;
}

/** Render a time of day: `HH:MM`, or `HH:MM:SS[.fff]` when there are seconds. */
export function formatTime(t: TimeV): string {
  const base = `${pad2(t.h)}:${pad2(t.m)}`;
  if (t.s === 0 && t.nanos === 0) return base;
  return `${base}:${pad2(t.s)}${formatFraction(t.nanos)}`;
}

// ---------------------------------------------------------------------------------------------
// Fields

/** The local calendar fields of `dt` in its zone. */
export function dateTimeParts(
  dt: DateTimeV,
): {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  nanos: number;
} {
  const [secs, nanos] = splitNs(dt.ns);
  const local = secs + zoneOffsetSeconds(dt.zone, secs);
  const days = Math.floor(local / 86400);
  const sod = local - days * 86400;
  const [year, month, day] = civilFromDays(days);
  return {
    year,
    month,
    day,
    hour: Math.floor(sod / 3600),
    minute: Math.floor((sod % 3600) / 60),
    second: sod % 60,
    nanos,
  };
}

/** The names `dateTimeField` answers. */
export const DATETIME_FIELDS: readonly string[] = [
  "year",
  "month",
  "day",
  "hour",
  "minute",
  "second",
];

/** A calendar field (`year month day hour minute second`) in the value's zone, else undefined. */
export function dateTimeField(dt: DateTimeV, name: string): number | undefined {
  if (!DATETIME_FIELDS.includes(name)) return undefined;
  return dateTimeParts(dt)[name as "year"];
}

// ---------------------------------------------------------------------------------------------
// Parsing

const DT_RE =
  /^([+-]\d{6}|\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?([Zz]|[+-]\d{2}(?::?\d{2})?)?)?(?:\[!?([^\]]+)\])?$/;

function invalid(text: string): Error {
  return fail("arg_error", `invalid datetime \`${text}\``);
}

/** Throws overflow «datetime out of range» unless `ns` is a representable instant. */
export function checkDateTimeNs(ns: bigint): bigint {
  if (ns < DT_MIN_NS || ns > DT_MAX_NS) {
    throw fail("overflow", "datetime out of range (years -9999..9999)");
  }
  return ns;
}

/**
 * Parse a datetime (§19.8): a zoned form `…[Zone]` (offset optional), an RFC 3339 timestamp
 * with `Z` or an offset (seconds optional) → UTC, or a date-only `YYYY-MM-DD` → midnight UTC.
 * Anything else → arg_error «invalid datetime `x`».
 */
export function parseDateTime(text: string): DateTimeV {
  const m = DT_RE.exec(text);
  if (!m) throw invalid(text);
  const [, ys, mos, ds, hs, mis, ss, fs, offs, zoneText] = m;
  const y = Number(ys), mo = Number(mos), d = Number(ds);
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo)) throw invalid(text);
  let sod = 0;
  let nanos = 0;
  if (hs !== undefined) {
    const h = Number(hs), mi = Number(mis), s = ss === undefined ? 0 : Number(ss);
    if (h > 23 || mi > 59 || s > 60) throw invalid(text);
    sod = h * 3600 + mi * 60 + Math.min(s, 59); // a leap second clamps to :59
    if (fs !== undefined) nanos = Number(fs.padEnd(9, "0"));
    if (offs === undefined && zoneText === undefined) throw invalid(text);
  }
  const localSecs = daysFromCivil(y, mo, d) * 86400 + sod;
  let zone = "UTC";
  let secs: number;
  if (zoneText !== undefined) {
    const z = canonicalZone(zoneText);
    if (z === null) throw invalid(text);
    zone = z;
    if (offs === undefined) {
      secs = resolveLocal(zone, localSecs);
    } else if (offs === "Z" || offs === "z") {
      secs = localSecs;
    } else {
      const off = fixedOffsetSeconds(offs);
      if (off === null) throw invalid(text);
      secs = localSecs - off;
      // The written offset must be the zone's offset at that instant (no silent reinterpretation).
      if (zoneOffsetSeconds(zone, secs) !== off) throw invalid(text);
    }
  } else if (offs !== undefined) {
    const off = fixedOffsetSeconds(offs);
    if (off === null) throw invalid(text);
    secs = localSecs - off;
  } else {
    secs = localSecs;
  }
  if (secs < DT_MIN_SECS || secs > DT_MAX_SECS) throw invalid(text);
  return new DateTimeV(BigInt(secs) * NS_PER_SEC + BigInt(nanos), zone);
}

const TIME_RE = /^(\d{1,2}):(\d{2})(?::(\d{2}))?([aApP][mM])?$/;

/**
 * Parse a time of day `H:MM[:SS][am|pm]` (am/pm case-insensitive, needing hour 1–12;
 * 12am → 0, 12pm → 12). Null when the text is not a valid time.
 */
export function parseTimeOfDay(text: string): TimeV | null {
  const m = TIME_RE.exec(text);
  if (!m) return null;
  let h = Number(m[1]);
  const mi = Number(m[2]), s = m[3] === undefined ? 0 : Number(m[3]);
  if (m[4] !== undefined) {
    if (h < 1 || h > 12) return null;
    const pm = m[4].toLowerCase() === "pm";
    h = h === 12 ? (pm ? 12 : 0) : pm ? h + 12 : h;
  }
  if (h > 23 || mi > 59 || s > 59) return null;
  return new TimeV(h, mi, s);
}

// ---------------------------------------------------------------------------------------------
// Arithmetic and anchors

/** `dt + ns` in the same zone; overflow «datetime out of range» outside the representable span. */
export function addDuration(dt: DateTimeV, ns: bigint): DateTimeV {
  return new DateTimeV(checkDateTimeNs(dt.ns + ns), dt.zone);
}

/** `a − b` as a duration in ns; overflow «duration overflow» when it leaves i64. */
export function diffDateTimes(a: DateTimeV, b: DateTimeV): bigint {
  const d = a.ns - b.ns;
  if (d < I64_MIN || d > I64_MAX) throw fail("overflow", "duration overflow");
  return d;
}

/** Midnight (local) of the day containing `dt` in its zone (`today`). */
export function startOfDay(dt: DateTimeV): DateTimeV {
  const [secs] = splitNs(dt.ns);
  const local = secs + zoneOffsetSeconds(dt.zone, secs);
  const midnight = Math.floor(local / 86400) * 86400;
  return new DateTimeV(BigInt(resolveLocal(dt.zone, midnight)) * NS_PER_SEC, dt.zone);
}

/** A datetime for an epoch-nanosecond clock reading, viewed in `zone` (default: the system zone). */
export function dateTimeFromEpochNs(ns: bigint, zone: string = systemTimeZone()): DateTimeV {
  return new DateTimeV(checkDateTimeNs(ns), zone);
}
