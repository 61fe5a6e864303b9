import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import {
  type BeginRequestInput,
  envHash,
  openStore,
  QUERY_LIMIT_MAX,
  type StatementInput,
  type Store,
} from "../../lib/store/mod.ts";
import { MODES, rejectsCode, utf8, withStore, withTempDir } from "./_helpers.ts";
import { Conn } from "../../lib/store/sqlite_conn.ts";
import { migrate } from "../../lib/store/schema.ts";
import { get, query, recordRequest } from "../../lib/store/journal_rows.ts";
import { gcPlan } from "../../lib/store/gc_rows.ts";

const BASE: BeginRequestInput = {
  session: "main",
  principal: "human",
  source: "ls /tmp | where size > 1kb",
  cwd: "/home/u",
};

function stmt(source: string, extra: Partial<StatementInput> = {}): StatementInput {
  return { source, status: "ok", durationNs: 1000, ...extra };
}

/** begin + finish ok with `n` statements; returns the id. */
async function record(
  store: Store,
  input: Partial<BeginRequestInput> = {},
  opts: { ok?: boolean; statements?: number } = {},
): Promise<number> {
  const id = await store.journal.beginRequest({ ...BASE, ...input });
  const ok = opts.ok ?? true;
  await store.journal.finishRequest(
    id,
    ok ? { status: "ok", durationNs: 5000 } : {
      status: "error",
      durationNs: 5000,
      error: { code: "cmd_failed", message: "exit 1" },
      exitStatus: 1,
    },
    Array.from({ length: opts.statements ?? 0 }, (_, i) => stmt(`s${i} arg`)),
  );
  return id;
}

for (const mode of MODES) {
  const opts = { journalMode: mode };

  Deno.test(`[${mode}] beginRequest writes a running row; finishRequest writes outcome and statements`, async () => {
    await withStore(async (store) => {
      const t0 = Date.now();
      const id = await store.journal.beginRequest({
        ...BASE,
        ast: { type: "Program", stmts: [1, 2] },
        effects: [{ kind: "fs.read", paths: ["/tmp"] }, { kind: "opaque" }],
        envHash: "e".repeat(64),
      });
      const running = await store.journal.get(id);
      assert.equal(running?.status, "running");
      assert.equal(running?.ok, null);
      assert.equal(running?.durationNs, null);
      assert.equal(running?.kind, "request");
      assert.equal(running?.head, "ls");
      assert.ok(running!.startedAt >= t0 - 5);
      assert.deepEqual(running?.effects, [{ kind: "fs_read", paths: ["/tmp"] }, {
        kind: "opaque",
      }]);

      const out = await store.cas.put(utf8("x".repeat(10_000)));
      const res = await store.journal.finishRequest(id, {
        status: "ok",
        durationNs: 123_456,
        exitStatus: 0,
        outputs: [{
          kind: "stdout",
          len: out.size,
          ref: out.ref,
          preview: "xxxx",
          truncated: false,
        }],
      }, [
        stmt("ls /tmp", { effects: [{ kind: "fs_read", paths: ["/tmp"] }], ast: { k: "cmd" } }),
        stmt("where size > 1kb", {
          status: "error",
          ok: false,
          error: { code: "type_error", message: "no size" },
          startedAt: t0 + 1,
          cwd: "/elsewhere",
        }),
      ], { events: [{ channel: "journal", payload: { entry_id: id, head: "ls", ok: true } }] });
      assert.equal(res.id, id);
      assert.equal(res.statementIds.length, 2);
      assert.deepEqual(res.events.map((e) => [e.channel, e.seq]), [["journal", 0]]);

      const e = await store.journal.get(id);
      assert.ok(e);
      assert.equal(e.status, "ok");
      assert.equal(e.ok, true);
      assert.equal(e.durationNs, 123_456);
      assert.equal(e.exitStatus, 0);
      assert.equal(e.envHash, "e".repeat(64));
      assert.deepEqual(e.ast, { type: "Program", stmts: [1, 2] });
      assert.deepEqual(e.outputs, [{
        kind: "stdout",
        len: 10_000,
        ref: out.ref,
        preview: "xxxx",
        truncated: false,
      }]);
      assert.equal(e.statements.length, 2);
      const [s0, s1] = e.statements;
      assert.deepEqual([s0.kind, s0.parentId, s0.ordinal, s0.session, s0.principal], [
        "statement",
        id,
        0,
        "main",
        "human",
      ]);
      assert.equal(s0.cwd, "/home/u");
      assert.equal(s0.startedAt, e.startedAt);
      assert.deepEqual(s0.ast, { k: "cmd" });
      assert.equal(s1.status, "error");
      assert.equal(s1.ok, false);
      assert.deepEqual(s1.error, { code: "type_error", message: "no size" });
      assert.equal(s1.cwd, "/elsewhere");
      assert.equal(s1.head, "where");
      // a statement row read directly has no statements of its own
      assert.deepEqual((await store.journal.get(s0.id))?.statements, []);
      assert.equal(await store.journal.get(999_999), null);
    }, opts);
  });

  Deno.test(`[${mode}] finish errors: unknown id, finishing twice, finishing a statement, bad input writes nothing`, async () => {
    await withStore(async (store) => {
      await rejectsCode(
        store.journal.finishRequest(424242, { status: "ok", durationNs: 1 }),
        "journal_not_found",
      );
      const id = await store.journal.beginRequest(BASE);
      // invalid third statement: the whole finish is refused, the row stays running
      await rejectsCode(
        store.journal.finishRequest(id, { status: "ok", durationNs: 1 }, [
          stmt("a"),
          stmt("b"),
          { source: "c", status: "bogus" as never, durationNs: 1 },
        ]),
        "invalid_input",
      );
      assert.equal((await store.journal.get(id))?.status, "running");
      assert.equal((await store.journal.query({ kind: "statement" })).length, 0);
      // output pointing at a blob that is not stored: refused, nothing written
      await rejectsCode(
        store.journal.finishRequest(id, {
          status: "ok",
          durationNs: 1,
          outputs: [{ kind: "stdout", len: 1, ref: `val:blake3:${"ab".repeat(32)}` }],
        }),
        "blob_not_found",
      );
      assert.equal((await store.journal.get(id))?.status, "running");

      const done = await store.journal.finishRequest(id, { status: "cancelled", durationNs: 9 }, [
        stmt("a"),
      ]);
      await rejectsCode(
        store.journal.finishRequest(id, { status: "ok", durationNs: 1 }),
        "journal_not_running",
      );
      await rejectsCode(
        store.journal.finishRequest(done.statementIds[0], { status: "ok", durationNs: 1 }),
        "invalid_input",
      );
      const e = await store.journal.get(id);
      assert.equal(e?.status, "cancelled");
      assert.equal(e?.ok, false);
      assert.equal(e?.statements.length, 1);
    }, opts);
  });

  Deno.test(`[${mode}] bad begin input is invalid_input with the field named`, async () => {
    await withStore(async (store) => {
      const cases: Array<[Partial<BeginRequestInput> | null, string]> = [
        [{ session: "" }, "session"],
        [{ principal: 7 as never }, "principal"],
        [{ source: undefined as never }, "source"],
        [{ effects: [{ kind: "fs write" }] }, "effects[].kind"],
        [{ effects: "fs_write" as never }, "effects"],
        [{ startedAt: -5 }, "startedAt"],
        [{ ast: { self: 1n } as never }, "ast"],
      ];
      for (const [patch, field] of cases) {
        const e = await rejectsCode(
          store.journal.beginRequest({ ...BASE, ...patch }),
          "invalid_input",
        );
        assert.ok(e.message.includes(field), `${e.message} names ${field}`);
      }
      await rejectsCode(store.journal.beginRequest(null as never), "invalid_input");
      await rejectsCode(
        store.journal.finishRequest(0, { status: "ok", durationNs: 1 }),
        "invalid_input",
      );
      await rejectsCode(
        store.journal.finishRequest(1, { status: "ok", durationNs: -1 }),
        "invalid_input",
      );
      await rejectsCode(
        store.journal.finishRequest(1, {
          status: "ok",
          durationNs: 1,
          outputs: [{ kind: "stdout", len: 1 }],
        }),
        "invalid_input",
      );
      assert.equal((await store.journal.query()).length, 0, "nothing was written");
    }, opts);
  });

  Deno.test(`[${mode}] query filters: principal, session, head, ok, status, kind, parent, time`, async () => {
    await withStore(async (store) => {
      const a = await record(store, {
        principal: "agent:reviewer",
        source: "git status",
        startedAt: 1_000,
      });
      const b = await record(
        store,
        { session: "other", source: "  git log -1", startedAt: 2_000 },
        {
          ok: false,
          statements: 2,
        },
      );
      const c = await record(store, { source: "gitx", startedAt: 3_000 });
      const running = await store.journal.beginRequest({
        ...BASE,
        source: "sleep 5",
        startedAt: 4_000,
      });
      const ids = async (f: Parameters<Store["journal"]["query"]>[0]) =>
        (await store.journal.query(f)).map((e) => e.id);
      assert.deepEqual(await ids({ principal: "agent:reviewer" }), [a]);
      assert.deepEqual(await ids({ session: "other", kind: "request" }), [b]);
      assert.deepEqual(await ids({ head: "git" }), [b, a], "head is the exact first word");
      assert.deepEqual(await ids({ ok: false, kind: "request" }), [b]);
      assert.deepEqual(
        await ids({ ok: true, kind: "request" }),
        [c, a],
        "running rows never match ok",
      );
      assert.deepEqual(await ids({ status: "running" }), [running]);
      assert.deepEqual(await ids({ since: 2_000, until: 3_000, kind: "request" }), [c, b]);
      const stmts = await ids({ parentId: b });
      assert.equal(stmts.length, 2);
      assert.deepEqual(await ids({ kind: "statement" }), stmts);
      assert.deepEqual(await ids({ beforeId: c, kind: "request" }), [b, a]);
      assert.equal((await store.journal.query()).length, 6, "both kinds by default");
      await rejectsCode(store.journal.query({ kind: "coarse" as never }), "invalid_input");
      await rejectsCode(store.journal.query({ limit: -1 }), "invalid_input");
      await rejectsCode(store.journal.query({ ok: "yes" as never }), "invalid_input");
    }, opts);
  });

  Deno.test(`[${mode}] effect kinds match exactly (D-11): fs_write never matches fs_write_tmp`, async () => {
    await withStore(async (store) => {
      const w = await record(store, { effects: [{ kind: "fs_write", paths: ["/a"] }] });
      const tmp = await record(store, { effects: [{ kind: "fs_write_tmp", paths: ["/b"] }] });
      const both = await record(store, {
        effects: [{ kind: "fs.write", paths: ["/c"] }, {
          kind: "proc_spawn",
          argv0: "git",
          bin_hash: "",
        }],
      });
      // a path containing the word must not match either
      await record(store, { effects: [{ kind: "fs_read", paths: ["/fs_write"] }] });
      const ids = async (effects: string[]) =>
        (await store.journal.query({ effects })).map((e) => e.id);
      assert.deepEqual(await ids(["fs_write"]), [both, w]);
      assert.deepEqual(await ids(["fs.write"]), [both, w], "dots normalise to underscores");
      assert.deepEqual(await ids(["fs_write_tmp"]), [tmp]);
      assert.deepEqual(await ids(["fs_write", "proc.spawn"]), [both], "all-of");
      assert.deepEqual(await ids(["fs"]), []);
      // effects replaced at finish are what is matched
      const id = await store.journal.beginRequest({ ...BASE, effects: [{ kind: "opaque" }] });
      await store.journal.finishRequest(id, {
        status: "ok",
        durationNs: 1,
        effects: [{ kind: "net_connect", host: "h", port: 1 }],
      });
      assert.deepEqual(await ids(["net_connect"]), [id]);
      assert.deepEqual((await ids(["opaque"])).includes(id), false);
      await rejectsCode(store.journal.query({ effects: ["fs write"] }), "invalid_input");
    }, opts);
  });

  Deno.test(`[${mode}] every filter is applied before LIMIT (D-11)`, async () => {
    await withStore(async (store) => {
      const wanted: number[] = [];
      for (let i = 0; i < 3; i++) {
        wanted.push(
          await record(store, {
            effects: [{ kind: "fs_write", paths: ["/x"] }],
            startedAt: 1000 + i,
          }),
        );
      }
      // many newer rows that match none of the filters
      for (let i = 0; i < 40; i++) {
        await record(store, {
          effects: [{ kind: "fs_read", paths: ["/x"] }],
          startedAt: 50_000 + i,
        });
      }
      const byEffect = await store.journal.query({ effects: ["fs_write"], limit: 2 });
      assert.deepEqual(byEffect.map((e) => e.id), [wanted[2], wanted[1]]);
      const byUntil = await store.journal.query({ until: 1001, limit: 2 });
      assert.deepEqual(byUntil.map((e) => e.id), [wanted[1], wanted[0]]);
      const byBoth = await store.journal.query({ effects: ["fs_write"], until: 1000, limit: 5 });
      assert.deepEqual(byBoth.map((e) => e.id), [wanted[0]]);
    }, opts);
  });

  Deno.test(`[${mode}] limit defaults to 100 and is clamped to the maximum`, async () => {
    await withStore(async (store) => {
      for (let i = 0; i < 120; i++) await store.journal.beginRequest(BASE);
      assert.equal((await store.journal.query()).length, 100);
      assert.equal((await store.journal.query({ limit: 7 })).length, 7);
      assert.equal((await store.journal.query({ limit: 0 })).length, 100);
      assert.equal((await store.journal.query({ limit: QUERY_LIMIT_MAX * 10 })).length, 120);
    }, opts);
  });

  Deno.test(`[${mode}] a full journal is reported as journal_full, never swallowed`, async () => {
    await withStore(async (store) => {
      const big = "y".repeat(20_000);
      let err: unknown = null;
      const stored: number[] = [];
      for (let i = 0; i < 200 && err === null; i++) {
        try {
          stored.push(await store.journal.beginRequest({ ...BASE, source: big }));
        } catch (e) {
          err = e;
        }
      }
      assert.ok(err, "the cap was hit");
      assert.equal((err as { code: string }).code, "journal_full");
      // what was acknowledged is really there
      for (const id of stored) assert.equal((await store.journal.get(id))?.source, big);
    }, { ...opts, maxDbBytes: 256 * 1024 });
  });

  Deno.test(`[${mode}] a batch that hits the cap acknowledges only what is stored`, async () => {
    await withStore(async (store) => {
      const big = "z".repeat(20_000);
      const settled = await Promise.allSettled(
        Array.from({ length: 60 }, () => store.journal.beginRequest({ ...BASE, source: big })),
      );
      const ok = settled.filter((r) => r.status === "fulfilled").map((r) => r.value);
      const failed = settled.filter((r) => r.status === "rejected");
      assert.ok(failed.length > 0, "the cap was hit inside the burst");
      for (const f of failed) assert.equal(f.reason.code, "journal_full");
      for (const id of ok) assert.equal((await store.journal.get(id))?.source, big);
      assert.equal((await store.journal.query({ limit: 1000 })).length, ok.length);
    }, { ...opts, maxDbBytes: 256 * 1024 });
  });
}

Deno.test("concurrent writers in one batch: each write resolves only with its own result", async () => {
  await withStore(async (store) => {
    const ids = await Promise.all(
      Array.from(
        { length: 200 },
        (_, i) => store.journal.beginRequest({ ...BASE, source: `cmd${i}` }),
      ),
    );
    assert.equal(new Set(ids).size, 200);
    const bad = store.journal.beginRequest({ ...BASE, session: "" }).catch((e) => e.code);
    await Promise.all(
      ids.map((id, i) =>
        store.journal.finishRequest(id, { status: "ok", durationNs: i }, [stmt(`cmd${i}`)])
      ),
    );
    assert.equal(await bad, "invalid_input");
    for (const [i, id] of ids.entries()) {
      const e = await store.journal.get(id);
      assert.equal(e?.source, `cmd${i}`);
      assert.equal(e?.durationNs, i);
      assert.equal(e?.statements[0].source, `cmd${i}`);
    }
    const stats = await store.journalClient.stats();
    assert.ok(stats && stats.maxBatch > 1, "writes were grouped into shared transactions");
  });
});

Deno.test("the journal file uses WAL and synchronous=NORMAL; integrity_check is ok", async () => {
  await withTempDir(async (dir) => {
    const store = await openStore(dir);
    await record(store, {}, { statements: 3 });
    assert.equal(await store.journal.integrityCheck(), "ok");
    await store.close();
    const db = new DatabaseSync(join(dir, "journal.db"));
    assert.equal(
      (db.prepare("PRAGMA journal_mode").get() as { journal_mode: string }).journal_mode,
      "wal",
    );
    db.close();
    const st = await Deno.stat(dir);
    assert.equal(st.mode! & 0o777, 0o700);
  });
});

Deno.test("an ephemeral store keeps nothing under the state dir and removes its temp dir", async () => {
  await withTempDir(async (dir) => {
    const target = join(dir, "state");
    const store = await openStore(target, { ephemeral: true });
    assert.equal(store.ephemeral, true);
    const id = await record(store, {}, { statements: 1 });
    await store.cas.put(utf8("hi"));
    assert.equal((await store.journal.get(id))?.statements.length, 1);
    const tmp = store.stateDir;
    await store.close();
    await assert.rejects(Deno.stat(target));
    await assert.rejects(Deno.stat(tmp));
  });
});

Deno.test("calls after close are store_closed", async () => {
  await withTempDir(async (dir) => {
    const store = await openStore(dir);
    await store.close();
    await rejectsCode(store.journal.beginRequest(BASE), "store_closed");
    await store.close(); // idempotent
  });
});

Deno.test("openStore on a path that is a file, or with bad options, fails with a code", async () => {
  await withTempDir(async (dir) => {
    const file = join(dir, "not-a-dir");
    await Deno.writeTextFile(file, "x");
    await rejectsCode(openStore(file), "io_error");
    await rejectsCode(openStore(""), "invalid_input");
    await rejectsCode(
      openStore(join(dir, "s1"), { journalMode: "thread" as never }),
      "invalid_input",
    );
    await rejectsCode(openStore(join(dir, "s2"), { compression: "lz4" as never }), "invalid_input");
    await rejectsCode(
      openStore(join(dir, "s3"), { maxDbBytes: -1, journalMode: "inline" }),
      "invalid_input",
    );
    await rejectsCode(
      openStore(join(dir, "s4"), { busyTimeoutMs: 1.5, journalMode: "inline" }),
      "invalid_input",
    );
  });
});

Deno.test("envHash is a stable digest of the env, independent of key order (D-9)", async () => {
  const a = await envHash({ PATH: "/bin", HOME: "/root" });
  assert.match(a, /^[0-9a-f]{64}$/);
  assert.equal(await envHash({ HOME: "/root", PATH: "/bin" }), a);
  assert.notEqual(await envHash({ HOME: "/root", PATH: "/usr/bin" }), a);
  // no ambiguity between a key/value boundary and the content
  assert.notEqual(await envHash({ A: "B=C" }), await envHash({ "A=B": "C" }));
  await rejectsCode(envHash({ X: 1 as never }), "invalid_input");
});

/** A connection that remembers the SQL the row functions prepare, so a test can ask SQLite's
 * planner how each statement runs. */
class PlanConn extends Conn {
  readonly seen: string[] = [];
  override stmt(sql: string) {
    this.seen.push(sql);
    return super.stmt(sql);
  }
  /** EXPLAIN QUERY PLAN of the first statement `fn` prepares that matches `re`. */
  planOf(re: RegExp, fn: () => unknown): string {
    const from = this.seen.length;
    fn();
    const sql = this.seen.slice(from).find((s) => re.test(s));
    assert.ok(sql, `no statement matching ${re}`);
    return this.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all().map((r) => r.detail).join(" | ");
  }
}

Deno.test("request filters, a request's statements and GC's age delete use the partial indexes (v4)", () => {
  const c = new PlanConn(new DatabaseSync(":memory:"));
  try {
    migrate(c.db);
    const id = recordRequest(c, null, { ...BASE, startedAt: 1_000 }, {
      status: "ok",
      durationNs: 10,
    }, [stmt("a"), stmt("b")]);
    const select = /^SELECT .* FROM journal /s;
    const q = (f: Parameters<typeof query>[1]) => c.planOf(select, () => query(c, f));
    assert.match(
      q({ kind: "request", session: "main" }),
      /SEARCH journal USING INDEX journal_session \(session=\?\)/,
    );
    assert.match(
      q({ kind: "request", principal: "human" }),
      /SEARCH journal USING INDEX journal_principal \(principal=\?\)/,
    );
    assert.match(
      q({ kind: "request", head: "ls" }),
      /SEARCH journal USING INDEX journal_head \(head=\?\)/,
    );
    assert.match(
      q({ kind: "request", since: 500, until: 2_000 }),
      /SEARCH journal USING INDEX journal_started \(started_at>\? AND started_at<\?\)/,
    );
    assert.match(
      q({ parentId: id }),
      /SEARCH journal USING INDEX journal_parent \(parent_id=\?\)/,
    );
    assert.match(
      c.planOf(/parent_id = \?/, () => assert.equal(get(c, id)?.statements.length, 2)),
      /SEARCH journal USING INDEX journal_parent \(parent_id=\?\)/,
    );
    const gc = c.planOf(/^DELETE FROM journal /, () =>
      gcPlan(c, {
        cutoff: 5_000,
        now: 5_000,
        graceCutoff: 0,
        budgetBytes: null,
        casBytes: 0,
        candidates: [],
        apply: false,
      }));
    assert.match(gc, /SEARCH journal USING INDEX journal_started \(started_at<\?\)/);
    // The cascade to the request's statements finds them by parent too.
    assert.match(gc, /SEARCH journal USING COVERING INDEX journal_parent \(parent_id=\?\)/);
    // Statement rows are still found by their parent (and the dry run deleted nothing).
    assert.deepEqual(query(c, { parentId: id }).map((e) => [e.kind, e.ordinal]), [
      ["statement", 1],
      ["statement", 0],
    ]);
    assert.deepEqual(query(c, { kind: "request", session: "main" }).map((e) => e.id), [id]);
  } finally {
    c.db.close();
  }
});
