import { deepStrictEqual as eq, ok } from "node:assert/strict";
import {
  jsonFloatText,
  jsonToValue,
  parseJsonText,
  stringifyValue,
  toJsonModel,
  tryParseJson,
  valueToJson,
} from "../../lib/value/json.ts";
import { renderInline } from "../../lib/value/render.ts";
import {
  BytesV,
  ClosureV,
  DateTimeV,
  DurationV,
  ErrorV,
  FloatV,
  GlobV,
  ListV,
  OutcomeV,
  PathV,
  RangeV,
  RecordV,
  RegexV,
  SecretV,
  SizeV,
  TableV,
  TimeV,
  type Value,
} from "../../lib/value/types.ts";
import { assertShoalError, rec } from "./_helpers.ts";

const enc = new TextEncoder();

Deno.test("parse: scalars, ints vs floats, exact big ints", () => {
  eq(parseJsonText("null"), null);
  eq(parseJsonText(" true "), true);
  eq(parseJsonText('"hi"'), "hi");
  eq(parseJsonText("42"), 42);
  eq(parseJsonText("-0"), 0);
  ok(Object.is(parseJsonText("-0"), 0), "-0 is the int 0");
  eq(parseJsonText("3.5"), new FloatV(3.5));
  eq(parseJsonText("1.0"), new FloatV(1), "1.0 stays a float");
  eq(parseJsonText("1e2"), new FloatV(100));
  eq(parseJsonText("9007199254740993"), 9007199254740993n, "beyond 2^53 stays exact");
  eq(parseJsonText("9223372036854775807"), 9223372036854775807n);
  eq(parseJsonText("-9223372036854775808"), -9223372036854775808n);
  eq(parseJsonText("9223372036854775808"), new FloatV(9223372036854775808), "beyond i64 → float");
  eq(parseJsonText("123456789012345"), 123456789012345);
});

Deno.test("parse: strings and escapes", () => {
  eq(parseJsonText('"a\\"b\\\\c\\/d\\b\\f\\n\\r\\t"'), 'a"b\\c/d\b\f\n\r\t');
  eq(parseJsonText('"\\u00e9\\ud83d\\ude00"'), "é😀");
  eq(parseJsonText('"héllo 😀"'), "héllo 😀");
  assertShoalError(() => parseJsonText('"\\ud83d"'), "arg_error", "lone leading surrogate");
  assertShoalError(() => parseJsonText('"\\ude00"'), "arg_error", "lone trailing surrogate");
  assertShoalError(() => parseJsonText('"a\nb"'), "arg_error", "control character");
  assertShoalError(() => parseJsonText('"\\x"'), "arg_error", "invalid escape");
  assertShoalError(() => parseJsonText('"\\u12"'), "arg_error", "invalid escape");
});

Deno.test("parse: table heuristic (non-empty, every element an object)", () => {
  eq(parseJsonText("[]"), new ListV([]));
  eq(parseJsonText("[1, 2, 3]"), new ListV([1, 2, 3]));
  eq(parseJsonText('[{"a": 1}, {"a": 2}]'), new TableV([rec({ a: 1 }), rec({ a: 2 })]));
  eq(parseJsonText("[{}]"), new TableV([rec({})]));
  eq(parseJsonText('[{"a": 1}, 2]'), new ListV([rec({ a: 1 }), 2]), "mixed stays a list");
  eq(parseJsonText("[[1,2],[3,4]]"), new ListV([new ListV([1, 2]), new ListV([3, 4])]));
  eq(renderInline(parseJsonText('{"t": [{"x": 1}]}')), "{t: [{x: 1}]}");
  eq(parseJsonText("{}"), rec({}));
});

Deno.test("parse: keys keep document order, including integer-like keys; last duplicate wins", () => {
  const v = parseJsonText('{"b": 1, "10": 2, "a": 3, "__proto__": 4}') as RecordV;
  eq([...v.fields.keys()], ["b", "10", "a", "__proto__"]);
  eq((parseJsonText('{"a": 1, "a": 2}') as RecordV).fields.get("a"), 2);
});

Deno.test("parse: errors are arg_error with position", () => {
  assertShoalError(() => parseJsonText("{not valid"), "arg_error", "line 1 column 2");
  assertShoalError(() => parseJsonText(""), "arg_error", "EOF while parsing a value");
  assertShoalError(() => parseJsonText("[1,]"), "arg_error", "trailing comma");
  assertShoalError(() => parseJsonText('{"a":1,}'), "arg_error", "trailing comma");
  assertShoalError(() => parseJsonText("[1 2]"), "arg_error", "expected `,` or `]`");
  assertShoalError(() => parseJsonText("01"), "arg_error", "trailing characters");
  assertShoalError(() => parseJsonText("1."), "arg_error", "invalid number");
  assertShoalError(() => parseJsonText("-"), "arg_error", "invalid number");
  assertShoalError(() => parseJsonText("1e400"), "arg_error", "number out of range");
  assertShoalError(() => parseJsonText("nul"), "arg_error", "expected value");
  assertShoalError(() => parseJsonText('{"a" 1}'), "arg_error", "expected `:`");
  assertShoalError(() => parseJsonText('\n\n  {"a": }'), "arg_error", "line 3 column 9");
  assertShoalError(() => parseJsonText("[".repeat(200)), "arg_error", "recursion limit");
  eq(tryParseJson("{x"), undefined);
  eq(tryParseJson("[1]"), new ListV([1]));
});

Deno.test("stringify: compact and pretty forms", () => {
  eq(stringifyValue(rec({ a: 1 })), '{"a":1}');
  eq(stringifyValue(new ListV([1, "a", true, null])), '[1,"a",true,null]');
  eq(stringifyValue(null), "null");
  eq(stringifyValue(rec({ b: 2, a: 1 })), '{"b":2,"a":1}', "insertion order");
  eq(
    stringifyValue(rec({ a: new ListV([1, 2]), e: rec({}), l: new ListV([]) }), true),
    '{\n  "a": [\n    1,\n    2\n  ],\n  "e": {},\n  "l": []\n}',
  );
  eq(stringifyValue('q"\\\n\u0001é'), '"q\\"\\\\\\n\\u0001é"');
});

Deno.test("stringify: floats print like serde (ryu), non-finite → null", () => {
  const cases: [number, string][] = [
    [1, "1.0"],
    [-0, "-0.0"],
    [0, "0.0"],
    [1.5, "1.5"],
    [0.1 + 0.2, "0.30000000000000004"],
    [1e15, "1000000000000000.0"],
    [1e16, "1e16"],
    [1e21, "1e21"],
    [1.5e300, "1.5e300"],
    [1e-5, "0.00001"],
    [1e-7, "1e-7"],
    [-2.5e-10, "-2.5e-10"],
    [5e-324, "5e-324"],
    [123456.789, "123456.789"],
  ];
  for (const [n, s] of cases) eq(jsonFloatText(n), s, `${n}`);
  eq(stringifyValue(new FloatV(2)), "2.0");
  eq(
    stringifyValue(new ListV([new FloatV(NaN), new FloatV(Infinity), new FloatV(-Infinity)])),
    "[null,null,null]",
  );
});

Deno.test("stringify: big ints are exact; round-trips preserve values", () => {
  eq(stringifyValue(9223372036854775807n), "9223372036854775807");
  eq(stringifyValue(-9007199254740993n), "-9007199254740993");
  const docs = [
    '{"a":1,"b":[1,2],"c":{"d":null,"e":1.5,"f":"x"}}',
    '[{"a":1},{"a":2}]',
    "[[1,2],[3,4]]",
    '{"big":12345678901234567890123,"i":-9223372036854775808,"f":1.0}',
  ];
  for (const d of docs) {
    const v = parseJsonText(d);
    eq(parseJsonText(stringifyValue(v)), v);
    eq(parseJsonText(stringifyValue(v, true)), v);
  }
  eq(
    stringifyValue(parseJsonText('{"f":1.0,"n":12345678901234567890}')),
    '{"f":1.0,"n":1.2345678901234567e19}',
  );
});

Deno.test("every value kind maps per §13.1", () => {
  const ns = 1_783_605_600_000_000_000n; // 2026-07-09T14:00:00Z
  const outcome = new OutcomeV(
    0,
    true,
    null,
    enc.encode("hi\n"),
    enc.encode("warn"),
    0n,
    0,
    "echo",
  );
  const closure = new ClosureV("f", [{ name: "a", hasDefault: false }], null, null);
  const cases: [Value, string][] = [
    [new PathV("/tmp/a b"), '"/tmp/a b"'],
    [new GlobV("*.rs", "/tmp"), '"*.rs"'],
    [new RegexV("\\d+", /\d+/u), '"\\\\d+"'],
    [new TimeV(10, 0, 0), '"10:00:00"'],
    [new TimeV(23, 15, 45, 500_000_000), '"23:15:45.5"'],
    [new DateTimeV(ns, "UTC"), '"2026-07-09T14:00:00+00:00[UTC]"'],
    [new DateTimeV(ns, "Europe/Paris"), '"2026-07-09T16:00:00+02:00[Europe/Paris]"'],
    [new DateTimeV(ns + 250_000_000n, "UTC"), '"2026-07-09T14:00:00.25+00:00[UTC]"'],
    [new SizeV(4096n), "4096"],
    [new SizeV(2n ** 64n - 1n), "18446744073709551615"],
    [new DurationV(90_000_000_000n), "90000000000"],
    [new BytesV(new Uint8Array([104, 105, 0xff])), '"hi\uFFFD"'],
    [new RangeV(1, 4, false), "[1,2,3]"],
    [new RangeV(1, 3, true), "[1,2,3]"],
    [new RangeV(3, 1, false), "[]"],
    [outcome, '{"status":0,"ok":true,"out":"hi\\n","err":"warn"}'],
    [
      new OutcomeV(null, false, "SIGSEGV", new Uint8Array(), new Uint8Array(), 0n, 1, "x"),
      '{"status":null,"ok":false,"out":"","err":""}',
    ],
    [
      new ErrorV("div_zero", "division by zero", "hint"),
      '{"code":"div_zero","msg":"division by zero"}',
    ],
    [new SecretV("token", "s3cret"), '"secret(token)"'],
    [closure, JSON.stringify(renderInline(closure))],
    [new TableV([rec({ a: 1 })]), '[{"a":1}]'],
  ];
  for (const [v, s] of cases) eq(stringifyValue(v), s, renderInline(v));
  ok(!stringifyValue(new SecretV("t", "s3cret")).includes("s3cret"), "secret value never leaks");
  assertShoalError(() => stringifyValue(new RangeV(0, 2 ** 40, false)), "custom", "too long");
});

Deno.test("valueToJson builds plain data; jsonToValue reverses it", () => {
  const v = rec({
    a: 1,
    f: new FloatV(1.5),
    n: new FloatV(NaN),
    big: 9007199254740993n,
    l: new ListV([true, null, "s"]),
    t: new TableV([rec({ x: 1 })]),
    d: new DurationV(5n),
  });
  const withProto = new RecordV(new Map<string, Value>([["__proto__", 7]]));
  eq(Object.keys(valueToJson(withProto) as object), ["__proto__"]);
  const j = valueToJson(v) as Record<string, unknown>;
  eq(Object.getPrototypeOf(j), null);
  eq(j.a, 1);
  eq(j.f, 1.5);
  eq(j.n, null);
  eq(j.big, 9007199254740993n);
  eq(j.l, [true, null, "s"]);
  eq(JSON.stringify(j.t), '[{"x":1}]');
  eq(j.d, 5);
  eq(
    jsonToValue(JSON.parse('{"a":[{"b":1}],"c":[],"d":2.5,"e":3}')),
    rec({
      a: new TableV([rec({ b: 1 })]),
      c: new ListV([]),
      d: new FloatV(2.5),
      e: 3,
    }),
  );
  eq(jsonToValue(2 ** 60), 1152921504606846976n);
  eq(jsonToValue(1e300), new FloatV(1e300));
  // Big-int mode (YAML/TOML): bigint → int, number → float, Map → record in order.
  eq(
    jsonToValue(new Map<unknown, unknown>([["z", 1n], [10n, 1], ["d", new Date(0)]]), {
      bigintInts: true,
    }),
    rec({ z: 1, 10: new FloatV(1), d: "1970-01-01T00:00:00.000Z" }),
  );
  eq(jsonToValue(2n ** 70n, { bigintInts: true }), new FloatV(2 ** 70));
});

Deno.test("toJsonModel leaves only JSON-native kinds", () => {
  const m = toJsonModel(rec({
    t: new TableV([rec({ p: new PathV("/x") })]),
    r: new RangeV(0, 2, false),
    s: new SizeV(10n),
  }));
  eq(m, rec({ t: new ListV([rec({ p: "/x" })]), r: new ListV([0, 1]), s: 10 }));
});

Deno.test("parse is linear-time on a large document", () => {
  const rows = Array.from({ length: 20_000 }, (_, i) => ({ id: i, name: `n${i}`, f: i + 0.5 }));
  const text = JSON.stringify(rows);
  const t0 = performance.now();
  const v = parseJsonText(text) as TableV;
  const back = stringifyValue(v);
  const ms = performance.now() - t0;
  eq(v.rows.length, 20_000);
  eq(back, text);
  ok(ms < 5_000, `parse+stringify of ${text.length} chars took ${ms.toFixed(0)} ms`);
});
