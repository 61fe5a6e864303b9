import { deepStrictEqual as eq } from "node:assert/strict";
import {
  DURATION_UNITS,
  durationLiteralNs,
  parseDurationWord,
  parseSizeWord,
  saturateI64,
  saturateU64,
  scaleDecimal,
  SIZE_UNITS,
  sizeLiteralBytes,
} from "../../lib/value/units.ts";

const S = 1_000_000_000n;
const U64_MAX = 2n ** 64n - 1n;
const I64_MAX = 2n ** 63n - 1n;

Deno.test("unit tables", () => {
  eq([...SIZE_UNITS.keys()], ["b", "kb", "mb", "gb", "tb", "kib", "mib", "gib", "tib"]);
  eq(SIZE_UNITS.get("kib"), 1024n);
  eq(SIZE_UNITS.get("tb"), 10n ** 12n);
  eq(SIZE_UNITS.get("tib"), 1024n ** 4n);
  eq([...DURATION_UNITS.keys()], ["ns", "us", "ms", "s", "m", "h", "d", "w"]);
  eq(DURATION_UNITS.get("w"), 604800n * S);
});

Deno.test("scaleDecimal is exact and rounds half away from zero", () => {
  eq(scaleDecimal("1.5", 1_000_000n), 1_500_000n);
  eq(scaleDecimal("0.1", 1000n), 100n);
  eq(scaleDecimal("1_000", 1000n), 1_000_000n);
  eq(scaleDecimal("0.5", 1n), 1n);
  eq(scaleDecimal("0.4999", 1n), 0n);
  eq(scaleDecimal("-0.5", 1n), -1n);
  eq(scaleDecimal("2.5", 1n), 3n);
  eq(scaleDecimal("1e3", 1n), 1000n);
  eq(scaleDecimal("1.5e-3", S), 1_500_000n);
  eq(scaleDecimal(".5", 2n), 1n);
  eq(scaleDecimal("5.", 2n), 10n);
  eq(scaleDecimal("1e999", 1n)! > U64_MAX, true);
  eq(scaleDecimal("1e-999", 1n), 0n);
  eq(scaleDecimal("", 1n), null);
  eq(scaleDecimal(".", 1n), null);
  eq(scaleDecimal("abc", 1n), null);
  eq(scaleDecimal("1.2.3", 1n), null);
});

Deno.test("literal helpers saturate like Rust `as` casts", () => {
  eq(sizeLiteralBytes("1.5", "mb"), 1_500_000n);
  eq(sizeLiteralBytes("4", "kib"), 4096n);
  eq(sizeLiteralBytes("0", "kb"), 0n);
  eq(sizeLiteralBytes("99999999999999999999", "tb"), U64_MAX);
  eq(sizeLiteralBytes("1", "xb"), null);
  eq(durationLiteralNs("1.5", "h"), 5400n * S);
  eq(durationLiteralNs("4000000000", "w"), I64_MAX);
  eq(durationLiteralNs("250", "ms"), 250_000_000n);
  eq(durationLiteralNs("1", "y"), null);
  eq(saturateU64(-5n), 0n);
  eq(saturateI64(-(2n ** 70n)), -(2n ** 63n));
});

Deno.test("parseSizeWord: case-insensitive units, fractions, bare bytes", () => {
  eq(parseSizeWord("4kb"), 4000n);
  eq(parseSizeWord("4KB"), 4000n);
  eq(parseSizeWord("1.5MiB"), 1_572_864n);
  eq(parseSizeWord("0.5kb"), 500n);
  eq(parseSizeWord(".5kb"), 500n);
  eq(parseSizeWord("237b"), 237n);
  eq(parseSizeWord("4096"), 4096n);
  eq(parseSizeWord("18446744073709551615b"), U64_MAX);
  eq(parseSizeWord("18446744073709551616b"), null);
  for (const bad of ["", "kb", "notasize", "-4kb", "4 kb", "4kbb", "4.5", "1_000kb", "4k"]) {
    eq(parseSizeWord(bad), null, bad);
  }
});

Deno.test("parseDurationWord: compounds, negatives, bare seconds", () => {
  eq(parseDurationWord("250ms"), 250_000_000n);
  eq(parseDurationWord("1h30m"), 5400n * S);
  eq(parseDurationWord("1H30M"), 5400n * S);
  eq(parseDurationWord("-5s"), -5n * S);
  eq(parseDurationWord("-1h30m"), -5400n * S);
  eq(parseDurationWord("90"), 90n * S);
  eq(parseDurationWord("-90"), -90n * S);
  eq(parseDurationWord("1.5s"), 1_500_000_000n);
  eq(parseDurationWord("1w2d3h4m5s6ms7us8ns"), 788645006007008n + 0n * S);
  eq(parseDurationWord("9223372036854775807ns"), I64_MAX);
  eq(parseDurationWord("9223372036854775808ns"), null);
  eq(parseDurationWord("-9223372036854775808ns"), -(2n ** 63n));
  for (const bad of ["", "-", "s", "5x", "5 s", "1h 30m", "abc", "1.5", "5s-", "1e3s"]) {
    eq(parseDurationWord(bad), null, bad);
  }
});
