import assert from "node:assert/strict";
import { DurationV, FloatV, SizeV, type Value } from "../../../lib/value/types.ts";
import { assertFails, call, fn, L, R, show, TestInterp } from "./host.ts";

const ip = new TestInterp();

Deno.test("record: corpus values", async () => {
  const ab = R({ a: 1, b: 2 });
  const cases: [Value, string, Value[], string][] = [
    [ab, "len", [], "2"],
    [R({}), "len", [], "0"],
    [R({}), "count", [], "0"],
    [R({}), "is_empty", [], "true"],
    [ab, "is_empty", [], "false"],
    [R({}), "keys", [], "[]"],
    [ab, "keys", [], '["a", "b"]'],
    [ab, "values", [], "[1, 2]"],
    [ab, "items", [], '[["a", 1], ["b", 2]]'],
    [ab, "get", ["a", 0], "1"],
    [R({ a: 1 }), "get", ["b", 99], "99"],
    [R({ a: 1 }), "get", ["b"], "null"],
    [R({ a: 1 }), "contains", ["a"], "true"],
    [R({ a: 1 }), "contains", ["z"], "false"],
    [R({ a: 1 }), "contains", ["b"], "false"],
    [ab, "set", ["c", 3], "{a: 1, b: 2, c: 3}"],
    [ab, "set", ["a", 99], "{a: 99, b: 2}"],
    [ab, "merge", [R({ b: 20, c: 30 })], "{a: 1, b: 20, c: 30}"],
    [R({ a: 1 }), "json", [], '"{\\"a\\":1}"'],
    [ab, "json", [], '"{\\"a\\":1,\\"b\\":2}"'],
  ];
  for (const [recv, m, args, want] of cases) {
    assert.equal(await show(ip, recv, m, args), want, `${m} → ${want}`);
  }
  // values().flatten(), keys().join(), values().sum()
  const v = await call(ip, R({ a: L(1, 2), b: L(3, 4) }), "values");
  assert.equal(await show(ip, v, "flatten"), "[1, 2, 3, 4]");
  assert.equal(await show(ip, await call(ip, ab, "keys"), "join", [","]), '"a,b"');
  assert.equal(await show(ip, await call(ip, R({ a: 1, b: 2, c: 3 }), "values"), "sum"), "6");
  // reduce building a record with set
  const pairs = L(L("a", 1), L("b", 2));
  const built = await call(ip, pairs, "reduce", [
    R({}),
    fn((acc, kv) => call(ip, acc, "set", [...(kv as ReturnType<typeof L>).items])),
  ]);
  assert.equal(await show(ip, built, "len"), "2");
});

Deno.test("record: set and merge do not mutate the receiver", async () => {
  const r = R({ a: 1 });
  await call(ip, r, "set", ["b", 2]);
  await call(ip, r, "merge", [R({ c: 3 })]);
  assert.equal(await show(ip, r, "keys"), '["a"]');
});

Deno.test("record: error paths", async () => {
  const cases: [Value, string, Value[], string, string?][] = [
    [R({ a: 1 }), "set", [], "arg_error", "requires a key"],
    [R({ a: 1 }), "set", ["b"], "arg_error", "requires a value"],
    [R({ a: 1 }), "set", [1, 2], "type_error"],
    [R({ a: 1 }), "merge", [5], "type_error", "expects a record"],
    [R({ a: 1 }), "get", [0, 9], "type_error", "get expects record+str or list+int"],
    [R({ a: 1 }), "contains", [1], "type_error"],
    [R({ a: 1 }), "contains", [], "arg_error"],
    [L(1), "keys", [], "type_error", "expects a record"],
    [R({ a: 1 }), "upper", [], "type_error", "expects str"],
  ];
  for (const [recv, m, args, code, needle] of cases) {
    await assertFails(() => call(ip, recv, m, args), code, needle);
  }
});

Deno.test("number: corpus values", async () => {
  const f = (x: number) => new FloatV(x);
  const cases: [Value, string, Value[], string][] = [
    [-5, "abs", [], "5"],
    [f(-1.5), "abs", [], "1.5"],
    [-(2n ** 62n), "abs", [], "4611686018427387904"],
    [f(3.6), "round", [], "4"],
    [f(3.6), "floor", [], "3"],
    [f(3.2), "ceil", [], "4"],
    [f(2.5), "round", [], "3"],
    [f(-2.5), "round", [], "-3"],
    [f(-3.5), "floor", [], "-4"],
    [f(-3.5), "ceil", [], "-3"],
    [f(-3.5), "round", [], "-4"],
    [f(0.49999999999999994), "round", [], "0"],
    [f(3.14159), "round", [2], "3.14"],
    [f(22 / 7), "round", [3], "3.143"],
    [f(3.7), "round", [0], "4"],
    [f(3.14159), "floor", [2], "3.14"],
    [f(3.14159), "ceil", [2], "3.15"],
    [42, "round", [3], "42"],
    [42, "floor", [], "42"],
    [f(1.23456), "round", [400], "1.23456"],
    [f(1.5), "floor", [400], "1.5"],
    [f(123.456), "ceil", [999], "123.456"],
    [5, "str", [], '"5"'],
    [42, "str", [], '"42"'],
    [f(1.5), "str", [], '"1.5"'],
    [f(1e21), "str", [], '"1000000000000000000000"'],
    [true, "str", [], '"true"'],
    [false, "display", [], '"false"'],
  ];
  for (const [recv, m, args, want] of cases) {
    assert.equal(await show(ip, recv, m, args), want, `${m}(${args}) → ${want}`);
  }
  const r = await call(ip, f(2.5), "round");
  assert.ok(r instanceof FloatV, "rounding a float stays a float");
});

Deno.test("number: error paths", async () => {
  const cases: [Value, string, Value[], string, string?][] = [
    [-(2n ** 63n), "abs", [], "overflow"],
    [new SizeV(5000n), "abs", [], "type_error", "expected number, found size"],
    [new DurationV(0n), "abs", [], "type_error", "expected number, found duration"],
    ["x", "round", [], "type_error", "expected number, found str"],
    [new FloatV(1.5), "round", [-1], "type_error"],
    [new FloatV(1.5), "round", [new FloatV(1)], "type_error"],
    [new FloatV(1.5), "abs", [1], "arg_error"],
  ];
  for (const [recv, m, args, code, needle] of cases) {
    await assertFails(() => call(ip, recv, m, args), code, needle);
  }
});

Deno.test({ name: "record/number: cleanup", fn: () => ip.cleanup() });
