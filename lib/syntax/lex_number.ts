/**
 * Numeric literals in EXPR mode (language §1.4): radix ints, decimal ints and floats, time of
 * day, and size/duration unit suffixes.
 */

import { isDigit, isIdentChar, type Lexer, type Token } from "./lexer.ts";
import { DURATION_UNITS, SIZE_UNITS } from "../value/units.ts";
import { I64_MAX, I64_MIN, U64_MAX } from "../value/types.ts";

const UNIT_HINT = "size units: b kb mb gb tb kib mib gib tib; duration units: ns us ms s m h d w";

function radixOf(c: number): number {
  switch (c) {
    case 120:
    case 88:
      return 16;
    case 111:
    case 79:
      return 8;
    case 98:
    case 66:
      return 2;
  }
  return 0;
}

function isRadixDigit(c: number, radix: number): boolean {
  if (radix === 16) return isDigit(c) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);
  if (radix === 8) return c >= 48 && c <= 55;
  return c === 48 || c === 49;
}

/** `round(x)` saturated into `[lo, hi]`, as decimal text (Rust `f64 as u64/i64` semantics). */
function saturate(x: number, lo: bigint, hi: bigint): string {
  if (Number.isNaN(x)) return "0";
  const r = Math.round(x);
  if (r >= Number(hi)) return hi.toString();
  if (r <= Number(lo)) return lo.toString();
  return BigInt(r).toString();
}

/** Lexes a number starting with the digit at `p`. */
export function lexNumber(lx: Lexer, p: number): Token {
  const src = lx.src;
  // 1. radix integers
  if (src.charCodeAt(p) === 48) {
    const radix = radixOf(lx.ch(p + 1));
    if (radix && isRadixDigit(lx.ch(p + 2), radix)) {
      let q = p + 2;
      while (isIdentChar(lx.ch(q))) q++;
      const digits = src.slice(p + 2, q).replaceAll("_", "");
      let ok = digits.length > 0;
      for (let i = 0; ok && i < digits.length; i++) {
        if (!isRadixDigit(digits.charCodeAt(i), radix)) ok = false;
      }
      const prefix = radix === 16 ? "0x" : radix === 8 ? "0o" : "0b";
      const v = ok ? BigInt(prefix + digits) : -1n;
      if (!ok || v > I64_MAX) throw lx.err("invalid numeric literal", p, q);
      return { k: "Int", s: p, e: q, text: v.toString() };
    }
  }
  // 2. decimal digits
  let q = p;
  while (isDigit(lx.ch(q)) || lx.ch(q) === 95) q++;
  // 3. time of day
  if (lx.ch(q) === 58 && isDigit(lx.ch(q + 1))) {
    const t = lexTime(lx, p, q);
    if (t) return t;
  }
  let isFloat = false;
  // 4. fraction
  if (lx.ch(q) === 46 && isDigit(lx.ch(q + 1))) {
    isFloat = true;
    q++;
    while (isDigit(lx.ch(q)) || lx.ch(q) === 95) q++;
  }
  // 5. exponent
  const ec = lx.ch(q);
  if (ec === 101 || ec === 69) {
    let r = q + 1;
    const sc = lx.ch(r);
    if (sc === 43 || sc === 45) r++;
    if (isDigit(lx.ch(r))) {
      isFloat = true;
      q = r;
      while (isDigit(lx.ch(q))) q++;
    }
  }
  const text = src.slice(p, q).replaceAll("_", "");
  // 6. unit suffix
  let u = q;
  while (isAlpha(lx.ch(u))) u++;
  if (u > q) {
    const unit = src.slice(q, u);
    if (unit !== unit.toLowerCase()) {
      throw lx.err(
        `unit \`${unit}\` must be lowercase`,
        q,
        u,
        `write \`${unit.toLowerCase()}\``,
      );
    }
    const num = Number(text);
    const sm = SIZE_UNITS.get(unit);
    if (sm !== undefined) {
      return { k: "Size", s: p, e: u, text: saturate(num * Number(sm), 0n, U64_MAX) };
    }
    const dm = DURATION_UNITS.get(unit);
    if (dm !== undefined) {
      return { k: "Duration", s: p, e: u, text: saturate(num * Number(dm), I64_MIN, I64_MAX) };
    }
    throw lx.err(`unknown unit \`${unit}\` on numeric literal`, q, u, UNIT_HINT);
  }
  // 7. plain number
  if (isFloat) {
    const num = Number(text);
    if (!Number.isFinite(num)) throw lx.err("float literal out of range", p, q);
    return { k: "Float", s: p, e: q, num };
  }
  const v = BigInt(text);
  if (v > I64_MAX) {
    throw lx.err(
      "integer literal out of range",
      p,
      q,
      "int is a 64-bit signed integer (-9223372036854775808 ..= 9223372036854775807)",
    );
  }
  return { k: "Int", s: p, e: q, text: v.toString() };
}

function isAlpha(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90);
}

function twoDigits(lx: Lexer, p: number): number {
  const a = lx.ch(p), b = lx.ch(p + 1);
  if (!isDigit(a) || !isDigit(b) || isDigit(lx.ch(p + 2))) return -1;
  return (a - 48) * 10 + (b - 48);
}

/** `H{1,2}:MM(:SS)?(am|pm)?`, or null when the shape does not fit (fall back to a number). */
function lexTime(lx: Lexer, p: number, q: number): Token | null {
  const hourText = lx.src.slice(p, q);
  if (hourText.length > 2 || hourText.includes("_")) return null;
  const m = twoDigits(lx, q + 1);
  if (m < 0) return null;
  let e = q + 3;
  let s = 0;
  if (lx.ch(e) === 58 && isDigit(lx.ch(e + 1))) {
    s = twoDigits(lx, e + 1);
    if (s < 0) return null;
    e += 3;
  }
  let h = Number(hourText);
  let meridiem = "";
  const a = lx.ch(e) | 0x20, b = lx.ch(e + 1) | 0x20;
  if ((a === 97 || a === 112) && b === 109 && !isIdentChar(lx.ch(e + 2))) {
    meridiem = a === 97 ? "am" : "pm";
    e += 2;
  }
  if (isIdentChar(lx.ch(e))) return null;
  const bad = () =>
    lx.err(
      "invalid time literal",
      p,
      e,
      "times are H:MM or H:MM:SS (24-hour), or 1–12 with am/pm: 10:30am, 23:15:45",
    );
  if (meridiem) {
    if (h < 1 || h > 12) throw bad();
    if (meridiem === "am") h = h === 12 ? 0 : h;
    else h = h === 12 ? 12 : h + 12;
  }
  if (h > 23 || m > 59 || s > 59) throw bad();
  return { k: "Time", s: p, e, hms: [h, m, s] };
}
