import { deepStrictEqual as eq, ok } from "node:assert/strict";
import {
  arith,
  type ArithOp,
  makeRange,
  membership,
  negate,
  rangeAt,
  rangeContains,
  rangeLen,
  rangeToArray,
  rangeValues,
} from "../../lib/value/arith.ts";
import { renderInline } from "../../lib/value/render.ts";
import { parseDateTime } from "../../lib/value/datetime.ts";
import {
  DurationV,
  FloatV,
  ListV,
  PathV,
  RangeV,
  RecordV,
  SizeV,
  TableV,
  typeName,
  type Value,
} from "../../lib/value/types.ts";
import { assertShoalError } from "./_helpers.ts";

const f = (x: number) => new FloatV(x);
const kb = (n: number) => new SizeV(BigInt(n) * 1000n);
const b = (n: bigint) => new SizeV(n);
const sec = (n: number) => new DurationV(BigInt(n) * 1_000_000_000n);
const ns = (n: bigint) => new DurationV(n);
const min = (n: number) => sec(n * 60);
const hour = (n: number) => sec(n * 3600);
const week = (n: bigint) => ns(n * 604_800_000_000_000n);
const dt = (s: string) => parseDateTime(s);
const MAX = 9223372036854775807n;
const MINI = -9223372036854775808n;
const r = (op: ArithOp, a: Value, c: Value) => renderInline(arith(op, a, c));

Deno.test("int arithmetic: truncating division, dividend-signed remainder", () => {
  eq(arith("+", 1, 1), 2);
  eq(arith("-", 3, 5), -2);
  eq(arith("*", 6, 7), 42);
  eq(arith("/", 7, 2), 3);
  eq(arith("/", -7, 2), -3);
  eq(arith("/", -5, 2), -2);
  eq(arith("/", 5, -2), -2);
  eq(arith("/", -5, -2), 2);
  eq(arith("%", -7, 3), -1);
  eq(arith("%", 7, -3), 1);
  eq(arith("%", -5, -2), -1);
  ok(Object.is(arith("*", 0, -5), 0)); // never -0
  ok(Object.is(arith("/", 0, -2), 0));
  ok(Object.is(arith("%", -4, 2), 0));
  ok(Object.is(arith("/", -1, 2), 0));
});

Deno.test("int arithmetic crosses the safe-integer boundary exactly and checks i64", () => {
  eq(arith("+", 9007199254740991, 1), 9007199254740992n);
  eq(arith("-", 9007199254740992n, 1), 9007199254740991); // normalised back to a number
  eq(arith("*", 3037000499, 3037000499), 9223372030926249001n);
  eq(arith("-", -9223372036854775807n, 1), MINI);
  eq(r("-", -9223372036854775807n, 1), "-9223372036854775808");
  eq(arith("/", MAX, 2), 4611686018427387903n);
  eq(arith("%", MAX, 10), 7);
  eq(arith("/", 9007199254740991, 3), 3002399751580330);
  eq(arith("+", 9007199254740991n + 10n, f(0.5)) instanceof FloatV, true);
  assertShoalError(() => arith("+", MAX, 1), "overflow", "integer overflow");
  assertShoalError(() => arith("*", MAX, 2), "overflow");
  assertShoalError(() => arith("-", MINI, 1), "overflow");
  assertShoalError(() => arith("*", 4294967296, 4294967296), "overflow");
  assertShoalError(() => arith("/", MINI, -1), "overflow");
  assertShoalError(() => arith("%", MINI, -1), "overflow");
});

Deno.test("int division and remainder by zero are div_zero", () => {
  assertShoalError(() => arith("/", 1, 0), "div_zero", "division by zero");
  assertShoalError(() => arith("%", 5, 0), "div_zero", "remainder by zero");
  assertShoalError(() => arith("/", MAX, 0), "div_zero", "division by zero");
  assertShoalError(() => arith("%", MAX, 0), "div_zero", "remainder by zero");
});

Deno.test("float and mixed arithmetic is IEEE (never div_zero)", () => {
  eq(r("+", f(0.5), 2), "2.5");
  eq(r("-", 9, f(0.5)), "8.5");
  eq(r("-", f(0.5), 9), "-8.5");
  eq(r("*", 3, f(0.5)), "1.5");
  eq(r("*", f(0.5), 3), "1.5");
  eq(r("/", 5, f(2)), "2.5");
  eq(r("/", f(2), 5), "0.4");
  eq(r("%", 5, f(2)), "1");
  eq(r("%", f(5.5), 2), "1.5");
  eq(r("+", f(0.1), f(0.2)), "0.30000000000000004");
  eq(r("/", f(10), 3), "3.3333333333333335");
  eq(r("/", f(1), f(0)), "inf");
  eq(r("/", f(-1), f(0)), "-inf");
  eq(r("/", f(0), f(0)), "nan");
  eq(r("%", f(1), f(0)), "nan");
  ok(arith("+", f(1), 1) instanceof FloatV);
});

Deno.test("str + str and list + list concatenate", () => {
  eq(arith("+", "a", "b"), "ab");
  eq(r("+", new ListV([1]), new ListV([2, 3])), "[1, 2, 3]");
  assertShoalError(() => arith("-", "a", "b"), "type_error", "cannot apply `-` to str and str");
  assertShoalError(() => arith("+", "a", 1), "type_error", "cannot apply `+` to str and int");
  assertShoalError(() => arith("+", 1, "1"), "type_error", "cannot apply `+` to int and str");
  assertShoalError(() => arith("+", new ListV([1]), 1), "type_error", "list and int");
  assertShoalError(() => arith("*", new ListV([1]), 2), "type_error");
});

Deno.test("size arithmetic (§5.2)", () => {
  eq(r("+", kb(1), kb(1)), "2kb");
  eq(r("+", b(500n), b(500n)), "1kb");
  eq(r("-", kb(2), b(500n)), "1.5kb");
  eq(r("/", kb(10), kb(4)), "2.5");
  eq(r("*", kb(3), 4), "12kb");
  eq(r("*", 4, kb(3)), "12kb");
  eq(r("/", kb(10), 4), "2.5kb");
  eq(r("/", kb(10), 3), "3.33kb");
  eq(r("*", kb(2), f(1.5)), "3kb");
  eq(r("*", f(1.5), kb(2)), "3kb");
  eq(r("*", kb(1), 0), "0b");
  eq(r("/", kb(0), 5), "0b");
  eq(r("*", b(1000n), f(-0.0001)), "0b"); // rounds to zero, not negative
  assertShoalError(() => arith("-", kb(1), kb(2)), "type_error", "size cannot go negative");
  assertShoalError(() => arith("*", kb(10), -1), "type_error", "negative");
  assertShoalError(() => arith("*", -1, kb(10)), "type_error", "negative");
  assertShoalError(() => arith("/", kb(10), -1), "type_error", "negative");
  assertShoalError(() => arith("*", b(1000n), f(-1)), "type_error", "negative");
  assertShoalError(() => arith("*", f(-1), b(1000n)), "type_error", "negative");
  assertShoalError(() => arith("/", kb(10), 0), "div_zero", "division by zero");
  assertShoalError(() => arith("/", kb(10), b(0n)), "div_zero");
  assertShoalError(() => arith("*", b(9000000000000000000n), f(100)), "overflow", "size overflow");
  assertShoalError(() => arith("*", f(100), b(9000000000000000000n)), "overflow", "size overflow");
  assertShoalError(() => arith("*", b(1n), f(NaN)), "overflow", "size overflow");
  assertShoalError(() => arith("*", b(2n ** 63n), 2), "overflow", "size overflow");
  assertShoalError(() => arith("+", b(2n ** 64n - 1n), b(1n)), "overflow", "size overflow");
  eq(r("+", b(2n ** 64n - 2n), b(1n)), "18446744.07tb");
  for (const [x, y] of [[kb(10), f(2)], [b(1n), 1], [1, b(1n)], [b(1n), sec(1)], [kb(1), kb(1)]]) {
    const op: ArithOp = y instanceof SizeV && x instanceof SizeV ? "*" : "+";
    const want = `cannot apply \`${op}\` to ${typeName(x as Value)} and ${typeName(y as Value)}`;
    assertShoalError(() => arith(op, x as Value, y as Value), "type_error", want);
  }
  assertShoalError(
    () => arith("/", kb(10), f(2)),
    "type_error",
    "cannot apply `/` to size and float",
  );
  assertShoalError(() => arith("%", kb(10), 3), "type_error");
  assertShoalError(() => arith("/", 3, kb(10)), "type_error");
});

Deno.test("duration arithmetic (§5.2)", () => {
  eq(r("-", hour(2), min(30)), "1h30m");
  eq(r("+", hour(1), hour(1)), "2h");
  eq(r("+", min(30), min(30)), "1h");
  eq(r("-", sec(86400), hour(12)), "12h");
  eq(r("-", sec(5), sec(5)), "0s");
  eq(r("/", sec(90), sec(30)), "3");
  eq(r("/", sec(90), sec(60)), "1.5");
  eq(r("*", min(30), 2), "1h");
  eq(r("*", 2, min(30)), "1h");
  eq(r("/", sec(90), 3), "30s");
  eq(r("/", ns(-7n), 2), "-3ns");
  eq(r("*", sec(30), f(1.5)), "45s");
  eq(r("*", f(1.5), sec(30)), "45s");
  eq(r("*", sec(5), f(-1)), "-5s");
  eq(r("*", sec(5), -2), "-10s");
  assertShoalError(() => arith("/", sec(30), 0), "div_zero");
  assertShoalError(() => arith("/", sec(30), sec(0)), "div_zero");
  assertShoalError(() => arith("+", sec(1), 1), "type_error", "duration and int");
  assertShoalError(() => arith("+", week(4000000000n), week(4000000000n)), "overflow");
  assertShoalError(() => arith("-", ns(MINI), sec(1)), "overflow", "duration overflow");
  assertShoalError(() => arith("*", week(999999n), 999999), "overflow", "duration overflow");
  assertShoalError(() => arith("*", 999999, week(999999n)), "overflow", "duration overflow");
  assertShoalError(() => arith("*", week(5000000000n / 1000n), f(1e9)), "overflow", "duration");
  assertShoalError(() => arith("*", f(1000), ns(MAX)), "overflow", "duration overflow");
  assertShoalError(() => arith("*", sec(1), f(NaN)), "overflow", "duration overflow");
  assertShoalError(() => arith("/", ns(MINI), -1), "overflow", "duration overflow");
  assertShoalError(() => arith("%", sec(5), sec(2)), "type_error");
});

Deno.test("datetime arithmetic (§5.2)", () => {
  const t = dt("2026-07-09T14:00Z");
  eq(r("+", hour(1), t), "2026-07-09T15:00:00Z");
  eq(r("+", t, hour(1)), "2026-07-09T15:00:00Z");
  eq(r("-", t, hour(1)), "2026-07-09T13:00:00Z");
  eq(r("-", t, dt("2026-07-09T12:30Z")), "1h30m");
  eq(r("-", t, dt("2026-07-08T14:00Z")), "1d");
  eq(r("+", dt("2026-07-09T00:00Z"), hour(24)), "2026-07-10T00:00:00Z");
  eq(r("+", dt("2026-12-31T23:00Z"), hour(2)), "2027-01-01T01:00:00Z");
  eq(r("-", dt("2026-03-01T00:00Z"), dt("2026-02-01T00:00Z")), "4w");
  eq(r("-", dt("2026-02-01T00:00Z"), dt("2026-03-01T00:00Z")), "-4w");
  const paris = dt("2026-07-09T14:00:00[Europe/Paris]");
  eq((arith("+", paris, hour(1)) as { zone: string }).zone, "Europe/Paris");
  assertShoalError(() => arith("-", sec(1), t), "type_error", "duration and datetime");
  assertShoalError(() => arith("+", t, t), "type_error", "datetime and datetime");
  assertShoalError(() => arith("*", t, 2), "type_error", "datetime and int");
  assertShoalError(() => arith("+", t, week(600000n)), "overflow", "datetime out of range");
  assertShoalError(() => arith("-", t, week(700000n)), "overflow", "datetime out of range");
  assertShoalError(
    () => arith("-", dt("9999-12-01T00:00Z"), dt("-009999-06-01T00:00Z")),
    "overflow",
    "duration overflow",
  );
});

Deno.test("other kinds are type errors with both type names", () => {
  assertShoalError(
    () => arith("+", true, false),
    "type_error",
    "cannot apply `+` to bool and bool",
  );
  assertShoalError(() => arith("+", null, 1), "type_error", "null and int");
  const rec = new RecordV(new Map([["a", 1]]));
  assertShoalError(() => arith("+", rec, rec), "type_error", "record and record");
  assertShoalError(() => arith("+", new PathV("a"), "b"), "type_error", "path and str");
});

Deno.test("negate (§5.1)", () => {
  eq(negate(5), -5);
  ok(Object.is(negate(0), 0));
  eq(negate(-9223372036854775807n), MAX);
  eq(negate(9007199254740992n), -9007199254740992n);
  eq(negate(-9007199254740991), 9007199254740991);
  eq(renderInline(negate(f(1.5))), "-1.5");
  eq(renderInline(negate(f(0))), "-0");
  eq(renderInline(negate(sec(5))), "-5s");
  eq(renderInline(negate(sec(-90))), "1m30s");
  assertShoalError(() => negate(MINI), "overflow", "integer negation overflow");
  assertShoalError(() => negate(ns(MINI)), "overflow", "duration overflow");
  assertShoalError(() => negate(kb(5)), "type_error", "cannot apply unary operator to size");
  assertShoalError(() => negate(true), "type_error", "bool");
  assertShoalError(() => negate("a"), "type_error", "str");
});

Deno.test("membership (§5.3)", () => {
  const xs = new ListV([1, 2, 3]);
  ok(membership(2, xs));
  ok(!membership(9, xs));
  ok(membership(f(2), xs));
  ok(!membership(new ListV([1, 2, 3]), xs));
  ok(!membership("a", new ListV([])));
  ok(membership("ell", "hello"));
  ok(!membership("xyz", "hello"));
  ok(membership("", "hello"));
  const rec = new RecordV(new Map<string, Value>([["a", 1], ["b", 2]]));
  ok(membership("a", rec));
  ok(!membership("c", rec));
  ok(membership(3, new RangeV(1, 5, false)));
  ok(!membership(5, new RangeV(1, 5, false)));
  ok(membership(5, new RangeV(1, 5, true)));
  ok(!membership(3, new RangeV(3, 3, false)));
  const row = new RecordV(new Map([["n", 1]]));
  const t = new TableV([row]);
  ok(membership(new RecordV(new Map([["n", 1]])), t));
  ok(!membership(new RecordV(new Map([["n", 2]])), t));
  assertShoalError(() => membership(1, "abc"), "type_error", "cannot test int membership in str");
  assertShoalError(() => membership(1, rec), "type_error", "int membership in record");
  assertShoalError(() => membership("a", new RangeV(1, 5, false)), "type_error", "range");
  assertShoalError(() => membership(1, 5), "type_error", "in int");
});

Deno.test("ranges (§5.4)", () => {
  eq(rangeLen(new RangeV(1, 5, false)), 4);
  eq(rangeLen(new RangeV(1, 5, true)), 5);
  eq(rangeLen(new RangeV(5, 1, false)), 0);
  eq(rangeLen(new RangeV(5, 1, true)), 0);
  eq(rangeLen(new RangeV(1, 1, false)), 0);
  eq(rangeLen(new RangeV(-3, 3, false)), 6);
  eq(rangeLen(new RangeV(MINI, MAX, true)), 18446744073709551616n);
  eq(rangeLen(new RangeV(-9007199254740991, 9007199254740991, false)), 18014398509481982n);
  ok(rangeContains(new RangeV(1, 10, false), 5));
  ok(rangeContains(new RangeV(MINI, MAX, true), MAX));
  eq(rangeAt(new RangeV(MAX - 2n, MAX, true), 2), MAX);
  eq(rangeAt(new RangeV(3, 9, false), 2), 5);
  eq([...rangeValues(new RangeV(2, 5, true))], [2, 3, 4, 5]);
  eq([...rangeValues(new RangeV(5, 1, false))], []);
  eq([...rangeValues(new RangeV(MAX - 1n, MAX, true))], [MAX - 1n, MAX]);
  eq(rangeToArray(new RangeV(1, 5, false)), [1, 2, 3, 4]);
  eq(rangeToArray(new RangeV(0, 1_000_000_000, false), 3), [0, 1, 2]);
  assertShoalError(() => rangeToArray(new RangeV(MINI, MAX, false)), "overflow");
  eq(renderInline(makeRange(2, 7, true)), "2..=7");
  assertShoalError(() => makeRange(1, f(5.5), false), "type_error", "range bounds must be int");
  assertShoalError(() => makeRange(f(1.5), f(5.5), false), "type_error", "range bounds");
  assertShoalError(() => makeRange("a", 2, false), "type_error", "range bounds");
});
