import assert from "node:assert/strict";
import { join } from "node:path";
import type { Store } from "../../lib/store/mod.ts";
import { randomBytes, rejectsCode, utf8, withStore } from "./_helpers.ts";

const DAY = 86_400_000;

/** Store a blob and make it look `ageMs` old. */
async function oldBlob(store: Store, data: Uint8Array, ageMs: number) {
  const r = await store.cas.put(data, { compression: "none" });
  const t = new Date(Date.now() - ageMs);
  await Deno.utime(store.cas.pathOf(r.hash), t, t);
  return r;
}

/** A finished request started `ageMs` ago whose stdout is `ref`. */
async function requestWith(store: Store, ref: string, len: number, ageMs: number) {
  const id = await store.journal.beginRequest({
    session: "s",
    principal: "human",
    source: "cat big",
    cwd: "/",
    startedAt: Date.now() - ageMs,
  });
  await store.journal.finishRequest(id, {
    status: "ok",
    durationNs: 1,
    outputs: [{ kind: "stdout", len, ref }],
  }, [{ source: "cat big", status: "ok", durationNs: 1, outputs: [{ kind: "stdout", len, ref }] }]);
  return id;
}

Deno.test("pins: pin needs a stored blob; pin/unpin/list/unpinOwner; re-pin updates", async () => {
  await withStore(async (store) => {
    const a = await store.cas.put(utf8("a"));
    const b = await store.cas.put(utf8("b"));
    await rejectsCode(store.pins.pin("0".repeat(64), { owner: "x" }), "blob_not_found");
    await rejectsCode(store.pins.pin(a.hash, { owner: "" }), "invalid_input");
    await rejectsCode(store.pins.pin("zz", { owner: "x" }), "bad_ref");
    const p = await store.pins.pin(a.ref, { owner: "task:1", reason: "spill" });
    assert.equal(p.hash, a.hash);
    assert.equal(p.reason, "spill");
    assert.equal(p.expiresAt, null);
    const again = await store.pins.pin(a.hash, { owner: "task:1", reason: "still spill" });
    assert.equal(again.createdAt, p.createdAt);
    assert.equal(again.reason, "still spill");
    await store.pins.pin(b.hash, { owner: "task:1" });
    await store.pins.pin(a.hash, { owner: "session:main", reason: "user" });
    assert.equal((await store.pins.list()).length, 3);
    assert.deepEqual((await store.pins.list({ hash: a.hash })).map((x) => x.owner).sort(), [
      "session:main",
      "task:1",
    ]);
    assert.equal(await store.pins.unpin(a.hash, "session:main"), true);
    assert.equal(await store.pins.unpin(a.hash, "session:main"), false);
    assert.equal(await store.pins.unpinOwner("task:1"), 2);
    assert.deepEqual(await store.pins.list(), []);
  }, { journalMode: "inline" });
});

Deno.test("gc is a dry run by default and deletes unreferenced old blobs only with apply", async () => {
  await withStore(async (store) => {
    const old = await oldBlob(store, randomBytes(1000), 2 * DAY);
    const young = await store.cas.put(randomBytes(1000));
    const plan = await store.gc({ ttlMs: DAY });
    assert.equal(plan.applied, false);
    assert.deepEqual(plan.blobs.map((b) => [b.hash, b.reason]), [[old.hash, "ttl"]]);
    assert.equal(plan.bytesFreed, old.storedSize);
    assert.equal(plan.casBytesBefore, old.storedSize + young.storedSize);
    assert.equal(await store.cas.has(old.hash), true, "dry run deleted nothing");

    const done = await store.gc({ ttlMs: DAY, apply: true });
    assert.equal(done.applied, true);
    assert.deepEqual(done.blobs.map((b) => b.hash), [old.hash]);
    assert.equal(done.bytesFreed, old.storedSize);
    assert.equal(await store.cas.has(old.hash), false);
    assert.equal(await store.cas.has(young.hash), true);
    await rejectsCode(store.cas.get(old.hash), "blob_not_found");
  }, { journalMode: "inline" });
});

Deno.test("gc never deletes a blob referenced by a journal row or pinned, even far over budget", async () => {
  await withStore(async (store) => {
    const referenced = await oldBlob(store, randomBytes(5000), 10 * DAY);
    const stmtOnly = await oldBlob(store, randomBytes(5000), 10 * DAY);
    const pinned = await oldBlob(store, randomBytes(5000), 10 * DAY);
    const loose = await oldBlob(store, randomBytes(5000), 10 * DAY);
    await requestWith(store, referenced.ref, 5000, 0);
    // a reference held only by a statement row counts too
    const id = await store.journal.beginRequest({
      session: "s",
      principal: "p",
      source: "x",
      cwd: "/",
    });
    await store.journal.finishRequest(id, { status: "ok", durationNs: 1 }, [{
      source: "x",
      status: "ok",
      durationNs: 1,
      outputs: [{ kind: "value", len: 5000, ref: stmtOnly.ref }],
    }]);
    await store.pins.pin(pinned.hash, { owner: "user", reason: "keep" });

    const r = await store.gc({ ttlMs: DAY, budgetBytes: 0, apply: true });
    assert.deepEqual(r.blobs.map((b) => b.hash), [loose.hash]);
    assert.equal(r.budgetMet, false, "the rest is protected, so the budget cannot be met");
    for (const keep of [referenced, stmtOnly, pinned]) {
      assert.equal((await store.cas.get(keep.hash)).length, 5000);
    }
    assert.equal(await store.cas.has(loose.hash), false);
  }, { journalMode: "inline" });
});

Deno.test("ttl deletes old journal rows (with statements) and then their now-unreferenced blobs", async () => {
  await withStore(async (store) => {
    const oldOut = await oldBlob(store, randomBytes(3000), 3 * DAY);
    const newOut = await oldBlob(store, randomBytes(3000), 3 * DAY);
    const oldId = await requestWith(store, oldOut.ref, 3000, 3 * DAY);
    const newId = await requestWith(store, newOut.ref, 3000, 0);
    const running = await store.journal.beginRequest({
      session: "s",
      principal: "p",
      source: "sleep",
      cwd: "/",
      startedAt: Date.now() - 5 * DAY,
    });
    const plan = await store.gc({ ttlMs: DAY });
    assert.deepEqual(plan.journal.requests, 1);
    assert.deepEqual(plan.journal.statements, 1);
    assert.deepEqual(plan.blobs.map((b) => b.hash), [oldOut.hash]);
    assert.ok(await store.journal.get(oldId), "dry run kept the row");

    await store.gc({ ttlMs: DAY, apply: true });
    assert.equal(await store.journal.get(oldId), null);
    assert.equal((await store.journal.query({ parentId: oldId })).length, 0);
    assert.ok(await store.journal.get(newId));
    assert.equal(
      (await store.journal.get(running))?.status,
      "running",
      "running rows are never expired",
    );
    assert.equal(await store.cas.has(oldOut.hash), false);
    assert.equal(await store.cas.has(newOut.hash), true);
  }, { journalMode: "inline" });
});

Deno.test("budget deletes the oldest unreferenced blobs first, down to the budget", async () => {
  await withStore(async (store) => {
    const b1 = await oldBlob(store, randomBytes(1000), 5 * DAY);
    const b2 = await oldBlob(store, randomBytes(1000), 4 * DAY);
    const b3 = await oldBlob(store, randomBytes(1000), 3 * DAY);
    const each = b1.storedSize;
    const r = await store.gc({ budgetBytes: each * 2, apply: true });
    assert.deepEqual(r.blobs.map((b) => [b.hash, b.reason]), [[b1.hash, "budget"]]);
    assert.equal(r.casBytesAfter, each * 2);
    assert.equal(r.budgetMet, true);
    const r2 = await store.gc({ budgetBytes: each, apply: true });
    assert.deepEqual(r2.blobs.map((b) => b.hash), [b2.hash]);
    assert.equal(await store.cas.has(b3.hash), true);
  }, { journalMode: "inline" });
});

Deno.test("young blobs are protected by the grace period; expired pins stop protecting", async () => {
  await withStore(async (store) => {
    const young = await store.cas.put(randomBytes(1000));
    const r = await store.gc({ budgetBytes: 0, apply: true });
    assert.deepEqual(r.blobs, []);
    assert.equal(await store.cas.has(young.hash), true);

    const old = await oldBlob(store, randomBytes(1000), 2 * DAY);
    await store.pins.pin(old.hash, { owner: "lease", expiresAt: Date.now() - 1 });
    const r2 = await store.gc({ budgetBytes: 0, apply: true });
    assert.deepEqual(r2.blobs.map((b) => b.hash), [old.hash]);
    assert.equal(r2.journal.pins, 1);
    assert.deepEqual(await store.pins.list(), []);
  }, { journalMode: "inline" });
});

Deno.test("gc removes orphan temp files and restores a tombstone left by a crashed gc", async () => {
  await withStore(async (store) => {
    const keep = await oldBlob(store, randomBytes(2000), DAY);
    // a crashed gc left this blob moved aside
    const tomb = join(store.cas.tmpDir, `.gc-${keep.hash}-crashed`);
    await Deno.rename(store.cas.pathOf(keep.hash), tomb);
    const orphan = join(store.cas.tmpDir, ".tmp-999-orphan");
    const orphan2 = join(store.cas.dir, keep.hash.slice(0, 2), ".tmp-999-orphan2");
    await Deno.writeFile(orphan, randomBytes(10));
    await Deno.writeFile(orphan2, randomBytes(10));
    const fresh = join(store.cas.tmpDir, ".tmp-999-inflight");
    await Deno.writeFile(fresh, randomBytes(10));
    const t = new Date(Date.now() - DAY);
    for (const p of [orphan, orphan2]) await Deno.utime(p, t, t);

    const dry = await store.gc({});
    assert.equal(dry.tempFiles, 3);
    assert.equal((await Deno.stat(orphan)).isFile, true, "dry run keeps them");
    await store.gc({ apply: true });
    await assert.rejects(Deno.stat(orphan));
    await assert.rejects(Deno.stat(orphan2));
    assert.equal((await Deno.stat(fresh)).isFile, true, "young temp files may be in flight");
    assert.equal((await store.cas.get(keep.hash)).length, 2000, "tombstone restored");
  }, { journalMode: "inline" });
});

Deno.test("a put racing an applying gc never loses the bytes it reported stored", async () => {
  await withStore(async (store) => {
    for (let round = 0; round < 20; round++) {
      const data = randomBytes(1500);
      const b = await oldBlob(store, data, 3 * DAY);
      // The put may land before the scan (blob not chosen), between scan and deletion (GC
      // sees the refreshed mtime and moves the file back) or after (fresh copy): never lost.
      const [, put] = await Promise.all([
        store.gc({ budgetBytes: 0, apply: true }),
        new Promise<void>((r) => setTimeout(r, round % 5)).then(() => store.cas.put(data)),
      ]);
      assert.equal(put.hash, b.hash);
      assert.deepEqual(await store.cas.get(b.hash), data, `round ${round}`);
    }
  }, { journalMode: "inline" });
});

Deno.test("referencedAmong sees journal refs and live pins, not expired pins", async () => {
  await withStore(async (store) => {
    const a = await store.cas.put(utf8("ref by row"));
    const b = await store.cas.put(utf8("pinned"));
    const c = await store.cas.put(utf8("expired pin"));
    const d = await store.cas.put(utf8("loose"));
    await requestWith(store, a.ref, 10, 0);
    await store.pins.pin(b.hash, { owner: "o" });
    await store.pins.pin(c.hash, { owner: "o", expiresAt: Date.now() - 1000 });
    const live = await store.journalClient.call(
      "referencedAmong",
      [a.hash, b.hash, c.hash, d.hash],
      Date.now(),
    );
    assert.deepEqual(live.sort(), [a.hash, b.hash].sort());
  }, { journalMode: "inline" });
});

Deno.test("gc option errors are invalid_input", async () => {
  await withStore(async (store) => {
    await rejectsCode(store.gc({ ttlMs: -1 }), "invalid_input");
    await rejectsCode(store.gc({ budgetBytes: 1.5 }), "invalid_input");
    await rejectsCode(store.gc({ apply: "yes" as never }), "invalid_input");
  }, { journalMode: "inline" });
});
