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

// ---- durable channels over the store (issue 7) ---------------------------------------------

import { openStore } from "../../lib/store/mod.ts";
import { StoreDurableLog } from "../../lib/kernel/durable_log.ts";

async function withDurable(
  fn: (mk: () => Promise<EventBus>, errors: unknown[]) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "shoal-bus-" });
  const errors: unknown[] = [];
  const stores: Array<{ close(): Promise<void> }> = [];
  // Each call is a fresh "kernel start" on the same state directory.
  const mk = async () => {
    for (const s of stores.splice(0)) await s.close();
    const store = await openStore(dir, { journalMode: "inline" });
    stores.push(store);
    const log = await StoreDurableLog.open(store.events, (e) => errors.push(e));
    const bus = new EventBus(log);
    (bus as unknown as { flushed: () => Promise<void> }).flushed = () => log.flushed();
    return bus;
  };
  try {
    await fn(mk, errors);
  } finally {
    for (const s of stores) await s.close();
    await Deno.remove(dir, { recursive: true });
  }
}

const flushed = (b: EventBus) => (b as unknown as { flushed: () => Promise<void> }).flushed();

Deno.test("durable channels: seqs continue across restarts; history older than the ring comes from the journal", async () => {
  await withDurable(async (mk, errors) => {
    let bus = await mk();
    for (let i = 0; i < RING_SIZE + 20; i++) bus.publish("s", "journal", { i });
    bus.publish("s", "user.x", "ring only");
    await flushed(bus);
    // The ring dropped seq 0..19; history reads them from the store.
    assertEquals(bus.read("s", "journal", null).length, RING_SIZE);
    const old = await bus.history("s", "journal", 4, 3);
    assertEquals(old.length, 3);
    assertEquals(old.map((e) => e.seq), [RING_SIZE + 17, RING_SIZE + 18, RING_SIZE + 19]);
    const all = await bus.history("s", "journal", null, 4096);
    assertEquals(all.length, RING_SIZE + 20);
    assertEquals(all[0].seq, 0);
    assertEquals((await bus.history("s", "journal", 2, 1)).map((e) => e.seq), [RING_SIZE + 19]);
    // Restart: counters are seeded, the ring is empty, reads come from the journal.
    bus = await mk();
    assertEquals(bus.nextSeq("s", "journal"), RING_SIZE + 20);
    assertEquals(bus.nextSeq("s", "user.x"), 0, "non-durable channels restart at 0");
    const e = bus.publish("s", "journal", { after: true });
    assertEquals(e.seq, RING_SIZE + 20);
    await flushed(bus);
    const tail = await bus.history("s", "journal", RING_SIZE + 17, 10);
    assertEquals(tail.map((x) => x.seq), [RING_SIZE + 18, RING_SIZE + 19, RING_SIZE + 20]);
    assertEquals(tail[0].payload, { i: RING_SIZE + 18 });
    ok(Math.abs(tail[0].ts / 1e6 - Date.now()) < 60_000, "ns timestamps from stored ms");
    assertEquals((await bus.history("other", "journal", null)).length, 0, "scoped per session");
    assertEquals(errors, []);
  });
});

Deno.test("durable subscribe: replays from the journal, holds live events back, then continues densely", async () => {
  await withDurable(async (mk) => {
    let bus = await mk();
    for (let i = 0; i < 10; i++) bus.publish("s", "session.transcript", i);
    await flushed(bus);
    bus = await mk();
    const got: number[] = [];
    const sub = bus.subscribe("s", "session.transcript", 5, (e) => {
      got.push(e.seq);
      return Promise.resolve();
    });
    // Published while the replay reads the journal: delivered after it, in order.
    bus.publish("s", "session.transcript", 10);
    bus.publish("s", "session.transcript", 11);
    await sub.replaying;
    await new Promise((r) => setTimeout(r, 10));
    bus.publish("s", "session.transcript", 12);
    await new Promise((r) => setTimeout(r, 10));
    assertEquals(got, [6, 7, 8, 9, 10, 11, 12]);
    bus.unsubscribe("s", "session.transcript", sub);
  });
});

Deno.test("durable subscribe replays at most one queue's worth and reports the rest as a gap", async () => {
  await withDurable(async (mk) => {
    let bus = await mk();
    for (let i = 0; i < 600; i++) bus.publish("", "journal", i);
    await flushed(bus);
    bus = await mk();
    const got: BusEvent[] = [];
    const sub = bus.subscribe("", "journal", 0, (e) => {
      got.push(e);
      return Promise.resolve();
    });
    await sub.replaying;
    await new Promise((r) => setTimeout(r, 20));
    assertEquals(got.length, SUBSCRIBER_QUEUE + 1);
    assertEquals(got[0].seq, 1);
    const gap = got[got.length - 1];
    assertEquals(gap.payload, { dropped: 600 - 1 - SUBSCRIBER_QUEUE, latest_seq: 599 });
    bus.publish("", "journal", "live");
    await new Promise((r) => setTimeout(r, 10));
    assertEquals(got[got.length - 1].seq, 600);
    bus.unsubscribe("", "journal", sub);
  });
});

Deno.test("a second writer on the same stream is reported, never interleaved", async () => {
  await withDurable(async (mk, errors) => {
    const a = await mk();
    a.publish("s", "journal", "first");
    await flushed(a);
    // A stale bus (counters seeded before another writer appended) collides on seq.
    const log = (a as unknown as { durable: StoreDurableLog }).durable;
    log.append("s", "journal", {
      channel: "journal",
      seq: 0,
      ts: Date.now() * 1e6,
      payload: "dup",
    });
    await log.flushed();
    assertEquals(errors.length, 1);
    ok(String((errors[0] as Error).message).includes("was not persisted"));
  });
});
