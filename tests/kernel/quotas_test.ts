/**
 * Per-principal quotas (D-31): each is reached over a real socket with its own error
 * (`-32040 QUOTA_EXCEEDED`, `data {quota, limit, used}`), and what was given back can be taken
 * again.
 */

import { deepStrictEqual as assertEquals, match as assertMatch } from "node:assert/strict";
import { RPC } from "../../lib/client/errors.ts";
import { parseKernelArgs } from "../../lib/kernel/cli.ts";
import { DEFAULT_QUOTAS, Quotas } from "../../lib/kernel/quotas.ts";
import { join } from "node:path";
import { KernelClient } from "../../lib/client/client.ts";
import { startKernel } from "../../lib/kernel/server.ts";
import { TokenStore } from "../../lib/leash/mod.ts";
import { client, rpcError, tempDir, withKernel } from "./_helpers.ts";

type QuotaData = { quota: string; limit: number; used: number };

function assertQuota(e: { code: number; data?: unknown }, quota: string, limit: number) {
  assertEquals(e.code, RPC.QUOTA_EXCEEDED);
  const d = e.data as QuotaData;
  assertEquals([d.quota, d.limit], [quota, limit]);
}

Deno.test("quota: sessions per principal (other than the kernel's own)", async () => {
  const dir = await Deno.realPath(await tempDir());
  const state = join(dir, "state");
  await Deno.mkdir(state);
  const bearer = (await new TokenStore(join(state, "tokens.json")).create("agent:q", "q")).bearer;
  const k = await startKernel({
    socket: join(dir, "k.sock"),
    stateDir: state,
    cwd: dir,
    onError: () => {},
    quotas: { sessions: 2 },
  });
  try {
    const as = (session: string) =>
      KernelClient.connect({ socket: k.path, attach: { session, token: bearer } });
    const a = await as("a");
    const b = await as("b");
    const e = await rpcError(as("c"));
    assertQuota(e, "sessions", 2);
    assertEquals((e.data as QuotaData).used, 2);
    assertMatch(e.message, /sessions quota \(2 of 2\); attach to one of your sessions/);
    // Its existing sessions stay open to it, and the kernel's own user is not counted.
    (await as("a")).close();
    for (const s of ["x", "y", "z"]) (await client(k.path, s)).close();
    a.close();
    b.close();
  } finally {
    await k.close();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});

Deno.test("quota: memory is the sum of the principal's session heaps", async () => {
  await withKernel(async (k) => {
    const a = await client(k.path, "a");
    const e = await rpcError(client(k.path, "b"));
    assertQuota(e, "memory_mb", 300);
    assertEquals((e.data as QuotaData).used, 256);
    a.close();
  }, { quotas: { memory_mb: 300 }, sessionMemoryMb: 256 });
});

Deno.test("quota: tasks waiting or running, across the principal's sessions", async () => {
  await withKernel(async (k) => {
    const a = await client(k.path, "a");
    const b = await client(k.path, "b");
    const t1 = await a.call<{ task: string }>("exec", { src: "sleep 30s", background: true });
    await b.call("exec", { src: "sleep 30s", background: true });
    const e = await rpcError(a.call("exec", { src: "1 + 2" }));
    assertQuota(e, "tasks", 2);
    // A cancelled task gives its place back.
    await a.call("task.cancel", { task: t1.task });
    await a.call("task.await", { task: t1.task });
    const r = await b.call<{ task: string }>("exec", { src: "2", background: true });
    await b.call("task.await", { task: r.task });
    a.close();
    b.close();
  }, { quotas: { tasks: 2 } });
});

Deno.test("quota: subscriptions across the principal's connections", async () => {
  await withKernel(async (k) => {
    const a = await client(k.path, "a");
    const b = await client(k.path, "a");
    await a.subscribe("user.x", () => {});
    await b.subscribe("user.y", () => {});
    // Re-subscribing to the same channel keeps its place.
    await b.subscribe("user.y", () => {});
    const e = await rpcError(a.call("events.subscribe", { channel: "user.z" }));
    assertQuota(e, "subscriptions", 2);
    await b.call("events.unsubscribe", { channel: "user.y" });
    await a.call("events.subscribe", { channel: "user.z" });
    a.close();
    b.close();
  }, { quotas: { subscriptions: 2 } });
});

Deno.test("quota: event payload bytes the kernel holds for the principal", async () => {
  await withKernel(async (k) => {
    const a = await client(k.path, "a");
    const payload = "x".repeat(50); // 52 bytes of JSON
    await a.call("events.publish", { channel: "user.x", payload });
    const e = await rpcError(a.call("events.publish", { channel: "user.x", payload }));
    assertQuota(e, "event_bytes", 100);
    assertEquals((e.data as QuotaData).used, 52);
    // Smaller ones still fit.
    await a.call("events.publish", { channel: "user.x", payload: "y" });
    a.close();
  }, { quotas: { event_bytes: 100 } });
});

Deno.test("quota: plans a principal holds (`--quota plans=N`)", async () => {
  await withKernel(async (k) => {
    type R = Record<string, unknown>;
    const a = await client(k.path);
    const first = await a.call<R>("exec", { src: "1 + 2", mode: "plan" });
    const e = await rpcError(a.call("exec", { src: "2 + 3", mode: "plan" }));
    assertQuota(e, "plans", 1);
    assertMatch(
      e.message,
      /already holds 1 plan not yet applied or declined \(the limit\); apply some of your plans, or have an approver decline them, first \(plan\.list shows them\)$/,
    );
    // An applied plan is settled: it makes room for the next.
    await a.call("plan.apply", { plan_ref: first.plan_ref });
    assertMatch(
      String((await a.call<R>("exec", { src: "2 + 3", mode: "plan" })).plan_ref),
      /^plan:/,
    );
    a.close();
  }, { quotas: { plans: 1 } });
});

Deno.test("quota counters: a lease is given back once, per principal", () => {
  const q = new Quotas({ plans: 1 });
  const l = q.take("agent:x", "plans");
  assertEquals(q.used("agent:x", "plans"), 1);
  assertEquals(q.used("agent:y", "plans"), 0);
  let err: unknown;
  try {
    q.take("agent:x", "plans");
  } catch (e) {
    err = e;
  }
  assertQuota(err as { code: number; data?: unknown }, "plans", 1);
  l.release();
  l.release(); // once only
  assertEquals(q.used("agent:x", "plans"), 0);
  q.take("agent:x", "plans").release();
  assertEquals(q.limits.ptys, DEFAULT_QUOTAS.ptys);
});

Deno.test("shoal kernel --quota NAME=N", () => {
  assertEquals(parseKernelArgs(["--quota", "sessions=3", "--quota=ptys=0"]).quotas, {
    sessions: 3,
    ptys: 0,
  });
  for (const bad of ["nope=1", "sessions", "sessions=-1", "sessions=x"]) {
    let msg = "";
    try {
      parseKernelArgs(["--quota", bad]);
    } catch (e) {
      msg = (e as Error).message;
    }
    assertMatch(msg, /--quota/);
  }
});
