import { deepStrictEqual as eq, ok } from "node:assert/strict";
import type { TypeRef } from "../../lib/syntax/ast.ts";
import {
  asCondition,
  coerceListElements,
  coerceWord,
  feedBytes,
  listElementType,
  outcomePayload,
  parseFloatStrict,
  parseIntStrict,
  toArgv,
} from "../../lib/value/coerce.ts";
import { renderInline } from "../../lib/value/render.ts";
import {
  BytesV,
  ClosureV,
  CommandV,
  DateTimeV,
  DurationV,
  ErrorV,
  FloatV,
  GlobV,
  ListV,
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
import type { CmdExpr } from "../../lib/syntax/ast.ts";
import { assertShoalError, rec } from "./_helpers.ts";

const ty = (name: string, ...args: TypeRef[]): TypeRef => ({
  name,
  args,
  optional: false,
  span: [0, 0],
});
const opt = (t: TypeRef): TypeRef => ({ ...t, optional: true });
const enc = new TextEncoder();
const dec = new TextDecoder();
const feed = (v: Value) => dec.decode(feedBytes(v));
const outcome = (stdout: string, okv = true, parsed: Value | undefined = undefined) =>
  new OutcomeV(okv ? 0 : 1, okv, null, enc.encode(stdout), new Uint8Array(), 0n, 1, "x", parsed);

Deno.test("asCondition: only bool and outcome (§4.3)", () => {
  eq(asCondition(true), true);
  eq(asCondition(false), false);
  eq(asCondition(outcome("")), true);
  eq(asCondition(outcome("", false)), false);
  for (const v of [1, 0, "", "x", null, new ListV([1]), rec({}), new FloatV(1)] as Value[]) {
    const e = assertShoalError(() => asCondition(v), "type_error", "no truthiness");
    ok(e.err.msg.startsWith("expected bool in condition, found "));
  }
  assertShoalError(() => asCondition(new ListV([])), "type_error", "found list");
  assertShoalError(() => asCondition(5), "type_error", ".is_empty(), .is_some(), or != null");
});

Deno.test("parseIntStrict follows Rust i64 parsing", () => {
  eq(parseIntStrict("42"), 42);
  eq(parseIntStrict("-5"), -5);
  eq(parseIntStrict("+5"), 5);
  eq(parseIntStrict("007"), 7);
  ok(Object.is(parseIntStrict("-0"), 0));
  eq(parseIntStrict("9223372036854775807"), 9223372036854775807n);
  eq(parseIntStrict("-9223372036854775808"), -9223372036854775808n);
  eq(parseIntStrict("9007199254740993"), 9007199254740993n);
  eq(parseIntStrict("123456789012345"), 123456789012345);
  eq(parseIntStrict("000000000000000000000001"), 1);
  for (
    const bad of [
      "",
      "+",
      "-",
      "3.5",
      "1_000",
      " 1",
      "1 ",
      "0x10",
      "1e3",
      "9223372036854775808",
      "abc",
      "١",
    ]
  ) {
    eq(parseIntStrict(bad), null, bad);
  }
});

Deno.test("parseFloatStrict follows Rust f64 parsing", () => {
  eq(parseFloatStrict("3.5"), 3.5);
  eq(parseFloatStrict(".5"), 0.5);
  eq(parseFloatStrict("5."), 5);
  eq(parseFloatStrict("1e5"), 1e5);
  eq(parseFloatStrict("-2E-3"), -0.002);
  eq(parseFloatStrict("+1.5"), 1.5);
  eq(parseFloatStrict("42"), 42);
  eq(parseFloatStrict("inf"), Infinity);
  eq(parseFloatStrict("-Infinity"), -Infinity);
  eq(parseFloatStrict("+INF"), Infinity);
  ok(Number.isNaN(parseFloatStrict("NaN")));
  ok(Number.isNaN(parseFloatStrict("-nan")));
  ok(Object.is(parseFloatStrict("-0"), -0));
  eq(parseFloatStrict("1e400"), Infinity);
  for (
    const bad of [
      "",
      ".",
      "e5",
      "1e",
      "1e+",
      " 1",
      "1 ",
      "1_0",
      "0x10",
      "in",
      "nanx",
      "1.2.3",
      "--1",
    ]
  ) {
    eq(parseFloatStrict(bad), null, bad);
  }
});

Deno.test("coerceWord: every target type (§6.2)", () => {
  eq(coerceWord("5", ty("int")), 5);
  eq(coerceWord("-5", ty("int")), -5);
  eq(renderInline(coerceWord("3.5", ty("float"))), "3.5");
  eq(renderInline(coerceWord("4kb", ty("size"))), "4kb");
  eq(renderInline(coerceWord("250ms", ty("duration"))), "250ms");
  eq(renderInline(coerceWord("90", ty("duration"))), "1m30s");
  eq(renderInline(coerceWord("1h30m", ty("duration"))), "1h30m");
  eq(renderInline(coerceWord("-5s", ty("duration"))), "-5s");
  eq(renderInline(coerceWord("10:00am", ty("time"))), "10:00");
  eq(renderInline(coerceWord("2026-07-09T14:00Z", ty("datetime"))), "2026-07-09T14:00:00Z");
  eq(renderInline(coerceWord("2026-07-09", ty("datetime"))), "2026-07-09T00:00:00Z");
  eq(coerceWord("true", ty("bool")), true);
  eq(coerceWord("false", ty("bool")), false);
  const p = coerceWord("a.txt", ty("path"));
  ok(p instanceof PathV && p.path === "a.txt");
  const g = coerceWord("*.txt", ty("glob"), "/tmp/x");
  ok(g instanceof GlobV && g.pattern === "*.txt" && g.origin === "/tmp/x");
  eq(coerceWord("hello", ty("str")), "hello");
  eq(coerceWord("hello", ty("record")), "hello");
  eq(coerceWord("hello", undefined), "hello");
  eq(coerceWord("5", opt(ty("int"))), 5); // T? is T
  eq(coerceWord("5", ty("list", ty("int"))), "5");
});

Deno.test("coerceWord: non-strings pass through unchanged", () => {
  const l = new ListV([1]);
  ok(coerceWord(l, ty("int")) === l);
  eq(coerceWord(5, ty("str")), 5);
  const s = new SizeV(1n);
  ok(coerceWord(s, ty("duration")) === s);
  eq(coerceWord(null, ty("int")), null);
});

Deno.test('coerceWord: failures are arg_error «expected T, found "word"»', () => {
  const cases: [string, string][] = [
    ["int", "abc"],
    ["int", "notanumber"],
    ["int", "3.5"],
    ["float", "x1"],
    ["size", "notasize"],
    ["duration", "soon"],
    ["time", "25:00"],
    ["datetime", "yesterday"],
    ["bool", "yes"],
    ["bool", "True"],
  ];
  for (const [t, w] of cases) {
    assertShoalError(() => coerceWord(w, ty(t)), "arg_error", `expected ${t}, found "${w}"`);
  }
  assertShoalError(
    () => coerceWord('a"b', opt(ty("int"))),
    "arg_error",
    'expected int, found "a\\"b"',
  );
});

Deno.test("list<T> element coercion", () => {
  eq(listElementType(ty("list", ty("int")))?.name, "int");
  eq(listElementType(ty("int")), undefined);
  eq(listElementType(undefined), undefined);
  eq(renderInline(coerceListElements(new ListV(["2", "3"]), ty("int"))), "[2, 3]");
  eq(renderInline(coerceListElements(new ListV(["2", 3, "1kb"]), ty("size"))), "[2b, 3, 1kb]");
  const same = new ListV([1, 2]);
  ok(coerceListElements(same, ty("int")) === same);
  ok(coerceListElements(same, undefined) === same);
  eq(coerceListElements("5", ty("int")), "5");
  assertShoalError(
    () => coerceListElements(new ListV(["nope"]), ty("int")),
    "arg_error",
    'expected int, found "nope"',
  );
});

Deno.test("toArgv (§6.3)", () => {
  eq(toArgv("x y"), "x y");
  eq(toArgv(new PathV("/a b")), "/a b");
  eq(toArgv(42), "42");
  eq(toArgv(-9223372036854775808n), "-9223372036854775808");
  eq(toArgv(new FloatV(2.5)), "2.5");
  eq(toArgv(new FloatV(1e21)), "1000000000000000000000");
  eq(toArgv(new SizeV(4096n)), "4096");
  eq(toArgv(new DurationV(1_500_000_000n)), "1500000000");
  eq(toArgv(true), "true");
  eq(toArgv(false), "false");
  assertShoalError(
    () => toArgv(new SecretV("t", "v")),
    "type_error",
    "secret cannot be placed in argv",
  );
  assertShoalError(() => toArgv(null), "type_error", "null cannot be passed as argv");
  assertShoalError(() => toArgv(new ListV([])), "type_error", "list cannot be passed as argv");
  assertShoalError(() => toArgv(rec({})), "type_error", "record cannot be passed as argv");
  assertShoalError(() => toArgv(new DateTimeV(0n)), "type_error", "datetime cannot be passed");
});

Deno.test("feedBytes: text, bytes and scalars (§19.6)", () => {
  eq(feed("foo\nbar"), "foo\nbar");
  eq(feed(5), "5");
  eq(feed(-9223372036854775808n), "-9223372036854775808");
  eq(feed(true), "true");
  eq(feed(new FloatV(2.5)), "2.5");
  eq(feed(new SizeV(1000n)), "1kb");
  eq(feed(new DurationV(250_000_000n)), "250ms");
  eq(feed(new DateTimeV(1783605600n * 1_000_000_000n)), "2026-07-09T14:00:00Z");
  eq(feed(new TimeV(10, 0, 0)), "10:00");
  const raw = new Uint8Array([0xff, 0, 1]);
  eq(feedBytes(new BytesV(raw)), raw);
});

Deno.test("feedBytes: collections — str lists by line, the rest compact JSON", () => {
  eq(feed(new ListV(["b", "a", "c"])), "b\na\nc\n");
  eq(feed(new ListV([])), "");
  eq(feed(new ListV([1, 2, 3])), "[1,2,3]");
  eq(feed(new ListV(["a", 1])), '["a",1]');
  eq(feed(rec({ n: 5 })), '{"n":5}');
  eq(feed(new TableV([rec({ a: 1 })])), '[{"a":1}]');
  eq(feed(new RangeV(1, 3, true)), "[1,2,3]");
});

Deno.test("feedBytes: outcomes feed stdout, or their structured payload re-encoded", () => {
  const text = outcome("a\nb\n");
  ok(feedBytes(text) === text.stdout);
  eq(feed(outcome('{"n": 5}\n')), '{"n":5}');
  eq(feed(outcome("[1, 2]")), "[1,2]");
  eq(feed(outcome("[not json")), "[not json");
  eq(feed(outcome("hi\n", true, "hi")), "hi\n"); // a builtin with a str payload: raw stdout
  eq(feed(outcome("x", true, rec({ a: 1 }))), '{"a":1}');
  eq(feed(outcome("x", true, new ListV(["p", "q"]))), "p\nq\n");
  eq(feed(outcome("oops\n", false)), "oops\n");
});

Deno.test("outcomePayload: parsed value, else stdout minus one newline, JSON-sniffed", () => {
  eq(outcomePayload(outcome("42\n")), "42");
  eq(outcomePayload(outcome("a\n\n")), "a\n");
  eq(renderInline(outcomePayload(outcome("  {}\n"))), "{}");
  eq(renderInline(outcomePayload(outcome("[1, 2, 3]\n"))), "[1, 2, 3]");
  eq(outcomePayload(outcome("{oops")), "{oops");
  eq(outcomePayload(outcome("", true, "[1]")), "[1]");
  eq(outcomePayload(outcome("x", true, null)), null);
  eq(outcomePayload(outcome("\xff")), "ÿ");
  eq(
    outcomePayload(
      new OutcomeV(0, true, null, new Uint8Array([0xff, 0x41]), new Uint8Array(), 0n, 1, "x"),
    ),
    "\ufffdA",
  );
});

Deno.test("feedBytes: refusals with stable codes and hints", () => {
  assertShoalError(() => feedBytes(new PathV("a.txt")), "type_error", "a name, not");
  assertShoalError(() => feedBytes(new PathV("a.txt")), "type_error", ".read");
  assertShoalError(() => feedBytes(new StreamV("value", true, null)), "type_error", "collect");
  assertShoalError(() => feedBytes(null), "type_error", "cannot feed null");
  assertShoalError(() => feedBytes(new CommandV({ head: "ls" } as CmdExpr, "l")), "type_error");
  const refused: Value[] = [
    new SecretV("s", "v"),
    new TaskV(1, "", null),
    new ClosureV(null, [], null, null),
    new ErrorV("x", "y"),
    new GlobV("*", "/"),
    new RegexV("a", /a/),
  ];
  for (const v of refused) assertShoalError(() => feedBytes(v), "feed_error", "cannot feed a");
});
