import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { openStore, SCHEMA_VERSION } from "../../lib/store/mod.ts";
import { migrate, schemaVersion } from "../../lib/store/schema.ts";
import { rejectsCode, withTempDir } from "./_helpers.ts";
import { Conn } from "../../lib/store/sqlite_conn.ts";
import { recordRequest } from "../../lib/store/journal_rows.ts";

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
      assert.deepEqual(store.openInfo.migrated, [2, 3, 4]);
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
      [1, 2, 3, 4],
    );
    assert.equal(schemaVersion(check), SCHEMA_VERSION);
    check.close();
  });
});

Deno.test("a v3 journal with rows migrates to v4: rows intact, lookup indexes made partial", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "journal.db");
    const db = new DatabaseSync(path);
    db.exec("PRAGMA journal_mode = WAL");
    assert.deepEqual(migrate(db, 3), [1, 2, 3]);
    const c = new Conn(db);
    const ids = ["main", "main", "other"].map((session, i) =>
      recordRequest(
        c,
        null,
        { session, principal: `p${i}`, source: `cmd${i} x`, cwd: "/", startedAt: 1000 * (i + 1) },
        { status: "ok", durationNs: 5 },
        [{ source: `cmd${i} x`, status: "ok", durationNs: 1 }, {
          source: "tail",
          status: "ok",
          durationNs: 1,
        }],
      )
    );
    const before = db.prepare("SELECT * FROM journal ORDER BY id").all();
    assert.equal(before.length, 9);
    db.close();

    const store = await openStore(dir, { journalMode: "inline" });
    try {
      assert.deepEqual(store.openInfo.migrated, [4]);
      const got = await store.journal.get(ids[1]);
      assert.deepEqual(got?.statements.map((s) => [s.parentId, s.ordinal, s.source]), [
        [ids[1], 0, "cmd1 x"],
        [ids[1], 1, "tail"],
      ]);
      const q = async (f: Parameters<typeof store.journal.query>[0]) =>
        (await store.journal.query(f)).map((e) => e.id);
      assert.deepEqual(await q({ kind: "request", session: "main" }), [ids[1], ids[0]]);
      assert.deepEqual(await q({ kind: "request", principal: "p2" }), [ids[2]]);
      assert.deepEqual(await q({ kind: "request", head: "cmd0" }), [ids[0]]);
      assert.deepEqual(await q({ kind: "request", since: 1500, until: 2500 }), [ids[1]]);
      assert.equal((await q({ kind: "statement", session: "main" })).length, 4);
      assert.equal(await store.journal.integrityCheck(), "ok");
    } finally {
      await store.close();
    }
    const check = new DatabaseSync(path);
    assert.deepEqual(check.prepare("SELECT * FROM journal ORDER BY id").all(), before);
    const sql = Object.fromEntries(
      check.prepare(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'journal'",
      )
        .all().map((r) => [r.name, String(r.sql).replace(/\s+/g, " ")]),
    );
    for (
      const name of ["journal_started", "journal_principal", "journal_session", "journal_head"]
    ) {
      assert.match(sql[name], /WHERE kind = 'request'$/, name);
    }
    assert.match(sql.journal_parent, /\(parent_id, ordinal\) WHERE parent_id IS NOT NULL$/);
    assert.match(sql.journal_running, /WHERE status = 'running'$/);
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
