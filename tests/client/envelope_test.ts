import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { parseEnvelope } from "../../lib/client/envelope.ts";

/** The id as it would be written back: JSON.stringify keeps a raw number's digits. */
const echoed = (text: string) => {
  const e = parseEnvelope(text);
  return "id" in e ? JSON.stringify({ id: e.id }) : null;
};

Deno.test("ids are echoed as sent, wherever the top-level id member is", () => {
  assertEquals(
    echoed('{"jsonrpc":"2.0","id":18446744073709551617,"method":"m"}'),
    '{"id":18446744073709551617}',
  );
  // Nested `id` members and strings that look like ids come before the real one.
  assertEquals(
    echoed('{"params":{"id":1,"s":"\\"id\\":2"},"jsonrpc":"2.0","method":"m","id":1.50}'),
    '{"id":1.50}',
  );
  // An escaped key is still the id.
  assertEquals(echoed('{"jsonrpc":"2.0","\\u0069d":1e2,"method":"m"}'), '{"id":1e2}');
  assertEquals(echoed('{"jsonrpc":"2.0","id":"x","method":"m"}'), '{"id":"x"}');
  assertEquals(echoed('{"jsonrpc":"2.0","id":7,"method":"m"}'), '{"id":7}');
});

Deno.test("batch elements keep their own ids", () => {
  const e = parseEnvelope(
    '[{"jsonrpc":"2.0","id":99999999999999999999,"method":"a"}, {"jsonrpc":"2.0","id":2,"method":5}]',
  );
  assertEquals(e.kind, "batch");
  if (e.kind !== "batch") return;
  assertEquals(e.items.map((i) => ("id" in i ? JSON.stringify(i.id) : null)), [
    "99999999999999999999",
    "2",
  ]);
  assertEquals(e.items.map((i) => i.kind), ["request", "invalid"]);
});

Deno.test("faults: codes and silence for notifications", () => {
  const code = (t: string) => {
    const e = parseEnvelope(t);
    return e.kind === "invalid" ? [e.error.code, e.silent ?? false] : e.kind;
  };
  assertEquals(code("{x"), [-32700, false]);
  assertEquals(code("[]"), [-32600, false]);
  assertEquals(code('{"jsonrpc":"1.0","id":1,"method":"m"}'), [-32600, false]);
  assertEquals(code('{"jsonrpc":"1.0","method":"m"}'), [-32600, true]);
  assertEquals(code('{"jsonrpc":"2.0","id":1,"method":"m","params":[1]}'), [-32602, false]);
  assertEquals(code('{"jsonrpc":"2.0","id":1,"result":{}}'), "response");
  assertEquals(code('{"jsonrpc":"2.0","method":"m"}'), "notification");
  const bad = parseEnvelope('{"jsonrpc":"2.0","id":3,"method":"m"}', { badUtf8: true });
  assertEquals(bad.kind === "invalid" ? [bad.id, bad.error.code] : null, [3, -32700]);
});
