/**
 * The journal with real kernel processes (issue 7): SIGKILL in the middle of a burst of execs
 * leaves a healthy database where every exec a client saw finish is present and finished and
 * every other one is honestly `unfinished`; and the `shoal journal|gc|undo` CLI against a
 * state directory a kernel wrote (GC never deletes a referenced or pinned blob; undo refuses
 * stale state).
 */

import {
  deepStrictEqual as assertEquals,
  match as assertMatch,
  ok as assert,
} from "node:assert/strict";
import { join } from "node:path";
import { KernelClient } from "../../lib/client/client.ts";
import { openStore } from "../../lib/store/mod.ts";
import { spawnKernel, tempDir, waitFor } from "./_helpers.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
type R = Record<string, unknown>;
const MAIN = new URL("../../main.ts", import.meta.url).pathname;

async function shoal(args: string[], cwd?: string) {
  const o = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-worker-options", MAIN, ...args],
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: o.code, out: dec.decode(o.stdout), err: dec.decode(o.stderr) };
}

async function stop(child: Deno.ChildProcess, signal: Deno.Signal = "SIGTERM") {
  try {
    child.kill(signal);
  } catch { /* gone */ }
  await child.status;
}

Deno.test(
  "SIGKILL mid-burst: integrity ok, finished execs present, the rest unfinished",
  opts,
  async () => {
    const dir = await tempDir();
    const state = join(dir, "state");
    const sock = join(dir, "run", "k.sock");
    try {
      const k = await spawnKernel(sock, ["--state-dir", state]);
      const answered = new Map<string, string>();
      // The transcript refs each session answered (out:N): their events must survive too.
      const refs: string[][] = [[], [], [], []];
      const sent: string[] = [];
      const clients = await Promise.all(
        [0, 1, 2, 3].map((i) =>
          KernelClient.connect({ socket: sock, attach: { session: `s${i}` } })
        ),
      );
      // Four sessions keep submitting until the kernel dies; some execs sleep so that work is
      // in flight at the moment of the kill.
      let dead = false;
      const bursts = clients.map(async (c, i) => {
        for (let n = 0; !dead && n < 10_000; n++) {
          const src = n % 7 === 3 ? `sleep 50ms; ${i * 100000 + n}` : `${i * 100000 + n} + 0`;
          sent.push(src);
          try {
            const r = await c.call<R>("exec", { src });
            answered.set(src, String(r.render));
            refs[i].push(String(r.ref));
          } catch {
            return;
          }
        }
      });
      await waitFor(() => answered.size >= 150, 30_000, "150 answered execs");
      // The session workers log to memory-mapped intake segments (FFI granted): the kill
      // below tests that format's crash safety.
      const intake = join(state, "intake");
      const mapped = [...Deno.readDirSync(intake)].filter((e) =>
        new TextDecoder().decode(Deno.readFileSync(join(intake, e.name)).subarray(0, 8)) ===
          "SHOALMM1"
      );
      assert(mapped.length > 0, "the intake segments are memory-mapped");
      k.child.kill("SIGKILL");
      dead = true;
      await k.child.status;
      await Promise.allSettled(bursts);
      for (const c of clients) c.close();

      // Restart: opening the journal marks the dead kernel's running rows unfinished.
      const k2 = await spawnKernel(sock, ["--state-dir", state]);
      await stop(k2.child);
      const store = await openStore(state, { journalMode: "inline" });
      try {
        assertEquals(await store.journal.integrityCheck(), "ok");
        const rows = [];
        let before: number | undefined;
        for (;;) {
          const page = await store.journal.query({
            kind: "request",
            limit: 1000,
            beforeId: before,
          });
          rows.push(...page);
          if (page.length < 1000) break;
          before = page[page.length - 1].id;
        }
        const bySrc = new Map(rows.map((r) => [r.source, r]));
        for (const src of answered.keys()) {
          const r = bySrc.get(src);
          assert(r, `answered exec ${src} has a journal row`);
          assertEquals([src, r.status, r.ok], [src, "ok", true]);
        }
        assert(rows.every((r) => r.status !== "running"), "no row is left running");
        const unfinished = rows.filter((r) => r.status === "unfinished");
        for (const r of unfinished) {
          assert(!answered.has(r.source), `an unfinished row was never answered: ${r.source}`);
          assertEquals(r.ok, null);
        }
        assert(rows.length <= sent.length);
        // Every row belongs to an exec that was sent.
        const sentSet = new Set(sent);
        assert(rows.every((r) => sentSet.has(r.source)));
        // Every answered exec's transcript event was logged with it: none lost to the kill,
        // and each stream is dense from 0.
        for (let i = 0; i < 4; i++) {
          const evs = await store.events.readSince("session.transcript", -1, 10_000, {
            scope: `s${i}`,
          });
          assertEquals(evs.map((e) => e.seq), evs.map((_, n) => n));
          const stored = new Set(evs.map((e) => (e.payload as R).ref));
          for (const ref of refs[i]) assert(stored.has(ref), `s${i}: the event of ${ref} survived`);
        }
        // …and so did each answered exec's `journal` channel event, stored with its row.
        const journalEvents = new Set<number>();
        for (let i = 0; i < 4; i++) {
          const evs = await store.events.readSince("journal", -1, 10_000, { scope: `s${i}` });
          for (const e of evs) journalEvents.add((e.payload as R).entry_id as number);
        }
        for (const src of answered.keys()) {
          const id = bySrc.get(src)!.id;
          assert(journalEvents.has(id), `the journal event of entry ${id} (${src}) survived`);
        }
      } finally {
        await store.close();
      }
    } finally {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
);

Deno.test(
  "shoal journal / journal show / gc / undo against a kernel's state dir",
  opts,
  async (t) => {
    const dir = await tempDir();
    const state = join(dir, "state");
    const work = join(dir, "work");
    await Deno.mkdir(work);
    const sock = join(dir, "run", "k.sock");
    try {
      const k = await spawnKernel(sock, ["--state-dir", state]);
      const c = await KernelClient.connect({ socket: sock, attach: { session: "cli" } });
      await c.call("exec", { src: `cd ${work}` });
      await c.call("exec", { src: "echo v1 > notes.txt" });
      await c.call("exec", { src: "echo v2 > notes.txt" });
      await c.call("exec", { src: "(1..=4000).map(i => i)" }); // value blob in the CAS
      await c.call("exec", { src: "^false" }).catch(() => {});
      c.close();

      await t.step("journal: table, filters, --json", async () => {
        const all = await shoal(["journal", "--state-dir", state]);
        assertEquals(all.code, 0, all.err);
        assertMatch(all.out, /^ID\tTIME \(UTC\)\tPRINCIPAL\tSESSION\tSTATE\tOK\tSOURCE/);
        assertMatch(all.out, /echo v2 > notes\.txt/);
        const echo = await shoal(["journal", "--state-dir", state, "--head", "echo", "--json"]);
        const rows = JSON.parse(echo.out) as R[];
        assertEquals(rows.map((r) => r.src), ["echo v2 > notes.txt", "echo v1 > notes.txt"]);
        const failed = JSON.parse(
          (await shoal(["journal", "--state-dir", state, "--ok=false", "--json"])).out,
        ) as R[];
        assertEquals(failed.map((r) => r.src), ["^false"]);
        const one = JSON.parse(
          (await shoal([
            "journal",
            "--state-dir",
            state,
            "--limit",
            "1",
            "--json",
            "--since",
            "1h",
          ]))
            .out,
        ) as R[];
        assertEquals(one.length, 1);
        const none = await shoal([
          "journal",
          "--state-dir",
          state,
          "--until",
          "2000-01-01T00:00:00Z",
        ]);
        assertMatch(none.out, /no journal entries match/);
        const fx = JSON.parse(
          (await shoal(["journal", "--state-dir", state, "--effects", "fs.write", "--json"])).out,
        ) as R[];
        assertEquals(fx.length, 2);
        const p = JSON.parse(
          (await shoal(["journal", "--state-dir", state, "--principal", "agent:x", "--json"])).out,
        );
        assertEquals(p, []);
        assertEquals((await shoal(["journal", "--state-dir", state, "--limit", "x"])).code, 2);
        assertEquals((await shoal(["journal", "--state-dir", state, "--nope"])).code, 2);
      });

      await t.step("journal show ID (text and --json)", async () => {
        const rows = JSON.parse(
          (await shoal(["journal", "--state-dir", state, "--head", "echo", "--json"])).out,
        ) as R[];
        const id = String(rows[0].id);
        const text = await shoal(["journal", "show", id, "--state-dir", state]);
        assertEquals(text.code, 0, text.err);
        assertMatch(text.out, new RegExp(`entry ${id} \\(request\\) — ok, ok: true`));
        assertMatch(text.out, /effects: +\[\{"kind":"fs_write"/);
        const j = JSON.parse(
          (await shoal(["journal", "show", id, "--json", "--state-dir", state])).out,
        );
        assertEquals(j.statements.length, 1);
        assertEquals((await shoal(["journal", "show", "999999", "--state-dir", state])).code, 1);
      });

      await t.step(
        "undo ID: restores; a stale target is refused (exit 1, stale_undo)",
        async () => {
          const rows = JSON.parse(
            (await shoal(["journal", "--state-dir", state, "--head", "echo", "--json"])).out,
          ) as R[];
          const v2 = String(rows[0].id);
          const before = await Deno.stat(join(work, "notes.txt"));
          await Deno.writeTextFile(join(work, "notes.txt"), "edited\n");
          const stale = await shoal(["undo", v2, "--state-dir", state]);
          assertEquals(stale.code, 1);
          assertMatch(stale.err, /^error\[stale_undo\]: /);
          assertEquals(await Deno.readTextFile(join(work, "notes.txt")), "edited\n");
          // Put the recorded state back exactly (content and mtime): undo is fresh again.
          await Deno.writeTextFile(join(work, "notes.txt"), "v2\n");
          await Deno.utime(join(work, "notes.txt"), before.atime!, before.mtime!);
          const ok = await shoal(["undo", v2, "--state-dir", state]);
          assertEquals(ok.code, 0, ok.err);
          assertMatch(ok.out, /undone restore_bytes: .*notes\.txt/);
          assertEquals(await Deno.readTextFile(join(work, "notes.txt")), "v1\n");
          assertEquals((await shoal(["undo", v2, "--state-dir", state])).code, 1, "applied once");
        },
      );

      await stop(k.child);

      await t.step("gc: dry run by default; never deletes referenced or pinned blobs", async () => {
        const store = await openStore(state, { journalMode: "inline" });
        let referenced: string[];
        let pinned: string;
        let loose: string;
        try {
          const rows = await store.journal.query({ kind: "request", limit: 1000 });
          referenced = rows.flatMap((r) => r.outputs.flatMap((o) => (o.ref ? [o.ref] : [])));
          for (const u of await store.undo.listUndo({})) {
            if (u.kind === "restore_bytes") referenced.push(u.data.prior);
          }
          assert(referenced.length >= 2, "a value blob and an undo snapshot are referenced");
          pinned = (await store.cas.put(new TextEncoder().encode("pinned blob"))).hash;
          await store.pins.pin(pinned, { owner: "test", reason: "keep" });
          loose = (await store.cas.put(new TextEncoder().encode("nobody refers to me"))).hash;
        } finally {
          await store.close();
        }
        // Every blob is old (past the TTL and the grace period).
        const old = new Date(Date.now() - 3 * 86_400_000);
        for (const h of [...referenced.map((r) => r.slice(-64)), pinned, loose]) {
          await Deno.utime(join(state, "cas", h.slice(0, 2), h.slice(2)), old, old);
        }
        const plan = await shoal(["gc", "--state-dir", state, "--ttl", "1d", "--budget", "0"]);
        assertEquals(plan.code, 0, plan.err);
        assertMatch(plan.out, /dry run/);
        assertMatch(plan.out, new RegExp(loose));
        const planJson = JSON.parse(
          (await shoal(["gc", "--state-dir", state, "--ttl", "1d", "--budget", "0", "--json"])).out,
        );
        assertEquals(planJson.applied, false);
        assertEquals(planJson.blobs.map((b: R) => b.hash), [loose]);
        assert(await exists(state, loose), "a dry run deletes nothing");
        const applied = await shoal([
          "gc",
          "--state-dir",
          state,
          "--ttl",
          "1d",
          "--budget",
          "0",
          "--apply",
        ]);
        assertEquals(applied.code, 0, applied.err);
        assertMatch(applied.out, /budget NOT met/);
        assert(!(await exists(state, loose)), "the unreferenced blob is gone");
        assert(await exists(state, pinned), "the pinned blob survives");
        for (const r of referenced) assert(await exists(state, r.slice(-64)), `${r} survives`);
        assertEquals((await shoal(["gc", "--state-dir", state, "--ttl", "soon"])).code, 2);
        assertEquals((await shoal(["gc", "--state-dir", state, "--budget", "lots"])).code, 2);
      });
    } finally {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
);

async function exists(state: string, hash: string): Promise<boolean> {
  try {
    await Deno.stat(join(state, "cas", hash.slice(0, 2), hash.slice(2)));
    return true;
  } catch {
    return false;
  }
}
