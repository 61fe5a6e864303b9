import assert from "node:assert/strict";
import { BytesV, DateTimeV, DurationV, SizeV, type Value } from "../../../lib/value/types.ts";
import {
  BYTES_METHODS,
  KNOWN_METHODS_BY_TYPE,
  lookupMethod,
  METHODS,
  RECORD_METHODS,
  STR_METHODS,
} from "../../../lib/eval/methods/mod.ts";
import { assertFails, L, R, TestInterp } from "./host.ts";

const ip = new TestInterp();
const noArgs = { pos: [], named: new Map<string, Value>(), span: null };

Deno.test("tables check their own receiver (safe to consult for any receiver)", async () => {
  await assertFails(
    () => STR_METHODS.upper(ip, 5, noArgs),
    "type_error",
    ".upper expects str, found int",
  );
  await assertFails(() => STR_METHODS.len(ip, L(), noArgs), "type_error", "expects str");
  await assertFails(() => RECORD_METHODS.keys(ip, L(), noArgs), "type_error", "expects a record");
  await assertFails(() => BYTES_METHODS.len(ip, "x", noArgs), "type_error", "expects bytes");
  for (const table of Object.values(METHODS)) {
    for (const f of Object.values(table)) {
      // no method crashes with a JS exception on a foreign receiver
      try {
        await f(ip, new DateTimeV(0n), noArgs);
      } catch (e) {
        assert.equal((e as Error).name, "ShoalError", String(e));
      }
    }
  }
});

Deno.test("lookupMethod: unknown names are undefined; known names resolve for any receiver", async () => {
  assert.equal(lookupMethod(L(), "frobnicate"), undefined);
  assert.equal(lookupMethod(L(), "length"), undefined);
  assert.equal(lookupMethod("x", "to_upper"), undefined);
  for (
    const [recv, name, code] of [
      [5, "len", "type_error"],
      [R({ a: 1 }), "first", "type_error"],
      [new BytesV(new Uint8Array()), "upper", "type_error"],
      [new SizeV(5000n), "abs", "type_error"],
      [new DateTimeV(0n), "str", "type_error"],
      [new DurationV(0n), "len", "type_error"],
    ] as [Value, string, string][]
  ) {
    const f = lookupMethod(recv, name);
    assert.ok(f !== undefined, name);
    await assertFails(() => f(ip, recv, noArgs), code);
  }
});

Deno.test("KNOWN_METHODS_BY_TYPE: did-you-mean candidates per receiver type", () => {
  const k = KNOWN_METHODS_BY_TYPE;
  assert.ok(k.list!.includes("len") && k.list!.includes("sort") && k.list!.includes("tee"));
  assert.ok(k.str!.includes("upper") && k.str!.includes("take") && k.str!.includes("len"));
  assert.ok(k.record!.includes("items") && !k.record!.includes("first"));
  assert.ok(k.int!.includes("abs") && k.float!.includes("round"));
  assert.ok(k.bytes!.includes("len") && !k.bytes!.includes("upper"));
  assert.deepEqual([...k.size!].sort(), ["also", "append", "feed", "json", "save", "tap"]);
  assert.ok(k.bool!.includes("str"));
  for (const names of Object.values(k)) assert.equal(new Set(names).size, names!.length);
});

Deno.test({ name: "mod: cleanup", fn: () => ip.cleanup() });
