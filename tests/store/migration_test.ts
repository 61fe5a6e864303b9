import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { openStore, SCHEMA_VERSION } from "../../lib/store/mod.ts";
import { migrate, schemaVersion } from "../../lib/store/schema.ts";
import { rejectsCode, withTempDir } from "./_helpers.ts";

const INSERT_V1 = `INSERT INTO journal (kind, session, principal, started_at, cwd, source, head,
  effects, status, ok, duration_ns) VALUES ('request', 's', 'p', ?, '/', ?, ?, ?, 'ok', 1, 1)`;

Deno.test("a v1 journal is migrated forward on open and its rows gain indexed effect kinds", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "journal.db");
    const db = new DatabaseSync(path);
    db.exec("PRAGMA journal_mode = WAL");
    assert.deepEqual(migrate(db, 1), [1]);
    assert.equal(schemaVersion(db), 1);
    const ins = db.prepare(INSERT_V1);
    const w = Number(
      ins.run(1000, "cp a b", "cp", JSON.stringify([{ kind: "fs_write", paths: ["b"] }]))
        .lastInsertRowid,
    );
    const tmp = Number(
      ins.run(2000, "mktemp", "mktemp", JSON.stringify([{ kind: "fs_write_tmp", paths: [] }]))
        .lastInsertRowid,
    );
    const dotted = Number(
      ins.run(3000, "x", "x", JSON.stringify([{ kind: "fs.write", paths: [] }, { kind: "time" }]))
        .lastInsertRowid,
    );
    ins.run(4000, "bad", "bad", "not json");
    db.prepare("INSERT INTO event (channel, seq, ts, payload) VALUES ('journal', 0, 1, '{}')")
      .run();
    db.prepare("INSERT INTO event_channel (channel, next_seq) VALUES ('journal', 1)").run();
    db.close();

    const store = await openStore(dir);
    try {
      assert.deepEqual(store.openInfo.migrated, [2, 3]);
      assert.equal(store.openInfo.schemaVersion, SCHEMA_VERSION);
      const ids = async (effects: string[]) =>
        (await store.journal.query({ effects })).map((e) => e.id);
      assert.deepEqual(await ids(["fs_write"]), [dotted, w]);
      assert.deepEqual(await ids(["fs_write_tmp"]), [tmp]);
      assert.deepEqual(await ids(["time", "fs_write"]), [dotted]);
      assert.equal((await store.events.append("journal", {})).seq, 1);
    } finally {
      await store.close();
    }
    const check = new DatabaseSync(path);
    assert.deepEqual(
      check.prepare("SELECT version FROM schema_migration ORDER BY version").all().map((r) =>
        r.version
      ),
      [1, 2, 3],
    );
    assert.equal(schemaVersion(check), SCHEMA_VERSION);
    check.close();
  });
});

Deno.test("a journal from a newer Shoal is refused untouched (schema_too_new)", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "journal.db");
    const db = new DatabaseSync(path);
    db.exec(`PRAGMA user_version = ${SCHEMA_VERSION + 5}`);
    db.close();
    for (const journalMode of ["inline", "worker"] as const) {
      const e = await rejectsCode(openStore(dir, { journalMode }), "schema_too_new");
      assert.match(e.message, /newer than this Shoal/);
    }
    const after = new DatabaseSync(path);
    assert.equal(schemaVersion(after), SCHEMA_VERSION + 5);
    assert.equal(
      after.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'journal'").get()?.n,
      0,
    );
    after.close();
    const writers = await Array.fromAsync(Deno.readDir(join(dir, "writers"))).catch(() => []);
    assert.deepEqual(writers, [], "no writer lock left behind");
  });
});

Deno.test("a file that is not a database is journal_corrupt, not a crash", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(join(dir, "journal.db"), "this is not sqlite ".repeat(500));
    await rejectsCode(openStore(dir, { journalMode: "inline" }), "journal_corrupt");
    await rejectsCode(openStore(dir), "journal_corrupt");
  });
});

Deno.test("migrate is idempotent and versions are contiguous", () => {
  const db = new DatabaseSync(":memory:");
  assert.deepEqual(migrate(db), Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1));
  assert.deepEqual(migrate(db), []);
  db.close();
});
