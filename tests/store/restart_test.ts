import assert from "node:assert/strict";
import { openStore } from "../../lib/store/mod.ts";
import { lineStream, randomBytes, utf8, withTempDir } from "./_helpers.ts";

Deno.test("reopening the same dir: rows, statements, refs, pins, undo and events survive", async () => {
  await withTempDir(async (dir) => {
    let store = await openStore(dir);
    const data = randomBytes(100_000);
    const blob = await store.cas.put(data);
    const text = await store.cas.put(utf8("text ".repeat(1000)));
    const id = await store.journal.beginRequest({
      session: "s",
      principal: "human",
      source: "cat f",
      cwd: "/",
    });
    await store.journal.finishRequest(id, {
      status: "ok",
      durationNs: 1,
      outputs: [{ kind: "stdout", len: data.length, ref: blob.ref }],
    }, [{
      source: "cat f",
      status: "ok",
      durationNs: 1,
      outputs: [{ kind: "value", len: 5000, ref: text.ref }],
    }], {
      events: [{ channel: "journal", payload: { entry_id: id } }],
    });
    await store.pins.pin(text.hash, { owner: "user" });
    await store.events.append("session.transcript", { n: 1 });
    await store.close();

    store = await openStore(dir);
    try {
      assert.deepEqual(store.openInfo.migrated, []);
      const e = await store.journal.get(id);
      assert.equal(e?.statements.length, 1);
      assert.deepEqual(await store.cas.get(e!.outputs[0].ref!), data, "refs resolve after restart");
      assert.equal((await store.cas.get(e!.statements[0].outputs[0].ref!)).length, 5000);
      assert.equal((await store.pins.list()).length, 1);
      assert.equal((await store.events.append("journal", { entry_id: 2 })).seq, 1);
      assert.equal((await store.events.append("session.transcript", { n: 2 })).seq, 1);
      const id2 = await store.journal.beginRequest({
        session: "s",
        principal: "human",
        source: "x",
        cwd: "/",
      });
      assert.ok(id2 > id, "ids keep increasing");
    } finally {
      await store.close();
    }
  });
});

Deno.test("crash honesty respects live processes: another live writer's running row is left alone", async () => {
  await withTempDir(async (dir) => {
    // create the db first so the child does not race schema creation with us
    await (await openStore(dir)).close();
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", new URL("./fixtures/hold_running.ts", import.meta.url).pathname, dir],
      stdout: "piped",
    }).spawn();
    const reader = lineStream(child.stdout).getReader();
    const id = Number((await reader.read()).value);
    assert.ok(id > 0);

    const store = await openStore(dir);
    try {
      assert.equal(store.openInfo.unfinished, 0);
      assert.equal((await store.journal.get(id))?.status, "running", "its writer is alive");
      assert.equal(await store.journal.sweepUnfinished(), 0);

      child.kill("SIGKILL");
      await child.status;
      await reader.cancel();
      assert.equal(await store.journal.sweepUnfinished(), 1);
      assert.equal((await store.journal.get(id))?.status, "unfinished");
      assert.equal(await store.journal.sweepUnfinished(), 0);
    } finally {
      await store.close();
    }
    // the dead writer's lock file is gone, ours was removed at close
    const locks = [...Deno.readDirSync(`${dir}/writers`)];
    assert.deepEqual(locks, []);
  });
});

Deno.test("rows left running by a closed-but-not-finished request of this store become unfinished on next open", async () => {
  await withTempDir(async (dir) => {
    let store = await openStore(dir, { journalMode: "inline" });
    const id = await store.journal.beginRequest({
      session: "s",
      principal: "p",
      source: "x",
      cwd: "/",
    });
    await store.close();
    store = await openStore(dir, { journalMode: "inline" });
    try {
      assert.equal(store.openInfo.unfinished, 1);
      assert.equal((await store.journal.get(id))?.status, "unfinished");
    } finally {
      await store.close();
    }
  });
});
