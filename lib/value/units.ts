/**
 * Size and duration units (language spec §1.4, §6.2): the unit tables shared by the lexer and
 * word binding, exact decimal scaling, and the word parsers used when a command word binds to a
 * `size` or `duration` parameter.
 */

import { I64_MAX, I64_MIN, U64_MAX } from "./types.ts";

/** Size unit → bytes. Decimal units are powers of 1000, `…ib` units powers of 1024. */
export const SIZE_UNITS: ReadonlyMap<string, bigint> = new Map([
  ["b", 1n],
  ["kb", 1000n],
  ["mb", 1000n ** 2n],
  ["gb", 1000n ** 3n],
  ["tb", 1000n ** 4n],
  ["kib", 1024n],
  ["mib", 1024n ** 2n],
  ["gib", 1024n ** 3n],
  ["tib", 1024n ** 4n],
]);

/** Duration unit → nanoseconds. */
export const DURATION_UNITS: ReadonlyMap<string, bigint> = new Map([
  ["ns", 1n],
  ["us", 1000n],
  ["ms", 1_000_000n],
  ["s", 1_000_000_000n],
  ["m", 60_000_000_000n],
  ["h", 3_600_000_000_000n],
  ["d", 86_400_000_000_000n],
  ["w", 604_800_000_000_000n],
]);

const DECIMAL = /^([+-]?)([0-9_]*)(?:\.([0-9_]*))?(?:[eE]([+-]?[0-9]+))?$/;

/**
 * `num × mult` computed exactly from the decimal text `num` (optional sign, digits with `_`
 * separators, fraction, exponent), rounded half away from zero. Null when `num` is not a
 * decimal number. Exact arithmetic keeps `0.1kb` at 100 bytes and large literals precise.
 */
export function scaleDecimal(num: string, mult: bigint): bigint | null {
  const m = DECIMAL.exec(num);
  if (!m) return null;
  const intPart = m[2].replaceAll("_", "");
  const fracPart = (m[3] ?? "").replaceAll("_", "");
  if (intPart === "" && fracPart === "") return null;
  const exp = m[4] === undefined ? 0 : Number(m[4]);
  // Exponents this large cannot describe a representable size or duration; answer with 0 or
  // a value far outside u64/i64 instead of building a gigantic power of ten.
  if (!Number.isFinite(exp) || Math.abs(exp) > 400) {
    if (exp < 0 || !/[1-9]/.test(intPart + fracPart)) return 0n;
    return m[1] === "-" ? -(10n ** 40n) : 10n ** 40n;
  }
  let digits = BigInt((intPart + fracPart) || "0") * mult;
  let scale = fracPart.length - exp; // value = digits / 10^scale
  if (scale <= 0) {
    digits *= 10n ** BigInt(-scale);
    scale = 0;
  }
  let q = digits;
  if (scale > 0) {
    const den = 10n ** BigInt(scale);
    q = digits / den;
    if ((digits % den) * 2n >= den) q += 1n;
  }
  return m[1] === "-" ? -q : q;
}

/** Clamp to u64 the way Rust's saturating `as u64` does (negative → 0). */
export function saturateU64(n: bigint): bigint {
  return n < 0n ? 0n : n > U64_MAX ? U64_MAX : n;
}

/** Clamp to i64 the way Rust's saturating `as i64` does. */
export function saturateI64(n: bigint): bigint {
  return n < I64_MIN ? I64_MIN : n > I64_MAX ? I64_MAX : n;
}

/**
 * Bytes of a size literal: `num` is the literal's number text, `unit` its lowercase suffix.
 * Saturates to u64 like the reference lexer's `as u64`. Null for an unknown unit or bad number.
 */
export function sizeLiteralBytes(num: string, unit: string): bigint | null {
  const mult = SIZE_UNITS.get(unit);
  if (mult === undefined) return null;
  const v = scaleDecimal(num, mult);
  return v === null ? null : saturateU64(v);
}

/**
 * Nanoseconds of a duration literal (`num` text, lowercase `unit`). Saturates to i64 like the
 * reference lexer's `as i64`. Null for an unknown unit or bad number.
 */
export function durationLiteralNs(num: string, unit: string): bigint | null {
  const mult = DURATION_UNITS.get(unit);
  if (mult === undefined) return null;
  const v = scaleDecimal(num, mult);
  return v === null ? null : saturateI64(v);
}

const WORD_NUM = /^[0-9]+(?:\.[0-9]*)?|^\.[0-9]+/;

/**
 * Parse a size word for word binding: `<num><unit>` with a case-insensitive unit and an
 * optional fraction (`4kb`, `1.5MiB`), or a bare non-negative integer meaning bytes.
 * Null when the word is not a size or does not fit in u64.
 */
export function parseSizeWord(word: string): bigint | null {
  const m = WORD_NUM.exec(word);
  if (!m) return null;
  const rest = word.slice(m[0].length).toLowerCase();
  let bytes: bigint | null;
  if (rest === "") {
    if (!/^[0-9]+$/.test(m[0])) return null;
    bytes = BigInt(m[0]);
  } else {
    const mult = SIZE_UNITS.get(rest);
    if (mult === undefined) return null;
    bytes = scaleDecimal(m[0], mult);
  }
  return bytes === null || bytes > U64_MAX ? null : bytes;
}

/**
 * Parse a duration word for word binding: a compound of `<num><unit>` parts (`1h30m`,
 * `1.5s`, case-insensitive units), optionally negative (`-5s`, `-1h30m` = −(1h30m)), or a bare
 * integer meaning seconds (`90` → 1m30s). Null when the word is not a duration or leaves i64.
 */
export function parseDurationWord(word: string): bigint | null {
  let neg = false;
  let s = word;
  if (s.startsWith("-") || s.startsWith("+")) {
    neg = s[0] === "-";
    s = s.slice(1);
  }
  if (s === "") return null;
  let total: bigint;
  if (/^[0-9]+$/.test(s)) {
    total = BigInt(s) * 1_000_000_000n;
  } else {
    total = 0n;
    let i = 0;
    while (i < s.length) {
      const m = WORD_NUM.exec(s.slice(i));
      if (!m) return null;
      i += m[0].length;
      let j = i;
      while (j < s.length && /[A-Za-z]/.test(s[j])) j++;
      const mult = DURATION_UNITS.get(s.slice(i, j).toLowerCase());
      if (mult === undefined) return null;
      const part = scaleDecimal(m[0], mult);
      if (part === null) return null;
      total += part;
      i = j;
    }
  }
  if (neg) total = -total;
  return total < I64_MIN || total > I64_MAX ? null : total;
}
