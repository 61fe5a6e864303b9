import { deepStrictEqual as eq, ok } from "node:assert/strict";
import type { CmdExpr } from "../../lib/syntax/ast.ts";
import { compareStrings, compareValues, valuesEqual } from "../../lib/value/compare.ts";
import {
  BytesV,
  ClosureV,
  CommandV,
  DateTimeV,
  DurationV,
  ErrorV,
  FloatV,
  GlobV,
  OutcomeV,
  PathV,
  RangeV,
  RegexV,
  SecretV,
  SizeV,
  StreamV,
  TableV,
  TaskV,
  TimeV,
  type Value,
} from "../../lib/value/types.ts";
import { parseDateTime } from "../../lib/value/datetime.ts";
import { assertShoalError, list, rec } from "./_helpers.ts";

const f = (x: number) => new FloatV(x);
const dt = (s: string) => parseDateTime(s);

Deno.test("valuesEqual: numbers (int/float promotion, NaN, i64 bigints)", () => {
  ok(valuesEqual(5, 5));
  ok(!valuesEqual(5, 6));
  ok(valuesEqual(5, f(5)));
  ok(valuesEqual(f(5), 5));
  ok(valuesEqual(f(0), f(-0)));
  ok(!valuesEqual(f(NaN), f(NaN)));
  const nan = f(NaN);
  ok(!valuesEqual(nan, nan)); // even the same object
  ok(valuesEqual(9223372036854775807n, 9223372036854775807n));
  ok(!valuesEqual(9223372036854775807n, -9223372036854775808n));
  ok(!valuesEqual(9007199254740991, 9223372036854775807n));
  ok(valuesEqual(9223372036854775807n, f(9223372036854775807))); // i64 as f64
});

Deno.test("valuesEqual: cross-kind pairs are false, never errors (§4.1)", () => {
  const pairs: [Value, Value][] = [
    [5, new SizeV(5000n)],
    [true, 1],
    [dt("2026-07-09T00:00Z"), "2026-07-09"],
    [list(1, 2), "ab"],
    [1, "1"],
    [null, false],
    [null, 0],
    [new SizeV(1n), new DurationV(1n)],
    [rec({}), list()],
    [new GlobV("*.rs", "/"), "*.rs"],
    [new RegexV("a", /a/), "a"],
  ];
  for (const [a, b] of pairs) {
    ok(!valuesEqual(a, b), `${String(a)} vs ${String(b)}`);
    ok(!valuesEqual(b, a));
  }
  ok(valuesEqual(null, null));
});

Deno.test("valuesEqual: path/str by text, paths component-wise", () => {
  ok(valuesEqual(new PathV("a"), "a"));
  ok(valuesEqual("a", new PathV("a")));
  ok(!valuesEqual(new PathV("a"), "b"));
  ok(valuesEqual(new PathV("a.txt"), new PathV("a.txt")));
  ok(!valuesEqual(new PathV("a.txt"), new PathV("b.txt")));
  ok(valuesEqual(new PathV("a//b/"), new PathV("a/b")));
  ok(valuesEqual(new PathV("a/./b"), new PathV("a/b")));
  ok(!valuesEqual(new PathV("/a"), new PathV("a")));
  ok(!valuesEqual(new PathV("./a"), new PathV("a")));
});

Deno.test("valuesEqual: units, datetimes, times, bytes, glob, regex", () => {
  ok(valuesEqual(new DurationV(5_000_000_000n), new DurationV(5_000_000_000n)));
  ok(!valuesEqual(new SizeV(1000n), new SizeV(1024n)));
  ok(valuesEqual(dt("2026-07-09T14:00+01:00"), dt("2026-07-09T13:00Z")));
  ok(valuesEqual(dt("2026-07-09"), dt("2026-07-09T00:00Z")));
  ok(valuesEqual(new DateTimeV(0n, "UTC"), new DateTimeV(0n, "Europe/Paris")));
  ok(valuesEqual(new TimeV(10, 0, 0), new TimeV(10, 0, 0)));
  ok(!valuesEqual(new TimeV(10, 0, 0), new TimeV(10, 0, 1)));
  ok(valuesEqual(new BytesV(new Uint8Array([1, 2])), new BytesV(new Uint8Array([1, 2]))));
  ok(!valuesEqual(new BytesV(new Uint8Array([1, 2])), new BytesV(new Uint8Array([1, 3]))));
  ok(valuesEqual(new GlobV("*.rs", "/a", true), new GlobV("*.rs", "/b")));
  ok(valuesEqual(new RegexV("\\d+", /\d+/), new RegexV("\\d+", /\d+/)));
  ok(!valuesEqual(new RegexV("\\d+", /\d+/), new RegexV("\\d*", /\d*/)));
});

Deno.test("valuesEqual: structural collections; records ignore key order", () => {
  ok(valuesEqual(list(1, list(2, "x")), list(1, list(2, "x"))));
  ok(!valuesEqual(list(1, 2), list(1, 2, 3)));
  ok(valuesEqual(rec({ a: 1, b: 2 }), rec({ b: 2, a: 1 })));
  ok(!valuesEqual(rec({ a: 1 }), rec({ a: 1, b: 2 })));
  ok(!valuesEqual(rec({ a: 1, b: 2 }), rec({ a: 1, c: 2 })));
  const t = new TableV([rec({ a: 1 }), rec({ a: 2 })]);
  ok(valuesEqual(t, list(rec({ a: 1 }), rec({ a: 2 }))));
  ok(valuesEqual(list(rec({ a: 1 }), rec({ a: 2 })), t));
  ok(valuesEqual(new RangeV(1, 5, false), new RangeV(1, 5, false)));
  ok(!valuesEqual(new RangeV(1, 5, false), new RangeV(1, 5, true)));
  ok(valuesEqual(new ErrorV("x", "m"), new ErrorV("x", "m")));
  ok(!valuesEqual(new ErrorV("x", "m"), new ErrorV("x", "n")));
  ok(valuesEqual(new SecretV("a", "1"), new SecretV("a", "1")));
  ok(!valuesEqual(new SecretV("a", "1"), new SecretV("a", "2")));
});

Deno.test("valuesEqual: identity for outcome/closure/task/stream; commands structurally", () => {
  const o1 = new OutcomeV(0, true, null, new Uint8Array(), new Uint8Array(), 0n, 0, "x");
  const o2 = new OutcomeV(0, true, null, new Uint8Array(), new Uint8Array(), 0n, 0, "x");
  ok(valuesEqual(o1, o1));
  ok(!valuesEqual(o1, o2));
  const c = new ClosureV(null, [], null, null);
  ok(valuesEqual(c, c));
  ok(!valuesEqual(c, new ClosureV(null, [], null, null)));
  const t = new TaskV(1, "", null);
  ok(valuesEqual(t, t));
  ok(!valuesEqual(t, new TaskV(1, "", null)));
  const s = new StreamV("value", true, null);
  ok(valuesEqual(s, s));
  ok(!valuesEqual(s, new StreamV("value", true, null)));
  const cmd = (head: string, at: number) =>
    ({ kind: "Cmd", head, args: [], span: [at, at + 3] }) as unknown as CmdExpr;
  ok(valuesEqual(new CommandV(cmd("git", 0), "g"), new CommandV(cmd("git", 10), "g")));
  ok(!valuesEqual(new CommandV(cmd("git", 0), "g"), new CommandV(cmd("ls", 0), "g")));
});

Deno.test("valuesEqual: a stream against a non-stream is a type_error", () => {
  const s = new StreamV("value", true, null);
  assertShoalError(() => valuesEqual(s, 1), "type_error", "cannot compare a stream with a value");
  assertShoalError(() => valuesEqual(null, s), "type_error", "stream");
  assertShoalError(() => valuesEqual(list(), s), "type_error", "stream");
});

Deno.test("compareValues: comparable pairs (§4.2)", () => {
  eq(compareValues(1, 2), -1);
  eq(compareValues(2, 2), 0);
  eq(compareValues(3, 2), 1);
  eq(compareValues(9223372036854775807n, 1), 1);
  eq(compareValues(-9223372036854775808n, 9223372036854775807n), -1);
  eq(compareValues(1, 9223372036854775807n), -1);
  eq(compareValues(1, f(1.5)), -1);
  eq(compareValues(f(2.5), 2), 1);
  eq(compareValues(f(2), 2), 0);
  eq(compareValues("Z", "a"), -1);
  eq(compareValues("a", "ab"), -1);
  eq(compareValues("b", "ab"), 1);
  eq(compareValues(false, true), -1);
  eq(compareValues(true, true), 0);
  eq(compareValues(new SizeV(1000n), new SizeV(1024n)), -1);
  eq(compareValues(new DurationV(5n), new DurationV(10n)), -1);
  eq(compareValues(dt("2026-07-09T14:00Z"), dt("2026-07-08T14:00Z")), 1);
  eq(compareValues(new TimeV(10, 0, 0), new TimeV(10, 1, 0)), -1);
  eq(compareValues(new PathV("a.txt"), new PathV("b.txt")), -1);
  eq(compareValues(new PathV("a/b"), new PathV("a.b")), -1); // component-wise, like Rust
  eq(compareValues(new PathV("/z"), new PathV("a")), -1);
});

Deno.test("compareValues: strings order by code point (UTF-8 bytes), not UTF-16 units", () => {
  // U+FF5E (fullwidth tilde) < U+1F41A (shell) in UTF-8, although its UTF-16 unit is larger.
  ok(compareStrings("\uff5e", "🐚") < 0);
  ok(compareStrings("🐚", "\uff5e") > 0);
  ok(compareStrings("é", "z") > 0);
  eq(compareValues("🐚", "\uff5e"), 1);
  eq(compareStrings("", ""), 0);
});

Deno.test("compareValues: mismatches, lists and NaN are type errors", () => {
  assertShoalError(() => compareValues("a", 1), "type_error", "cannot compare str with int");
  assertShoalError(() => compareValues(list(1), list(2)), "type_error", "cannot compare list");
  assertShoalError(() => compareValues(f(NaN), f(1)), "type_error", "cannot compare");
  assertShoalError(() => compareValues(1, f(NaN)), "type_error", "NaN");
  assertShoalError(() => compareValues(null, null), "type_error", "cannot compare null with null");
  assertShoalError(() => compareValues(new SizeV(1n), 1), "type_error", "size with int");
  assertShoalError(() => compareValues(new PathV("a"), "a"), "type_error", "path with str");
  assertShoalError(() => compareValues(rec({}), rec({})), "type_error", "record");
  assertShoalError(() => compareValues(true, 1), "type_error", "bool with int");
});
