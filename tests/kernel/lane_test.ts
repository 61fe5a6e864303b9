/**
 * The exec lane (issue 16): an unconfined session serves its attachments' plain execs on its
 * own socket, two hops instead of four, while the kernel keeps every task, the order of each
 * client's execs, cancellation, crashes, tickets and policy edits. Real kernel, real session
 * processes, real sockets.
 */

import {
  deepStrictEqual as assertEquals,
  match as assertMatch,
  ok as assert,
} from "node:assert/strict";
import { join } from "node:path";
import { KernelClient } from "../../lib/client/client.ts";
import { FrameReader, FrameWriter } from "../../lib/client/framing.ts";
import { RPC } from "../../lib/client/errors.ts";
import { localPrincipal } from "../../lib/leash/mod.ts";
import { startKernel } from "../../lib/kernel/server.ts";
import { client, rpcError, waitFor, withJournaledKernel, withKernel } from "./_helpers.ts";

type R = Record<string, unknown>;
type Exec = { ref: string; value: { v: unknown }; render: string };

/** Until the client has its lane open (it opens behind the attach). */
async function laneOpen(c: KernelClient): Promise<void> {
  await waitFor(
    async () => {
      const before = c.laneExecs;
      await c.call("exec", { src: "0" });
      return c.laneExecs > before;
    },
    5000,
    "the exec lane",
  );
}

/** Send `src` by the lane, stop waiting after 100 ms, cancel it: it ends cancelled within 1 s. */
async function cancelsWithin1s(c: KernelClient, src: string): Promise<void> {
  const h = await c.call<R>("exec", { src, timeout_ms: 100 });
  assertEquals(h.timed_out, true);
  const t0 = Date.now();
  await c.call("task.cancel", { task: h.task });
  const end = await c.call<R>("task.await", { task: h.task, timeout_ms: 5000 });
  assertEquals(end.state, "cancelled");
  assert(Date.now() - t0 < 1000, `cancelled in ${Date.now() - t0} ms`);
}

Deno.test("a plain exec goes by the lane and answers as the kernel would", async () => {
  await withJournaledKernel(async (k) => {
    const c = await client(k.path);
    assertMatch(String(c.attached?.lane?.socket), /lane-\d+\.sock$/);
    await laneOpen(c);
    const viaLane = c.laneExecs;
    const r = await c.call<Exec>("exec", { src: "let x = 40\nx + 2", position: "value" });
    assertEquals([r.value.v, r.render], [42, "42"]);
    assertEquals(c.laneExecs, viaLane + 1, "it went by the lane");
    // The kernel has its task, its transcript and its journal row like any other.
    const tasks = await c.call<R[]>("task.list", {});
    assert(tasks.some((t) => t.result_ref === r.ref && t.state === "completed"));
    const v = await c.call<{ value: { v: unknown } }>("value.get", { ref: r.ref });
    assertEquals(v.value.v, 42);
    const e = await rpcError(c.call("exec", { src: "nosuch_fn(1)" }));
    assertEquals([e.code, (e.data as R).code], [RPC.RAISED, "undefined_var"]);
    const p = await rpcError(c.call("exec", { src: "let = 3" }));
    assertEquals(p.code, RPC.PARSE_ERROR);
    // The same answers through the kernel alone.
    const plain = await KernelClient.connect({ socket: k.path, attach: {}, lane: false });
    assertEquals(plain.attached?.lane, undefined, "a client without a lane is granted none");
    const bad = await rpcError(plain.call("session.attach", { lane: "no" }));
    assertEquals(bad.code, RPC.INVALID_PARAMS);
    assertEquals(bad.message, "`lane` must be a boolean");
    const q = await plain.call<Exec>("exec", { src: "x + 2", position: "value" });
    assertEquals([q.value.v, q.render, plain.laneExecs], [42, "42", 0]);
    plain.close();
    await waitFor(
      async () =>
        (await c.call<R[]>("journal.query", { limit: 50 })).some((row) =>
          JSON.stringify(row).includes("let x = 40")
        ),
      5000,
      "the lane exec's journal row",
    );
    c.close();
  });
});

Deno.test("an exec never overtakes an earlier one of the same client", async () => {
  await withKernel(async (k, dir) => {
    await Deno.mkdir(join(dir, "sub"));
    const c = await client(k.path);
    await laneOpen(c);
    for (let i = 0; i < 20; i++) {
      // The background exec goes through the kernel; the next one must still see its effect.
      await c.call("exec", { src: `let n${i} = ${i}`, background: true });
      const r = await c.call<Exec>("exec", { src: `n${i}`, position: "value" });
      assertEquals(r.value.v, i);
    }
    await c.call("exec", { src: "sleep 200ms\ncd sub", background: true });
    const pwd = await c.call<Exec>("exec", { src: "pwd", position: "value" });
    assertEquals(pwd.value.v, join(await Deno.realPath(dir), "sub"));
    c.close();
  });
});

Deno.test("a lane exec that outlives its timeout is a task the kernel took over, run once", async () => {
  await withKernel(async (k, dir) => {
    const c = await client(k.path);
    await laneOpen(c);
    const log = join(dir, "ran.log");
    const h = await c.call<R>("exec", {
      src: `sleep 400ms\nsh { echo x >> ${log} }\n7`,
      timeout_ms: 50,
    });
    assertEquals(h.timed_out, true);
    assertMatch(String(h.task), /^task:\d+$/);
    const rec = await c.call<R>("task.await", { task: h.task, timeout_ms: 10_000 });
    assertEquals(rec.state, "completed", JSON.stringify(rec));
    await new Promise((r) => setTimeout(r, 300));
    assertEquals(await Deno.readTextFile(log), "x\n", "it ran once");
    // A spinning lane exec: its task is cancelled within 1 s and the session keeps its state.
    await c.call("exec", { src: "let kept = 5" });
    await cancelsWithin1s(c, "var i = 0\nwhile true { i = i + 1 }");
    assertEquals((await c.call<Exec>("exec", { src: "kept", position: "value" })).value.v, 5);
    // Stuck in native code that never polls (a catastrophic regex): the kernel never heard it
    // begin, yet its cancel ends it within 1 s — by killing the session.
    await cancelsWithin1s(c, `"${"a".repeat(60)}!".replace(re"^(a|aa)+$", "x")`);
    assertEquals((await c.call<Exec>("exec", { src: "2 + 2", position: "value" })).value.v, 4);
    c.close();
  });
});

Deno.test("a session that dies in a lane exec gives the kernel's error; the lane comes back", async () => {
  await withKernel(async (k) => {
    const c = await client(k.path);
    await laneOpen(c);
    const e = await rpcError(
      c.call("exec", { src: 'let xs = (0..40000000).map(x => {a: x, b: "s"}); xs.len()' }),
    );
    assertEquals(e.code, RPC.INTERNAL_ERROR);
    assertMatch(e.message, /ran out of memory .*the session was restarted/);
    assertEquals((await c.call<Exec>("exec", { src: "1 + 1", position: "value" })).value.v, 2);
    await laneOpen(c); // the fresh process serves the same ticket
    c.close();
  }, { sessionMemoryMb: 256 });
});

/** One JSON-RPC exchange on a raw connection to a lane socket. */
async function rawLane(socket: string, frames: R[]): Promise<R[]> {
  const conn = await Deno.connect({ transport: "unix", path: socket });
  const w = new FrameWriter(conn);
  const r = new FrameReader(conn);
  const out: R[] = [];
  try {
    for (const f of frames) {
      await w.send(f);
      const got = await r.next();
      if (!got || got.kind !== "line") break;
      out.push(JSON.parse(got.text));
    }
  } catch { /* closed by the session */ }
  conn.close();
  return out;
}

Deno.test("the lane serves only live tickets; a kernel without lanes offers none", async () => {
  await withKernel(async (k) => {
    const c = await client(k.path);
    await laneOpen(c);
    const { socket, ticket } = c.attached!.lane!;
    const exec = { jsonrpc: "2.0", id: 2, method: "exec", params: { seq: 1, src: "1" } };
    const forged = await rawLane(socket, [
      { jsonrpc: "2.0", id: 1, method: "hello", params: { ticket: "forged" } },
      exec,
    ]);
    assertEquals(forged.length, 1, "nothing is heard after a bad hello");
    assertEquals((forged[0].error as R).code, RPC.AUTH_FAILED);
    const skipped = await rawLane(socket, [{ jsonrpc: "2.0", id: 1, method: "exec", params: {} }]);
    assertEquals((skipped[0].error as R).code, RPC.AUTH_FAILED, "hello comes first");
    c.close();
    // A closed attachment's ticket is taken back.
    await waitFor(
      async () => {
        const late = await rawLane(socket, [
          { jsonrpc: "2.0", id: 1, method: "hello", params: { ticket } },
        ]);
        return (late[0]?.error as R | undefined)?.code === RPC.AUTH_FAILED;
      },
      5000,
      "the ticket revoked",
    );
  });
  // A kernel without lanes offers none.
  await withKernel(async (k) => {
    const c = await client(k.path);
    assertEquals(c.attached?.lane, undefined);
    const none = await rpcError(c.call("lane.claim", { seq: 1, src: "1" }));
    assertEquals(none.code, RPC.INVALID_PARAMS);
    assertMatch(none.message, /no exec lane/);
    c.close();
  }, { lane: false });
});

Deno.test("lane claims are bounded and bad ones are refused with a clear error", async () => {
  await withKernel(async (k) => {
    const c = await client(k.path);
    await laneOpen(c);
    const bad = await rpcError(c.call("lane.claim", { src: "1" }));
    assertEquals(bad.code, RPC.INVALID_PARAMS);
    assertMatch(bad.message, /needs `seq`/);
    // While the session spins, claims it cannot answer pile up — to a bound.
    const spin = await c.call<R>("exec", { src: "while true {}", background: true });
    await waitFor(
      async () => (await c.call<R>("task.get", { task: spin.task })).state === "running",
      5000,
      "the spin",
    );
    let refused: Error | null = null;
    for (let seq = 1000; seq < 1000 + 1100 && refused === null; seq++) {
      await c.call("lane.claim", { seq, src: "1" }).catch((e) => (refused = e));
    }
    assertMatch(String((refused as Error | null)?.message), /1024 lane execs claimed/);
    await c.call("task.cancel", { task: spin.task });
    assertEquals((await c.call<R>("task.await", { task: spin.task })).state, "cancelled");
    c.close();
  });
});

Deno.test("a policy edit reaches the very next lane exec", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "shoal-lane-" }));
  const state = join(dir, "state");
  await Deno.mkdir(state);
  const file = join(state, "policy.toml");
  await Deno.writeTextFile(file, "");
  const k = await startKernel({
    socket: join(dir, "run", "k.sock"),
    stateDir: state,
    cwd: dir,
    onError: () => {},
  });
  try {
    const c = await client(k.path);
    await laneOpen(c);
    const r = await c.call<Exec>("exec", { src: "(git --version).ok", position: "value" });
    assertEquals(r.value.v, true);
    // The person narrows their own policy: the next exec is judged by it.
    await Deno.writeTextFile(
      file,
      `[principal."${localPrincipal()}"]\nfs.read = ["/**"]\nopaque = "ask"\n`,
    );
    const e = await rpcError(c.call("exec", { src: "(git --version).ok", position: "value" }));
    assertEquals(e.code, RPC.APPROVAL_REQUIRED);
    c.close();
  } finally {
    await k.close();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
