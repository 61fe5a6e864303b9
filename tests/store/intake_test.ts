/**
 * The journal intake (lib/store/intake.ts, intake_apply.ts): lines a session worker appends
 * are folded into SQLite exactly once, torn and corrupt lines never become wrong rows, a dead
 * writer's intake is folded at open with its unfinished exec marked so, and folded segments go.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  type IntakeFinish,
  type IntakeWhole,
  IntakeWriter,
  openStore,
  type Store,
} from "../../lib/store/mod.ts";
import { intakeExtent } from "../../lib/store/intake_map.ts";
import { withStore, withTempDir } from "./_helpers.ts";

const begin = (k: number, source: string) => ({
  t: "b" as const,
  k,
  row: { session: "s", principal: "human", source, cwd: "/w", ast: null, startedAt: 1000 },
});

const finish = (k: number, ok = true): IntakeFinish => ({
  t: "f",
  k,
  result: { status: ok ? "ok" : "error", ok, durationNs: 5 },
  statements: [{ source: "x", status: "ok", ok: true, durationNs: 4 }],
  undo: [],
});

/** A whole-exec line (begin and finish in one) for exec `k`. */
const whole = (k: number, source: string): IntakeWhole => {
  const { k: _k, ...rest } = finish(k);
  return { ...rest, t: "x", k, row: begin(k, source).row };
};

async function rows(store: Store) {
  return (await store.journal.query({ kind: "request" })).map((r) => [r.source, r.status]);
}

Deno.test("intake lines fold into rows with their statements; reads see them at once", async () => {
  await withStore(async (store) => {
    const w = new IntakeWriter(store.intakeDir, store.openInfo.intakeToken!, 1);
    w.append(begin(1, "a 1"));
    w.append(finish(1));
    w.append(begin(2, "b 2"));
    // No explicit fold: a read folds first (read-your-writes across the intake).
    assert.deepEqual(await rows(store), [["b 2", "running"], ["a 1", "ok"]]);
    w.append(finish(2, false));
    const r = await store.journal.intakeTake();
    assert.deepEqual(r.errors, []);
    assert.deepEqual(r.finished.map((n) => [n.head, n.ok, n.session]), [
      ["a", true, "s"],
      ["b", false, "s"],
    ]);
    assert.deepEqual(await rows(store), [["b 2", "error"], ["a 1", "ok"]]);
    const full = await store.journal.get(r.finished[0].id);
    assert.equal(full?.statements.length, 1);
    // Folding again applies nothing twice.
    assert.deepEqual((await store.journal.intakeTake()).finished, []);
    assert.equal((await store.journal.query({ kind: "request" })).length, 2);
  }, { journalMode: "inline" });
});

Deno.test("an exec with nothing between begin and finish folds from one line", async () => {
  await withStore(async (store) => {
    const w = new IntakeWriter(store.intakeDir, store.openInfo.intakeToken!, 1);
    w.append(whole(1, "whole 1"));
    w.append(begin(2, "split 2"));
    w.append(finish(2));
    const r = await store.journal.intakeTake();
    assert.deepEqual(r.errors, []);
    assert.deepEqual(await rows(store), [["split 2", "ok"], ["whole 1", "ok"]]);
    assert.equal((await store.journal.get(r.finished[0].id))?.statements.length, 1);
  }, { journalMode: "inline" });
});

Deno.test("a torn line waits for its end; a corrupt line is reported and passed over", async () => {
  await withStore(async (store) => {
    const token = store.openInfo.intakeToken!;
    await Deno.mkdir(store.intakeDir, { recursive: true });
    const path = join(store.intakeDir, `${token}.7.0.log`);
    const line = JSON.stringify(begin(1, "torn 1")) + "\n";
    await Deno.writeTextFile(path, line.slice(0, 10));
    assert.deepEqual(await rows(store), [], "half a line is not a row");
    await Deno.writeTextFile(path, line.slice(10), { append: true });
    await Deno.writeTextFile(path, "{not json\n", { append: true });
    await Deno.writeTextFile(path, JSON.stringify(finish(1)) + "\n", { append: true });
    const r = await store.journal.intakeTake();
    assert.equal(r.errors.length, 1);
    assert.match(r.errors[0].message, /corrupt line/);
    assert.deepEqual(r.errors[0].workers, [], "a parse problem names no failed write");
    assert.deepEqual(await rows(store), [["torn 1", "ok"]]);
  }, { journalMode: "inline" });
});

Deno.test("a dead writer's intake is folded at open: finished rows ok, the rest unfinished", async () => {
  await withTempDir(async (dir) => {
    const intake = join(dir, "intake");
    // A token of the lock format whose lock file does not exist: that process is gone.
    const dead = `w999999-${crypto.randomUUID()}`;
    // A plain segment (written with `write`, as on a host without FFI)…
    const w = new IntakeWriter(intake, dead, 3, { map: false });
    w.append(begin(1, "done 1"));
    w.append(finish(1));
    w.append(begin(2, "cut 2"));
    assert.equal(w.mapped, false);
    // …and a torn last line from the moment it died.
    await Deno.writeTextFile(join(intake, `${dead}.3.0.log`), '{"t":"f","k":2,"res', {
      append: true,
    });
    const store = await openStore(dir, { journalMode: "inline" });
    try {
      assert.deepEqual(await rows(store), [["cut 2", "unfinished"], ["done 1", "ok"]]);
      assert.deepEqual([...Deno.readDirSync(intake)].map((e) => e.name), [], "folded files go");
      assert.equal(await store.journal.integrityCheck(), "ok");
    } finally {
      await store.close();
    }
    // Reopening folds nothing again.
    const again = await openStore(dir, { journalMode: "inline" });
    try {
      assert.equal((await again.journal.query({ kind: "request" })).length, 2);
    } finally {
      await again.close();
    }
  });
});

Deno.test("a live writer's intake is not touched by another process's open", async () => {
  await withTempDir(async (dir) => {
    const a = await openStore(dir, { journalMode: "inline" });
    try {
      const w = new IntakeWriter(a.intakeDir, a.openInfo.intakeToken!, 1);
      w.append(begin(1, "mine 1"));
      const b = await openStore(dir, { journalMode: "inline" });
      try {
        assert.deepEqual(await rows(b), [], "b neither folds nor ends a's running exec");
      } finally {
        await b.close();
      }
      w.append(finish(1));
      assert.deepEqual(await rows(a), [["mine 1", "ok"]]);
    } finally {
      await a.close();
    }
  });
});

Deno.test("ended segments and abandoned workers: files go, an open exec ends unfinished", async () => {
  await withStore(async (store) => {
    const token = store.openInfo.intakeToken!;
    const w = new IntakeWriter(store.intakeDir, token, 1);
    w.append(begin(1, "one 1"));
    w.append(finish(1));
    w.close(); // ends the segment
    const crashed = new IntakeWriter(store.intakeDir, token, 2);
    crashed.append(begin(1, "two 2"));
    await store.journal.intakeAbandon(2);
    assert.deepEqual(await rows(store), [["two 2", "unfinished"], ["one 1", "ok"]]);
    assert.deepEqual([...Deno.readDirSync(store.intakeDir)].map((e) => e.name), []);
  }, { journalMode: "inline" });
});

Deno.test("appends racing the journal thread's batches are all folded, none reported lost", async () => {
  await withTempDir(async (dir) => {
    const store = await openStore(dir); // the journal in its own Worker: a real race
    try {
      const w = new IntakeWriter(store.intakeDir, store.openInfo.intakeToken!, 1);
      const errors: unknown[] = [];
      const takes: Promise<unknown>[] = [];
      for (let k = 1; k <= 300; k++) {
        w.append(begin(k, `n ${k}`));
        takes.push(store.journal.intakeTake().then((r) => errors.push(...r.errors)));
        w.append(finish(k));
        if (k % 3 === 0) takes.push(store.journal.query({ limit: 1 }));
      }
      await Promise.all(takes);
      const r = await store.journal.intakeTake();
      errors.push(...r.errors);
      assert.deepEqual(errors, []);
      const all = await store.journal.query({ kind: "request", limit: 1000 });
      assert.equal(all.length, 300);
      assert.ok(all.every((e) => e.status === "ok"));
    } finally {
      await store.close();
    }
  });
});

Deno.test("an intake path that is not a directory is refused at open with a clear error", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(join(dir, "intake"), "not a directory");
    await assert.rejects(
      openStore(dir, { journalMode: "inline" }),
      (e: Error & { code?: string }) => {
        assert.equal(e.code, "io_error");
        assert.match(e.message, /journal intake .* cannot be read/);
        return true;
      },
    );
  });
});

Deno.test("statement ASTs written once in the row are restored on every statement row", async () => {
  await withStore(async (store) => {
    const w = new IntakeWriter(store.intakeDir, store.openInfo.intakeToken!, 1);
    const stmtA = { type: "Expr", n: 1 };
    const stmtB = { type: "Expr", n: 2 };
    const row = { ...begin(1, "a; b").row, ast: { type: "Program", body: [stmtA, stmtB] } };
    w.append({
      t: "x",
      k: 1,
      row,
      result: { status: "ok", ok: true, durationNs: 5 },
      statements: [
        { source: "a", status: "ok", ok: true, durationNs: 1 },
        { source: "b", status: "ok", ok: true, durationNs: 1 },
      ],
      undo: [],
      stmtAst: "body",
    });
    const r = await store.journal.intakeTake();
    assert.deepEqual(r.errors, []);
    const full = await store.journal.get(r.finished[0].id);
    assert.deepEqual(full?.statements.map((st) => st.ast), [stmtA, stmtB]);
    assert.deepEqual(full?.ast, row.ast);
  }, { journalMode: "inline" });
});

Deno.test("a dead writer's partly folded intake resumes at its mark: nothing is applied twice", async () => {
  await withTempDir(async (dir) => {
    const a = await openStore(dir, { journalMode: "inline" });
    const token = a.openInfo.intakeToken!;
    const w = new IntakeWriter(a.intakeDir, token, 1);
    w.append(begin(1, "one 1"));
    w.append(finish(1));
    w.append(begin(2, "two 2"));
    await a.journal.intakeTake(); // folds all three; exec 2 stays running, pending in the mark
    // Writer a dies without closing (its liveness lock goes with the process).
    await Deno.remove(join(dir, "writers", `${token}.lock`));
    const b = await openStore(dir, { journalMode: "inline" });
    try {
      assert.deepEqual(await rows(b), [["two 2", "unfinished"], ["one 1", "ok"]]);
      assert.equal((await b.journal.query({ kind: "statement" })).length, 1, "no row twice");
      assert.deepEqual([...Deno.readDirSync(b.intakeDir)].map((e) => e.name), []);
    } finally {
      await b.close();
      await a.close();
    }
  });
});

/** Where a mapped segment's committed lines end (its reader's view). */
function committedEnd(path: string): number {
  const f = Deno.openSync(path);
  try {
    return intakeExtent(f).end;
  } finally {
    f.close();
  }
}

/** Bytes at `offset` of `path`, written in place (what a writer copying a line left behind). */
async function writeAt(path: string, offset: number, text: string): Promise<void> {
  const f = await Deno.open(path, { write: true });
  try {
    await f.seek(offset, Deno.SeekMode.Start);
    await f.write(new TextEncoder().encode(text));
  } finally {
    f.close();
  }
}

Deno.test("segments are memory-mapped: a header, then lines up to the committed end", async () => {
  await withStore(async (store) => {
    const token = store.openInfo.intakeToken!;
    const w = new IntakeWriter(store.intakeDir, token, 1);
    w.append(begin(1, "a 1"));
    w.append(finish(1));
    assert.equal(w.mapped, true, "this host maps intake segments (FFI granted, Linux)");
    const path = join(store.intakeDir, `${token}.1.0.log`);
    const bytes = await Deno.readFile(path);
    assert.equal(new TextDecoder().decode(bytes.subarray(0, 8)), "SHOALMM1");
    const committed = new DataView(bytes.buffer).getUint32(8, true);
    const lines = new TextDecoder().decode(bytes.subarray(4096, committed));
    assert.deepEqual(lines.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l).t), [
      "b",
      "f",
    ]);
    assert.ok(bytes.subarray(committed).every((b) => b === 0), "nothing past the committed end");
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    // Bytes past the committed end are a line being copied: never read as one.
    await writeAt(path, committed, JSON.stringify(begin(9, "half")) + "\n");
    assert.deepEqual(await rows(store), [["a 1", "ok"]]);
    // The writer goes on from its committed end (over the uncommitted bytes).
    w.append(begin(2, "b 2"));
    w.append(finish(2));
    assert.deepEqual(await rows(store), [["b 2", "ok"], ["a 1", "ok"]]);
    assert.deepEqual((await store.journal.intakeTake()).errors, []);
  }, { journalMode: "inline" });
});

Deno.test("a mapped segment's line that was never committed is dropped at open and reported", async () => {
  await withTempDir(async (dir) => {
    const intake = join(dir, "intake");
    const dead = `w999999-${crypto.randomUUID()}`;
    const w = new IntakeWriter(intake, dead, 3);
    w.append(begin(1, "done 1"));
    w.append(finish(1));
    w.append(begin(2, "cut 2"));
    const path = join(intake, `${dead}.3.0.log`);
    const committed = committedEnd(path);
    // It died copying the finish of exec 2: the bytes are there, the committed end is not.
    await writeAt(path, committed, JSON.stringify(finish(2)) + "\n");
    const store = await openStore(dir, { journalMode: "inline" });
    try {
      assert.deepEqual(await rows(store), [["cut 2", "unfinished"], ["done 1", "ok"]]);
      const r = await store.journal.intakeTake();
      assert.equal(r.errors.length, 1);
      assert.match(r.errors[0].message, /torn last line \(never committed\)/);
      assert.deepEqual([...Deno.readDirSync(intake)].map((e) => e.name), [], "folded files go");
    } finally {
      await store.close();
    }
  });
});

Deno.test("a line bigger than the mapped segment grows it; plain and mapped segments mix", async () => {
  await withStore(async (store) => {
    const token = store.openInfo.intakeToken!;
    const mapped = new IntakeWriter(store.intakeDir, token, 1);
    const plain = new IntakeWriter(store.intakeDir, token, 2, { map: false });
    const big = "x".repeat(3 * 1024 * 1024);
    mapped.append(begin(1, "big 1"));
    mapped.append({
      ...finish(1),
      statements: [{ source: big, status: "ok", ok: true, durationNs: 1 }],
    });
    plain.append(begin(1, "plain 1"));
    plain.append(finish(1));
    assert.equal(mapped.mapped, true);
    assert.equal(plain.mapped, false);
    assert.ok((await Deno.stat(join(store.intakeDir, `${token}.1.0.log`))).size > big.length);
    assert.deepEqual((await rows(store)).sort(), [["big 1", "ok"], ["plain 1", "ok"]]);
    const id = (await store.journal.query({ kind: "request", head: "big" }))[0].id;
    assert.equal((await store.journal.get(id))?.statements[0].source.length, big.length);
    assert.deepEqual((await store.journal.intakeTake()).errors, []);
  }, { journalMode: "inline" });
});

Deno.test("a line the journal refuses in the middle of a batch costs only itself, reported once", async () => {
  await withStore(async (store) => {
    const token = store.openInfo.intakeToken!;
    const w = new IntakeWriter(store.intakeDir, token, 1, { map: false });
    w.append(whole(1, "good 1"));
    await Deno.writeTextFile(join(store.intakeDir, `${token}.1.0.log`), "{corrupt\n", {
      append: true,
    });
    // Valid JSON, refused by the journal (a session name it does not take).
    w.append({ ...whole(2, "bad 2"), row: { ...begin(2, "bad 2").row, session: "" } });
    w.append(begin(3, "good 3"));
    w.append(finish(3));
    const r = await store.journal.intakeTake();
    // Each problem once, though the batch was folded twice (fast, then line by line).
    assert.equal(r.errors.length, 2, JSON.stringify(r.errors));
    assert.match(r.errors[0].message, /corrupt line/);
    assert.match(r.errors[1].message, /session/);
    assert.deepEqual(r.errors[1].workers, [1]);
    assert.deepEqual(r.finished.map((n) => n.head), ["good", "good"]);
    assert.deepEqual(await rows(store), [["good 3", "ok"], ["good 1", "ok"]]);
    // Nothing is applied twice by a later fold.
    assert.deepEqual((await store.journal.intakeTake()).finished, []);
    assert.equal((await store.journal.query({ kind: "request" })).length, 2);
  }, { journalMode: "inline" });
});

Deno.test("a transcript event is stored with its exec's row; one behind its stream is refused alone", async () => {
  await withStore(async (store) => {
    const w = new IntakeWriter(store.intakeDir, store.openInfo.intakeToken!, 1);
    const ev = (seq: number) => ({
      channel: "session.transcript",
      seq,
      ts: 1000 + seq,
      payload: { n: seq + 1, ref: `out:${seq + 1}` },
    });
    const withEv = (k: number, seq: number) => ({ ...whole(k, `x ${k}`), ev: ev(seq) });
    w.append(withEv(1, 0));
    w.append(begin(2, "f 2"));
    w.append({ ...finish(2), ev: ev(1) }); // a finish line carries it too
    w.append(withEv(3, 1)); // behind: another writer had seq 1
    w.append(withEv(4, 3)); // a gap (seq 2's exec was never logged) is taken
    const r = await store.journal.intakeTake();
    assert.equal(r.errors.length, 1, JSON.stringify(r.errors));
    assert.equal(r.errors[0].code, "event_seq_conflict");
    assert.match(r.errors[0].message, /transcript event of entry/);
    assert.equal((await store.journal.query({ kind: "request" })).length, 4, "every row stays");
    const evs = await store.events.readSince("session.transcript", -1, 100, { scope: "s" });
    assert.deepEqual(evs.map((e) => [e.seq, e.ts, (e.payload as { ref: string }).ref]), [
      [0, 1000, "out:1"],
      [1, 1001, "out:2"],
      [3, 1003, "out:4"],
    ]);
    assert.equal(await store.events.lastSeq("session.transcript", { scope: "s" }), 3);
  }, { journalMode: "inline" });
});

Deno.test("each folded exec's journal channel event is numbered and stored with its row", async () => {
  await withStore(async (store) => {
    const w = new IntakeWriter(store.intakeDir, store.openInfo.intakeToken!, 1);
    w.append(begin(1, "a 1"));
    w.append(finish(1));
    w.append(begin(2, "b 2"));
    w.append(finish(2, false));
    const r = await store.journal.intakeTake();
    assert.deepEqual(r.finished.map((n) => [n.head, n.seq]), [["a", 0], ["b", 1]]);
    const evs = await store.events.readSince("journal", -1, 100, { scope: "s" });
    assert.deepEqual(
      evs.map((e) => [e.seq, e.ts, e.payload]),
      r.finished.map((n) => [n.seq, n.ts, {
        entry_id: n.id,
        head: n.head,
        ok: n.ok,
        principal: "human",
        session: "s",
      }]),
    );
  }, { journalMode: "inline" });
});

Deno.test("the kernel's own journal events handed to a take are numbered after its rows", async () => {
  await withStore(async (store) => {
    const w = new IntakeWriter(store.intakeDir, store.openInfo.intakeToken!, 1);
    w.append(begin(1, "a 1"));
    w.append(finish(1));
    const report = { error: { code: "journal_write_failed", message: "x" }, entry_id: null };
    const r = await store.journal.intakeTake([{ scope: "s", payload: report }]);
    assert.deepEqual(r.finished.map((n) => n.seq), [0]);
    assert.deepEqual(r.events?.map((e) => [e.scope, e.seq, e.error, e.payload]), [
      ["s", 1, null, report],
    ]);
    const evs = await store.events.readSince("journal", -1, 10, { scope: "s" });
    assert.deepEqual(evs.map((e) => e.seq), [0, 1]);
    assert.deepEqual(evs[1].payload, report);
  }, { journalMode: "inline" });
});

Deno.test("a kernel event the journal cannot store keeps its number, which is never given again", async () => {
  await withStore(async (store) => {
    const take = async (payload: Record<string, unknown>) =>
      (await store.journal.intakeTake([{ scope: "s", payload }])).events![0];
    const first = await take({ i: 0 });
    assert.deepEqual([first.seq, first.error], [0, null]);
    assert.equal((await take({ i: 1 })).seq, 1);
    // Too big for this journal: not stored, but numbered (the kernel delivers it under seq 2).
    const big = await take({ blob: "x".repeat(1 << 20) });
    assert.equal(big.seq, 2);
    assert.equal(big.error?.code, "journal_full");
    const next = await take({ i: 3 });
    assert.deepEqual([next.seq, next.error], [3, null]);
    assert.deepEqual(
      (await store.events.readSince("journal", -1, 10, { scope: "s" })).map((e) => e.seq),
      [0, 1, 3],
    );
    // A number of a transaction that rolled back was never delivered: it is given again.
    await assert.rejects(store.events.append("journal", { i: 4 }, { scope: "s", seq: 9 }));
    assert.equal((await store.events.append("journal", { i: 4 }, { scope: "s" })).seq, 4);
  }, { journalMode: "inline", maxDbBytes: 256 * 1024 });
});

Deno.test("a line a full journal cannot take stays in the intake until it can be applied", async () => {
  await withTempDir(async (dir) => {
    const a = await openStore(dir, { journalMode: "inline", maxDbBytes: 256 * 1024 });
    const w = new IntakeWriter(a.intakeDir, a.openInfo.intakeToken!, 1, { map: false });
    const pad = "y".repeat(20_000);
    for (let k = 1; k <= 40; k++) w.append(whole(k, `big ${k} ${pad}`));
    const r = await a.journal.intakeTake();
    assert.equal(r.behind, true, "the fold says lines wait");
    const folded = r.finished.length;
    assert(folded > 0 && folded < 40, `folded ${folded} of 40 into a 256 KiB journal`);
    assert.match(r.errors.at(-1)!.message, /waits in the intake/);
    // A later fold retries (still full: still waiting, nothing dropped, nothing set aside).
    assert.equal((await a.journal.intakeTake()).behind, true);
    await a.close(); // the unfolded file stays for whoever opens the journal next
    const b = await openStore(dir, { journalMode: "inline" });
    try {
      const got = await b.journal.query({ kind: "request", limit: 100 });
      assert.equal(got.length, 40, "every line was applied once the journal had room");
      assert.deepEqual(
        got.map((e) => Number(e.source.split(" ")[1])).sort((x, y) => x - y),
        Array.from({ length: 40 }, (_, i) => i + 1),
      );
      assert.equal(
        [...Deno.readDirSync(b.intakeDir)].some((e) => e.name === "rejected.log"),
        false,
      );
    } finally {
      await b.close();
    }
  });
});

Deno.test("a line the journal can never take is set aside in rejected.log, not dropped", async () => {
  await withStore(async (store) => {
    const w = new IntakeWriter(store.intakeDir, store.openInfo.intakeToken!, 1, { map: false });
    w.append({ ...whole(1, "bad 1"), row: { ...begin(1, "bad 1").row, session: "" } });
    w.append(whole(2, "good 2"));
    const r = await store.journal.intakeTake();
    assert.match(r.errors[0].message, /set aside in rejected\.log/);
    const kept = Deno.readTextFileSync(join(store.intakeDir, "rejected.log")).trim().split("\n");
    assert.equal(kept.length, 1);
    assert.match(JSON.parse(kept[0]).line, /bad 1/);
    assert.equal(Deno.statSync(join(store.intakeDir, "rejected.log")).mode! & 0o077, 0);
    assert.deepEqual(await rows(store), [["good 2", "ok"]]);
  }, { journalMode: "inline" });
});
