// Output caps: bounded memory however much a child writes, stdout spill, stderr drop.

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  spawnCapture,
  type SpillFactory,
  type SpillSink,
  tempFileSpill,
} from "../../lib/exec/mod.ts";
import { ENV, withTempDir } from "./_helpers.ts";

const MiB = 1024 * 1024;

Deno.test("200 MB of stdout: capped in memory, the rest spilled, RSS stays bounded", async () => {
  await withTempDir(async (dir) => {
    const total = 200_000_000;
    const cap = 8 * MiB;
    const before = Deno.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, Deno.memoryUsage().rss);
    }, 5);
    let r;
    try {
      r = await spawnCapture({
        argv: ["head", "-c", String(total), "/dev/zero"],
        cwd: dir,
        env: ENV,
        stdoutCap: cap,
        spill: tempFileSpill({ dir }),
      });
    } finally {
      clearInterval(sampler);
    }
    peak = Math.max(peak, Deno.memoryUsage().rss);
    assert.equal(r.status, 0);
    assert.equal(r.stdout.length, cap);
    assert.ok(r.stdout.every((b) => b === 0));
    assert.equal(r.stdoutBytes, total);
    assert.ok(r.stdoutTruncated);
    assert.ok(r.stdoutSpill, "spill info present");
    assert.equal(r.stdoutSpill.bytes, total - cap, "memory + spill = everything");
    assert.equal((await Deno.stat(r.stdoutSpill.path)).size, total - cap);
    assert.equal(r.stdoutSpill.truncated, false);
    assert.ok(r.stdoutSpill.path.startsWith(dir));
    const growth = peak - before;
    // cap (+ one final copy of it) + stream/batch buffers; far below the 200 MB written.
    assert.ok(growth < 64 * MiB, `RSS grew by ${(growth / MiB).toFixed(1)} MiB`);
  });
});

Deno.test("the spill file holds exactly the bytes after the in-memory part", async () => {
  await withTempDir(async (dir) => {
    // seq output is position-dependent, so a misplaced byte would show.
    const r = await spawnCapture({
      argv: ["seq", "1", "200000"],
      cwd: dir,
      env: ENV,
      stdoutCap: 100_000,
      spill: tempFileSpill({ dir }),
    });
    const expected = new TextEncoder().encode(
      Array.from({ length: 200000 }, (_, i) => `${i + 1}\n`).join(""),
    );
    assert.equal(r.stdoutBytes, expected.length);
    const spilled = await Deno.readFile(r.stdoutSpill!.path);
    const joined = new Uint8Array(r.stdout.length + spilled.length);
    joined.set(r.stdout);
    joined.set(spilled, r.stdout.length);
    assert.deepEqual(joined, expected);
  });
});

Deno.test("stderr beyond its cap is counted and dropped; streams are drained concurrently", async () => {
  // 1 MB on each stream, interleaved: sequential draining would deadlock on a full pipe.
  const r = await spawnCapture({
    argv: [
      "sh",
      "-c",
      "for i in 1 2 3 4; do head -c 250000 /dev/zero; head -c 250000 /dev/zero >&2; done",
    ],
    cwd: "/",
    env: ENV,
    stderrCap: 1000,
    stdoutCap: 4 * MiB,
    timeoutMs: 10_000,
  });
  assert.equal(r.timedOut, false);
  assert.equal(r.stdout.length, 1_000_000);
  assert.equal(r.stdoutTruncated, false);
  assert.equal(r.stdoutSpill, undefined);
  assert.equal(r.stderr.length, 1000);
  assert.equal(r.stderrBytes, 1_000_000);
  assert.ok(r.stderrTruncated);
});

Deno.test("spill: false drops stdout overflow; spillMaxBytes limits the spill", async () => {
  await withTempDir(async (dir) => {
    const dropped = await spawnCapture({
      argv: ["head", "-c", "100000", "/dev/zero"],
      cwd: dir,
      env: ENV,
      stdoutCap: 1000,
      spill: false,
    });
    assert.equal(dropped.stdout.length, 1000);
    assert.equal(dropped.stdoutBytes, 100000);
    assert.ok(dropped.stdoutTruncated);
    assert.equal(dropped.stdoutSpill, undefined);

    const limited = await spawnCapture({
      argv: ["head", "-c", "100000", "/dev/zero"],
      cwd: dir,
      env: ENV,
      stdoutCap: 1000,
      spill: tempFileSpill({ dir }),
      spillMaxBytes: 5000,
    });
    assert.equal(limited.stdoutBytes, 100000, "the child was still drained to the end");
    assert.equal(limited.stdoutSpill!.bytes, 5000);
    assert.ok(limited.stdoutSpill!.truncated);
    assert.equal((await Deno.stat(limited.stdoutSpill!.path)).size, 5000);
  });
});

Deno.test("output under the cap never creates a spill; cap 0 keeps nothing in memory", async () => {
  let created = 0;
  const counting: SpillFactory = () => {
    created++;
    return tempFileSpill()();
  };
  const small = await spawnCapture({
    argv: ["echo", "hi"],
    cwd: "/",
    env: ENV,
    spill: counting,
  });
  assert.equal(created, 0);
  assert.equal(small.stdoutTruncated, false);

  await withTempDir(async (dir) => {
    const zero = await spawnCapture({
      argv: ["echo", "hi"],
      cwd: "/",
      env: ENV,
      stdoutCap: 0,
      spill: tempFileSpill({ dir }),
    });
    assert.equal(zero.stdout.length, 0);
    assert.equal(await Deno.readTextFile(zero.stdoutSpill!.path), "hi\n");
  });
});

Deno.test("a failing spill sink degrades to truncation with spillError, never a crash", async () => {
  const failing: SpillFactory = () =>
    Promise.resolve<SpillSink>({
      write: () => Promise.reject(new Error("disk full (simulated sink)")),
      close: () => Promise.reject(new Error("unreachable")),
      abort: () => Promise.resolve(),
    });
  const r = await spawnCapture({
    argv: ["head", "-c", "300000", "/dev/zero"],
    cwd: "/",
    env: ENV,
    stdoutCap: 1000,
    spill: failing,
  });
  assert.equal(r.status, 0);
  assert.equal(r.stdoutBytes, 300000);
  assert.ok(r.stdoutTruncated);
  assert.equal(r.stdoutSpill, undefined);
  assert.match(r.spillError!, /disk full/);
});

Deno.test("many tiny writes do not hold a pipe-sized buffer per chunk", async () => {
  await withTempDir(async (dir) => {
    // 2000 one-byte writes, each its own pipe chunk.
    const r = await spawnCapture({
      argv: ["sh", "-c", "i=0; while [ $i -lt 2000 ]; do printf x; i=$((i+1)); done"],
      cwd: join(dir),
      env: ENV,
    });
    assert.equal(r.stdout.length, 2000);
    assert.equal(r.stdout.buffer.byteLength, 2000, "exactly sized result");
  });
});
