import assert from "node:assert/strict";
import { EVENT_READ_MAX, openStore } from "../../lib/store/mod.ts";
import { rejectsCode, withStore, withTempDir } from "./_helpers.ts";

Deno.test("append assigns dense seqs from 0 per channel; readSince is exclusive and ascending", async () => {
  await withStore(async (store) => {
    assert.equal(await store.events.lastSeq("journal"), null);
    for (let i = 0; i < 5; i++) {
      const r = await store.events.append("journal", { entry_id: i }, { ts: 1000 + i });
      assert.deepEqual(r, { channel: "journal", scope: "", seq: i, ts: 1000 + i });
    }
    assert.equal((await store.events.append("session.transcript", { n: 1 })).seq, 0);
    assert.equal(await store.events.lastSeq("journal"), 4);
    const all = await store.events.readSince("journal");
    assert.deepEqual(all.map((e) => e.seq), [0, 1, 2, 3, 4]);
    assert.deepEqual(all[2], {
      channel: "journal",
      scope: "",
      seq: 2,
      ts: 1002,
      payload: { entry_id: 2 },
    });
    assert.deepEqual((await store.events.readSince("journal", 2)).map((e) => e.seq), [3, 4]);
    assert.deepEqual((await store.events.readSince("journal", 0, 2)).map((e) => e.seq), [1, 2]);
    assert.deepEqual(await store.events.readSince("journal", 4), []);
    assert.deepEqual((await store.events.readLatest("journal", 2)).map((e) => e.seq), [3, 4]);
    assert.deepEqual(
      (await store.events.readLatest("journal", 10, { since: 2 })).map((e) => e.seq),
      [3, 4],
    );
    assert.deepEqual(
      (await store.events.readLatest("journal", 1, { since: 0 })).map((e) => e.seq),
      [4],
      "limit keeps the newest",
    );
    assert.deepEqual(await store.events.readSince("render"), [], "unknown channel reads empty");
  }, { journalMode: "inline" });
});

Deno.test("each session scope is its own stream with its own seqs (D-21)", async () => {
  await withStore(async (store) => {
    assert.equal(
      (await store.events.append("session.transcript", { n: 1 }, { scope: "a" })).seq,
      0,
    );
    assert.equal(
      (await store.events.append("session.transcript", { n: 1 }, { scope: "b" })).seq,
      0,
    );
    assert.equal(
      (await store.events.append("session.transcript", { n: 2 }, { scope: "a" })).seq,
      1,
    );
    assert.equal((await store.events.append("session.transcript", { k: 1 })).seq, 0, "kernel-wide");
    const a = await store.events.readSince("session.transcript", null, 10, { scope: "a" });
    assert.deepEqual(a.map((e) => [e.seq, e.scope, e.payload]), [[0, "a", { n: 1 }], [1, "a", {
      n: 2,
    }]]);
    const latestB = await store.events.readLatest("session.transcript", 10, { scope: "b" });
    assert.deepEqual(latestB.map((e) => e.seq), [0]);
    assert.equal(await store.events.lastSeq("session.transcript", { scope: "a" }), 1);
    assert.deepEqual(await store.events.listChannels(), [
      { channel: "session.transcript", scope: "", nextSeq: 1 },
      { channel: "session.transcript", scope: "a", nextSeq: 2 },
      { channel: "session.transcript", scope: "b", nextSeq: 1 },
    ]);
  }, { journalMode: "inline" });
});

Deno.test("an explicit seq must be the stream's next one (write-behind from a synchronous bus)", async () => {
  await withStore(async (store) => {
    // the kernel seeds its counter, assigns seqs itself and writes behind
    const next = (await store.events.listChannels()).find((c) =>
      c.channel === "journal"
    )?.nextSeq ?? 0;
    assert.equal(next, 0);
    const writes = [0, 1, 2].map((seq) => store.events.append("journal", { seq }, { seq }));
    assert.deepEqual((await Promise.all(writes)).map((r) => r.seq), [0, 1, 2]);
    const e = await rejectsCode(
      store.events.append("journal", {}, { seq: 2 }),
      "event_seq_conflict",
    );
    assert.equal(e.details?.next, 3);
    await rejectsCode(store.events.append("journal", {}, { seq: 7 }), "event_seq_conflict");
    await rejectsCode(store.events.append("journal", {}, { seq: -1 }), "invalid_input");
    assert.deepEqual((await store.events.readSince("journal")).map((x) => x.seq), [0, 1, 2]);
  });
});

Deno.test("bad channel, since or payload are invalid_input; limits are clamped", async () => {
  await withStore(async (store) => {
    await rejectsCode(store.events.append("", 1), "invalid_input");
    await rejectsCode(store.events.append("bad channel", 1), "invalid_input");
    await rejectsCode(store.events.append("journal", { big: 1n }), "invalid_input");
    await rejectsCode(store.events.readSince("journal", -2), "invalid_input");
    await rejectsCode(store.events.readSince("journal", 1.5), "invalid_input");
    for (let i = 0; i < EVENT_READ_MAX + 10; i++) await store.events.append("user.x", i);
    assert.equal(
      (await store.events.readSince("user.x", null, EVENT_READ_MAX * 2)).length,
      EVENT_READ_MAX,
    );
    assert.equal((await store.events.readSince("user.x")).length, 256, "default page");
  }, { journalMode: "inline" });
});

Deno.test("sequences continue across a restart and after old events are trimmed by GC", async () => {
  await withTempDir(async (dir) => {
    let store = await openStore(dir);
    for (let i = 0; i < 3; i++) await store.events.append("journal", { i }, { ts: 1000 });
    await store.close();

    store = await openStore(dir);
    assert.equal(await store.events.lastSeq("journal"), 2);
    assert.equal((await store.events.append("journal", { i: 3 })).seq, 3);
    // trim everything older than a day: the channel's next seq is kept
    const report = await store.gc({ ttlMs: 86_400_000, apply: true });
    assert.equal(report.journal.events, 3);
    assert.deepEqual((await store.events.readSince("journal")).map((e) => e.seq), [3]);
    await store.close();

    store = await openStore(dir);
    assert.equal((await store.events.append("journal", { i: 4 })).seq, 4);
    assert.deepEqual((await store.events.readSince("journal", 2)).map((e) => e.seq), [3, 4]);
    await store.close();
  });
});

Deno.test("events passed to finishRequest are stored in the same transaction", async () => {
  await withStore(async (store) => {
    const id = await store.journal.beginRequest({
      session: "s",
      principal: "p",
      source: "x",
      cwd: "/",
    });
    // an invalid event fails the whole finish: no outcome, no event
    await rejectsCode(
      store.journal.finishRequest(id, { status: "ok", durationNs: 1 }, [], {
        events: [{ channel: "journal", payload: { entry_id: id } }, {
          channel: "bad channel",
          payload: 1,
        }],
      }),
      "invalid_input",
    );
    assert.equal((await store.journal.get(id))?.status, "running");
    assert.deepEqual(await store.events.readSince("journal"), []);
    const r = await store.journal.finishRequest(id, { status: "ok", durationNs: 1 }, [], {
      events: [
        { channel: "journal", payload: { entry_id: id, head: "x", ok: true, principal: "p" } },
        { channel: "session.transcript", payload: { n: 1, ref: "out:1" }, scope: "s" },
      ],
    });
    assert.deepEqual(r.events.map((e) => [e.channel, e.scope, e.seq]), [
      ["journal", "", 0],
      ["session.transcript", "s", 0],
    ]);
    assert.deepEqual((await store.events.readSince("journal"))[0].payload, {
      entry_id: id,
      head: "x",
      ok: true,
      principal: "p",
    });
  });
});

Deno.test("appendMany: one batch, several streams; a refused event never drops another", async () => {
  await withStore(async (store) => {
    await store.events.append("journal", { a: 0 }, { scope: "s1" });
    const r = await store.events.appendMany([
      { channel: "journal", payload: { a: 1 }, scope: "s1", seq: 1 },
      { channel: "session.transcript", payload: { n: 1 }, scope: "s1", seq: 0 },
      { channel: "journal", payload: { a: 9 }, scope: "s1", seq: 7 }, // not the next one
      { channel: "bad channel!", payload: {}, scope: "s1" }, // invalid
      { channel: "journal", payload: { a: 2 }, scope: "s1", seq: 2 },
      { channel: "journal", payload: { b: 0 }, scope: "s2" },
    ]);
    assert.deepEqual(r.map((x) => [x.index, x.code]), [
      [2, "event_seq_conflict"],
      [3, "invalid_input"],
    ]);
    const s1 = await store.events.readSince("journal", null, 10, { scope: "s1" });
    assert.deepEqual(s1.map((e) => [e.seq, e.payload]), [[0, { a: 0 }], [1, { a: 1 }], [2, {
      a: 2,
    }]]);
    // The counters moved once per stream: the next appends continue densely.
    assert.equal((await store.events.append("journal", {}, { scope: "s1" })).seq, 3);
    assert.equal((await store.events.append("journal", {}, { scope: "s2" })).seq, 1);
    assert.equal((await store.events.append("session.transcript", {}, { scope: "s1" })).seq, 1);
  });
});
