/**
 * Every kernel method over a real socket against an in-process kernel with real session
 * Workers: results, and each error code the method can produce.
 */

import {
  deepStrictEqual as assertEquals,
  match as assertMatch,
  ok as assert,
} from "node:assert/strict";
import { KernelClient } from "../../lib/client/client.ts";
import { RPC } from "../../lib/client/errors.ts";
import type { KernelEvent } from "../../lib/client/protocol.ts";
import { client, rpcError, waitFor, withKernel } from "./_helpers.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

type R = Record<string, unknown>;

Deno.test("kernel methods over a real socket", opts, async (t) => {
  await withKernel(async (k, dir) => {
    const c = await client(k.path, "main");

    await t.step(
      "session.attach: defaults, honest caps, real env_hash, static channels",
      async () => {
        const raw = await KernelClient.connect({ socket: k.path });
        const a = await raw.call<R>("session.attach", {});
        assertEquals(a.session, "default");
        assertEquals(a.principal, `uid:${Deno.uid()}`);
        const caps = a.caps as R;
        assertEquals(caps.enforced, false);
        assertEquals(caps.tier, null);
        assertEquals(caps.profile, "local-human");
        assertEquals(a.caps_enforced, false);
        assertMatch(String(caps.note), /allows every effect; nothing is sandboxed/);
        assertEquals([caps.opaque, caps.policy, caps.approver], ["allow", "builtin", true]);
        assertMatch(String(a.env_hash), /^[0-9a-f]{64}$/);
        assertEquals(a.ast_version, 2);
        assertEquals(a.channels, ["session.transcript", "journal", "approval", "render"]);
        assertEquals((a.elide_defaults as R).hard_cap, 65536);
        assertEquals((a.cwd as R).display, dir);
        // Tokens: an ephemeral kernel has no token store (tests/kernel/leash_test.ts has one).
        const e = await rpcError(raw.call("session.attach", { token: "abc" }));
        assertEquals(e.code, RPC.AUTH_FAILED);
        assertMatch(e.message, /unavailable in ephemeral kernel/);
        assertEquals(
          (await rpcError(raw.call("session.attach", { session: "../x" }))).code,
          RPC.INVALID_PARAMS,
        );
        assertEquals(
          (await rpcError(raw.call("session.attach", { session: 5 }))).code,
          RPC.INVALID_PARAMS,
        );
        assertEquals(
          (await rpcError(raw.call("session.attach", { client: "x" }))).code,
          RPC.INVALID_PARAMS,
        );
        assertEquals(
          (await rpcError(raw.call("session.attach", { client: { tty: "yes" } }))).code,
          RPC.INVALID_PARAMS,
        );
        // A second attach replaces the first (other session).
        const b = await raw.call<R>("session.attach", {
          session: "main",
          client: { kind: "test" },
        });
        assertEquals(b.session, "main");
        raw.close();
      },
    );

    await t.step("env_hash changes with the session environment", async () => {
      const h1 = c.attached!.env_hash;
      await c.call("exec", { src: 'env.SHOAL_TEST_X = "1"' });
      const again = await c.call<R>("session.attach", { session: "main" });
      assert(again.env_hash !== h1, "env_hash must reflect the session env");
      const env = await c.call<R>("session.env", {});
      assertEquals(env.granted, true);
      assertEquals((env.env as R).SHOAL_TEST_X, "1");
      const names = env.names as string[];
      assertEquals(names, [...names].sort());
    });

    await t.step("session.reef and session.cwd (live after cd)", async () => {
      assertEquals(await c.call("session.reef", {}), { active_scope: null, bindings: [] });
      assertEquals(await c.call("session.cwd", {}), { display: dir });
      await Deno.mkdir(`${dir}/sub`);
      await c.call("exec", { src: "cd sub" });
      assertEquals(await c.call("session.cwd", {}), { display: `${dir}/sub` });
      await c.call("exec", { src: "cd .." });
    });

    await t.step("parse: AST, -32001 with span and hint, -32602", async () => {
      const r = await c.call<R>("parse", { src: "let answer = 6 * 7" });
      assertEquals(r.ast_version, 2);
      assert(typeof r.ast === "object");
      const e = await rpcError(c.call("parse", { src: "let = 1" }));
      assertEquals(e.code, RPC.PARSE_ERROR);
      const d = e.data as R;
      assert(typeof (d.span as R).start === "number" && typeof (d.span as R).end === "number");
      assert("hint" in d);
      assertEquals(d.rewrites, [], "not bash-shaped: no rewrites");
      // Bash-shaped source (issue 13): the rewrites in `data`, native first, and in the hint.
      const b = await rpcError(c.call("parse", { src: "ls | wc -l" }));
      assertEquals((b.data as R).rewrites, [
        { form: "native", src: "ls.len()" },
        { form: "sh", src: "sh { ls | wc -l }" },
      ]);
      assert(String((b.data as R).hint).includes("resend as: ls.len()"));
      assertEquals((await rpcError(c.call("parse", {}))).code, RPC.INVALID_PARAMS);
    });

    await t.step("complete: prefix, multibyte cursor clamp, methods, bound names", async () => {
      const r = await c.call<{ candidates: string[] }>("complete", { src: "ec" });
      assert(r.candidates.includes("echo"));
      assertEquals(r.candidates, [...r.candidates].sort());
      // Cursor inside a multi-byte character and past the end never fails.
      const mid = await c.call<{ candidates: string[] }>("complete", { src: "é", cursor: 1 });
      assert(Array.isArray(mid.candidates));
      const past = await c.call<{ candidates: string[] }>("complete", { src: "wh", cursor: 99 });
      assert(past.candidates.includes("while"));
      await c.call("exec", { src: "let my_list = [1, 2]" });
      const bound = await c.call<{ candidates: string[] }>("complete", { src: "my_" });
      assert(bound.candidates.includes("my_list"));
      const meth = await c.call<{ candidates: string[] }>("complete", { src: "my_list.fi" });
      assert(meth.candidates.includes("first") || meth.candidates.includes("filter"));
      assert(meth.candidates.every((x) => x.startsWith("fi")));
      assertEquals(
        (await rpcError(c.call("complete", { src: "x", cursor: -1 }))).code,
        RPC.INVALID_PARAMS,
      );
    });

    await t.step("session facts follow definitions and assignments, not reads", async () => {
      const methods = async (src: string) =>
        (await c.call<{ candidates: string[] }>("complete", { src })).candidates;
      await c.call("exec", { src: "var shape = [1, 2]" });
      assert((await methods("shape.fi")).includes("first"));
      await c.call("exec", { src: 'shape = "round"' }); // retypes a root binding
      assert((await methods("shape.starts")).includes("starts_with"));
      await c.call("exec", { src: "shape.len()" }); // reads leave the facts as they were
      assert((await methods("shape.starts")).includes("starts_with"));
      await c.call("exec", { src: "fn shape_of(x) { x }" });
      assert((await methods("shape_")).includes("shape_of"));
      // The next parse sees a new value binding that shadows a command name.
      await c.call("exec", { src: "let ls = 41" });
      assertEquals((await c.call<R>("exec", { src: "ls + 1" })).value, { $: "int", v: 42 });
    });

    await t.step(
      "exec: values, positions, RAISED, parse errors before the transcript",
      async () => {
        const v = await c.call<R>("exec", { src: "1 + 2" });
        assertEquals(v.value, { $: "int", v: 3 });
        assertEquals(v.render, "3");
        const n = Number(String(v.ref).slice(4));
        assertEquals(v.uri, `shoal://out/${n}`);
        const pe = await rpcError(c.call("exec", { src: "let = " }));
        assertEquals(pe.code, RPC.PARSE_ERROR);
        const bash = await rpcError(c.call("exec", { src: "echo $HOME" }));
        assertEquals(bash.code, RPC.PARSE_ERROR);
        assertEquals((bash.data as R).rewrites, [
          { form: "native", src: "echo (env.HOME)" },
          { form: "sh", src: "sh { echo $HOME }" },
        ]);
        const next = await c.call<R>("exec", { src: "2" });
        assertEquals(next.ref, `out:${n + 1}`, "a parse error inserts nothing");
        const re = await rpcError(c.call("exec", { src: "1 / 0" }));
        assertEquals(re.code, RPC.RAISED);
        const d = re.data as R;
        assertEquals(d.code, "div_zero");
        assertEquals(d.ref, `out:${n + 2}`);
        assertEquals(d.uri, `shoal://out/${n + 2}`);
        for (const key of ["span", "hint", "status", "stderr"]) assert(key in d, key);
        const stored = await c.call<R>("value.get", { ref: d.ref });
        assertEquals((stored.value as R).$, "error");
        assertEquals((stored.value as R).code, "div_zero");
        // Statement position raises a failed command; value position returns the outcome.
        const st = await rpcError(c.call("exec", { src: "sh -c 'exit 3'" }));
        assertEquals((st.data as R).code, "cmd_failed");
        assertEquals((st.data as R).status, 3);
        const vp = await c.call<R>("exec", {
          src: "sh -c 'echo oops >&2; exit 3'",
          position: "value",
        });
        const o = vp.value as R;
        assertEquals([o.$, o.ok, o.status], ["outcome", false, 3]);
        assertMatch(String(o.err), /oops/);
      },
    );

    await t.step("exec: param errors", async () => {
      assertEquals((await rpcError(c.call("exec", {}))).code, RPC.INVALID_PARAMS);
      assertEquals(
        (await rpcError(c.call("exec", { src: "1", mode: "x" }))).code,
        RPC.INVALID_PARAMS,
      );
      assertEquals(
        (await rpcError(c.call("exec", { src: "1", position: "x" }))).code,
        RPC.INVALID_PARAMS,
      );
      assertEquals(
        (await rpcError(c.call("exec", { src: "1", async: "y" }))).code,
        RPC.INVALID_PARAMS,
      );
      assertEquals(
        (await rpcError(c.call("exec", { src: "1", timeout_ms: -5 }))).code,
        RPC.INVALID_PARAMS,
      );
      assertEquals(
        (await rpcError(c.call("exec", { src: "1", elide: 3 }))).code,
        RPC.INVALID_PARAMS,
      );
      // Approved mode is internal re-entry: without an approved plan it is refused.
      const e = await rpcError(c.call("exec", { src: "1", mode: "approved" }));
      assertEquals(e.code, RPC.LEASH_DENIED);
      assertMatch(e.message, /requires an approved plan_ref/);
    });

    await t.step("exec: elision per call, render bounded, statement sink in render", async () => {
      const big = await c.call<R>("exec", {
        src: "(0..1000).map(i => i)",
        elide: { max_items: 10 },
      });
      const w = big.value as R;
      assertEquals([w.$, w.of, w.n], ["ref", "list", 1000]);
      assertEquals(w.uri, big.uri);
      const echo = await c.call<R>("exec", { src: "echo first\n40 + 2" });
      assertEquals(echo.render, "first\n42");
      // a loop of rm in statement position: one line of what moved each, not a table each
      const dir = await Deno.makeTempDir({ prefix: "shoal-sink-rm-" });
      for (const n of ["a.tmp", "b.tmp"]) await Deno.writeTextFile(`${dir}/${n}`, "x");
      const rm = await c.call<R>("exec", {
        src: `with cwd: "${dir}" { for f in glob("*.tmp").expand() { rm (f) } }\n1`,
      });
      // (relative to the cwd the rm ran in)
      const trashLine = /^moved to the trash in \/\S+ \(undo puts back\): (a|b)\.tmp$/;
      const lines = String(rm.render).split("\n");
      assertEquals(lines.length, 3, String(rm.render));
      assertMatch(lines[0], trashLine);
      assertMatch(lines[1], trashLine);
      // a top-level expression statement's value comes under its source for a text reader
      const saved = await c.call<R>("exec", {
        src: `"alpha\\n".save("${dir}/r.txt")\npath("${dir}/r.txt").read()`,
      });
      assertEquals(
        saved.render,
        `› "alpha\\n".save("${dir}/r.txt")\nalpha\n› path("${dir}/r.txt").read()\nalpha`,
      );
      // the label is the statement as written, parentheses and all
      const paren = await c.call<R>("exec", {
        src: `"b".save("${dir}/q.txt")\n(cat ${dir}/q.txt).str()`,
      });
      assertMatch(String(paren.render), /\n› \(cat \S+\/q\.txt\)\.str\(\)\n"b"$/);
      // a reader of text gets the diagnostics with the value, each said once
      await Deno.writeTextFile(`${dir}/.dot.tmp`, "x");
      const noted = await c.call<R>("exec", {
        src: `[glob("${dir}/*.tmp").len(), glob("${dir}/*.tmp").len()]`,
      });
      const notes = String(noted.render).split("\n").filter((l) => l.includes("left out"));
      assertEquals(notes.length, 1, String(noted.render));
      assertMatch(notes[0], /^shoal: glob \S+ left out dot-entries \S*\.dot\.tmp \(hidden: true/);
      // a command's output reads as a shell's: no label, and none on the value after it
      const cmd = await c.call<R>("exec", { src: "echo first\n40 + 2" });
      assertEquals(cmd.render, "first\n42");
      await Deno.remove(dir, { recursive: true });
    });

    await t.step("exec: async, timeout_ms inline and timed out, task events", async () => {
      const a = await c.call<R>("exec", { src: "sleep 200ms\n7", async: true });
      assertMatch(String(a.task), /^task:\d+$/);
      assertEquals(a.events, `task.${String(a.task).slice(5)}`);
      const rec = await c.call<R>("task.await", { task: a.task });
      assertEquals(rec.state, "completed");
      assertMatch(String(rec.result_ref), /^out:\d+$/);
      const evs = await c.call<{ events: KernelEvent[] }>("events.read", { channel: a.events });
      assertEquals(evs.events[0].payload, { $: "str", v: "started" });
      assertEquals(evs.events[1].payload, { state: "completed", result_ref: rec.result_ref });
      const inline = await c.call<R>("exec", { src: "5", timeout_ms: 10000 });
      assertEquals(inline.value, { $: "int", v: 5 });
      const slow = await c.call<R>("exec", { src: "sleep 2s", timeout_ms: 50 });
      assertEquals(slow.timed_out, true);
      assertEquals(slow.state, "running");
      assertEquals(slow.behind, undefined);
      // Queued behind it: the handle names the task ahead and how long that one has run.
      const queued = await c.call<R>("exec", { src: "8", timeout_ms: 50 });
      assertEquals([queued.timed_out, queued.state, queued.behind], [true, "queued", slow.task]);
      assertEquals(queued.behind_detached, true, "nobody waits for the timed-out exec inline");
      assert(
        typeof queued.behind_ms === "number" && queued.behind_ms >= 50,
        String(queued.behind_ms),
      );
      const early = await c.call<R>("task.await", { task: slow.task, timeout_ms: 20 });
      assertEquals(early.timed_out, true);
      assertEquals(early.state, "running");
      const cancelled = await c.call<R>("task.cancel", { task: slow.task });
      assertEquals(cancelled.cancel_requested, true);
      assertEquals(cancelled.state, "cancelling");
      const done = await c.call<R>("task.await", { task: slow.task });
      assertEquals(done.state, "cancelled");
      assertEquals((await c.call<R>("task.await", { task: queued.task })).state, "completed");
    });

    await t.step(
      "task.N events: read from the task, live to a subscriber, per session",
      async () => {
        // Subscribed while it runs: the end arrives live with the seq after `started`.
        const a = await c.call<R>("exec", { src: "sleep 300ms\n1", async: true });
        const live: KernelEvent[] = [];
        await c.subscribe(String(a.events), (e) => void live.push(e));
        const b = await c.call<R>("exec", { src: "2", async: true }); // queued behind a
        await c.call("task.cancel", { task: b.task });
        const ra = await c.call<R>("task.await", { task: a.task });
        await waitFor(() => live.length === 1, 5000, "the live end event");
        assertEquals(live[0].seq, 1);
        assertEquals(live[0].payload, { state: "completed", result_ref: ra.result_ref });
        const read = (await c.call<{ events: KernelEvent[] }>("events.read", { channel: a.events }))
          .events;
        assertEquals(read.map((e) => [e.seq, e.payload]), [
          [0, { $: "str", v: "started" }],
          [1, { state: "completed", result_ref: ra.result_ref }],
        ]);
        assert(read.every((e) => e.channel === a.events && typeof e.ts === "number"));
        const since0 = await c.call<{ events: KernelEvent[] }>("events.read", {
          channel: a.events,
          since: 0,
        });
        assertEquals(since0.events.map((e) => e.seq), [1]);
        // Cancelled before it ran: no `started`, its end is seq 0.
        const rb = await c.call<{ events: KernelEvent[] }>("events.read", { channel: b.events });
        assertEquals(rb.events.map((e) => [e.seq, (e.payload as R).state]), [[0, "cancelled"]]);
        // Another session sees nothing of it.
        const other = await client(k.path, "elsewhere");
        const none = await other.call<{ events: KernelEvent[] }>("events.read", {
          channel: a.events,
        });
        assertEquals(none.events, []);
        other.close();
        await c.unsubscribe(String(a.events));
      },
    );

    await t.step("finished tasks keep their record, not their inline result", async () => {
      const inline = await c.call<R>("exec", { src: "[1, 2, 3]" });
      const bg = await c.call<R>("exec", { src: "[4, 5]", async: true });
      const rec = await c.call<R>("task.await", { task: bg.task });
      assertEquals(rec.state, "completed");
      for (const t of k.tasks.list("main").slice(-2)) {
        assert(t.finished && t.resultRef !== null);
        assertEquals(t.result, null, `${t.ref} still holds its inline result`);
      }
      // The result stays reachable by its ref.
      const v = await c.call<R>("value.get", { ref: inline.ref });
      assertEquals(v.value, inline.value);
    });

    await t.step("value.get: path, slice, formats, and every error", async () => {
      const r = await c.call<R>("exec", {
        src: 'csv.parse("name,n\\na,1\\nb,2\\nc,3")',
      });
      const ref = r.ref as string;
      assertEquals(
        await c.call("value.get", { ref, path: ".rows[1].name" }),
        { ref, value: { $: "str", v: "b" } },
      );
      assertEquals(
        await c.call("value.get", { ref: r.uri, path: "name" }),
        {
          ref,
          value: {
            $: "list",
            v: [{ $: "str", v: "a" }, { $: "str", v: "b" }, { $: "str", v: "c" }],
          },
        },
      );
      const sl = await c.call<R>("value.get", { ref, slice: [1, 99] });
      assertEquals((sl.value as R).n, 2);
      const rd = await c.call<R>("value.get", { ref, format: "render" });
      assertMatch(String(rd.render), /name/);
      const s = await c.call<R>("exec", { src: '"héllo"' });
      assertEquals(await c.call("value.get", { ref: s.ref, format: "raw" }), {
        ref: s.ref,
        raw: "héllo",
      });
      assertEquals(
        await c.call("value.get", { ref: s.ref, slice: [1, 3], format: "raw" }),
        { ref: s.ref, raw: "él" },
      );
      const huge = await c.call<R>("exec", { src: '(0..70000).map(i => "x").join("")' });
      const cap = await rpcError(c.call("value.get", { ref: huge.ref, format: "raw" }));
      assertEquals(cap.code, RPC.BAD_PATH_OR_SLICE);
      assertEquals(cap.data, { ref: huge.ref, len: 70000, hard_cap: 65536 });
      const part = await c.call<R>("value.get", { ref: huge.ref, slice: [0, 10], format: "raw" });
      assertEquals(part.raw, "xxxxxxxxxx");
      const unknown = await rpcError(c.call("value.get", { ref: "out:99999" }));
      assertEquals(unknown.code, RPC.UNKNOWN_REF);
      assertEquals((await rpcError(c.call("value.get", { ref: "bogus" }))).code, RPC.UNKNOWN_REF);
      const bp = await rpcError(c.call("value.get", { ref, path: ".rows[99]" }));
      assertEquals(bp.code, RPC.BAD_PATH_OR_SLICE);
      assertEquals(bp.data, { ref, path: ".rows[99]" });
      assertEquals(
        (await rpcError(c.call("value.get", { ref, path: "[x" }))).code,
        RPC.BAD_PATH_OR_SLICE,
      );
      const n = await c.call<R>("exec", { src: "42" });
      const bs = await rpcError(c.call("value.get", { ref: n.ref, slice: [0, 1] }));
      assertEquals([bs.code, bs.data], [RPC.BAD_PATH_OR_SLICE, { ref: n.ref }]);
      const raw = await rpcError(c.call("value.get", { ref: n.ref, format: "raw" }));
      assertEquals(raw.code, RPC.BAD_PATH_OR_SLICE);
      assertEquals(
        (await rpcError(c.call("value.get", { ref, format: "xml" }))).code,
        RPC.INVALID_PARAMS,
      );
      assertEquals(
        (await rpcError(c.call("value.get", { ref, slice: [1] }))).code,
        RPC.INVALID_PARAMS,
      );
      assertEquals((await rpcError(c.call("value.get", {}))).code, RPC.INVALID_PARAMS);
    });

    await t.step(
      "tasks: list, get, unknown and foreign tasks, suspend/resume honesty",
      async () => {
        const list = await c.call<R[]>("task.list", {});
        assert(list.length > 0 && list.every((x) => x.session === "main"));
        const one = await c.call<R>("task.get", { task: list[0].task });
        assertEquals(one.task, list[0].task);
        assertEquals(
          (await rpcError(c.call("task.get", { task: "task:999999" }))).code,
          RPC.UNKNOWN_TASK,
        );
        assertEquals((await rpcError(c.call("task.get", {}))).code, RPC.INVALID_PARAMS);
        const other = await client(k.path, "other");
        const foreign = await rpcError(other.call("task.get", { task: list[0].task }));
        assertEquals(foreign.code, RPC.UNKNOWN_TASK, "another session's task is invisible");
        assertEquals(
          (await rpcError(other.call("task.cancel", { task: list[0].task }))).code,
          RPC.UNKNOWN_TASK,
        );
        other.close();
        for (const m of ["task.suspend", "task.resume"]) {
          const e = await rpcError(c.call(m, { task: list[0].task }));
          assertEquals(e.code, RPC.TASK_CONTROL_UNAVAILABLE);
          assertEquals(e.data, { task: list[0].task });
          assertEquals((await rpcError(c.call(m, { task: "task:999999" }))).code, RPC.UNKNOWN_TASK);
        }
      },
    );

    await t.step("task.suspend/resume stop and continue the running child's group", async () => {
      const ticks = `${dir}/ticks`;
      const r = await c.call<R>("exec", {
        src: `sh -c 'while true; do echo x >> ${ticks}; sleep 0.02; done'`,
        async: true,
      });
      const lines = async () => {
        try {
          return (await Deno.readTextFile(ticks)).length;
        } catch {
          return 0;
        }
      };
      await waitFor(async () => (await lines()) > 4, 10000, "the child to tick");
      const s = await c.call<R>("task.suspend", { task: r.task });
      assertEquals([s.suspended, s.state], [true, "running"]);
      assertEquals((await c.call<R>("task.get", { task: r.task })).suspended, true);
      await new Promise((res) => setTimeout(res, 100));
      const frozen = await lines();
      await new Promise((res) => setTimeout(res, 300));
      assertEquals(await lines(), frozen, "a stopped group writes nothing");
      const u = await c.call<R>("task.resume", { task: r.task });
      assertEquals(u.suspended, false);
      await waitFor(async () => (await lines()) > frozen, 10000, "ticks after resume");
      // Cancelling a suspended task works too (it is continued first).
      await c.call("task.suspend", { task: r.task });
      await c.call("task.cancel", { task: r.task });
      assertEquals(
        (await c.call<R>("task.await", { task: r.task, timeout_ms: 15000 })).state,
        "cancelled",
      );
      // No child running: the honest -32020.
      const idle = await c.call<R>("exec", {
        src: "var n = 0\nwhile n < 1 { n = n + 0 }",
        async: true,
      });
      await waitFor(
        async () => (await c.call<R>("task.get", { task: idle.task })).state === "running",
        5000,
        "loop",
      );
      const e = await rpcError(c.call("task.suspend", { task: idle.task }));
      assertEquals([e.code, e.data], [RPC.TASK_CONTROL_UNAVAILABLE, { task: idle.task }]);
      await c.call("task.cancel", { task: idle.task });
      assertEquals(
        (await c.call<R>("task.await", { task: idle.task, timeout_ms: 10000 })).state,
        "cancelled",
      );
    });

    await t.step(
      "tasks: a queued task is cancelled without running; others are untouched",
      async () => {
        const a = await c.call<R>("exec", { src: "sleep 300ms\n1", async: true });
        const b = await c.call<R>("exec", { src: "touch never.txt\n2", async: true });
        const d = await c.call<R>("exec", { src: "3", async: true });
        const cb = await c.call<R>("task.cancel", { task: b.task });
        assertEquals(cb.state, "cancelled");
        assertEquals((await c.call<R>("task.await", { task: a.task })).state, "completed");
        const rd = await c.call<R>("task.await", { task: d.task });
        assertEquals(rd.state, "completed");
        assertEquals((await c.call<R>("task.get", { task: b.task })).state, "cancelled");
        let exists = true;
        try {
          await Deno.stat(`${dir}/never.txt`);
        } catch {
          exists = false;
        }
        assertEquals(exists, false, "a cancelled queued task never runs");
        // Cancelling a running task does not cancel the one queued behind it (D-24).
        const x = await c.call<R>("exec", { src: "sleep 5s", async: true });
        const y = await c.call<R>("exec", { src: "sleep 10ms\n9", async: true });
        await waitFor(
          async () => (await c.call<R>("task.get", { task: x.task })).state === "running",
          5000,
          "x running",
        );
        await c.call("task.cancel", { task: x.task });
        assertEquals((await c.call<R>("task.await", { task: x.task })).state, "cancelled");
        const ry = await c.call<R>("task.await", { task: y.task });
        assertEquals(ry.state, "completed");
        const vy = await c.call<R>("value.get", { ref: ry.result_ref });
        assertEquals(vy.value, { $: "int", v: 9 });
      },
    );

    await t.step(
      "events: publish/read/subscribe/unsubscribe, user.* only, scoped per session",
      async () => {
        const bad = await rpcError(c.call("events.publish", { channel: "journal", payload: 1 }));
        assertEquals(bad.code, RPC.INVALID_PARAMS);
        assertEquals(bad.data, { channel: "journal" });
        const got: KernelEvent[] = [];
        await c.subscribe("user.build", (e) => got.push(e));
        const p0 = await c.call<R>("events.publish", {
          channel: "user.build",
          payload: { phase: "a" },
        });
        await c.call("events.publish", { channel: "user.build", payload: { phase: "b" } });
        await waitFor(() => got.length === 2, 5000, "two events");
        assertEquals(got.map((e) => e.payload), [{ phase: "a" }, { phase: "b" }]);
        assertEquals(got[0].seq, p0.seq);
        const read = await c.call<{ events: KernelEvent[] }>("events.read", {
          channel: "user.build",
          since: p0.seq,
        });
        assertEquals(read.events.map((e) => e.payload), [{ phase: "b" }], "since is exclusive");
        const lim = await c.call<{ events: KernelEvent[] }>("events.read", {
          channel: "user.build",
          limit: 1,
        });
        assertEquals(lim.events.map((e) => e.payload), [{ phase: "b" }], "limit keeps the newest");
        await c.unsubscribe("user.build");
        await c.call("events.publish", { channel: "user.build", payload: { phase: "c" } });
        await new Promise((r) => setTimeout(r, 100));
        assertEquals(got.length, 2, "no events after unsubscribe");
        // Another session sees none of these, nor this session's transcript (D-21).
        const other = await client(k.path, "other");
        assertEquals(
          (await other.call<{ events: unknown[] }>("events.read", { channel: "user.build" }))
            .events,
          [],
        );
        assertEquals(
          (await other.call<{ events: unknown[] }>("events.read", {
            channel: "session.transcript",
          })).events,
          [],
        );
        other.close();
        assertEquals((await rpcError(c.call("events.read", {}))).code, RPC.INVALID_PARAMS);
        assertEquals(
          (await rpcError(c.call("events.read", { channel: "x", since: -1 }))).code,
          RPC.INVALID_PARAMS,
        );
      },
    );

    await t.step("events: transcript and render events per successful exec", async () => {
      const tr: KernelEvent[] = [];
      const rd: KernelEvent[] = [];
      await c.subscribe("session.transcript", (e) => tr.push(e));
      await c.subscribe("render", (e) => rd.push(e));
      const r = await c.call<R>("exec", { src: "[1, 2, 3]" });
      await waitFor(() => tr.length === 1 && rd.length === 1, 5000, "transcript+render");
      assertEquals(tr[0].payload, {
        n: Number(String(r.ref).slice(4)),
        ref: r.ref,
        summary: { type: "list", n: 3 },
      });
      assertEquals(rd[0].payload, { ref: r.ref, render: r.render });
      await rpcError(c.call("exec", { src: "1 / 0" }));
      await new Promise((res) => setTimeout(res, 50));
      assertEquals(tr.length, 1, "no transcript event on the error path");
      await c.unsubscribe("session.transcript");
      await c.unsubscribe("render");
    });

    await t.step("renders strip ANSI for non-tty clients and keep it for a tty", async () => {
      const src = '"\\u{1b}[31mred\\u{1b}[0m"';
      const plain = await c.call<R>("exec", { src });
      assertEquals(plain.render, '"red"');
      const tty = await client(k.path, "main", { client: { kind: "test", tty: true } });
      const colored = await tty.call<R>("exec", { src });
      assert(String(colored.render).includes("\x1b[31m"), JSON.stringify(colored.render));
      const got = await tty.call<R>("value.get", { ref: plain.ref, format: "render" });
      assert(String(got.render).includes("\x1b[31m"));
      const stripped = await c.call<R>("value.get", { ref: plain.ref, format: "render" });
      assertEquals(stripped.render, '"red"');
      tty.close();
    });

    await t.step("several requests in flight on one connection", async () => {
      const slow = c.call<R>("exec", { src: "sleep 1500ms\n1" });
      const t0 = performance.now();
      const fast = await c.call<R>("complete", { src: "ec" });
      const v = await c.call<R>("value.get", { ref: "out:1" });
      assert(Array.isArray(fast.candidates) && v.ref === "out:1");
      assert(performance.now() - t0 < 1200, "answers do not wait for the running exec");
      assertEquals((await slow).value, { $: "int", v: 1 });
    });

    c.close();
  });
});

Deno.test("user.* bridge: language emit ↔ kernel bus, both ways, without echo", opts, async () => {
  await withKernel(async (k) => {
    const c = await client(k.path, "bridge");
    const got: KernelEvent[] = [];
    await c.subscribe("user.lang", (e) => got.push(e));
    await c.call("exec", { src: 'channel("user.lang").emit({phase: "done", n: 2})' });
    await waitFor(() => got.length === 1, 5000, "bridged event");
    assertEquals(got[0].payload, {
      $: "record",
      v: { n: { $: "int", v: 2 }, phase: { $: "str", v: "done" } },
    });
    // A non-user channel stays inside the language.
    await c.call("exec", { src: 'channel("private").emit(1)' });
    assertEquals(
      (await c.call<{ events: unknown[] }>("events.read", { channel: "private" })).events,
      [],
    );
    // events.publish reaches the language bus, and is not echoed back to the kernel bus.
    await c.call("events.publish", { channel: "user.in", payload: { phase: "go" } });
    await c.call("events.publish", { channel: "user.in", payload: { $: "int", v: 7 } });
    const latest = await c.call<R>("exec", { src: 'channel("user.in").latest()' });
    assertEquals(latest.value, { $: "int", v: 7 });
    const first = await c.call<R>("exec", {
      src: 'channel("user.in").events(since: -1).take(1).collect()',
    });
    assertEquals(first.value, {
      $: "list",
      v: [{
        $: "record",
        v: {
          channel: { $: "str", v: "user.in" },
          payload: { $: "record", v: { phase: { $: "str", v: "go" } } },
          seq: { $: "int", v: 0 },
          ts: (((first.value as R).v as R[])[0] as R & { v: R }).v.ts,
        },
      }],
    });
    const onBus = await c.call<{ events: unknown[] }>("events.read", { channel: "user.in" });
    assertEquals(onBus.events.length, 2, "no echo of injected events");
    c.close();
  });
});

Deno.test("an exec queued behind another caller's inline exec: behind it, not detached", async () => {
  await withKernel(async (k) => {
    // The person's exec goes the kernel's way (a lane exec in flight is one the session holds
    // a kernel exec behind, which the kernel reports running).
    const person = await KernelClient.connect({
      socket: k.path,
      attach: { session: "shared" },
      lane: false,
    });
    const agent = await client(k.path, "shared");
    try {
      const inline = person.call<R>("exec", { src: "sleep 800ms; 1", position: "value" });
      inline.catch(() => {}); // a failure below must not leave it unhandled
      await waitFor(
        async () => (await agent.call<R[]>("task.list", {})).some((t) => t.state === "running"),
        5000,
        "the person's exec running",
      );
      const q = await agent.call<R>("exec", { src: "2", timeout_ms: 50 });
      assertEquals([q.state, q.behind_detached], ["queued", false]);
      assertMatch(String(q.behind), /^task:\d+$/);
      assertEquals((await inline).value, { $: "int", v: 1 });
      assertEquals((await agent.call<R>("task.await", { task: q.task })).state, "completed");
    } finally {
      person.close();
      agent.close();
    }
  });
});

Deno.test("a kernel exec held in the session behind a lane exec is queued behind it, then runs", async () => {
  await withKernel(async (k) => {
    const person = await client(k.path, "held"); // its plain execs take the lane
    const agent = await KernelClient.connect({
      socket: k.path,
      attach: { session: "held" },
      lane: false,
    });
    try {
      const inline = person.call<R>("exec", { src: "sleep 800ms; 1", position: "value" });
      inline.catch(() => {}); // a failure below must not leave it unhandled
      let ahead = "";
      await waitFor(
        async () => {
          const running = (await agent.call<R[]>("task.list", {})).find((t) =>
            t.state === "running"
          );
          ahead = String(running?.task ?? "");
          return running !== undefined;
        },
        5000,
        "the person's lane exec running",
      );
      const q = await agent.call<R>("exec", { src: "2", timeout_ms: 100 });
      assertEquals([q.timed_out, q.state, q.behind, q.behind_detached], [
        true,
        "queued",
        ahead,
        false,
      ]);
      const listed = (await agent.call<R[]>("task.list", {})).find((t) => t.task === q.task);
      assertEquals(listed?.state, "queued", "not started while the lane exec runs");
      assertEquals((await inline).value, { $: "int", v: 1 });
      const done = await agent.call<R>("task.await", { task: q.task });
      assertEquals(done.state, "completed");
    } finally {
      person.close();
      agent.close();
    }
  });
});
