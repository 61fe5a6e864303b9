import assert from "node:assert/strict";
import { join } from "node:path";
import {
  BytesV,
  DurationV,
  PathV,
  RangeV,
  SizeV,
  TimeV,
  type Value,
} from "../../../lib/value/types.ts";
import { parseDateTime } from "../../../lib/value/datetime.ts";
import { assertFails, asyncFn, call, fn, L, R, show, TestInterp } from "./host.ts";

const ip = new TestInterp();
const bytes = (...b: number[]) => new BytesV(new Uint8Array(b));
const read = (name: string) => Deno.readTextFileSync(join(ip.dir, name));

Deno.test("tap/also: call f(recv), return recv unchanged", async () => {
  const seen: Value[] = [];
  const xs = L(1, 2, 3);
  assert.equal(await call(ip, xs, "tap", [fn((x) => (seen.push(x), 99))]), xs);
  assert.deepEqual(seen, [xs]);
  const r = R({ a: 5 });
  assert.equal(await call(ip, r, "also", [fn(() => null)]), r);
  const later = call(ip, "x", "tap", [asyncFn(() => 1)]);
  assert.ok(later instanceof Promise);
  assert.equal(await later, "x");
  await assertFails(() => call(ip, 1, "tap", []), "arg_error");
  // an error raised by the callback propagates
  assert.throws(() =>
    call(ip, 1, "tap", [fn(() => {
      throw new Error("boom");
    })]), /boom/);
});

Deno.test("save/append: raw str and bytes, compact JSON otherwise; relative to cwd", async () => {
  assert.equal(await call(ip, "payload", "save", ["tapped.txt"]), "payload");
  assert.equal(read("tapped.txt"), "payload");
  await call(ip, "more", "append", ["tapped.txt"]);
  assert.equal(read("tapped.txt"), "payloadmore");
  await call(ip, "new", "save", [new PathV("tapped.txt")]);
  assert.equal(read("tapped.txt"), "new");
  const b = bytes(104, 105);
  assert.equal(await call(ip, b, "save", ["out.txt"]), b);
  assert.equal(read("out.txt"), "hi");
  await call(ip, R({ a: 1, b: L(1, "x") }), "save", ["r.json"]);
  assert.equal(read("r.json"), '{"a":1,"b":[1,"x"]}');
  await call(ip, 5, "save", [join(ip.dir, "abs.txt")]);
  assert.equal(read("abs.txt"), "5");
  const missing = await assertFails(() => call(ip, "x", "save", ["no/such/dir/f.txt"]), "custom");
  assert.match(missing.err.msg, /^save .*no\/such\/dir\/f\.txt: No such file or directory/);
  assert.equal(
    missing.err.hint,
    `create its directory first: mkdir -p ${join(ip.dir, "no/such/dir")}`,
  );
  await assertFails(() => call(ip, "x", "save", [5]), "type_error");
  await assertFails(() => call(ip, "x", "save", []), "arg_error");
});

Deno.test("json: compact JSON text", async () => {
  assert.equal(await show(ip, R({ a: 1 }), "json"), '"{\\"a\\":1}"');
  assert.equal(await show(ip, bytes(104, 105), "json"), '"\\"hi\\""');
  assert.equal(
    await show(ip, parseDateTime("2026-07-09T14:00Z"), "json"),
    '"\\"2026-07-09T14:00:00+00:00[UTC]\\""',
  );
});

Deno.test("str/display: conversion table (corpus)", async () => {
  assert.equal(await show(ip, bytes(104, 105), "str"), '"hi"');
  assert.equal(await show(ip, bytes(0xff), "display"), '"\uFFFD"');
  assert.equal(await show(ip, bytes(0xef, 0xbb, 0xbf, 0x41), "str"), '"\uFEFFA"');
  assert.equal(await show(ip, new PathV("a b.txt"), "str"), '"a b.txt"');
  await assertFails(() => call(ip, bytes(0xff), "str"), "utf8_error");
  const errs: Value[] = [
    parseDateTime("2026-07-09T14:00Z"),
    L(1, "a", true, null),
    new SizeV(1n),
    new DurationV(1n),
    new TimeV(1, 2, 0),
    null,
    R({}),
    new RangeV(0, 1, false),
  ];
  for (const v of errs) {
    await assertFails(() => call(ip, v, "str"), "type_error", "interpolation");
    await assertFails(() => call(ip, v, "display"), "type_error", "cannot convert");
  }
});

Deno.test("bytes: len/count/is_empty; not a collection", async () => {
  assert.equal(await show(ip, bytes(104, 105), "len"), "2");
  assert.equal(await show(ip, bytes(104, 105), "count"), "2");
  assert.equal(await show(ip, bytes(), "is_empty"), "true");
  assert.equal(await show(ip, bytes(1), "is_empty"), "false");
  assert.equal(await show(ip, new BytesV(new TextEncoder().encode("é")), "len"), "2");
  for (const m of ["first", "contains", "reverse", "upper"]) {
    await assertFails(() => call(ip, bytes(104), m, m === "contains" ? ["h"] : []), "type_error");
  }
});

Deno.test({ name: "universal: cleanup", fn: () => ip.cleanup() });
