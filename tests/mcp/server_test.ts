/**
 * `shoal-mcp` end to end: a real kernel subprocess, the facade as a subprocess, the MCP SDK
 * client in both protocol eras. Covers the handshake, tools/list schemas, every tool's success
 * and error paths, elision → shoal_get, background tasks with shoal_wait and subscriptions,
 * unsubscribe stopping notifications, the wait budget, progress, cancellation, every root and
 * template, schema violations and concurrent requests.
 */

import {
  deepStrictEqual as assertEquals,
  match as assertMatch,
  ok as assert,
} from "node:assert/strict";
import {
  connectMcp,
  type Era,
  ERAS,
  kernelClient,
  type McpHandle,
  rpcCode,
  sc,
  startKernel,
  type TestKernel,
  text,
  waitFor,
  within,
} from "./_helpers.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const BUDGET_MS = 1500;

type Tool = {
  name: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
};

async function exec(m: McpHandle, args: Record<string, unknown>) {
  return await within(20_000, m.client.callTool({ name: "shoal_exec", arguments: args }), "exec");
}

async function call(m: McpHandle, name: string, args: Record<string, unknown>) {
  return await within(20_000, m.client.callTool({ name, arguments: args }), name);
}

/** Notifications received, by URI. */
function recorder(m: McpHandle) {
  const seen: Array<{ uri: string }> = [];
  m.client.setNotificationHandler("notifications/resources/updated", (n) => {
    seen.push(n.params as { uri: string });
  });
  return seen;
}

async function eraSuite(t: Deno.TestContext, k: TestKernel, era: Era) {
  const session = `t-${era}`;
  const m = await connectMcp(era, [
    "--socket",
    k.socket,
    "--session",
    session,
    "--budget-ms",
    String(BUDGET_MS),
  ]);
  const seen = recorder(m);
  try {
    await t.step("handshake advertises what is real", () => {
      const info = m.client.getServerVersion();
      assertEquals(info?.name, "shoal-mcp");
      const caps = m.client.getServerCapabilities() as Record<string, unknown>;
      assertEquals(caps.tools, { listChanged: false });
      assertEquals(caps.resources, { subscribe: true, listChanged: false });
      assertEquals(caps.prompts, undefined);
      assertEquals(caps.logging, undefined);
      const negotiated = m.client.getNegotiatedProtocolVersion();
      if (era === "modern") assertEquals(negotiated, "2026-07-28");
      else assertMatch(String(negotiated), /^2025-/);
    });

    await t.step("tools/list: strict input schemas, output schemas, annotations", async () => {
      const { tools } = await within(10_000, m.client.listTools(), "listTools") as {
        tools: Tool[];
      };
      const names = tools.map((x) => x.name);
      for (const n of ["shoal_exec", "shoal_get", "shoal_wait", "shoal_cancel", "shoal_journal"]) {
        assert(names.includes(n), `${n} listed`);
      }
      // Plan/approval/PTY tools are listed only when the kernel implements their methods.
      const kc = await kernelClient(k.socket, session);
      try {
        const has = async (method: string) => {
          try {
            await kc.call(method, {});
            return true;
          } catch (e) {
            return (e as { code?: number }).code !== -32601;
          }
        };
        assertEquals(names.includes("shoal_pty_list"), await has("pty.list"));
        assertEquals(names.includes("shoal_plan"), await has("plan.list"));
      } finally {
        kc.close();
      }
      for (const tool of tools) {
        assertEquals(tool.inputSchema.type, "object");
        assertEquals(tool.inputSchema.additionalProperties, false, `${tool.name} strict`);
        assertEquals(tool.outputSchema?.type, "object", `${tool.name} output schema`);
        assertEquals(typeof tool.annotations?.readOnlyHint, "boolean");
        assertEquals(typeof tool.annotations?.destructiveHint, "boolean");
      }
      const byName = new Map(tools.map((x) => [x.name, x]));
      assertEquals(byName.get("shoal_exec")!.inputSchema.required, ["src"]);
      assertEquals(byName.get("shoal_exec")!.annotations!.readOnlyHint, false);
      assertEquals(byName.get("shoal_exec")!.annotations!.destructiveHint, true);
      assertEquals(byName.get("shoal_get")!.annotations!.readOnlyHint, true);
      assertEquals(byName.get("shoal_wait")!.inputSchema.required, ["task"]);
    });

    await t.step("shoal_exec: value, text twin, named resource_link", async () => {
      const r = await exec(m, { src: "1 + 2" });
      assertEquals(r.isError, false);
      assertEquals(text(r), "3");
      const s = sc(r);
      assertEquals(s.value, { $: "int", v: 3 });
      assertMatch(s.ref, /^out:\d+$/);
      const link = (r.content as Array<Record<string, unknown>>)[1];
      assertEquals(link.type, "resource_link");
      assertEquals(link.uri, `shoal://out/${s.ref.slice(4)}`);
      assertEquals(link.name, s.ref);
      // value position (default): a failed command is a value with ok:false, not an error
      const f = await exec(m, { src: "sh { exit 3 }" });
      assertEquals(f.isError, false);
      assertEquals(sc(f).value.ok ?? sc(f).value.v?.ok, false);
    });

    await t.step(
      "shoal_exec: kernel errors are isError results with the error object",
      async () => {
        const r = await exec(m, { src: "1 / 0" });
        assertEquals(r.isError, true);
        assertEquals(sc(r).error.code, -32002);
        assertEquals(sc(r).error.data.code, "div_zero");
        assertMatch(text(r), /division by zero/);
        const p = await exec(m, { src: "let = 1" });
        assertEquals(p.isError, true);
        assertEquals(sc(p).error.code, -32001);
        const stmt = await exec(m, { src: "sh { exit 3 }", position: "stmt" });
        assertEquals(stmt.isError, true);
        assertEquals(sc(stmt).error.data.code, "cmd_failed");
      },
    );

    await t.step("elided table → shoal_get by path and slice", async () => {
      const r = await exec(m, { src: "(0..1000).map(x => {n: x, sq: x * x})" });
      const s = sc(r);
      assertEquals(s.value.$, "ref");
      assertEquals(s.value.n, 1000);
      assertMatch(s.value.uri, /^shoal:\/\/out\/\d+/);
      const g = await call(m, "shoal_get", { ref: s.ref, path: "[7].sq" });
      assertEquals(g.isError, false);
      assertEquals(sc(g).value, { $: "int", v: 49 });
      const sl = await call(m, "shoal_get", { ref: s.ref, slice: [10, 12] });
      assertEquals(sc(sl).value.v.length, 2);
      const small = await exec(m, {
        src: "(0..1000).map(x => x)",
        elide: { max_items: 2000, max_bytes: 65536 },
      });
      assertEquals(sc(small).value.$, "list");
      assertEquals(sc(small).value.v.length, 1000);
      const bad = await call(m, "shoal_get", { ref: s.ref, path: "[5000]" });
      assertEquals(bad.isError, true);
      assertEquals(sc(bad).error.code, -32005);
      const unknown = await call(m, "shoal_get", { ref: "out:99999" });
      assertEquals(sc(unknown).error.code, -32004);
    });

    await t.step("shoal_journal: entries, or the kernel's honest -32601", async () => {
      const r = await call(m, "shoal_journal", { limit: 5 });
      if (r.isError) {
        assertEquals(sc(r).error.code, -32601);
        assertMatch(text(r), /does not implement journal\.query/);
      } else assert(Array.isArray(sc(r).entries));
    });

    await t.step("tools whose kernel methods are missing answer honestly", async () => {
      const cases: Array<[string, Record<string, unknown>]> = [
        ["shoal_plan", { src: "1 + 1" }],
        ["shoal_exec", { src: "1 + 1", mode: "plan" }],
        ["shoal_apply", { plan_ref: "plan:0000000000000000" }],
        ["shoal_cap_request", { plan_ref: "plan:0000000000000000" }],
        ["shoal_pty_list", {}],
      ];
      for (const [name, args] of cases) {
        const r = await call(m, name, args);
        if (r.isError && sc(r).error.code === -32601) {
          assertMatch(text(r), /^Not available: this kernel does not implement/, name);
        } else if (r.isError) {
          // implemented: an unknown plan is the kernel's own error
          assert([-32010, -32012].includes(sc(r).error.code), `${name}: ${JSON.stringify(sc(r))}`);
        } else assert(typeof sc(r) === "object", name);
      }
    });

    await t.step("background task → shoal_wait, and the wait ending first", async () => {
      const b = await exec(m, { src: "sleep 300ms; 7", background: true });
      const task = sc(b).task as string;
      assertMatch(task, /^task:\d+$/);
      assertMatch(text(b), /shoal_wait/);
      assertEquals(
        (b.content as Array<Record<string, unknown>>)[1].uri,
        `shoal://task/${task.slice(5)}`,
      );
      const w = await call(m, "shoal_wait", { task });
      assertEquals(sc(w).state, "completed");
      assertEquals(sc(w).value, { $: "int", v: 7 });
      assertEquals(text(w), "7");
      const slow = await exec(m, { src: "sleep 5s; 1", background: true });
      const w2 = await call(m, "shoal_wait", { task: sc(slow).task, timeout_ms: 100 });
      assertEquals(sc(w2).timed_out, true);
      assertEquals(sc(w2).state, "running");
      const c = await call(m, "shoal_cancel", { task: sc(slow).task });
      assertEquals(sc(c).cancel_requested, true);
      assert(["cancelling", "cancelled"].includes(sc(c).state));
      // The agent asked for the cancel: a normal result that says so, not an error.
      const w3 = await call(m, "shoal_wait", { task: sc(slow).task });
      assertEquals(w3.isError, false);
      assertEquals(sc(w3).state, "cancelled");
      const unknown = await call(m, "shoal_wait", { task: "task:999999" });
      assertEquals(sc(unknown).error.code, -32021);
      const uc = await call(m, "shoal_cancel", { task: "task:999999" });
      assertEquals(uc.isError, true);
      assertEquals(sc(uc).error.code, -32021);
    });

    await t.step("an exec queued behind a background job says so at once", async () => {
      const job = await exec(m, { src: "sleep 10s; 1", background: true });
      const jobTask = sc(job).task as string;
      const t0 = Date.now();
      const q = await exec(m, { src: "1 + 2" });
      // Not the budget (25 s by default): the first round finds it queued and says behind what.
      assert(Date.now() - t0 < 5_000, `took ${Date.now() - t0} ms`);
      assertEquals(sc(q).state, "queued");
      assertEquals(sc(q).behind, jobTask);
      assertEquals(typeof sc(q).behind_ms, "number");
      assertMatch(text(q), new RegExp(`queued behind ${jobTask}, which has run for`));
      assertMatch(text(q), new RegExp(`shoal_cancel \\{"task":"${jobTask}"\\}`));
      await call(m, "shoal_cancel", { task: jobTask });
      const w = await call(m, "shoal_wait", { task: sc(q).task });
      assertEquals(sc(w).state, "completed");
      assertEquals(text(w), "3");
    });

    await t.step(
      "a call that outlives the budget comes back as a task, with progress",
      async () => {
        const progress: number[] = [];
        const t0 = Date.now();
        const r = await within(
          20_000,
          m.client.callTool({ name: "shoal_exec", arguments: { src: "sleep 3s; 11" } }, {
            onprogress: (p) => progress.push(p.progress),
          }),
          "budget exec",
        );
        const took = Date.now() - t0;
        assert(took >= BUDGET_MS - 100 && took < BUDGET_MS + 2000, `returned after ${took} ms`);
        assertEquals(sc(r).timed_out, true);
        assertMatch(text(r), /still running after 1\.\d s.*shoal_wait/s);
        assert(progress.length >= 1, "progress notifications while waiting");
        const w = await call(m, "shoal_wait", { task: sc(r).task, timeout_ms: 10_000 });
        assertEquals(sc(w).value, { $: "int", v: 11 });
        // an explicit timeout_ms wins over the budget
        const q = await exec(m, { src: "sleep 400ms; 12", timeout_ms: 5000 });
        assertEquals(sc(q).value, { $: "int", v: 12 });
      },
    );

    await t.step("a cancelled MCP request cancels the kernel task", async () => {
      const ac = new AbortController();
      const p = m.client.callTool({ name: "shoal_exec", arguments: { src: "sleep 20s; 1" } }, {
        signal: ac.signal,
      });
      const kc = await kernelClient(k.socket, session);
      try {
        let task = "";
        await waitFor(
          async () => {
            const tasks = await kc.call<Array<{ task: string; state: string }>>("task.list");
            const running = tasks.find((x) => x.state === "running");
            if (running) task = running.task;
            return running !== undefined;
          },
          10_000,
          "the exec to start",
        );
        await new Promise((r) => setTimeout(r, 300)); // past the first round: the task is known
        ac.abort();
        await p.catch(() => {});
        await waitFor(
          async () => {
            const rec = await kc.call<{ state: string }>("task.get", { task });
            return rec.state === "cancelled";
          },
          10_000,
          `${task} cancelled`,
        );
      } finally {
        kc.close();
      }
    });

    await t.step("schema violations are isError results; an unknown tool is -32602", async () => {
      const bad: Array<[string, Record<string, unknown>]> = [
        ["shoal_exec", { src: "1", bogus: true }],
        ["shoal_exec", { src: 1 }],
        ["shoal_exec", {}],
        ["shoal_exec", { src: "1", timeout_ms: 0 }],
        ["shoal_exec", { src: "1", mode: "approved" }],
        ["shoal_exec", { src: "1", elide: { max_bytes: 10, extra: 1 } }],
        ["shoal_get", { ref: "out:1", slice: [1, 2, 3] }],
        ["shoal_wait", { task: "nine" }],
        ["shoal_cancel", {}],
        ["shoal_journal", { limit: 0 }],
        ["shoal_journal", { sinse: 1 }],
      ];
      for (const [name, args] of bad) {
        const r = await call(m, name, args);
        const what = `${name} ${JSON.stringify(args)}`;
        assertEquals(r.isError, true, what);
        assertEquals(sc(r).error.code, -32602, what);
        assertMatch(text(r), /^invalid arguments for /, what);
        assertMatch(text(r), /Nothing ran/, what);
      }
      const e = await rpcCode(m.client.callTool({ name: "no_such_tool", arguments: {} }));
      assertEquals(e.code, -32602);
    });

    await t.step("resources/list: six roots first, then live tasks", async () => {
      const { resources } = await within(10_000, m.client.listResources(), "list");
      assertEquals(resources.slice(0, 6).map((r) => r.uri), [
        "shoal://journal",
        "shoal://jobs",
        "shoal://session/cwd",
        "shoal://session/env",
        "shoal://session/reef",
        "shoal://pty",
      ]);
      const tasks = resources.filter((r) => r.uri.startsWith("shoal://task/"));
      assert(tasks.length >= 3, "task entries");
      assertMatch(tasks[0].name, /^task:\d+$/);
      assertEquals(resources[6].uri, "shoal://docs/primer");
      assertEquals(resources[6].mimeType, "text/markdown");
      for (const r of resources.filter((r) => r.uri !== "shoal://docs/primer")) {
        assertEquals(r.mimeType, "application/json");
      }
      const { resourceTemplates } = await m.client.listResourceTemplates();
      assertEquals(resourceTemplates.map((x) => x.name), [
        "transcript-value",
        "content-value",
        "task",
        "task-output",
        "plan",
        "session-view",
        "pty-screen",
        "journal",
        "events",
      ]);
    });

    await t.step("every root and template reads (or answers the kernel's error)", async () => {
      const read = (uri: string) => within(10_000, m.client.readResource({ uri }), uri);
      // roots
      const jobs = await read("shoal://jobs");
      assert(Array.isArray((jobs.structuredContent as { tasks: unknown[] }).tasks));
      const cwd = await read("shoal://session/cwd");
      assertEquals(typeof (cwd.structuredContent as { display: string }).display, "string");
      const env = await read("shoal://session/env");
      assert(Array.isArray((env.structuredContent as { names: unknown[] }).names));
      const reef = await read("shoal://session/reef");
      assert("bindings" in (reef.structuredContent as object));
      // roots/templates whose kernel methods may not exist yet: a result or the kernel's code
      const pty = await read("shoal://pty");
      assert(Array.isArray((pty.structuredContent as { ptys: unknown[] }).ptys));
      for (const uri of ["shoal://journal", "shoal://journal?ok=true&limit=3"]) {
        try {
          const r = await read(uri);
          assertEquals(r.contents[0].mimeType, "application/json");
        } catch (e) {
          assertEquals((e as { code: number }).code, -32601, uri);
        }
      }
      for (const uri of ["shoal://plan/7b2fd854cb805ba1", "shoal://pty/1", "shoal://val/abc"]) {
        const e = await rpcCode(read(uri));
        assert([-32601, -32012, -32022, -32004].includes(e.code), `${uri}: ${e.code}`);
        assertMatch(e.message, /^kernel error: /);
      }
      // live cwd (D-6): a cd in the session shows up at once
      await exec(m, { src: `cd ${JSON.stringify(k.dir)}` });
      const cwd2 = await read("shoal://session/cwd");
      assertEquals((cwd2.structuredContent as { display: string }).display, k.dir);
      // transcript values: json, render (text/plain), path, slice, raw
      const r = await exec(m, { src: `{name: "shoal", rows: [1, 2, 3, 4]}` });
      const n = sc(r).ref.slice(4);
      const v = await read(`shoal://out/${n}?path=.name`);
      assertEquals(v.structuredContent, { $: "str", v: "shoal" });
      assertEquals(v.contents[0].mimeType, "application/json");
      assertEquals(JSON.parse((v.contents[0] as { text: string }).text), { $: "str", v: "shoal" });
      const sl = await read(`shoal://out/${n}?path=.rows&slice=1..3`);
      assertEquals((sl.structuredContent as { v: unknown[] }).v.length, 2);
      const rd = await read(`shoal://out/${n}?path=.name&format=render`);
      assertEquals(rd.contents[0].mimeType, "text/plain");
      const raw = await read(`shoal://out/${n}?path=.name&format=raw`);
      assertEquals((raw.contents[0] as { text: string }).text, "shoal");
      const enc = await read(`shoal://out/${n}?path=%2Ename`); // percent-decoded
      assertEquals(enc.structuredContent, { $: "str", v: "shoal" });
      // task and task output
      const b = await exec(m, { src: "sleep 200ms; 21", background: true });
      const tn = sc(b).task.slice(5);
      await call(m, "shoal_wait", { task: sc(b).task });
      const tr = await read(`shoal://task/${tn}`);
      assertEquals((tr.structuredContent as { state: string }).state, "completed");
      const to = await read(`shoal://task/${tn}/out`);
      assertEquals(to.structuredContent, { $: "int", v: 21 });
      const running = await exec(m, { src: "sleep 5s; 1", background: true });
      const rn = sc(running).task.slice(5);
      const tro = await read(`shoal://task/${rn}/out`); // unfinished: the record itself
      assert(["queued", "running"].includes((tro.structuredContent as { state: string }).state));
      await call(m, "shoal_cancel", { task: sc(running).task });
      // events
      const ev = await read(`shoal://events/task.${tn}?since=0`);
      const evs = (ev.structuredContent as { events: Array<{ seq: number }> }).events;
      assert(evs.length >= 1 && evs.every((e) => e.seq > 0));
      // errors: kernel code and data as a JSON-RPC error; bad URIs as -32602
      const e404 = await rpcCode(read("shoal://out/999999"));
      assertEquals(e404.code, -32004);
      assertMatch(e404.message, /^kernel error: /);
      const ep = await rpcCode(read(`shoal://out/${n}?path=.nope`));
      assertEquals(ep.code, -32005);
      assertEquals((ep.data as { path?: string })?.path, ".nope");
      for (const uri of ["shoal://nope", "shoal://session/bogus", "file:///etc/passwd"]) {
        assertEquals((await rpcCode(read(uri))).code, -32602, uri);
      }
    });

    await t.step("subscriptions deliver, dedupe, and really stop", async () => {
      const kc = await kernelClient(k.socket, session);
      try {
        const stats = () => kc.call<{ subscriptions: number }>("kernel.stats");
        const before = (await stats()).subscriptions;
        const uri = `shoal://events/user.mcp-test`;
        const count = () => seen.filter((s) => s.uri === uri).length;
        let close: () => Promise<void>;
        if (era === "modern") {
          const sub = await m.client.listen({ resourceSubscriptions: [uri] });
          const sub2 = await m.client.listen({ resourceSubscriptions: [uri] });
          close = async () => {
            await sub.close();
            await sub2.close();
          };
        } else {
          await m.client.subscribeResource({ uri });
          await m.client.subscribeResource({ uri }); // deduped
          close = async () => {
            await m.client.unsubscribeResource({ uri });
          };
        }
        assertEquals((await stats()).subscriptions, before + 1, "one kernel subscription");
        await kc.call("events.publish", { channel: "user.mcp-test", payload: { n: 1 } });
        await waitFor(() => count() >= 1, 5000, "a notification");
        await new Promise((r) => setTimeout(r, 200));
        const got = count();
        assertEquals(got, era === "modern" ? 2 : 1, "one per subscription, no duplicates");
        await close();
        await waitFor(async () => (await stats()).subscriptions === before, 5000, "unsubscribed");
        await kc.call("events.publish", { channel: "user.mcp-test", payload: { n: 2 } });
        await new Promise((r) => setTimeout(r, 500));
        assertEquals(count(), got, "nothing after unsubscribe");

        // a task subscription announces the terminal state
        const b = await exec(m, { src: "sleep 300ms; 3", background: true });
        const tn = sc(b).task.slice(5);
        const turi = `shoal://task/${tn}`;
        if (era === "modern") {
          const sub = await m.client.listen({ resourceSubscriptions: [turi, `${turi}/out`] });
          await waitFor(() => seen.some((s) => s.uri === `${turi}/out`), 10_000, "task update");
          await sub.close();
        } else {
          await m.client.subscribeResource({ uri: turi });
          await m.client.subscribeResource({ uri: `${turi}/out` });
          await waitFor(() => seen.some((s) => s.uri === `${turi}/out`), 10_000, "task update");
          assert(seen.some((s) => s.uri === turi));
          await m.client.unsubscribeResource({ uri: turi });
          await m.client.unsubscribeResource({ uri: `${turi}/out` });
        }
        await waitFor(async () => (await stats()).subscriptions === before, 5000, "all released");
        if (era === "legacy") {
          const e = await rpcCode(m.client.subscribeResource({ uri: "shoal://session/env" }));
          assertEquals(e.code, -32602);
        }
      } finally {
        kc.close();
      }
    });

    await t.step("many requests in flight: a slow call blocks nothing else", async () => {
      const slow = m.client.callTool({
        name: "shoal_exec",
        arguments: { src: "sleep 2s; 1", timeout_ms: 5000 },
      });
      await new Promise((r) => setTimeout(r, 300));
      const t0 = Date.now();
      await Promise.all([
        m.client.readResource({ uri: "shoal://jobs" }),
        m.client.listTools(),
        m.client.readResource({ uri: "shoal://session/reef" }),
        m.client.callTool({ name: "shoal_get", arguments: { ref: "out:1" } }),
      ]);
      assert(Date.now() - t0 < 1500, `other requests took ${Date.now() - t0} ms`);
      assertEquals(sc(await within(10_000, slow, "slow")).value, { $: "int", v: 1 });
    });
  } finally {
    await m.close();
  }
}

Deno.test("shoal-mcp over a real kernel, both protocol eras", opts, async (t) => {
  const k = await startKernel();
  try {
    for (const era of ERAS) {
      await t.step(`${era} era`, (t2) => eraSuite(t2, k, era));
    }
  } finally {
    await k.stop();
  }
});
