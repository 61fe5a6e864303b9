import assert from "node:assert/strict";
import { join } from "node:path";
import { blake3Hex, fingerprint, type Store } from "../../lib/store/mod.ts";
import { rejectsCode, utf8, withStore } from "./_helpers.ts";

async function request(store: Store): Promise<number> {
  const id = await store.journal.beginRequest({
    session: "s",
    principal: "p",
    source: "rm a",
    cwd: "/",
  });
  await store.journal.finishRequest(id, { status: "ok", durationNs: 1 });
  return id;
}

Deno.test("fingerprint: file (size, mtime, blake3), dir, absent; symlinks refused", async () => {
  await withStore(async (store, dir) => {
    const f = join(dir, "f.txt");
    await Deno.writeTextFile(f, "hello");
    const fp = await fingerprint(f);
    assert.equal(fp.expect, "file");
    if (fp.expect !== "file") return;
    assert.equal(fp.size, 5);
    assert.equal(fp.blake3, await blake3Hex("hello"));
    assert.equal(fp.mtimeMs, (await Deno.stat(f)).mtime!.getTime());
    assert.deepEqual(await fingerprint(join(dir, "nope")), {
      path: join(dir, "nope"),
      expect: "absent",
    });
    assert.equal((await fingerprint(dir)).expect, "dir");
    await Deno.symlink(f, join(dir, "link"));
    await rejectsCode(fingerprint(join(dir, "link")), "invalid_input");
    void store;
  }, { journalMode: "inline" });
});

Deno.test("recordUndo validates kinds, paths and the journal row; list and markApplied", async () => {
  await withStore(async (store, dir) => {
    const id = await request(store);
    const original = join(dir, "a.txt");
    const trash = join(dir, "trash", "1-a.txt");
    const pre = [{ path: trash, expect: "file" as const, size: 1 }, {
      path: original,
      expect: "absent" as const,
    }];
    const r = await store.undo.recordUndo({
      journalId: id,
      kind: "trash_move",
      data: { original, trash },
      precondition: pre,
    });
    assert.equal(r.kind, "trash_move");
    assert.equal(r.journalId, id);
    assert.deepEqual(r.data, { original, trash });
    assert.deepEqual(r.precondition, pre);
    assert.equal(r.appliedAt, null);

    await rejectsCode(
      store.undo.recordUndo({
        journalId: 99_999,
        kind: "trash_move",
        data: { original, trash },
        precondition: pre,
      }),
      "journal_not_found",
    );
    await rejectsCode(
      store.undo.recordUndo({
        journalId: id,
        kind: "trash_move",
        data: { original: "rel/a", trash },
        precondition: pre,
      }),
      "invalid_input",
    );
    await rejectsCode(
      store.undo.recordUndo(
        {
          journalId: id,
          kind: "delete_all" as never,
          data: { original, trash },
          precondition: pre,
        } as never,
      ),
      "invalid_input",
    );
    await rejectsCode(
      store.undo.recordUndo({
        journalId: id,
        kind: "move_back",
        data: { from: original, to: trash },
        precondition: [],
      }),
      "invalid_input",
    );
    await rejectsCode(
      store.undo.recordUndo({
        journalId: id,
        kind: "move_back",
        data: { from: original, to: trash },
        precondition: [{ path: original, expect: "sometimes" as never }],
      }),
      "invalid_input",
    );
    const mb = await store.undo.recordUndo({
      journalId: id,
      kind: "move_back",
      data: { from: trash, to: original },
      precondition: [{ path: original, expect: "absent" }],
    });
    assert.deepEqual((await store.undo.listUndo()).map((u) => u.id), [mb.id, r.id], "newest first");
    assert.deepEqual((await store.undo.listUndo({ journalId: id, pending: true })).length, 2);
    const applied = await store.undo.markApplied(mb.id);
    assert.ok(applied.appliedAt !== null);
    await rejectsCode(store.undo.markApplied(mb.id), "undo_already_applied");
    await rejectsCode(store.undo.markApplied(12345), "undo_not_found");
    assert.deepEqual((await store.undo.listUndo({ pending: true })).map((u) => u.id), [r.id]);
    assert.deepEqual((await store.undo.listUndo({ pending: false })).map((u) => u.id), [mb.id]);
    assert.equal((await store.undo.get(r.id))?.kind, "trash_move");
    assert.equal(await store.undo.get(777), null);
  }, { journalMode: "inline" });
});

Deno.test("restore_bytes needs its prior blob and keeps it alive against gc", async () => {
  await withStore(async (store, dir) => {
    const id = await request(store);
    const path = join(dir, "conf");
    await Deno.writeTextFile(path, "new contents");
    const prior = await store.cas.put(utf8("old contents"));
    const old = new Date(Date.now() - 7 * 86_400_000);
    await Deno.utime(store.cas.pathOf(prior.hash), old, old);
    await rejectsCode(
      store.undo.recordUndo({
        journalId: id,
        kind: "restore_bytes",
        data: { path, prior: `val:blake3:${"1".repeat(64)}` },
        precondition: [await fingerprint(path)],
      }),
      "blob_not_found",
    );
    const r = await store.undo.recordUndo({
      journalId: id,
      kind: "restore_bytes",
      data: { path, prior: prior.hash },
      precondition: [await fingerprint(path)],
    });
    assert.equal(r.kind === "restore_bytes" && r.data.prior, prior.ref);
    const gc = await store.gc({ budgetBytes: 0, apply: true });
    assert.ok(!gc.blobs.some((b) => b.hash === prior.hash));
    assert.deepEqual(await store.cas.get(prior.hash), utf8("old contents"));
  }, { journalMode: "inline" });
});

Deno.test("checkStale: fresh until the target changes size, content, kind or existence", async () => {
  await withStore(async (store, dir) => {
    const id = await request(store);
    const path = join(dir, "target");
    const gone = join(dir, "was-removed");
    await Deno.writeTextFile(path, "version-1");
    const rec = await store.undo.recordUndo({
      journalId: id,
      kind: "restore_bytes",
      data: { path, prior: (await store.cas.put(utf8("version-0"))).hash },
      precondition: [await fingerprint(path), { path: gone, expect: "absent" }],
    });
    assert.deepEqual(await store.undo.checkStale(rec), { state: "fresh" });

    // same size, same mtime, different bytes: only the hash can tell
    const st = await Deno.stat(path);
    await Deno.writeTextFile(path, "version-2");
    await Deno.utime(path, st.atime!, st.mtime!);
    const stale = await store.undo.checkStale(rec);
    assert.equal(stale.state, "stale");
    assert.ok(
      stale.state === "stale" && /contents changed/.test(stale.reason),
      JSON.stringify(stale),
    );

    await Deno.writeTextFile(path, "version-1 longer");
    const bySize = await store.undo.checkStale(rec);
    assert.ok(bySize.state === "stale" && /size changed/.test(bySize.reason));

    await Deno.remove(path);
    const byAbsence = await store.undo.checkStale(rec);
    assert.ok(byAbsence.state === "stale" && /no longer exists/.test(byAbsence.reason));
    assert.equal(byAbsence.state === "stale" && byAbsence.path, path);

    await Deno.mkdir(path);
    const byKind = await store.undo.checkStale(rec);
    assert.ok(byKind.state === "stale" && /no longer a regular file/.test(byKind.reason));
    await Deno.remove(path);

    await Deno.writeTextFile(path, "version-1");
    const t = new Date(st.mtime!.getTime());
    await Deno.utime(path, t, t);
    assert.deepEqual(
      await store.undo.checkStale(rec),
      { state: "fresh" },
      "restored state is fresh again",
    );

    await Deno.writeTextFile(gone, "appeared");
    const byPresence = await store.undo.checkStale(rec);
    assert.ok(byPresence.state === "stale" && byPresence.path === gone);
    await Deno.remove(gone);

    await Deno.rename(path, path + ".real");
    await Deno.symlink(path + ".real", path);
    const bySymlink = await store.undo.checkStale(rec);
    assert.ok(bySymlink.state === "stale" && /symlink/.test(bySymlink.reason));

    const applied = await store.undo.markApplied(rec.id);
    const byApplied = await store.undo.checkStale(applied);
    assert.ok(byApplied.state === "stale" && /already applied/.test(byApplied.reason));
  }, { journalMode: "inline" });
});
