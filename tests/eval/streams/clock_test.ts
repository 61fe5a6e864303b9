/**
 * The clock-relative surface through a pinned clock port: `now`, `today`, `now()`/`today()`,
 * `.ago` / `.from_now`, datetime arithmetic, the local zone, and channel event timestamps.
 */

import assert from "node:assert/strict";
import type { ClockPort } from "../../../lib/eval/ports.ts";
import { fails, newEv, run } from "./_host.ts";

/** 2026-07-09T14:30:15Z, viewed in `zone`. */
function pinned(zone = "UTC"): ClockPort {
  const ns = BigInt(Date.UTC(2026, 6, 9, 14, 30, 15)) * 1_000_000n;
  return { nowNs: () => ns, zone: () => zone, sleep: () => Promise.resolve() };
}

Deno.test("now/today/ago/from_now read the clock port", async () => {
  const ev = newEv({ ports: { clock: pinned() } });
  const cases: [string, string][] = [
    ["let n = now\nn", "2026-07-09T14:30:15Z"],
    ["let x = now()\nx", "2026-07-09T14:30:15Z"],
    ["let d = today\nd", "2026-07-09T00:00:00Z"],
    ["let x = today()\nx", "2026-07-09T00:00:00Z"],
    ["1h.ago", "2026-07-09T13:30:15Z"],
    ["90m.from_now", "2026-07-09T16:00:15Z"],
    ["2d.ago", "2026-07-07T14:30:15Z"],
    ["1w.from_now", "2026-07-16T14:30:15Z"],
    ['let n = now\nn - t"2026-07-09T14:00Z"', "30m15s"],
    ["let n = now\nn + 1d", "2026-07-10T14:30:15Z"],
    ["let n = now\nn.hour", "14"],
    ["let n = now\n1h.ago < n && n < 1h.from_now", "true"],
    ["let d = today\nlet n = now\n(n - d) < 1d", "true"],
  ];
  for (const [src, want] of cases) assert.equal(await run(src, ev), want, src);
  await fails("let x = now(1)", "arg_error", undefined, ev);
  await fails("let n = now\nn.str()", "type_error", undefined, ev);
  await fails("1h.nope", "field_missing", undefined, ev);
});

Deno.test("now and today are viewed in the clock's zone", async () => {
  const ev = newEv({ ports: { clock: pinned("Asia/Tokyo") } });
  // 14:30Z is 23:30 in Tokyo; today is Tokyo's midnight (15:00Z the previous day).
  assert.equal(await run("let n = now\nn.hour", ev), "23");
  assert.equal(await run("let d = today\nd.day", ev), "9");
  assert.equal(await run('let d = today\nd == t"2026-07-08T15:00Z"', ev), "true");
});

Deno.test("channel events are stamped by the clock port", async () => {
  const ev = newEv({ ports: { clock: pinned() } });
  assert.equal(
    await run('channel("c").emit(1)\nchannel("c").events().take(1).map(.ts).first()', ev),
    "2026-07-09T14:30:15Z",
  );
});
