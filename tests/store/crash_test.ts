import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { openStore } from "../../lib/store/mod.ts";
import { lineStream, withTempDir } from "./_helpers.ts";

const FIXTURE = new URL("./fixtures/crash_writer.ts", import.meta.url).pathname;

Deno.test({
  name: "SIGKILL mid-burst: db intact, every acknowledged request complete, the rest unfinished",
  async fn() {
    await withTempDir(async (dir) => {
      const child = new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", FIXTURE, dir, "4"],
        stdout: "piped",
        stderr: "inherit",
      }).spawn();
      const begun = new Set<number>();
      const finished = new Set<number>();
      const reader = lineStream(child.stdout).getReader();
      const deadline = Date.now() + 60_000;
      let killed = false;
      while (true) {
        const { value, done } = await reader.read();
        if (done) break;
        const [tag, n] = value.split(" ");
        if (tag === "B") begun.add(Number(n));
        if (tag === "F") finished.add(Number(n));
        if (!killed && (finished.size >= 400 || Date.now() > deadline)) {
          child.kill("SIGKILL"); // mid-burst: 4 loops are writing right now
          killed = true;
        }
      }
      const status = await child.status;
      assert.equal(status.signal, "SIGKILL", "the child was killed, not finished");
      assert.ok(finished.size >= 400, `acknowledged ${finished.size} requests before the kill`);

      // 1. The file itself: integrity and foreign keys, as any SQLite reader sees it.
      const raw = new DatabaseSync(join(dir, "journal.db"));
      assert.equal(
        (raw.prepare("PRAGMA integrity_check").get() as { integrity_check: string })
          .integrity_check,
        "ok",
      );
      assert.deepEqual(raw.prepare("PRAGMA foreign_key_check").all(), []);
      const runningRaw =
        (raw.prepare("SELECT count(*) AS n FROM journal WHERE status = 'running'").get() as {
          n: number;
        }).n;
      raw.close();

      console.log(
        `acked begins ${begun.size}, acked finishes ${finished.size}, running in file ${runningRaw}`,
      );
      // 2. Reopen: rows of the dead writer become unfinished.
      const store = await openStore(dir);
      try {
        assert.equal(store.openInfo.unfinished, runningRaw);
        assert.equal((await store.journal.query({ status: "running" })).length, 0);
        for (const id of finished) {
          const e = await store.journal.get(id);
          assert.equal(e?.status, "ok", `acknowledged request ${id} is stored`);
          assert.equal(e?.statements.length, 3);
          assert.deepEqual(e?.statements.map((s) => s.source), [`a ${id}`, `b ${id}`, `c ${id}`]);
          const text = new TextDecoder().decode(await store.cas.get(e!.outputs[0].ref!));
          assert.equal(text, `output of ${id}`);
        }
        const unacked = [...begun].filter((id) => !finished.has(id));
        for (const id of unacked) {
          const e = await store.journal.get(id);
          assert.ok(e, `acknowledged begin ${id} is stored`);
          // its finish either committed just before the kill (complete) or not at all
          if (e.status === "ok") assert.equal(e.statements.length, 3);
          else {
            assert.equal(e.status, "unfinished");
            assert.equal(e.statements.length, 0, "no statement rows without their outcome");
          }
        }
        // every request is all-or-nothing
        let completed = 0;
        for (let before: number | undefined = undefined;;) {
          const page = await store.journal.query({
            kind: "request",
            limit: 1000,
            beforeId: before,
          });
          if (page.length === 0) break;
          for (const e of page) {
            assert.ok(e.status === "ok" || e.status === "unfinished", `status ${e.status}`);
            if (e.status === "ok") completed++;
          }
          before = page[page.length - 1].id;
        }
        // journal events: dense seqs, one per completed request, all acknowledged ones present
        const evs = [];
        for (let since: number | null = null;;) {
          const page = await store.events.readSince("journal", since, 4096);
          if (page.length === 0) break;
          evs.push(...page);
          since = page[page.length - 1].seq;
        }
        assert.deepEqual(evs.map((e) => e.seq), evs.map((_, i) => i));
        const evIds = new Set(evs.map((e) => (e.payload as { entry_id: number }).entry_id));
        for (const id of finished) assert.ok(evIds.has(id), `event of ${id}`);
        assert.equal(evs.length, completed, "one event per completed request, no more");
        // writing continues normally after the crash
        const next = await store.events.append("journal", { entry_id: -1 });
        assert.equal(next.seq, evs.length);
      } finally {
        await store.close();
      }
    });
  },
});
