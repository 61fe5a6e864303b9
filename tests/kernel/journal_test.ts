/**
 * The kernel's journal (issue 7) against in-process kernels with real session Workers on temp
 * sockets and temp state directories: exec rows, journal.query filters (D-1, D-11), blob.get
 * (D-8) including a blob corrupted on disk, durable channels across a restart (D-20), undo in
 * the language with staleness checks, and `val:blake3:` refs after a restart.
 */

import {
  deepStrictEqual as assertEquals,
  match as assertMatch,
  ok as assert,
} from "node:assert/strict";
import { join } from "node:path";
import { KernelClient } from "../../lib/client/client.ts";
import { RPC } from "../../lib/client/errors.ts";
import type { KernelEvent } from "../../lib/client/protocol.ts";
import { type KernelHandle, startKernel } from "../../lib/kernel/server.ts";
import { openStore } from "../../lib/store/mod.ts";
import { defaultJournalAccess, queryFilter } from "../../lib/kernel/kernel_journal.ts";
import { client, rpcError, tempDir, waitFor } from "./_helpers.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
type R = Record<string, unknown>;
type Entry = R & { id: number; outputs: Array<R & { kind: string; hash: string | null }> };

function start(dir: string, extra: Partial<Parameters<typeof startKernel>[0]> = {}) {
  return startKernel({
    socket: join(dir, "run", "k.sock"),
    stateDir: join(dir, "state"),
    cwd: join(dir, "work"),
    onError: () => {},
    ...extra,
  });
}

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await tempDir();
  await Deno.mkdir(join(dir, "work"));
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

async function session(k: KernelHandle, name = "main"): Promise<KernelClient> {
  return await client(k.path, name);
}

/** Run `fn` against a fresh kernel (state in a temp dir) and a client of its `main` session. */
async function withKernel(
  fn: (ctx: { dir: string; k: KernelHandle; c: KernelClient }) => Promise<void>,
  extra: Partial<Parameters<typeof startKernel>[0]> = {},
): Promise<void> {
  await withDir(async (dir) => {
    const k = await start(dir, extra);
    try {
      const c = await session(k);
      try {
        await fn({ dir, k, c });
      } finally {
        c.close();
      }
    } finally {
      await k.close();
    }
  });
}

const exec = (c: KernelClient, src: string) => c.call<R>("exec", { src });
const render = async (c: KernelClient, src: string) => String((await exec(c, src)).render);
const query = (c: KernelClient, p: R = {}) => c.call<Entry[]>("journal.query", p);

/** What a kernel reported to its `onError` (pass `onError` to `start`). */
function reported() {
  const errors: string[] = [];
  return { errors, onError: (e: unknown) => errors.push(String((e as Error)?.message ?? e)) };
}

/** Subscribe to the journal channel; the returned wait resolves with the first `{error}`. */
async function journalErrorEvent(c: KernelClient): Promise<() => Promise<R>> {
  const events: KernelEvent[] = [];
  await c.subscribe("journal", (e) => events.push(e));
  const found = () => events.find((e) => (e.payload as R)?.error !== undefined);
  return async () => {
    await waitFor(() => found() !== undefined, 5000, "a journal event carrying the error");
    return found()!.payload as R;
  };
}

Deno.test(
  "every exec writes a request row with statement rows, outputs and effects",
  opts,
  async () => {
    await withKernel(async ({ dir, c }) => {
      const t0 = Date.now() * 1e6;
      await exec(c, "let x = 20\necho hi > a.txt\nx + 1");
      await exec(c, "^true");
      await rpcError(exec(c, "rm nothing-here.txt"));
      await rpcError(exec(c, "1 +"));
      const rows = await query(c);
      assertEquals(rows.map((r) => r.src), [
        "1 +",
        "rm nothing-here.txt",
        "^true",
        "let x = 20\necho hi > a.txt\nx + 1",
      ]);
      const [parseErr, rmErr, spawn, first] = rows;
      // The first exec: three statement rows linked by parent id, in order.
      assertEquals(first.kind, "request");
      assertEquals(first.state, "ok");
      assertEquals(first.ok, true);
      assertEquals(first.session, "main");
      assertEquals(first.principal, `uid:${Deno.uid()}`);
      assertEquals((first.cwd as R).display, join(dir, "work"));
      assertMatch(String(first.env_hash), /^[0-9a-f]{64}$/);
      assert((first.ts as number) >= t0 - 1e6 && typeof first.dur_ns === "number");
      assertEquals((first.ast as R).kind, "Program");
      assertEquals(first.effects, [{ kind: "fs_write", paths: [join(dir, "work", "a.txt")] }]);
      const value = first.outputs.find((o) => o.kind === "value")!;
      assertEquals(JSON.parse(String(value.preview)), { $: "int", v: 21 });
      const one = await c.call<R & { statements: Entry[] }>("journal.get", { id: first.id });
      assertEquals(one.statements.map((s) => [s.kind, s.parent_id, s.src, s.state]), [
        ["statement", first.id, "let x = 20", "ok"],
        ["statement", first.id, "echo hi > a.txt", "ok"],
        ["statement", first.id, "x + 1", "ok"],
      ]);
      const stmts = await query(c, { kind: "statement" });
      assertEquals(stmts.length, 5, "3 + 1 (^true) + 1 (rm); a parse error has none");
      // External command: the plan's proc_spawn + opaque (issue 15); failure rows keep the
      // language error.
      assertEquals(spawn.effects, [
        { kind: "proc_spawn", bin_hash: "", argv0: "true" },
        { kind: "opaque" },
      ]);
      assertEquals(spawn.status, 0);
      assertEquals(rmErr.state, "error");
      assertEquals(rmErr.ok, false);
      assertEquals((rmErr.error as R).code, "custom");
      assertEquals(parseErr.ast, null);
      assertEquals((parseErr.error as R).code, "parse_error");
    });
  },
);

Deno.test(
  "journal.query: attachment, every filter in SQL before the limit, exact kinds",
  opts,
  async (t) => {
    await withDir(async (dir) => {
      const k = await start(dir);
      try {
        const raw = await KernelClient.connect({ socket: k.path });
        await t.step("requires attach (D-1)", async () => {
          assertEquals((await rpcError(raw.call("journal.query", {}))).code, RPC.NOT_ATTACHED);
          assertEquals(
            (await rpcError(raw.call("blob.get", { hash: "00" }))).code,
            RPC.NOT_ATTACHED,
          );
        });
        raw.close();
        const c = await session(k);
        const other = await session(k, "other");
        for (let i = 0; i < 30; i++) {
          await exec(c, i % 3 === 0 ? `echo ${i} > f${i}.txt` : `${i} * 2`);
        }
        await exec(other, "echo elsewhere > o.txt");
        const mid = Date.now() * 1e6;
        await new Promise((r) => setTimeout(r, 5));
        await exec(c, "^false").catch(() => {});
        await t.step("head + limit: the limit applies after the filter", async () => {
          const rows = await query(c, { head: "echo", limit: 4 });
          assertEquals(rows.length, 4);
          assert(rows.every((r) => r.head === "echo"));
          assertEquals(rows[0].src, "echo elsewhere > o.txt", "newest first, every session");
        });
        await t.step("effects: exact kinds, dots normalised, all-of", async () => {
          assertEquals((await query(c, { effects: ["fs.write"] })).length, 11);
          assertEquals((await query(c, { effects: ["fs"] })).length, 0, "no substring matches");
          assertEquals((await query(c, { effects: ["fs_write", "proc_spawn"] })).length, 0);
          assertEquals((await query(c, { effects: ["proc_spawn"], limit: 1 })).length, 1);
        });
        await t.step("ok, session, since/until in ns", async () => {
          const failed = await query(c, { ok: false });
          assertEquals(failed.map((r) => r.src), ["^false"]);
          assertEquals((await query(c, { session: "other" })).length, 1);
          const after = await query(c, { since: mid });
          assertEquals(after.map((r) => r.src), ["^false"]);
          const before = await query(c, { until: mid, limit: 1000 });
          assertEquals(before.length, 31);
          assertEquals((await query(c, { principal: "agent:nobody" })).length, 0);
        });
        await t.step("bad params are -32602", async () => {
          for (const p of [{ ok: "yes" }, { effects: "fs_write" }, { limit: -1 }, { kind: "x" }]) {
            assertEquals((await rpcError(query(c, p))).code, RPC.INVALID_PARAMS);
          }
        });
        c.close();
        other.close();
      } finally {
        await k.close();
      }
    });
  },
);

Deno.test(
  "blob.get: ranges bounded by the hard cap, JSON value blobs, corruption refused",
  opts,
  async (t) => {
    await withKernel(async ({ dir, c }) => {
      // A value bigger than an inline preview goes to the content store.
      await exec(c, 'let big = (1..=5000).map(i => "row {i}")\nbig');
      const [row] = await query(c, { limit: 1 });
      const out = row.outputs.find((o) => o.kind === "value")!;
      assertMatch(String(out.hash), /^[0-9a-f]{64}$/);
      const hash = out.hash!;
      await t.step("whole value blob comes back as its JSON", async () => {
        const r = await c.call<R>("blob.get", { hash });
        assertEquals(r.more, true, "over the 64 KiB cap: the first range only");
        const small = await c.call<R>("blob.get", { hash: `val:blake3:${hash}`, length: 10 });
        assertEquals(small.len, 10);
        assertEquals(small.offset, 0);
        assertEquals((small.value as R).$, "bytes");
        assertEquals(
          atob(String((small.value as R).v)),
          String.fromCharCode(...new TextEncoder().encode('{"$":"list')),
        );
        const tail = await c.call<R>("blob.get", { hash, offset: (r.size as number) - 5 });
        assertEquals(tail.len, 5);
        assertEquals(tail.more, false);
        const capped = await c.call<R>("blob.get", { hash, length: 10_000_000 });
        assertEquals(capped.len, 65536, "length is clamped to the hard cap (D-8)");
      });
      await t.step("errors: missing hash, malformed, unknown, past the end", async () => {
        const e1 = await rpcError(c.call("blob.get", {}));
        assertEquals([e1.code, e1.message], [RPC.INVALID_PARAMS, "blob.get requires a hash"]);
        assertEquals((await rpcError(c.call("blob.get", { hash: "zz" }))).code, RPC.UNKNOWN_REF);
        const e3 = await rpcError(c.call("blob.get", { hash: "ab".repeat(32) }));
        assertEquals([e3.code, e3.message], [RPC.UNKNOWN_REF, "unknown value hash"]);
        assertEquals((e3.data as R).code, "not_found");
        const e4 = await rpcError(c.call("blob.get", { hash, offset: 10_000_000 }));
        assertEquals(e4.code, RPC.BAD_PATH_OR_SLICE);
        assertEquals(
          (await rpcError(c.call("blob.get", { hash, length: -1 }))).code,
          RPC.INVALID_PARAMS,
        );
      });
      await t.step("a blob corrupted on disk is refused, never served", async () => {
        const file = join(dir, "state", "cas", hash.slice(0, 2), hash.slice(2));
        const bytes = await Deno.readFile(file);
        bytes[bytes.length - 3] ^= 0xff;
        await Deno.writeFile(file, bytes);
        const e = await rpcError(c.call("blob.get", { hash, offset: 0, length: 16 }));
        assertEquals(e.code, RPC.UNKNOWN_REF);
        assertEquals((e.data as R).code, "io_error");
        assertEquals((e.data as R).store_code, "blob_corrupt");
      });
    });
  },
);

Deno.test(
  "durable channels continue across a restart; history and subscribe replay from the journal (D-20)",
  opts,
  async () => {
    await withDir(async (dir) => {
      let k = await start(dir);
      let c = await session(k);
      for (let i = 0; i < 5; i++) await exec(c, `${i}`);
      const before = await c.call<{ events: KernelEvent[] }>("events.read", { channel: "journal" });
      assertEquals(before.events.map((e) => e.seq), [0, 1, 2, 3, 4]);
      assertEquals((before.events[4].payload as R).head, "4");
      c.close();
      await k.close();

      k = await start(dir);
      try {
        c = await session(k);
        // After the restart the ring is empty: history comes from the journal.
        const tr = await c.call<{ events: KernelEvent[] }>("events.read", {
          channel: "session.transcript",
          since: 1,
        });
        assertEquals(tr.events.map((e) => e.seq), [2, 3, 4]);
        assertEquals((tr.events[0].payload as R).ref, "out:3");
        // Subscribing with a cursor replays from the journal, then continues live, densely.
        const got: KernelEvent[] = [];
        await c.subscribe("journal", (e) => got.push(e), 2);
        await exec(c, "40 + 2");
        await waitFor(() => got.length >= 3, 5000, "replay + live journal events");
        assertEquals(got.map((e) => e.seq), [3, 4, 5]);
        assertEquals((got[2].payload as R).head, "40");
        const latest = await c.call<{ events: KernelEvent[] }>("events.read", {
          channel: "journal",
          limit: 2,
        });
        assertEquals(latest.events.map((e) => e.seq), [4, 5]);
        // Sessions are separate streams (D-21).
        const o = await session(k, "other");
        await exec(o, "1");
        const theirs = await o.call<{ events: KernelEvent[] }>("events.read", {
          channel: "journal",
        });
        assertEquals(theirs.events.map((e) => e.seq), [0]);
        o.close();
        c.close();
      } finally {
        await k.close();
      }
      // The store holds exactly those streams, dense.
      const store = await openStore(join(dir, "state"), { journalMode: "inline" });
      try {
        const seqs = (await store.events.readSince("journal", null, 100, { scope: "main" })).map((
          e,
        ) => e.seq);
        assertEquals(seqs, [0, 1, 2, 3, 4, 5]);
      } finally {
        await store.close();
      }
    });
  },
);

Deno.test(
  "undo in the language: trash move, restored bytes, move back; stale targets refused",
  opts,
  async (t) => {
    await withKernel(async ({ dir, c }) => {
      const work = join(dir, "work");
      await t.step("rm then undo moves the file back", async () => {
        await Deno.writeTextFile(join(work, "a.txt"), "A");
        await exec(c, "rm a.txt");
        assertEquals(await render(c, "path('a.txt').exists"), "false");
        assertMatch(await render(c, "undo"), /trash_move/);
        assertEquals(await Deno.readTextFile(join(work, "a.txt")), "A");
      });
      await t.step("> overwrite then undo ID restores the prior bytes", async () => {
        await exec(c, "echo one > b.txt");
        await exec(c, "echo two > b.txt");
        const [row] = await query(c, { limit: 1 });
        await exec(c, "echo unrelated > c.txt");
        assertMatch(await render(c, `undo ${row.id}`), /restore_bytes/);
        assertEquals(await Deno.readTextFile(join(work, "b.txt")), "one\n");
        const e = await rpcError(exec(c, `undo ${row.id}`));
        assertEquals((e.data as R).code, "stale_undo", "already undone");
      });
      await t.step("mv then undo moves it back", async () => {
        await exec(c, "mv b.txt d.txt");
        await render(c, "undo");
        assertEquals(await Deno.readTextFile(join(work, "b.txt")), "one\n");
      });
      await t.step("a changed target is stale: nothing is touched", async () => {
        await exec(c, "echo first > e.txt");
        await exec(c, "echo second > e.txt");
        await Deno.writeTextFile(join(work, "e.txt"), "edited by someone else\n");
        const e = await rpcError(exec(c, "undo"));
        assertEquals((e.data as R).code, "stale_undo");
        assertEquals(await Deno.readTextFile(join(work, "e.txt")), "edited by someone else\n");
        await Deno.writeTextFile(join(work, "g.txt"), "G");
        await exec(c, "rm g.txt");
        await Deno.writeTextFile(join(work, "g.txt"), "new file in the way");
        const e2 = await rpcError(exec(c, "undo"));
        assertEquals((e2.data as R).code, "stale_undo");
        assertMatch(e2.message, /something now exists/);
        assertEquals(await Deno.readTextFile(join(work, "g.txt")), "new file in the way");
      });
      await t.step("undo errors: no such entry, bad id", async () => {
        assertEquals(((await rpcError(exec(c, "undo 999999"))).data as R).code, "not_found");
        assertEquals(((await rpcError(exec(c, "undo x"))).data as R).code, "arg_error");
      });
      await t.step("journal/history heads read the journal", async () => {
        const v = await exec(c, "journal --head=rm --limit=1");
        assertMatch(String(v.render), /rm g\.txt/);
        const h = await exec(c, "(history --limit=3).len()");
        assertEquals(h.value, { $: "int", v: 3 });
      });
    });
  },
);

Deno.test(
  "val:blake3 refs resolve after a restart; without a journal they are not_found",
  opts,
  async () => {
    await withDir(async (dir) => {
      let k = await start(dir);
      let c = await session(k);
      await exec(c, "(1..=3000).map(i => i * 2)");
      const [row] = await query(c, { limit: 1 });
      const hash = row.outputs.find((o) => o.kind === "value")!.hash!;
      c.close();
      await k.close();
      k = await start(dir);
      try {
        c = await session(k);
        assertEquals((await exec(c, `"val:blake3:${hash}".len()`)).value, { $: "int", v: 3000 });
        assertEquals((await exec(c, `"val:blake3:${hash}".last()`)).value, { $: "int", v: 6000 });
        const e = await rpcError(exec(c, `"val:blake3:${"0".repeat(64)}".len()`));
        assertEquals((e.data as R).code, "not_found");
        c.close();
      } finally {
        await k.close();
      }
      // A kernel without a journal: the corpus's message, undo refused, journal empty.
      const bare = await start(dir, { journal: false, socket: join(dir, "run2", "k.sock") });
      try {
        c = await session(bare);
        const e = await rpcError(exec(c, `"val:blake3:${hash}".len()`));
        assertMatch(e.message, /this session has no journal\/CAS/);
        const u = await rpcError(exec(c, "undo"));
        assertEquals((u.data as R).code, "custom");
        assertMatch(u.message, /no journal/);
        assertEquals((await exec(c, "journal")).value, { $: "table", cols: {}, n: 0 });
        assertEquals(await query(c), []);
        c.close();
      } finally {
        await bare.close();
      }
    });
  },
);

Deno.test("an ephemeral kernel journals in memory and leaves nothing behind", opts, async () => {
  await withDir(async (dir) => {
    const k = await start(dir, { stateDir: null, ephemeral: true });
    try {
      const c = await session(k);
      await exec(c, "1 + 1");
      assertEquals((await query(c)).map((r) => r.src), ["1 + 1"]);
      c.close();
    } finally {
      await k.close();
    }
    assertEquals(await Deno.stat(join(dir, "state")).catch(() => null), null);
  });
});

Deno.test(
  "stdout beyond the capture cap goes to the CAS: lazy bytes with their true size, readable by range",
  opts,
  async () => {
    await withDir(async (dir) => {
      // SHOAL_CAPTURE_CAP_BYTES is read once per session worker, when its module loads.
      Deno.env.set("SHOAL_CAPTURE_CAP_BYTES", "1000");
      const k = await start(dir);
      try {
        const c = await session(k);
        await exec(c, "let o = (seq 1 5000)");
        const shown = await render(c, "o.stdout");
        // The resident prefix reads as text; the last line gives the true size and content ref.
        assertMatch(shown, /^1\n2\n3\n/);
        assertMatch(shown, /\nbytes\(23\.89kb\) val:blake3:[0-9a-f]{64}$/);
        const hash = shown.slice(-64);
        assertEquals((await exec(c, "o.stdout.len()")).value, { $: "int", v: 23893 });
        assertEquals((await exec(c, "o.stdout.str().lines().last()")).value, {
          $: "str",
          v: "5000",
        });
        assertEquals((await exec(c, "o.stdout.is_empty()")).value, { $: "bool", v: false });
        // The whole output is one verified blob; blob.get reads any range of it.
        const r = await c.call<R>("blob.get", { hash, offset: 23893 - 5, length: 5 });
        assertEquals(atob(String((r.value as R).v)), "4999\n5000\n".slice(-5));
        assertEquals(r.size, 23893);
        // An outcome in final position records the ref as its stdout output.
        await exec(c, "seq 1 3000");
        const [row] = await query(c, { limit: 1 });
        const out = row.outputs.find((o) => o.kind === "stdout")!;
        assertMatch(String(out.hash), /^[0-9a-f]{64}$/);
        assertEquals(out.len, 13893);
        // No spill file is left behind.
        const tmp = [...Deno.readDirSync(join(dir, "state", "cas", "tmp"))];
        assertEquals(tmp.filter((e) => e.name.startsWith(".tmp-spill-")), []);
        c.close();
      } finally {
        Deno.env.delete("SHOAL_CAPTURE_CAP_BYTES");
        await k.close();
      }
    });
  },
);

Deno.test(
  "journal write failures are reported on stderr and the journal channel; execs still run",
  opts,
  async () => {
    await withDir(async (dir) => {
      const { errors, onError } = reported();
      const k = await start(dir, { journalMaxBytes: 160 * 1024, onError });
      try {
        const c = await session(k);
        const errorEvent = await journalErrorEvent(c);
        // Big sources fill the capped database quickly.
        const filler = "x".repeat(8000);
        let answered = 0;
        for (let i = 0; i < 60; i++) {
          const r = await exec(c, `"${filler}".len() + ${i}`);
          assertEquals(r.value, { $: "int", v: 8000 + i }, "the exec itself never fails");
          answered++;
        }
        assertEquals(answered, 60);
        await waitFor(() => errors.length > 0, 5000, "a reported journal error");
        assert(errors.some((m) => /^journal: .*(full|journal_full)/i.test(m)), errors.join("\n"));
        const err = await errorEvent();
        assertEquals((err.error as R).code, "journal_full");
        c.close();
      } finally {
        await k.close();
      }
    });
  },
);

Deno.test("D-1: without journal_read a principal's query is scoped to its own rows", () => {
  const me = `uid:${Deno.uid()}`;
  assertEquals(defaultJournalAccess(me), "all");
  assertEquals(queryFilter({ principal: "agent:a" }, me).principal, "agent:a");
  assertEquals(queryFilter({}, me).principal, undefined, "the local user reads every row");
  assertEquals(defaultJournalAccess("agent:reviewer"), "own");
  assertEquals(queryFilter({}, "agent:reviewer").principal, "agent:reviewer");
  assertEquals(
    queryFilter({ principal: "agent:reviewer" }, "agent:reviewer").principal,
    "agent:reviewer",
  );
  let code = 0;
  try {
    queryFilter({ principal: me }, "agent:reviewer");
  } catch (e) {
    code = (e as { code: number }).code;
  }
  assertEquals(code, RPC.LEASH_DENIED);
  code = 0;
  try {
    queryFilter({}, "agent:none", "none");
  } catch (e) {
    code = (e as { code: number }).code;
  }
  assertEquals(code, RPC.LEASH_DENIED, "no journal_read at all: refused");
  // ns bounds become inclusive ms bounds; kinds are normalised.
  const f = queryFilter({ since: 1_500_000, until: 2_500_000, effects: ["fs.write"] }, me);
  assertEquals([f.since, f.until, f.effects], [2, 2, ["fs_write"]]);
  assertEquals(queryFilter({ kind: "all" }, me).kind, undefined);
  assertEquals(queryFilter({}, me).kind, "request");
});

Deno.test(
  "effects derived from the fs builtins: mkdir, touch, cp write; rm deletes",
  opts,
  async () => {
    await withKernel(async ({ dir, c }) => {
      const w = join(dir, "work");
      await exec(c, "mkdir d\ntouch d/a.txt\ncp d/a.txt d/b.txt\nrm --permanent d/a.txt");
      const [row] = await query(c, { limit: 1 });
      // The derived plan (issue 15), canonical: one effect per kind, sorted paths.
      assertEquals(row.effects, [
        { kind: "fs_read", paths: [join(w, "d", "a.txt")] },
        { kind: "fs_write", paths: [join(w, "d"), join(w, "d", "a.txt"), join(w, "d", "b.txt")] },
        { kind: "fs_delete", paths: [join(w, "d", "a.txt")] },
      ]);
      assertEquals((await query(c, { effects: ["fs_delete", "fs_write"] })).length, 1);
    });
  },
);

Deno.test(
  "value.get slices and raw reads of lazy bytes come from the content store",
  opts,
  async () => {
    await withDir(async (dir) => {
      Deno.env.set("SHOAL_CAPTURE_CAP_BYTES", "100");
      const k = await start(dir);
      try {
        const c = await session(k);
        const v = await exec(c, "(seq 1 500).stdout");
        const ref = String(v.ref);
        // Bytes 1000.. lie beyond the 100-byte in-memory prefix.
        const s = await c.call<R>("value.get", { ref, slice: [1000, 1010], format: "raw" });
        const all = Array.from({ length: 500 }, (_, i) => `${i + 1}\n`).join("");
        assertEquals(atob(String(s.raw_base64)), all.slice(1000, 1010));
        const whole = await c.call<R>("value.get", { ref, format: "raw" });
        assertEquals(atob(String(whole.raw_base64)), all);
        c.close();
      } finally {
        Deno.env.delete("SHOAL_CAPTURE_CAP_BYTES");
        await k.close();
      }
    });
  },
);

Deno.test(
  "a big value shown again names its stored blob, and stores it again if retention removed it",
  opts,
  async () => {
    await withKernel(async ({ dir, c }) => {
      await exec(c, "let t = (0..5000).map(i => {a: i, b: 'row {i}'})");
      await exec(c, "t");
      const valueHash = (e: Entry) => e.outputs.find((o) => o.kind === "value")?.hash;
      const [first] = (await query(c, { limit: 1 })).map(valueHash);
      assert(first, "the big value went to the content store");
      // The blob disappears behind the session's back (as a retention run would remove it).
      // (The content store keeps a blob at cas/<first two hex>/<the rest>.)
      await Deno.remove(join(dir, "state", "cas", first.slice(0, 2), first.slice(2)));
      await exec(c, "t");
      await exec(c, "t.take(4000)");
      const [other, again] = (await query(c, { limit: 2 })).map(valueHash);
      assertEquals(again, first, "shown again: the same content, the same blob");
      assert(other && other !== first, "another value: another blob");
      const blob = await c.call<R>("blob.get", { hash: first, length: 16 });
      assert(blob, "the blob is there again");
    });
  },
);

Deno.test(
  "an exec the intake cannot take still answers; the failure is reported, never hidden",
  opts,
  async () => {
    await withDir(async (dir) => {
      const { errors, onError } = reported();
      const k = await start(dir, { onError });
      try {
        // The first session worker's intake file name is taken by a directory.
        const token = [...Deno.readDirSync(join(dir, "state", "writers"))]
          .map((e) => e.name.replace(/\.lock$/, ""))[0];
        await Deno.mkdir(join(dir, "state", "intake", `${token}.1.0.log`), { recursive: true });
        const c = await session(k);
        const errorEvent = await journalErrorEvent(c);
        const r = await exec(c, "40 + 2");
        assertEquals(r.value, { $: "int", v: 42 }, "the exec itself never fails");
        await waitFor(() => errors.length > 0, 5000, "a reported journal error");
        assert(errors.some((m) => /journal intake failed/.test(m)), errors.join("\n"));
        await errorEvent();
        c.close();
      } finally {
        await k.close();
      }
    });
  },
);
