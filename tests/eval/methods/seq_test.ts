import assert from "node:assert/strict";
import {
  BytesV,
  DateTimeV,
  DurationV,
  FloatV,
  ListV,
  PathV,
  RangeV,
  SizeV,
  TableV,
  type Value,
} from "../../../lib/value/types.ts";
import { parseDateTime } from "../../../lib/value/datetime.ts";
import { assertFails, asyncFn, call, fn, L, R, show, TestInterp } from "./host.ts";

const ip = new TestInterp();
const n = (v: Value) => v as number;
const range = (a: number, b: number, inc = false) => new RangeV(a, b, inc);
const table = (...rows: Record<string, Value>[]) => new TableV(rows.map(R));
const dt = (s: string) => parseDateTime(s);

Deno.test("seq: counts, first/last, take/skip (corpus values)", async () => {
  const cases: [Value, string, Value[], string][] = [
    [L(1, 2, 3), "len", [], "3"],
    [L(1, 2, 3), "count", [], "3"],
    // a glob's .expand() written after .where(…) made it a list: the list
    [L(1, 2, 3), "expand", [], "[1, 2, 3]"],
    [L(), "is_empty", [], "true"],
    [L(1), "is_empty", [], "false"],
    [L(1, 2, 3), "first", [2], "[1, 2]"],
    [L(1, 2, 3), "last", [2], "[2, 3]"],
    [L(1, 2, 3), "first", [3], "[1, 2, 3]"],
    [L(1, 2, 3), "last", [3], "[1, 2, 3]"],
    [L(1, 2, 3), "first", [], "1"],
    [L(1, 2, 3), "last", [], "3"],
    [L(), "first", [], "null"],
    [L(), "last", [], "null"],
    [L(1, 2), "first", [10], "[1, 2]"],
    [L(1, 2, 3), "take", [2], "[1, 2]"],
    [L(1, 2, 3), "skip", [1], "[2, 3]"],
    [L(1, 2, 3), "take", [0], "[]"],
    [L(1, 2, 3), "skip", [3], "[]"],
    [L(1, 2), "take", [10], "[1, 2]"],
    [L(1, 2), "skip", [10], "[]"],
    [range(1, 5), "len", [], "4"],
    [range(1, 5, true), "len", [], "5"],
    [range(5, 1), "len", [], "0"],
    [range(1, 1), "len", [], "0"],
    [range(-3, 3), "len", [], "6"],
    [range(1, 5), "first", [], "1"],
    [range(1, 5), "last", [], "4"],
    [range(1, 5, true), "last", [2], "[4, 5]"],
    [range(0, 9_000_000_000_000), "take", [3], "[0, 1, 2]"],
    [range(0, 9_000_000_000_000), "len", [], "9000000000000"],
    [range(1, 5), "collect", [], "[1, 2, 3, 4]"],
    [L(1, 2), "collect", [], "[1, 2]"],
  ];
  for (const [recv, m, args, want] of cases) {
    assert.equal(await show(ip, recv, m, args), want, `${m}(${args})`);
  }
  // a range as long as i64 allows still has an exact length
  const huge = new RangeV(-(2n ** 62n), 2n ** 62n, false);
  assert.equal(await show(ip, huge, "len", []), "9223372036854775808");
  assert.equal(await show(ip, huge, "first", []), "-4611686018427387904");
});

Deno.test("seq: collect keeps a table a table; other methods return lists", async () => {
  const t = table({ a: 1 }, { a: 2 });
  assert.equal(await call(ip, t, "collect"), t);
  const where = await call(ip, t, "where", [
    fn((r) => (r as typeof t.rows[0]).fields.get("a") === 2),
  ]);
  assert.ok(where instanceof ListV);
  assert.equal((where as ListV).items.length, 1);
  assert.equal(await show(ip, t, "len"), "2");
  assert.equal(await show(ip, t, "first"), "{a: 1}");
});

Deno.test("seq: higher-order methods (corpus values)", async () => {
  const even = fn((x) => n(x) % 2 === 0);
  const cases: [Value, string, Value[], string][] = [
    [L(1, 2, 3, 4), "where", [even], "[2, 4]"],
    [L(1, 2, 3, 4), "filter", [even], "[2, 4]"],
    [L(), "filter", [fn(() => true)], "[]"],
    [L(1, 2, 3), "where", [fn((x) => n(x) > 10)], "[]"],
    [L(1, 2, 3), "any", [fn((x) => n(x) > 2)], "true"],
    [L(1, 2, 3), "all", [fn((x) => n(x) > 1)], "false"],
    [L(), "any", [fn(() => true)], "false"],
    [L(), "all", [fn(() => false)], "true"],
    [L(1, 2, 3, 4), "find", [fn((x) => n(x) > 2)], "3"],
    [L(1, 2), "find", [fn((x) => n(x) > 10)], "null"],
    [L(1, 2), "flat_map", [fn((x) => L(x, n(x) * 10))], "[1, 10, 2, 20]"],
    [L(1, 2), "flat_map", [fn((x) => range(0, n(x)))], "[0, 0, 1]"],
    [range(1, 5), "map", [fn((x) => n(x) * 2)], "[2, 4, 6, 8]"],
    [L(1, 2, 3, 4), "reduce", [0, fn((a, x) => n(a) + n(x))], "10"],
    [L("a", "b", "c"), "fold", ["", fn((a, x) => (a as string) + (x as string))], '"abc"'],
    [L(), "reduce", [42, fn((a, x) => n(a) + n(x))], "42"],
    [L(1, 2, 3, 4), "group", [even], "[{key: false, values: [1, 3]}, {key: true, values: [2, 4]}]"],
    [
      L(2, 1, 2, 3),
      "group",
      [fn((x) => x)],
      "[{key: 2, values: [2, 2]}, {key: 1, values: [1]}, {key: 3, values: [3]}]",
    ],
    [L(), "group", [fn((x) => x)], "[]"],
    [L(1, 2, 3), "each", [fn(() => 1)], "null"],
  ];
  for (const [recv, m, args, want] of cases) {
    assert.equal(await show(ip, recv, m, args), want, `${m}`);
  }
  assert.equal(
    await show(ip, L(1, 2, 3, 4), "group_by", [even]),
    await show(ip, L(1, 2, 3, 4), "group", [even]),
  );
});

Deno.test("seq: each runs in order; any/all/find short-circuit", async () => {
  const seen: Value[] = [];
  await call(ip, L(1, 2, 3), "each", [fn((x) => (seen.push(x), null))]);
  assert.deepEqual(seen, [1, 2, 3]);
  const host = new TestInterp(ip.dir);
  assert.equal(await call(host, L(1, 2, 3, 4), "any", [fn((x) => n(x) >= 2)]), true);
  assert.equal(host.calls, 2);
  host.calls = 0;
  assert.equal(await call(host, L(1, 2, 3, 4), "all", [fn((x) => n(x) < 2)]), false);
  assert.equal(host.calls, 2);
  host.calls = 0;
  assert.equal(await call(host, range(0, 1_000_000_000), "find", [fn((x) => n(x) === 3)]), 3);
  assert.equal(host.calls, 4);
});

Deno.test("seq: callbacks answering with promises give the same results", async () => {
  const cases: [Value, string, Value[], string][] = [
    [L(1, 2, 3), "map", [asyncFn((x) => n(x) * 10)], "[10, 20, 30]"],
    [L(1, 2, 3, 4), "where", [asyncFn((x) => n(x) % 2 === 0)], "[2, 4]"],
    [L(1, 2, 3), "any", [asyncFn((x) => n(x) === 2)], "true"],
    [L(1, 2, 3), "all", [asyncFn((x) => n(x) < 3)], "false"],
    [L(1, 2, 3), "find", [asyncFn((x) => n(x) === 3)], "3"],
    [L(1, 2, 3), "reduce", [0, asyncFn((a, x) => n(a) + n(x))], "6"],
    [L(3, 1, 2), "sort_by", [asyncFn((x) => -n(x))], "[3, 2, 1]"],
    [L(1, 2, 1), "group", [asyncFn((x) => x)], "[{key: 1, values: [1, 1]}, {key: 2, values: [2]}]"],
    [L(1, 2), "flat_map", [asyncFn((x) => L(x, x))], "[1, 1, 2, 2]"],
    [L(1, 2), "each", [asyncFn(() => null)], "null"],
  ];
  for (const [recv, m, args, want] of cases) {
    const r = call(ip, recv, m, args);
    assert.ok(r instanceof Promise, `${m} should be async with an async callback`);
    assert.equal(await show(ip, recv, m, args), want, m);
  }
});

Deno.test("seq: the sync path stays synchronous", () => {
  const r = call(ip, L(1, 2, 3), "map", [fn((x) => n(x) + 1)]);
  assert.ok(!(r instanceof Promise));
  const s = call(ip, L(3, 1), "sort_by", [fn((x) => x)]);
  assert.ok(!(s instanceof Promise));
});

Deno.test("seq: long loops check for cancellation", async () => {
  const host = new TestInterp(ip.dir);
  await call(host, range(0, 10_000), "each", [fn(() => null)]);
  assert.ok(host.checks >= 9, `checks: ${host.checks}`);
});

Deno.test("seq: sort, sort_by, reverse, uniq, min, max (corpus values)", async () => {
  const cases: [Value, string, Value[], string][] = [
    [L(3, 1, 2), "sort", [], "[1, 2, 3]"],
    [L("b", "a"), "sort", [], '["a", "b"]'],
    [L(true, false), "sort", [], "[false, true]"],
    [
      L(dt("2026-07-09T14:00Z"), dt("2026-01-01T00:00Z")),
      "sort",
      [],
      "[2026-01-01T00:00:00Z, 2026-07-09T14:00:00Z]",
    ],
    [L(3, 1, 2), "sort_by", [fn((x) => -n(x))], "[3, 2, 1]"],
    [L("bb", "a", "ccc"), "sort_by", [fn((s) => (s as string).length)], '["a", "bb", "ccc"]'],
    [L("bb", "a", "ccc"), "sort", [fn((s) => (s as string).length)], '["a", "bb", "ccc"]'],
    [L(1, 2, 3), "reverse", [], "[3, 2, 1]"],
    [range(1, 4), "reverse", [], "[3, 2, 1]"],
    [L(3, 1, 3, 2, 1), "uniq", [], "[3, 1, 2]"],
    [L(), "uniq", [], "[]"],
    [L("b", "a", "b"), "uniq", [], '["b", "a"]'],
    [
      L(dt("2026-07-09T14:00Z"), dt("2026-07-09T14:00Z"), dt("2026-01-01T00:00Z")),
      "uniq",
      [],
      "[2026-07-09T14:00:00Z, 2026-01-01T00:00:00Z]",
    ],
    [L(1, new FloatV(1), 2), "uniq", [], "[1, 2]"],
    [L(R({ a: 1 }), R({ a: 1 }), R({ a: 2 })), "uniq", [], "[{a: 1}, {a: 2}]"],
    [L("a", new PathV("a"), new PathV("b"), "b"), "uniq", [], '["a", b]'],
    [L(new FloatV(NaN), new FloatV(NaN)), "uniq", [], "[nan, nan]"],
    [L(3, 1, 2), "min", [], "1"],
    [L(3, 1, 2), "max", [], "3"],
    [L(7), "min", [], "7"],
    [L(7), "max", [], "7"],
    [L(), "min", [], "null"],
    [L(), "max", [], "null"],
    [L(new DurationV(3_000_000_000n), new DurationV(1_000_000_000n)), "min", [], "1s"],
  ];
  for (const [recv, m, args, want] of cases) {
    assert.equal(await show(ip, recv, m, args), want, `${m} ${want}`);
  }
});

Deno.test("seq: sort is stable", async () => {
  const rows = L(R({ k: 1, i: 0 }), R({ k: 0, i: 1 }), R({ k: 1, i: 2 }), R({ k: 0, i: 3 }));
  const key = fn((r) => (r as ReturnType<typeof R>).fields.get("k")!);
  assert.equal(
    await show(ip, rows, "sort_by", [key]),
    "[{k: 0, i: 1}, {k: 0, i: 3}, {k: 1, i: 0}, {k: 1, i: 2}]",
  );
});

Deno.test("seq: sum (corpus values)", async () => {
  const cases: [Value, string][] = [
    [L(1, 2, 3), "6"],
    [L(new FloatV(1.5), new FloatV(2.5)), "4"],
    [L(), "0"],
    [range(1, 5), "10"],
    [range(1, 5, true), "15"],
    [L(new SizeV(1000n), new SizeV(500n)), "1.5kb"],
  ];
  for (const [recv, want] of cases) assert.equal(await show(ip, recv, "sum"), want);
  await assertFails(() => call(ip, L(9223372036854775807n, 1), "sum"), "overflow");
});

Deno.test("seq: flatten, enumerate, chunks, zip, join, contains, get (corpus values)", async () => {
  const cases: [Value, string, Value[], string][] = [
    [L(L(1), L(2, 3)), "flatten", [], "[1, 2, 3]"],
    [L(L(1, L(2)), L(3)), "flatten", [], "[1, [2], 3]"],
    [L(L(1), L()), "flatten", [], "[1]"],
    [L(range(0, 2), L(5)), "flatten", [], "[0, 1, 5]"],
    [L(10, 20, 30), "enumerate", [], "[[0, 10], [1, 20], [2, 30]]"],
    [L(), "enumerate", [], "[]"],
    [L(1, 2, 3, 4, 5), "chunks", [2], "[[1, 2], [3, 4], [5]]"],
    [L(1, 2, 3), "chunks", [1], "[[1], [2], [3]]"],
    [L(1, 2, 3, 4), "chunks", [2], "[[1, 2], [3, 4]]"],
    [L(1, 2, 3), "zip", [L(10, 20)], "[[1, 10], [2, 20]]"],
    [L(1, 2), "zip", [L("a", "b")], '[[1, "a"], [2, "b"]]'],
    [L(), "zip", [L()], "[]"],
    [L(1, 2), "zip", [range(5, 9)], "[[1, 5], [2, 6]]"],
    [L("a", "b", "c"), "join", [","], '"a,b,c"'],
    [L(), "join", [","], '""'],
    [L("only"), "join", [","], '"only"'],
    [L("a", "b"), "join", [], '"ab"'],
    [L("a", "b"), "join", [], '"ab"'],
    [L(1, 2, 3), "contains", [2], "true"],
    [L(1, 2, 3), "contains", [new FloatV(2)], "true"],
    [L(1, 2, 3), "contains", [9], "false"],
    [range(1, 5), "contains", [10], "false"],
    [range(1, 10), "contains", [5], "true"],
    [range(1, 5, true), "contains", [5], "true"],
    [range(1, 5), "contains", ["a"], "false"],
    [L(1, 2, 3), "get", [9, "missing"], '"missing"'],
    [L(1, 2, 3), "get", [-1, 99], "3"],
    [L(1, 2, 3), "get", [-9, 99], "99"],
    [L(1, 2, 3), "get", [0], "1"],
    [L(1, 2, 3), "get", [5], "null"],
    [L(R({ a: 1 })), "get", [5, R({ a: 0 })], "{a: 0}"],
  ];
  for (const [recv, m, args, want] of cases) {
    assert.equal(await show(ip, recv, m, args), want, `${m} ${want}`);
  }
  assert.equal(await show(ip, L("a", "b"), "join", [], { sep: "-" }), '"a-b"');
});

Deno.test("seq: error paths (corpus codes and needles)", async () => {
  const sum = fn((x) => x);
  const cases: [Value, string, Value[], string, string?][] = [
    [L(1, 2, 3), "take", [-1], "type_error"],
    [L(1, 2, 3), "skip", [-1], "type_error"],
    [L(1, 2, 3), "chunks", [-1], "type_error"],
    [L(1, 2, 3), "chunks", [0], "arg_error", "chunk size must be positive"],
    [L(1, 2, 3), "first", [-1], "type_error"],
    [L(1, 2, 3), "take", [new FloatV(1)], "type_error"],
    [L(1, 2), "get", ["a", 0], "type_error", "get expects record+str or list+int"],
    [table({ a: 1 }), "get", [0, 9], "type_error", "get expects record+str or list+int"],
    [range(0, 3), "get", [0], "type_error", "get expects record+str or list+int"],
    [L(1, 2), "zip", [5], "type_error"],
    [L(1, 2), "join", [","], "type_error"],
    [L("a"), "join", [1], "type_error"],
    [L(1, "a"), "sort", [], "type_error", "cannot compare"],
    [L(1, "a", 2), "sort", [], "type_error", "cannot compare"],
    [
      L(R({ k: 1 }), R({ k: "a" }), R({ k: 2 })),
      "sort_by",
      [fn((r) => (r as ReturnType<typeof R>).fields.get("k")!)],
      "type_error",
      "cannot compare",
    ],
    [
      L(R({ k: 1 }), R({ k: "a" }), R({ k: 2 })),
      "sort",
      [fn((r) => (r as ReturnType<typeof R>).fields.get("k")!)],
      "type_error",
      "cannot compare",
    ],
    [L(1, "a"), "min", [], "type_error", "cannot compare"],
    [L(1, L(2, 3)), "flatten", [], "type_error", "expected collection, found int"],
    [L(1), "flat_map", [fn((x) => x)], "type_error", "expected collection, found int"],
    [L(1, 2, 3), "sum", [sum], "arg_error", "sum takes no arguments (did you mean .map(f).sum()?)"],
    [L(3, 1, 2), "min", [sum], "arg_error", "min takes no arguments"],
    [L(3, 1, 2), "max", [sum], "arg_error", "max takes no arguments"],
    [L(1, "a"), "sum", [], "type_error"],
    [L(1), "where", [fn(() => 1)], "type_error", "no truthiness"],
    [L(1), "map", [], "arg_error", "requires a function"],
    [L(1), "map", [5], "type_error", "expects a function"],
    [L(1), "reduce", [fn(() => 1)], "arg_error", "requires an initial value and a function"],
    [L(1), "sort_by", [], "arg_error", "requires a function"],
    [L(1), "group", [], "arg_error", "requires a function"],
    [L(1), "len", [1], "arg_error", "takes no arguments"],
    [R({ a: 1 }), "first", [], "type_error", "record is not a collection"],
    [R({ a: 1 }), "sum", [], "type_error"],
    [R({ a: 1 }), "map", [fn((x) => x)], "type_error"],
    [R({ a: 1 }), "where", [fn(() => true)], "type_error"],
    [new BytesV(new Uint8Array([104, 105])), "first", [], "type_error"],
    [new BytesV(new Uint8Array([104, 105])), "contains", ["h"], "type_error"],
    [new BytesV(new Uint8Array([104, 105])), "reverse", [], "type_error"],
    [5, "len", [], "type_error", ".len unsupported on int"],
    [true, "len", [], "type_error", ".len unsupported on bool"],
    [new DurationV(5n), "len", [], "type_error", ".len unsupported on duration"],
    [new DateTimeV(0n), "len", [], "type_error", ".len unsupported on datetime"],
  ];
  for (const [recv, m, args, code, needle] of cases) {
    await assertFails(() => call(ip, recv, m, args), code, needle);
  }
});

Deno.test("seq: a huge range is refused, not materialized", async () => {
  await assertFails(
    () => call(ip, range(0, 2 ** 40), "map", [fn((x) => x)]),
    "arg_error",
    "materialize",
  );
  await assertFails(() => call(ip, range(0, 2 ** 40), "reverse"), "arg_error", "materialize");
});

Deno.test("seq: a str is a sequence of its chars for collection methods", async () => {
  assert.equal(await show(ip, "héllo", "first", []), '"h"');
  assert.equal(await show(ip, "ab", "map", [fn((c) => (c as string).toUpperCase())]), '["A", "B"]');
  assert.equal(await show(ip, "cab", "sort", []), '["a", "b", "c"]');
});

Deno.test("seq: values are not mutated", async () => {
  const xs = L(3, 1, 2);
  await call(ip, xs, "sort");
  await call(ip, xs, "reverse");
  assert.deepEqual(xs.items, [3, 1, 2]);
});

Deno.test({
  name: "seq: cleanup",
  fn: () => ip.cleanup(),
});
