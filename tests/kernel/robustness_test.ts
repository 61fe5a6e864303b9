/**
 * Robustness over a real socket: malformed and random frames, the attach gate, 100 concurrent
 * connections, a looping session that must not delay others or its own cancel, a client that
 * vanishes mid-exec, and the seed's consumer algorithm after a slow subscriber overflowed.
 */

import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { KernelClient } from "../../lib/client/client.ts";
import { RPC } from "../../lib/client/errors.ts";
import { join } from "node:path";
import {
  client,
  RawConn,
  rpcError,
  spawnKernel,
  tempDir,
  waitFor,
  withKernel,
} from "./_helpers.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
type R = Record<string, unknown>;

/** Deterministic PRNG (mulberry32) so a failure reproduces. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

Deno.test("envelope errors and random frames leave the kernel serving", opts, async () => {
  await withKernel(async (k) => {
    const c = await RawConn.open(k.path);
    await c.write("{\n");
    let f = await c.next();
    assertEquals([f.id, (f.error as R).code], [null, RPC.PARSE_ERROR_JSON]);
    f = await c.call(1, "parse", { src: "1" }).then(() => c.call(1, "x"));
    assertEquals((f.error as R).code, RPC.METHOD_NOT_FOUND);
    await c.write('{"jsonrpc":"1.0","id":7,"method":"parse"}\n');
    f = await c.next();
    assertEquals([f.id, (f.error as R).code], [7, RPC.INVALID_REQUEST]);
    await c.write('{"jsonrpc":"2.0","id":8,"method":"parse","params":[1]}\n');
    f = await c.next();
    assertEquals([f.id, (f.error as R).code], [8, RPC.INVALID_PARAMS]);
    // A batch (the kernel serves none) is answered element by element, in one array.
    await c.write('[1,2]\n{"jsonrpc":"2.0","id":{"a":1},"method":"parse"}\n');
    const batch = await c.next() as unknown as Array<{ error: R }>;
    assertEquals(batch.map((x) => x.error.code), [RPC.INVALID_REQUEST, RPC.INVALID_REQUEST]);
    assertEquals(((await c.next()).error as R).code, RPC.INVALID_REQUEST);
    // A notification (no id) gets no reply: the next frame answers id 9.
    await c.write('{"jsonrpc":"2.0","method":"parse","params":{"src":"1"}}\n');
    f = await c.call(9, "parse", { src: "2" });
    assertEquals(f.id, 9);

    // Random frames: garbage bytes, broken and wrong-shaped JSON, deep nesting (fixed seed).
    const rnd = prng(20261129);
    const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)];
    const shapes = [
      () =>
        Array.from(
          { length: 1 + Math.floor(rnd() * 200) },
          () => String.fromCharCode(32 + Math.floor(rnd() * 95)),
        ).join(""),
      () =>
        JSON.stringify({
          jsonrpc: "2.0",
          id: Math.floor(rnd() * 1e6),
          method: pick(["exec", "value.get", "nope", "task.get", "parse", "events.read"]),
          params: pick([null, 1, "s", [], {}, { src: 3 }, { channel: {} }]),
        }),
      () =>
        JSON.stringify({
          jsonrpc: pick(["2.0", 2, null]),
          id: pick([1, "a", null, true, [1]]),
          method: pick(["parse", 3, null]),
        }),
      () =>
        '{"jsonrpc":"2.0","id":1,"method":"parse","params":{"src":"' +
        "(".repeat(Math.floor(rnd() * 3000)) + '"}}',
      () => "[".repeat(Math.floor(rnd() * 20000)),
      () => '"' + "\\u00".repeat(10) + '"',
    ];
    const bytes = new Uint8Array(64);
    for (let i = 0; i < 300; i++) {
      if (rnd() < 0.1) {
        for (let j = 0; j < bytes.length; j++) {
          bytes[j] = Math.floor(rnd() * 256) === 10 ? 0 : Math.floor(rnd() * 256);
        }
        await c.write(bytes);
        await c.write("\n");
      } else await c.write(pick(shapes)() + "\n");
    }
    await c.write(
      JSON.stringify({ jsonrpc: "2.0", id: "final", method: "parse", params: { src: "1 + 1" } }) +
        "\n",
    );
    for (let n = 0; n < 400; n++) {
      const r = await c.next(20000);
      if (r.id === "final") {
        assertEquals((r.result as R).ast_version, 2);
        break;
      }
    }
    c.close();
    // And a fresh client still works.
    const ok = await client(k.path);
    assertEquals((await ok.call<R>("exec", { src: "1 + 2" })).value, { $: "int", v: 3 });
    ok.close();
  });
});

Deno.test(
  "every method except attach/parse/complete answers -32000 before attach",
  opts,
  async () => {
    await withKernel(async (k) => {
      const c = await KernelClient.connect({ socket: k.path });
      const gated = [
        "session.env",
        "session.reef",
        "session.cwd",
        "exec",
        "value.get",
        "task.list",
        "task.get",
        "task.await",
        "task.cancel",
        "task.suspend",
        "task.resume",
        "events.read",
        "events.publish",
        "events.subscribe",
        "events.unsubscribe",
        "kernel.stats",
      ];
      for (const m of gated) {
        const e = await rpcError(
          c.call(m, { src: "1", ref: "out:1", task: "task:1", channel: "user.x" }),
        );
        assertEquals(e.code, RPC.NOT_ATTACHED, m);
      }
      assert(Array.isArray((await c.call<R>("complete", { src: "e" })).candidates));
      assertEquals((await c.call<R>("parse", { src: "1" })).ast_version, 2);
      // Methods of later issues are honestly absent (-32601) or, once landed, gated (-32000):
      // never served before attach (D-1, D-2).
      for (
        const m of [
          "blob.get",
          "journal.query",
          "explain",
          "plan.get",
          "plan.list",
          "plan.apply",
          "cap.request",
          "pty.open",
          "pty.list",
        ]
      ) {
        const code = (await rpcError(c.call(m, {}))).code;
        assert(code === RPC.METHOD_NOT_FOUND || code === RPC.NOT_ATTACHED, `${m}: ${code}`);
      }
      c.close();
    });
  },
);

Deno.test("100 concurrent connections", opts, async () => {
  await withKernel(async (k) => {
    const results = await Promise.all(
      Array.from({ length: 100 }, async (_, i) => {
        const c = await client(k.path, i % 2 ? "odd" : "even");
        const r = await c.call<R>("exec", { src: `${i} * 2` });
        c.close();
        return (r.value as R).v;
      }),
    );
    assertEquals(results, Array.from({ length: 100 }, (_, i) => i * 2));
  });
});

Deno.test("a looping session delays neither another session nor its own cancel", opts, async () => {
  await withKernel(async (k) => {
    const a = await client(k.path, "busy");
    const b = await client(k.path, "calm");
    const loop = await a.call<R>("exec", {
      src: "var i = 0\nwhile true { i = i + 1 }",
      async: true,
    });
    await waitFor(
      async () => (await a.call<R>("task.get", { task: loop.task })).state === "running",
      5000,
      "loop running",
    );
    await new Promise((r) => setTimeout(r, 100)); // the worker is now inside the loop
    const t0 = performance.now();
    assertEquals((await b.call<R>("exec", { src: "1 + 2" })).value, { $: "int", v: 3 });
    const execMs = performance.now() - t0;
    const t1 = performance.now();
    const c = await a.call<R>("task.cancel", { task: loop.task });
    const cancelMs = performance.now() - t1;
    assertEquals(c.state, "cancelling");
    const done = await a.call<R>("task.await", { task: loop.task, timeout_ms: 10000 });
    assertEquals(done.state, "cancelled");
    assertEquals(((done.error as R).data as R).code, "cancelled");
    // Generous bounds: the point is "not blocked", not speed (the machine is shared).
    assert(execMs < 3000, `exec in another session took ${execMs} ms`);
    assert(cancelMs < 3000, `task.cancel took ${cancelMs} ms`);
    // The session is usable afterwards.
    assertEquals((await a.call<R>("exec", { src: "i > 0" })).value, { $: "bool", v: true });
    a.close();
    b.close();
  });
});

Deno.test("a client vanishing mid-exec leaks nothing", opts, async () => {
  await withKernel(async (k) => {
    const probe = await client(k.path, "vanish");
    const before = await probe.call<R>("kernel.stats", {});
    const raw = await RawConn.open(k.path);
    await raw.call(1, "session.attach", { session: "vanish" });
    await raw.call(2, "events.subscribe", { channel: "render" });
    await raw.call(3, "events.subscribe", { channel: "user.x" });
    await raw.write(
      JSON.stringify({ jsonrpc: "2.0", id: 4, method: "exec", params: { src: "sleep 300ms\n1" } }) +
        "\n",
    );
    await waitFor(
      async () => (await probe.call<R>("kernel.stats", {})).live_tasks === 1,
      5000,
      "exec started",
    );
    assertEquals((await probe.call<R>("kernel.stats", {})).subscriptions, 2);
    raw.close();
    await waitFor(
      async () => {
        const s = await probe.call<R>("kernel.stats", {});
        return s.connections === before.connections && s.subscriptions === 0 && s.live_tasks === 0;
      },
      10000,
      "connection, subscriptions and task to be gone",
    );
    const tasks = await probe.call<R[]>("task.list", {});
    assertEquals(tasks.at(-1)!.state, "completed", "the task still completes");
    const after = await probe.call<R>("kernel.stats", {});
    assert(
      (after.open_fds as number) <= (before.open_fds as number),
      `fds ${before.open_fds} → ${after.open_fds}`,
    );
    probe.close();
  });
});

Deno.test(
  "consumer algorithm: cursor, dedupe and gap fill after a slow subscriber",
  opts,
  async () => {
    await withKernel(async (k) => {
      const slow = await RawConn.open(k.path);
      await slow.call(1, "session.attach", { session: "ev" });
      const sub = await slow.call(2, "events.subscribe", { channel: "user.flood" });
      assertEquals(sub.result, { channel: "user.flood", subscribed: true });
      // Publish far more than the socket buffers plus the 256-event queue hold, without reading.
      const pub = await client(k.path, "ev");
      const N = 1000;
      const blob = "x".repeat(4096);
      for (let i = 0; i < N; i++) {
        await pub.call("events.publish", { channel: "user.flood", payload: { i, blob } });
      }
      // Consumer: process in seq order, dedupe by cursor, fill a gap with events.read(since).
      let cursor = -1;
      const seen: number[] = [];
      let gaps = 0;
      let id = 100;
      const take = (e: R) => {
        const seq = e.seq as number;
        if (seq <= cursor) {
          return; // duplicate
        }
        seen.push((e.payload as R).i as number);
        cursor = seq;
      };
      while (cursor < N - 1) {
        const f = await slow.next(20000);
        if (f.method !== "event") continue;
        const e = f.params as R;
        const p = e.payload as R;
        if (p && typeof p.dropped === "number" && typeof p.latest_seq === "number") {
          gaps++;
          assert(p.dropped > 0);
          // Fill from the ring (since is exclusive); a response frame may trail more events.
          const myId = id++;
          await slow.write(
            JSON.stringify({
              jsonrpc: "2.0",
              id: myId,
              method: "events.read",
              params: { channel: "user.flood", since: cursor },
            }) + "\n",
          );
          const later: R[] = [];
          let r: R;
          for (;;) {
            r = await slow.next(20000);
            if (r.id === myId) break;
            if (r.method === "event") later.push(r.params as R); // newer than the gap: after the fill
          }
          for (const ev of (r.result as R).events as R[]) take(ev);
          for (const ev of later) take(ev);
          continue;
        }
        take(e);
      }
      assert(gaps >= 1, "the slow subscriber saw a {dropped, latest_seq} summary");
      assertEquals(seen, Array.from({ length: N }, (_, i) => i), "every event once, in order");
      slow.close();
      pub.close();
    });
  },
);

Deno.test("the typed client fills a gap itself: every event once, in order", opts, async () => {
  // A kernel process of its own: in-process, the slow handler would throttle the kernel too.
  const dir = await tempDir();
  const { child } = await spawnKernel(join(dir, "k.sock"));
  try {
    const k = { path: join(dir, "k.sock") };
    const slow = await client(k.path, "ev2");
    const seen: number[] = [];
    let summaries = 0;
    // A handler that blocks its reader loop: the kernel's queue for this client overflows.
    await slow.subscribe("user.flood", (e) => {
      const p = e.payload as R;
      if (typeof p.dropped === "number") return void summaries++;
      seen.push(((p.v as R).i as R).v as number);
      const until = performance.now() + 2;
      while (performance.now() < until) { /* slow consumer */ }
    });
    // The kernel's own session emits the flood (language → user.* bridge), at full speed.
    const pub = await client(k.path, "ev2");
    const N = 1000;
    await pub.call("exec", {
      src: 'let b = (0..4096).map(i => "x").join("")\n' +
        `for i in 0..${N} { channel("user.flood").emit({i: i, blob: b}) }`,
    });
    await waitFor(() => seen.length === N, 30000, `all ${N} events (have ${seen.length})`);
    assertEquals(seen, Array.from({ length: N }, (_, i) => i));
    assert(slow.gapsFilled >= 1, "the kernel dropped events for this slow client");
    assertEquals(summaries, 0, "nothing was lost, so no summary reaches the handler");
    assertEquals(slow.cursor("user.flood"), N - 1);
    slow.close();
    pub.close();
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});

Deno.test("sessions and per-session queues are bounded (D-31)", opts, async () => {
  await withKernel(async (k) => {
    const a = await client(k.path, "a");
    const b = await client(k.path, "b");
    const c = await KernelClient.connect({ socket: k.path });
    const e = await rpcError(c.call("session.attach", { session: "c" }));
    assertEquals([e.code, e.data], [RPC.INTERNAL_ERROR, { limit: 2 }]);
    assertEquals((await c.call<R>("session.attach", { session: "a" })).session, "a");
    const run = await a.call<R>("exec", { src: "sleep 5s", async: true });
    await waitFor(
      async () => (await a.call<R>("task.get", { task: run.task })).state === "running",
      5000,
      "running",
    );
    const q1 = await a.call<R>("exec", { src: "1", async: true });
    const q2 = await a.call<R>("exec", { src: "2", async: true });
    const full = await rpcError(a.call("exec", { src: "3", async: true }));
    assertEquals([full.code, full.data], [RPC.INTERNAL_ERROR, { queued: 2, limit: 2 }]);
    for (const t of [q1, q2, run]) await a.call("task.cancel", { task: t.task });
    assertEquals(
      (await a.call<R>("task.await", { task: run.task, timeout_ms: 10000 })).state,
      "cancelled",
    );
    assertEquals((await a.call<R>("exec", { src: "4" })).value, { $: "int", v: 4 });
    // Event payloads and subscriptions per connection are bounded too.
    const big = await rpcError(
      a.call("events.publish", { channel: "user.big", payload: "x".repeat(70000) }),
    );
    assertEquals([big.code, (big.data as R).limit], [RPC.INVALID_PARAMS, 65536]);
    for (let i = 0; i < 256; i++) await b.call("events.subscribe", { channel: `user.c${i}` });
    await b.call("events.subscribe", { channel: "user.c0" }); // re-subscribing is not a new one
    const many = await rpcError(b.call("events.subscribe", { channel: "user.one-too-many" }));
    assertEquals([many.code, many.data], [RPC.INVALID_PARAMS, { limit: 256 }]);
    await Promise.all(
      Array.from(
        { length: 1024 },
        (_, i) => a.call("events.publish", { channel: `user.ch${i}`, payload: i }),
      ),
    );
    await a.call("events.publish", { channel: "user.ch7", payload: "again" }); // known channel
    const extra = await rpcError(a.call("events.publish", { channel: "user.new", payload: 1 }));
    assertEquals([extra.code, (extra.data as R).limit], [RPC.INVALID_PARAMS, 1024]);
    for (const x of [a, b, c]) x.close();
  }, { maxSessions: 2, maxQueued: 2 });
});
