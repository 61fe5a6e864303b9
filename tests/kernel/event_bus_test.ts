import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import {
  type BusEvent,
  EventBus,
  RING_SIZE,
  SUBSCRIBER_QUEUE,
} from "../../lib/kernel/event_bus.ts";

Deno.test("sequences start at 0 per channel and per scope; read is since-exclusive", () => {
  const bus = new EventBus();
  for (let i = 0; i < 5; i++) bus.publish("s1", "user.a", i);
  bus.publish("s2", "user.a", "other");
  assertEquals(bus.read("s1", "user.a", null).map((e) => e.seq), [0, 1, 2, 3, 4]);
  assertEquals(bus.read("s1", "user.a", 2).map((e) => e.payload), [3, 4]);
  assertEquals(bus.read("s2", "user.a", null).map((e) => [e.seq, e.payload]), [[0, "other"]]);
  assertEquals(bus.read("s1", "user.b", null), []);
});

Deno.test("the ring keeps the last 1,024 and limit keeps the newest", () => {
  const bus = new EventBus();
  for (let i = 0; i < RING_SIZE + 10; i++) bus.publish("", "render", i);
  const all = bus.read("", "render", null);
  assertEquals(all.length, RING_SIZE);
  assertEquals(all[0].seq, 10);
  assertEquals(bus.read("", "render", null, 3).map((e) => e.seq), [1031, 1032, 1033]);
});

Deno.test("a slow subscriber gets a dropped summary exactly at the gap", async () => {
  const bus = new EventBus();
  const got: BusEvent[] = [];
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let first = true;
  bus.subscribe("s", "task.1", null, async (e) => {
    if (first) {
      first = false;
      await gate; // stall the writer so the queue fills
    }
    got.push(e);
  });
  const total = SUBSCRIBER_QUEUE + 100;
  for (let i = 0; i < total; i++) bus.publish("s", "task.1", i);
  release();
  // After the gap, live events flow again in order.
  await new Promise((r) => setTimeout(r, 20));
  bus.publish("s", "task.1", "after");
  await new Promise((r) => setTimeout(r, 20));
  const gapIdx = got.findIndex((e) => typeof e.payload === "object" && e.payload !== null);
  ok(gapIdx > 0, "a gap summary was delivered");
  const gap = got[gapIdx];
  // Everything before the gap is contiguous from 0; the summary names the last dropped seq.
  assertEquals(got.slice(0, gapIdx).map((e) => e.seq), [...Array(gapIdx).keys()]);
  const summary = gap.payload as { dropped: number; latest_seq: number };
  assertEquals(summary.latest_seq, total - 1);
  assertEquals(summary.dropped, total - gapIdx);
  assertEquals(got[gapIdx + 1].payload, "after");
  assertEquals(got.length, gapIdx + 2);
});

Deno.test("subscribe replays since-exclusive from the ring, then live, without duplicates", async () => {
  const bus = new EventBus();
  for (let i = 0; i < 5; i++) bus.publish("s", "user.x", i);
  const got: number[] = [];
  const sub = bus.subscribe("s", "user.x", 2, (e) => {
    got.push(e.seq);
    return Promise.resolve();
  });
  bus.publish("s", "user.x", 5);
  await new Promise((r) => setTimeout(r, 10));
  assertEquals(got, [3, 4, 5]);
  bus.unsubscribe("s", "user.x", sub);
  bus.publish("s", "user.x", 6);
  await new Promise((r) => setTimeout(r, 10));
  assertEquals(got, [3, 4, 5], "no delivery after unsubscribe");
  ok(sub.closed);
});

Deno.test("a subscriber whose delivery fails is closed and publish keeps working", async () => {
  const bus = new EventBus();
  const sub = bus.subscribe("s", "render", null, () => Promise.reject(new Error("peer gone")));
  bus.publish("s", "render", 1);
  await new Promise((r) => setTimeout(r, 10));
  ok(sub.closed);
  bus.publish("s", "render", 2);
  assertEquals(bus.read("s", "render", null).length, 2);
});
