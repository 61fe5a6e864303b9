/**
 * Containment (issue 16): one session's memory, spin or crash stays inside that session. Real
 * kernel, real session processes, real sockets.
 */

import {
  deepStrictEqual as assertEquals,
  match as assertMatch,
  ok as assert,
} from "node:assert/strict";
import { KernelClient } from "../../lib/client/client.ts";
import { RPC } from "../../lib/client/errors.ts";
import type { KernelEvent } from "../../lib/client/protocol.ts";
import { join } from "node:path";
import { cgroupKillAvailable, killStrays } from "../../lib/exec/mod.ts";
import {
  client,
  rpcError,
  spawnKernel,
  tempDir,
  waitFor,
  withJournaledKernel,
  withKernel,
} from "./_helpers.ts";

/** Grows one session far past its heap limit (the reproduction). */
const HOG = 'let xs = (0..40000000).map(x => {a: x, b: "s"}); xs.len()';
/** A regex that backtracks for minutes inside V8: native code that never polls a flag. */
const STUCK = `"${"a".repeat(60)}!".replace(re"^(a|aa)+$", "x")`;

type Exec = { ref: string; value: { v: unknown } };

Deno.test("a session that exhausts its heap dies alone; the kernel and other sessions live", async () => {
  await withKernel(async (k) => {
    const a = await client(k.path, "hog");
    const b = await client(k.path, "calm");
    const events: KernelEvent[] = [];
    await a.subscribe("session.lifecycle", (e) => events.push(e));
    const kept = await b.call<Exec>("exec", { src: "let keep = 41; keep + 1", position: "value" });
    // The other session keeps answering while the hog grows and dies.
    const hog = rpcError(a.call("exec", { src: HOG }));
    let done = false;
    void hog.finally(() => (done = true));
    let answered = 0;
    let worstMs = 0;
    while (!done) {
      const t0 = performance.now();
      const r = await b.call<Exec>("exec", { src: "1 + 2", position: "value" });
      worstMs = Math.max(worstMs, performance.now() - t0);
      assertEquals(r.value.v, 3);
      answered++;
      await new Promise((r) => setTimeout(r, 20));
    }
    const e = await hog;
    assertEquals(e.code, RPC.INTERNAL_ERROR);
    assertMatch(e.message, /ran out of memory \(its heap limit is 256 MiB\)/);
    assertMatch(e.message, /session was restarted/);
    assert(answered > 3, `the calm session answered ${answered} execs while the hog grew`);
    // Generous: a containment check, not a benchmark (bench/isolation.ts measures latency).
    assert(worstMs < 2000, `a calm exec took ${worstMs.toFixed(0)} ms`);
    // Its transcript survived, and the hog's session is fresh and usable.
    const v = await b.call<{ value: { v: unknown } }>("value.get", { ref: kept.ref });
    assertEquals(v.value.v, 42);
    const again = await a.call<Exec>("exec", { src: "6 * 7", position: "value" });
    assertEquals(again.value.v, 42);
    await waitFor(() => events.length > 0, 5000, "the lifecycle event");
    const p = events[0].payload as { state: string; reason: string };
    assertEquals(p.state, "restarted");
    assertMatch(p.reason, /out of memory/);
    a.close();
    b.close();
  }, { sessionMemoryMb: 256 });
});

Deno.test("a background task that exhausts its heap kills only its session", async () => {
  await withKernel(async (k) => {
    const a = await client(k.path, "hog");
    const b = await client(k.path, "calm");
    const h = await a.call<{ task: string }>("exec", { src: HOG, background: true });
    const rec = await a.call<{ state: string; error: { message: string } }>("task.await", {
      task: h.task,
      timeout_ms: 60_000,
    });
    assertEquals(rec.state, "failed");
    assertMatch(rec.error.message, /ran out of memory/);
    const r = await b.call<Exec>("exec", { src: "1 + 2", position: "value" });
    assertEquals(r.value.v, 3);
    a.close();
    b.close();
  }, { sessionMemoryMb: 256 });
});

Deno.test("task.cancel ends a spinning loop within 1 s and the session keeps its state", async () => {
  await withKernel(async (k) => {
    const c = await client(k.path);
    await c.call("exec", { src: "let kept = 7" });
    const h = await c.call<{ task: string }>("exec", { src: "while true {}", background: true });
    await new Promise((r) => setTimeout(r, 200));
    const t0 = performance.now();
    await c.call("task.cancel", { task: h.task });
    const rec = await c.call<{ state: string }>("task.await", { task: h.task });
    const ms = performance.now() - t0;
    assertEquals(rec.state, "cancelled");
    assert(ms < 1000, `cancelled after ${ms.toFixed(0)} ms`);
    // The loop polled its flag: no kill was needed, the bindings are still there.
    const r = await c.call<Exec>("exec", { src: "kept", position: "value" });
    assertEquals(r.value.v, 7);
    c.close();
  });
});

Deno.test("task.cancel ends a task stuck in native code within 1 s by killing its session", async () => {
  await withKernel(async (k) => {
    const c = await client(k.path);
    const other = await client(k.path, "other");
    const events: KernelEvent[] = [];
    await c.subscribe("session.lifecycle", (e) => events.push(e));
    await c.call("exec", { src: "let kept = 7" });
    const h = await c.call<{ task: string }>("exec", { src: STUCK, background: true });
    await new Promise((r) => setTimeout(r, 300));
    const t0 = performance.now();
    await c.call("task.cancel", { task: h.task });
    const rec = await c.call<{ state: string; error: { message: string } }>("task.await", {
      task: h.task,
    });
    const ms = performance.now() - t0;
    assertEquals(rec.state, "cancelled");
    assert(ms < 1000, `cancelled after ${ms.toFixed(0)} ms`);
    assertMatch(rec.error.message, /did not respond within 400 ms of cancelling task:\d+/);
    await waitFor(() => events.length > 0, 5000, "the lifecycle event");
    // A fresh session: the old bindings are gone, and it says so.
    const e = await rpcError(c.call("exec", { src: "kept" }));
    assertEquals(e.code, RPC.RAISED);
    const r = await other.call<Exec>("exec", { src: "1 + 2", position: "value" });
    assertEquals(r.value.v, 3);
    c.close();
    other.close();
  });
});

Deno.test("a killed session's open exec is journaled unfinished", async () => {
  await withJournaledKernel(async (k) => {
    const c = await client(k.path);
    const h = await c.call<{ task: string }>("exec", {
      src: `sleep 10ms; ${STUCK}`,
      background: true,
    });
    await new Promise((r) => setTimeout(r, 300));
    await c.call("task.cancel", { task: h.task });
    await c.call("task.await", { task: h.task });
    const rows = await c.call<{ src: string; state: string }[]>("journal.query", {});
    const row = rows.find((r) => r.src.includes("replace"));
    assert(row, `no journal row for the killed exec in ${JSON.stringify(rows)}`);
    assertEquals(row.state, "unfinished");
    c.close();
  });
});

Deno.test("an exec that computes until it runs out of memory is journaled unfinished", async () => {
  // It never waits on anything, so only the evaluator's busy hook logs its running row.
  await withJournaledKernel(async (k) => {
    const c = await client(k.path);
    const e = await rpcError(c.call("exec", { src: HOG }));
    assertMatch(e.message, /ran out of memory/);
    const rows = await c.call<{ src: string; state: string }[]>("journal.query", {});
    const row = rows.find((r) => r.src === HOG);
    assert(row, `no journal row for the exec that died in ${JSON.stringify(rows)}`);
    assertEquals(row.state, "unfinished");
    c.close();
  }, { sessionMemoryMb: 256 });
});

Deno.test("with the journal on, the session that died answers its next exec at once", async () => {
  // The fresh process opens its journal before it is ready; an exec sent to it sooner was lost
  // (the task stayed running, and cancelling it left it `cancelling`, for good).
  await withJournaledKernel(async (k) => {
    const c = await client(k.path);
    await c.call("exec", { src: "let x = 41" });
    const e = await rpcError(c.call("exec", { src: HOG }));
    assertMatch(e.message, /ran out of memory.*session was restarted/);
    // At once, on the same connection and session: a fresh evaluator answers.
    const r = await c.call<Exec & { timed_out?: boolean }>("exec", {
      src: "1 + 2",
      position: "value",
      timeout_ms: 10_000,
    });
    assertEquals(r.timed_out, undefined, `the exec after the restart hung: ${JSON.stringify(r)}`);
    assertEquals(r.value.v, 3);
    const gone = await rpcError(c.call("exec", { src: "x + 1" }));
    assertMatch(gone.message, /x/); // its bindings went with the old process
    const rows = await c.call<{ src: string; state: string }[]>("journal.query", {});
    assertEquals(rows.find((row) => row.src === "1 + 2")?.state, "ok");
    c.close();
  }, { sessionMemoryMb: 256 });
});

Deno.test("a restarted session keeps its directory; work queued behind the crash did not run", async () => {
  await withKernel(async (k, dir) => {
    await Deno.mkdir(join(dir, "sub"));
    const c = await client(k.path);
    await c.call("exec", { src: "cd sub" });
    await c.call("exec", { src: 'let greeting = "hi"\nfn twice(x) { x * 2 }' });
    const stuck = await c.call<{ task: string }>("exec", { src: STUCK, background: true });
    const queued = await c.call<{ task: string }>("exec", { src: "2 + 2", background: true });
    await new Promise((r) => setTimeout(r, 200));
    await c.call("task.cancel", { task: stuck.task }); // it never polls: the session is killed
    type Rec = { state: string; error: { message: string; data: Record<string, unknown> } };
    const first = await c.call<Rec>("task.await", { task: stuck.task, timeout_ms: 10_000 });
    assertEquals(first.state, "cancelled");
    assertMatch(first.error.message, /was killed; the session was restarted .*keeps its directory/);
    const second = await c.call<Rec>("task.await", { task: queued.task, timeout_ms: 10_000 });
    assertEquals(second.state, "failed");
    assertMatch(second.error.message, /^this exec did not run: the session was restarted before/);
    assertMatch(second.error.message, /send it again/);
    assertEquals([second.error.data.restarted, second.error.data.ran], [true, false]);
    // The fresh process starts where the old one was.
    const pwd = await c.call<{ value: { v: unknown } }>("exec", { src: "pwd", position: "value" });
    assertEquals(pwd.value.v, join(await Deno.realPath(dir), "sub"));
    // A name bound before the crash is said to be lost with it, not never to have existed.
    for (const src of ["greeting", "print(greeting)", "twice(2)"]) {
      const e = await rpcError(c.call("exec", { src }));
      const data = e.data as { code: string; hint: string | null };
      assertMatch(data.hint ?? "", /^`(greeting|twice)` was bound in this session before it was/);
      assertMatch(
        data.hint ?? "",
        /restarted \(the session did not respond within .*, so it was killed\); .*define it again/,
      );
    }
    const never = await rpcError(c.call("exec", { src: "print(nosuch)" }));
    assertEquals((never.data as { hint: unknown }).hint, null, "a name never bound: no such hint");
    c.close();
  });
});

/** Pids of live processes whose command line is exactly `argv` (zombies excluded). */
function processesRunning(argv: string[]): number[] {
  const want = argv.join("\0");
  const out: number[] = [];
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const cmd = Deno.readTextFileSync(`/proc/${e.name}/cmdline`).replace(/\0$/, "");
      const stat = Deno.readTextFileSync(`/proc/${e.name}/stat`);
      if (cmd === want && !/^\d+ \(.*\) Z/.test(stat)) out.push(Number(e.name));
    } catch { /* gone */ }
  }
  return out;
}

Deno.test("task.cancel ends a setsid escaper with the rest of the command", async (t) => {
  if (!cgroupKillAvailable()) {
    console.warn("SKIPPED: no writable cgroup v2 here; a setsid escaper cannot be reached");
    return t.step({ name: "needs cgroup v2", ignore: true, fn: () => {} }).then(() => {});
  }
  await withKernel(async (k) => {
    const c = await client(k.path);
    const h = await c.call<{ task: string }>("exec", {
      src: "sh { setsid sleep 71.31 & sleep 100.31 }",
      background: true,
    });
    await waitFor(() => processesRunning(["sleep", "71.31"]).length > 0, 10_000, "the escaper");
    await c.call("task.cancel", { task: h.task });
    const rec = await c.call<{ state: string }>("task.await", { task: h.task });
    assertEquals(rec.state, "cancelled");
    await waitFor(() => processesRunning(["sleep", "71.31"]).length === 0, 5000, "no escaper");
    assertEquals(processesRunning(["sleep", "100.31"]), []);
    c.close();
  });
});

Deno.test("a command's background children end with it (`sh { sleep 72 & }`)", async () => {
  await withKernel(async (k) => {
    const c = await client(k.path);
    const t0 = performance.now();
    const r = await c.call<Exec>("exec", { src: "sh { sleep 72.31 & }; 1", position: "value" });
    assertEquals(r.value.v, 1);
    // It returns when sh does, not when the leftover would have closed its output.
    assert(performance.now() - t0 < 30_000);
    await waitFor(() => processesRunning(["sleep", "72.31"]).length === 0, 5000, "no leftover");
    // …and says so: an agent that backgrounded a server must not think it is up.
    const said = await c.call<{ render: string }>("exec", { src: "sh { sleep 72.32 & }" });
    assertMatch(
      said.render,
      /shoal: stopped what sh left running in the background — nothing a command starts outlives its exec; .*pty\.open \/ shoal_pty_open/,
    );
    // A command that waits for its own children leaves nothing, and nothing is said.
    const waited = await c.call<{ render: string }>("exec", { src: "sh { sleep 0.05 & wait }" });
    assert(!waited.render.includes("stopped"), waited.render);
    // A terminal attached with `shoal attach` is told too (nothing streams diagnostics to it).
    const tty = await KernelClient.connect({
      socket: k.path,
      attach: { session: "tty", client: { kind: "human", tty: true } },
    });
    const shown = await tty.call<{ render: string }>("exec", { src: "sh { sleep 72.33 & }" });
    assertMatch(shown.render, /shoal: stopped what sh left running in the background/);
    tty.close();
    c.close();
  });
});

Deno.test("a setsid escaper of a finished exec is swept when the exec ends", async (t) => {
  if (!cgroupKillAvailable()) {
    console.warn("SKIPPED: no writable cgroup v2 here; a setsid escaper cannot be reached");
    return t.step({ name: "needs cgroup v2", ignore: true, fn: () => {} }).then(() => {});
  }
  await withKernel(async (k) => {
    const c = await client(k.path);
    // The escaper has left the group by the time sh ends (the wait): only the sweep finds it.
    const r = await c.call<{ render: string }>("exec", {
      src: "sh { setsid sleep 73.31 > /dev/null 2>&1 & sleep 0.2 }",
    });
    await waitFor(() => processesRunning(["sleep", "73.31"]).length === 0, 5000, "no escaper");
    assertMatch(r.render, /shoal: stopped a process that left its command's process group/);
    c.close();
  });
});

Deno.test("an escaper that still holds the command's output does not hold up its exec", async () => {
  await withKernel(async (k) => {
    const c = await client(k.path);
    const t0 = performance.now();
    type Outcome = { ok: boolean; out: { v: string } };
    const r = await c.call<{ timed_out?: boolean; value: Outcome }>("exec", {
      src: "sh { setsid sleep 73.32 & echo started }",
      position: "value",
      timeout_ms: 10_000,
    });
    assertEquals(r.timed_out, undefined, "the exec waited for the escaper's end of the pipe");
    assert(performance.now() - t0 < 5000);
    assertEquals([r.value.ok, r.value.out.v], [true, "started"]);
    if (cgroupKillAvailable()) {
      await waitFor(() => processesRunning(["sleep", "73.32"]).length === 0, 5000, "no escaper");
    }
    c.close();
  });
});

Deno.test("killStrays never touches a cgroup that is not the caller's dedicated one", () => {
  assertEquals(killStrays("/sys/fs/cgroup/not-ours", new Set()), 0);
});

Deno.test("kernel SIGTERM ends a child that ignores SIGTERM and SIGINT", async () => {
  const dir = await tempDir();
  const sock = join(dir, "rt", "k.sock");
  const { child } = await spawnKernel(sock);
  try {
    const c = await client(sock);
    await c.call("exec", { src: "sh { trap '' TERM INT; sleep 82.31 }", background: true });
    await waitFor(() => processesRunning(["sleep", "82.31"]).length > 0, 10_000, "the child");
    c.close();
    child.kill("SIGTERM");
    const status = await child.status;
    assertEquals(status.code, 0);
    // The kernel exits only once its kill ladder is done: nothing is left at that moment.
    assertEquals(processesRunning(["sleep", "82.31"]), []);
  } finally {
    try {
      child.kill("SIGKILL");
    } catch { /* exited */ }
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
