// Cancellation, timeouts, the kill ladder, suspend/resume and the cgroup kill scope,
// checked against /proc — never against our own bookkeeping.

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  cgroupKillAvailable,
  resume,
  spawnCapture,
  spawnStreaming,
  type StreamingChild,
  suspend,
} from "../../lib/exec/mod.ts";
import {
  cmdline,
  dec,
  ENV,
  isDead,
  killGroupQuietly,
  liveMembers,
  procState,
  waitFor,
  withTempDir,
} from "./_helpers.ts";

const GRACE = 200;

/** Live group members running `sleep <arg>` (found via /proc, by process group). */
function sleepers(pgid: number, arg: string): number[] {
  return liveMembers(pgid).filter((pid) => {
    const words = cmdline(pid);
    return words[0]?.endsWith("sleep") && words[1] === arg;
  });
}

Deno.test("cancelling a command kills its grandchildren too", async () => {
  const ac = new AbortController();
  const running = spawnStreaming({
    argv: ["sh", "-c", "sleep 300 & sleep 300 & wait"],
    cwd: "/",
    env: ENV,
    signal: ac.signal,
    graceMs: GRACE,
  });
  const child = await running;
  const pgid = child.pgid;
  try {
    assert.ok(await waitFor(() => sleepers(pgid, "300").length === 2), "both sleeps started");
    const victims = sleepers(pgid, "300");
    const t0 = performance.now();
    ac.abort();
    await child.stdout.cancel();
    const r = await child.result;
    const elapsed = performance.now() - t0;
    assert.ok(r.cancelled);
    // sh dies of SIGINT; its background sleeps ignore SIGINT (POSIX) and need SIGTERM.
    assert.equal(r.status, null);
    assert.equal(r.signal, "SIGINT");
    for (const pid of victims) assert.ok(isDead(pid), `sleep ${pid} survived: ${procState(pid)}`);
    assert.deepEqual(liveMembers(pgid), []);
    assert.ok(elapsed < 3 * GRACE + 1500, `took ${elapsed} ms`);
  } finally {
    killGroupQuietly(pgid);
  }
});

Deno.test("capture mode: cancel returns the real status and leaves no group member", async () => {
  const ac = new AbortController();
  const p = spawnCapture({
    argv: ["sh", "-c", "echo started; sleep 300 & sleep 300 & wait"],
    cwd: "/",
    env: ENV,
    signal: ac.signal,
    graceMs: GRACE,
  });
  await new Promise((r) => setTimeout(r, 150));
  ac.abort();
  const r = await p;
  assert.ok(r.cancelled);
  assert.equal(r.timedOut, false);
  assert.equal(r.signal, "SIGINT");
  assert.equal(dec.decode(r.stdout), "started\n", "output before the cancel is kept");
  assert.deepEqual(liveMembers(r.pgid), []);
});

Deno.test("timeoutMs runs the same ladder and is flagged", async () => {
  const t0 = performance.now();
  const r = await spawnCapture({
    argv: ["sleep", "30"],
    cwd: "/",
    env: ENV,
    timeoutMs: 100,
    graceMs: GRACE,
  });
  assert.ok(r.timedOut);
  assert.equal(r.cancelled, false);
  assert.equal(r.signal, "SIGINT");
  assert.ok(performance.now() - t0 < 2000);
  // A command that finishes first is not flagged.
  const fast = await spawnCapture({ argv: ["true"], cwd: "/", env: ENV, timeoutMs: 5000 });
  assert.equal(fast.timedOut, false);
  assert.equal(fast.status, 0);
});

Deno.test("a group ignoring SIGINT and SIGTERM is escalated to SIGKILL", async () => {
  const ac = new AbortController();
  const p = spawnCapture({
    argv: ["sh", "-c", "trap '' INT TERM; sleep 300 & wait; wait"],
    cwd: "/",
    env: ENV,
    signal: ac.signal,
    graceMs: GRACE,
  });
  await new Promise((r) => setTimeout(r, 150));
  const t0 = performance.now();
  ac.abort();
  const r = await p;
  const elapsed = performance.now() - t0;
  assert.equal(r.signal, "SIGKILL");
  assert.ok(elapsed >= 2 * GRACE - 20, `SIGKILL came after both graces (${elapsed} ms)`);
  assert.deepEqual(liveMembers(r.pgid), []);
});

Deno.test("a group whose leader exited but whose child holds the pipe is still killed", async () => {
  const ac = new AbortController();
  // sh exits at once; the background sleep keeps stdout open, so capture waits for it.
  const p = spawnCapture({
    argv: ["sh", "-c", "sleep 300 & echo bg"],
    cwd: "/",
    env: ENV,
    signal: ac.signal,
    graceMs: GRACE,
  });
  await new Promise((r) => setTimeout(r, 200));
  ac.abort();
  const r = await p;
  assert.equal(r.status, 0, "the leader's own exit status is reported");
  assert.equal(dec.decode(r.stdout), "bg\n");
  assert.deepEqual(liveMembers(r.pgid), []);
});

Deno.test("suspend and resume stop and continue the whole group", async () => {
  const child = await spawnStreaming({
    // No fork loop: a dash parent waiting in vfork() for a stopped child shows state D.
    argv: ["sh", "-c", "sleep 300 & exec sleep 301"],
    cwd: "/",
    env: ENV,
    graceMs: GRACE,
  });
  const pgid = child.pgid;
  try {
    await suspendResumeCancel(child, pgid);
  } finally {
    killGroupQuietly(pgid);
  }
});

async function suspendResumeCancel(child: StreamingChild, pgid: number): Promise<void> {
  assert.ok(
    await waitFor(() => sleepers(pgid, "300").length === 1 && sleepers(pgid, "301").length === 1),
    "both sleeps started",
  );
  const stopped = () => liveMembers(pgid).every((pid) => procState(pid) === "T");
  const states = () =>
    liveMembers(pgid).map((pid) => `${pid} ${procState(pid)} ${cmdline(pid).join(" ")}`).join("; ");
  assert.ok(suspend(pgid));
  assert.ok(await waitFor(stopped), `all members stopped: ${states()}`);
  assert.ok(resume(pgid));
  assert.ok(
    await waitFor(() => liveMembers(pgid).every((pid) => procState(pid) !== "T")),
    "all members running",
  );
  // Cancelling a suspended group works too (the ladder sends SIGCONT with each signal).
  assert.ok(suspend(pgid));
  assert.ok(await waitFor(stopped), `all members stopped again: ${states()}`);
  child.cancel();
  await child.stdout.cancel();
  const r = await child.result;
  assert.ok(r.cancelled);
  assert.deepEqual(liveMembers(pgid), []);
}

Deno.test("signalling a group that no longer exists reports false", async () => {
  const r = await spawnCapture({ argv: ["true"], cwd: "/", env: ENV });
  assert.equal(suspend(r.pgid), false);
  assert.equal(resume(r.pgid), false);
});

Deno.test({
  name: "cgroup kill scope also takes descendants that escaped with setsid",
  ignore: !cgroupKillAvailable(),
  fn: async () => {
    const escapers: number[] = [];
    try {
      await cgroupVsGroup(escapers);
    } finally {
      // Only our own escapers: still alive and still running `sleep 301`.
      for (const pid of escapers) {
        if (!isDead(pid) && cmdline(pid)[1] === "301") Deno.kill(pid, "SIGKILL");
      }
    }
  },
});

async function cgroupVsGroup(escapers: number[]): Promise<void> {
  await withTempDir(async (dir) => {
    const script = "setsid sleep 301 & echo $! > pids; sleep 302 & echo $! >> pids; wait";
    const started = async (killScope: "group" | "cgroup") => {
      const ac = new AbortController();
      const p = spawnCapture({
        argv: ["sh", "-c", script],
        cwd: dir,
        env: ENV,
        signal: ac.signal,
        graceMs: GRACE,
        killScope,
      });
      const pidsFile = join(dir, "pids");
      await waitFor(() => {
        try {
          return Deno.readTextFileSync(pidsFile).trim().split("\n").length === 2;
        } catch {
          return false;
        }
      });
      const pids = Deno.readTextFileSync(pidsFile).trim().split("\n").map(Number);
      Deno.removeSync(pidsFile);
      escapers.push(pids[0]);
      ac.abort();
      return { r: await p, escaped: pids[0], grouped: pids[1] };
    };

    const inGroup = await started("group");
    assert.equal(inGroup.r.killScope, "group");
    assert.ok(isDead(inGroup.grouped));
    // The baseline cannot reach a setsid escaper: that is what the cgroup mode is for.
    assert.ok(!isDead(inGroup.escaped), "setsid escaper survives a group kill");
    Deno.kill(inGroup.escaped, "SIGKILL");

    const inCgroup = await started("cgroup");
    assert.equal(inCgroup.r.killScope, "cgroup");
    assert.ok(inCgroup.r.cancelled);
    assert.ok(await waitFor(() => isDead(inCgroup.escaped), 1000), "escaper killed");
    assert.ok(isDead(inCgroup.grouped));
  });
}

Deno.test({
  name: "cgroup kill scope runs normal commands unchanged",
  ignore: !cgroupKillAvailable(),
  fn: async () => {
    const r = await spawnCapture({
      argv: ["sh", "-c", 'printf %s "$1"; exit 4', "sh", "x y"],
      cwd: "/",
      env: ENV,
      killScope: "cgroup",
    });
    assert.equal(r.killScope, "cgroup");
    assert.equal(r.status, 4);
    assert.equal(dec.decode(r.stdout), "x y");
  },
});

Deno.test("reapOnExit: what the leader left in its group is killed, and the result says so", async () => {
  const left = await spawnCapture({
    argv: ["sh", "-c", "sleep 61.37 & echo up"],
    cwd: "/",
    env: ENV,
    reapOnExit: true,
  });
  assert.equal(dec.decode(left.stdout), "up\n");
  assert.equal(left.leftRunning, true);
  assert.ok(await waitFor(() => sleepers(left.pgid, "61.37").length === 0, 2000), "a leftover");
  const clean = await spawnCapture({
    argv: ["sh", "-c", "sleep 0.05 & wait"],
    cwd: "/",
    env: ENV,
    reapOnExit: true,
  });
  assert.equal(clean.leftRunning, undefined);
  // Without reapOnExit nothing is killed or said (the CLI's children may outlive it).
  const plain = await spawnCapture({ argv: ["sh", "-c", "true"], cwd: "/", env: ENV });
  assert.equal(plain.leftRunning, undefined);
});
