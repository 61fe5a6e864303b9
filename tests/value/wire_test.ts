import { deepStrictEqual as assertEquals, ok, throws } from "node:assert/strict";
import { decodeWire, encodeBounded, encodeWire } from "../../lib/value/wire.ts";
import { elide, refStub, resolveBudget, uriWithPath } from "../../lib/value/elide.ts";
import { parsePath, SelectError, selectPath, sliceValue } from "../../lib/value/select.ts";
import { outcomePayload } from "../../lib/value/coerce.ts";
import {
  BytesV,
  DateTimeV,
  DurationV,
  ErrorV,
  FloatV,
  ListV,
  OutcomeV,
  SizeV,
  TableV,
  TimeV,
  type Value,
} from "../../lib/value/types.ts";
import { rec } from "./_helpers.ts";

const table = (n: number) =>
  new TableV(
    Array.from({ length: n }, (_, i) => rec({ name: `row${i}`, size: new SizeV(BigInt(i)) })),
  );
const enc = new TextEncoder();
const outcome = (stdout: string, ok = true, stderr = "") =>
  new OutcomeV(ok ? 0 : 3, ok, null, enc.encode(stdout), enc.encode(stderr), 5n, 42, "tool x");

Deno.test("every scalar tag encodes per protocol §7 and decodes back", () => {
  const cases: [Value, unknown][] = [
    [null, { $: "null" }],
    [true, { $: "bool", v: true }],
    [42, { $: "int", v: 42 }],
    [new FloatV(1.5), { $: "float", v: 1.5 }],
    ["hi", { $: "str", v: "hi" }],
    [new SizeV(1024n), { $: "size", v: 1024 }],
    [new DurationV(90_000_000_000n), { $: "duration", v: 90000000000 }],
    [new DateTimeV(1_783_605_600_000_000_000n), { $: "datetime", v: "2026-07-09T14:00:00Z" }],
    [new TimeV(9, 5, 0), { $: "time", v: "09:05:00" }],
  ];
  for (const [v, w] of cases) {
    assertEquals(encodeWire(v, outcomePayload), w);
    assertEquals(encodeWire(decodeWire(w), outcomePayload), w);
  }
});

Deno.test("i64 beyond 2^53 stays exact in the JSON text", () => {
  const big = 9223372036854775807n;
  assertEquals(
    JSON.stringify(encodeWire(big, outcomePayload)),
    '{"$":"int","v":9223372036854775807}',
  );
});

Deno.test("tables are columnar with every column of length n and missing cells null", () => {
  const t = new TableV([rec({ a: 1 }), rec({ b: "x" })]);
  assertEquals(encodeWire(t, outcomePayload), {
    $: "table",
    cols: { a: [{ $: "int", v: 1 }, { $: "null" }], b: [{ $: "null" }, { $: "str", v: "x" }] },
    n: 2,
  });
});

Deno.test("errors omit absent members; outcomes carry metadata and structured out", () => {
  assertEquals(encodeWire(new ErrorV("div_zero", "division by zero"), outcomePayload), {
    $: "error",
    code: "div_zero",
    msg: "division by zero",
  });
  const w = encodeWire(outcome('{"a":1}\n'), outcomePayload) as Record<string, unknown>;
  assertEquals(w.status, 0);
  assertEquals(w.cmd, "tool x");
  assertEquals(w.out, { $: "record", v: { a: { $: "int", v: 1 } } });
});

Deno.test("bounded encoding gives up past its limit", () => {
  ok(encodeBounded(table(10), 100_000, outcomePayload));
  assertEquals(encodeBounded(table(2_000), 8192, outcomePayload), null);
  assertEquals(encodeBounded("x".repeat(10_000), 8192, outcomePayload), null);
});

Deno.test("elision: row/item/byte budgets, ref stub shape, preview of five", () => {
  const b = resolveBudget();
  const small = elide(table(3), "shoal://out/1", b, outcomePayload);
  assertEquals(small.$, "table");
  const big = elide(table(2_000), "shoal://out/2", b, outcomePayload);
  assertEquals(big.$, "ref");
  assertEquals(big.uri, "shoal://out/2");
  assertEquals(big.of, "table");
  assertEquals(big.n, 2_000);
  assertEquals(big.cols, { name: "str", size: "size" });
  assertEquals((big.preview as { n: number }).n, 5);
  ok(String(big.render_head).split("\n").length <= 10);
  const list = elide(new ListV(Array.from({ length: 501 }, (_, i) => i)), "u", b, outcomePayload);
  assertEquals([list.$, list.n], ["ref", 501]);
  const bytes = elide(new BytesV(new Uint8Array(5000)), "u", b, outcomePayload);
  assertEquals([bytes.$, bytes.n], ["ref", 5000]);
  const str = elide("é".repeat(10_000), "u", b, outcomePayload);
  assertEquals([str.$, str.n], ["ref", 20_000]);
  assertEquals((str.preview as { v: string }).v.length, 256);
  const r = refStub(rec({ a: 1, b: 2 }), "u", b, outcomePayload);
  assertEquals(r.preview, { $: "record", v: { a: { $: "null" }, b: { $: "null" } } });
});

Deno.test("max_bytes overrides clamp to the hard cap and set max_bytes_raw", () => {
  assertEquals(resolveBudget({ max_bytes: 1 << 30 }).maxBytes, 65536);
  assertEquals(resolveBudget({ max_bytes: 100 }).maxBytesRaw, 100);
  assertEquals(resolveBudget({ max_rows: 7 }).maxRows, 7);
  assertEquals(resolveBudget({ max_bytes: -5 }).maxBytes, 8192);
});

Deno.test("failed outcomes keep metadata inline (D-19) and elide out", () => {
  const o = outcome("y".repeat(20_000), false, "boom");
  const w = elide(o, "shoal://out/4", resolveBudget(), outcomePayload);
  assertEquals([w.$, w.ok, w.status, w.err], ["outcome", false, 3, "boom"]);
  const out = w.out as Record<string, unknown>;
  assertEquals(out.$, "ref");
  assertEquals(out.uri, "shoal://out/4?path=out");
  assertEquals(uriWithPath("shoal://out/4?path=rows", "out"), "shoal://out/4?path=rows.out");
});

Deno.test("value.get paths: fields, rows, columns, indexes, ranges, outcome forwarding", () => {
  const t = table(10);
  assertEquals(selectPath(t, parsePath(".rows[3].name"), outcomePayload), "row3");
  assertEquals(
    selectPath(t, parsePath("rows[2..4]"), outcomePayload),
    new ListV(t.rows.slice(2, 4)),
  );
  assertEquals((selectPath(t, parsePath("name"), outcomePayload) as ListV).items.length, 10);
  assertEquals((selectPath(t, parsePath("[8..100]"), outcomePayload) as TableV).rows.length, 2);
  assertEquals(selectPath(outcome('{"a":{"b":7}}'), parsePath("a.b"), outcomePayload), 7);
  assertEquals(selectPath(outcome("x"), parsePath("status"), outcomePayload), 0);
  throws(() => parsePath("[1"), SelectError);
  throws(() => parsePath(".."), /empty path segment/);
  throws(() => selectPath(t, parsePath("[10]"), outcomePayload), /out of bounds \(len 10\)/);
  throws(() => selectPath(t, parsePath("nope"), outcomePayload), /table has no column/);
  throws(() => selectPath(5, parsePath("[0]"), outcomePayload), /cannot index int/);
});

Deno.test("top-level slices by item, scalar and byte", () => {
  assertEquals(sliceValue("héllo", 1, 3), "él");
  assertEquals(sliceValue(new ListV([1, 2, 3]), 2, 99), new ListV([3]));
  assertEquals(
    (sliceValue(new BytesV(new Uint8Array([1, 2, 3])), 0, 2) as BytesV).data,
    new Uint8Array([1, 2]),
  );
  throws(() => sliceValue(5, 0, 1), /cannot slice a int/);
});
