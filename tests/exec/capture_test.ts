// Capture mode against real processes: status/signal decoding, byte fidelity, env, cwd,
// stdin sources and output targets.

import assert from "node:assert/strict";
import { join } from "node:path";
import { spawnCapture } from "../../lib/exec/mod.ts";
import { dec, enc, ENV, withTempDir } from "./_helpers.ts";

const run = (argv: (string | Uint8Array)[], extra: Record<string, unknown> = {}) =>
  spawnCapture({ argv, cwd: "/", env: ENV, ...extra });

Deno.test("exit codes are reported as status with no signal", async () => {
  for (const code of [0, 1, 2, 127, 255]) {
    const r = await run(["sh", "-c", `exit ${code}`]);
    assert.equal(r.status, code);
    assert.equal(r.signal, null);
  }
});

Deno.test("death by signal: status null, signal name with SIG prefix", async () => {
  const segv = await run(["sh", "-c", "kill -SEGV $$"]);
  assert.equal(segv.status, null);
  assert.equal(segv.signal, "SIGSEGV");
  const term = await run(["sh", "-c", "kill -TERM $$"]);
  assert.equal(term.signal, "SIGTERM");
  // Deno itself cannot name real-time signals (it rejects `status`); we still decode them.
  const rt = await run(["sh", "-c", "kill -40 $$"]);
  assert.equal(rt.status, null);
  assert.equal(rt.signal, "SIGRTMIN+6");
});

Deno.test("SIGPIPE has its default action in children", async () => {
  // Deno ignores SIGPIPE itself; if that leaked, `yes` would print an error and exit 1.
  const r = await run(["bash", "-c", "yes | head -1 >/dev/null; echo ${PIPESTATUS[@]}"]);
  assert.equal(dec.decode(r.stdout), "141 0\n");
});

Deno.test("byte 0xFF reaches stdout exactly", async () => {
  const r = await run(["printf", "\\377"]);
  assert.deepEqual([...r.stdout], [0xff]);
  assert.equal(r.stdoutBytes, 1);
  assert.equal(r.stdoutTruncated, false);
});

Deno.test("binary and non-UTF-8 output is preserved on both streams", async () => {
  await withTempDir(async (dir) => {
    const all = new Uint8Array(256 * 40);
    for (let i = 0; i < all.length; i++) all[i] = (i * 7 + (i >> 8)) & 0xff;
    const file = join(dir, "bin");
    await Deno.writeFile(file, all);
    const r = await spawnCapture({
      argv: ["sh", "-c", 'cat "$1"; cat "$1" >&2', "sh", file],
      cwd: dir,
      env: ENV,
    });
    assert.deepEqual(r.stdout, all);
    assert.deepEqual(r.stderr, all);
  });
});

Deno.test("argv bytes that are not UTF-8 reach the child unchanged", async () => {
  const arg = new Uint8Array([0xff, 0x41, 0x80, 0x0a, 0x0a]); // trailing newlines on purpose
  const r = await run(["sh", "-c", 'printf %s "$1"; printf %s "$2"', "sh", arg, "plain"]);
  assert.deepEqual([...r.stdout], [...arg, ...enc.encode("plain")]);
  // UTF-8 bytes take the direct path and arrive the same.
  const r2 = await run(["printf", "%s", enc.encode("héllo")]);
  assert.equal(dec.decode(r2.stdout), "héllo");
});

Deno.test("env is exactly what was passed (nothing inherited)", async () => {
  const r = await spawnCapture({
    argv: ["env"],
    cwd: "/",
    env: { PATH: "/usr/bin:/bin", SHOAL_X: "a b=c", EMPTY: "" },
  });
  const lines = dec.decode(r.stdout).split("\n").filter((l) => l !== "").sort();
  assert.deepEqual(lines, ["EMPTY=", "PATH=/usr/bin:/bin", "SHOAL_X=a b=c"]);
});

Deno.test("argv[0] is looked up in the given env's PATH, not the host's", async () => {
  await withTempDir(async (dir) => {
    const tool = join(dir, "shoal-only-here");
    await Deno.writeTextFile(tool, "#!/bin/sh\necho found-it\n");
    await Deno.chmod(tool, 0o755);
    const r = await spawnCapture({
      argv: ["shoal-only-here"],
      cwd: "/",
      env: { PATH: `/nonexistent:${dir}` },
    });
    assert.equal(dec.decode(r.stdout), "found-it\n");
    assert.equal(r.program, tool);
    // A relative name with a slash resolves against the given cwd.
    const rel = await spawnCapture({ argv: ["./shoal-only-here"], cwd: dir, env: {} });
    assert.equal(dec.decode(rel.stdout), "found-it\n");
  });
});

Deno.test("concurrent spawns with different cwds do not interfere; host cwd unchanged", async () => {
  await withTempDir(async (a) => {
    await withTempDir(async (b) => {
      const before = Deno.cwd();
      const runs = [];
      for (let i = 0; i < 8; i++) {
        const dir = i % 2 === 0 ? a : b;
        runs.push(
          spawnCapture({ argv: ["sh", "-c", "sleep 0.05; pwd"], cwd: dir, env: ENV }).then(
            (r) => [dir, dec.decode(r.stdout).trim()],
          ),
        );
      }
      for (const [want, got] of await Promise.all(runs)) {
        assert.equal(await Deno.realPath(got), await Deno.realPath(want));
      }
      assert.equal(Deno.cwd(), before);
    });
  });
});

Deno.test("stdin from bytes, from a file, and from a stream", async () => {
  await withTempDir(async (dir) => {
    const payload = new Uint8Array([0, 1, 2, 0xff, 10, 13, 0x80]);
    const fromBytes = await spawnCapture({ argv: ["cat"], cwd: dir, env: ENV, stdin: payload });
    assert.deepEqual(fromBytes.stdout, payload);

    await Deno.writeFile(join(dir, "in.bin"), payload);
    const fromFile = await spawnCapture({
      argv: ["cat"],
      cwd: dir,
      env: ENV,
      stdin: { path: "in.bin" }, // relative: resolved against cwd
    });
    assert.deepEqual(fromFile.stdout, payload);

    const parts = ["one\n", "two\n", "three\n"];
    const stream = new ReadableStream<Uint8Array>({
      async pull(c) {
        const next = parts.shift();
        if (next === undefined) return c.close();
        await new Promise((r) => setTimeout(r, 5));
        c.enqueue(enc.encode(next));
      },
    });
    const fromStream = await spawnCapture({ argv: ["cat"], cwd: dir, env: ENV, stdin: stream });
    assert.equal(dec.decode(fromStream.stdout), "one\ntwo\nthree\n");

    const none = await spawnCapture({ argv: ["cat"], cwd: dir, env: ENV });
    assert.equal(none.stdout.length, 0);
  });
});

Deno.test("an endless stdin stream is cancelled when the child exits", async () => {
  let cancelled = false;
  let pulls = 0;
  const endless = new ReadableStream<Uint8Array>({
    pull(c) {
      pulls++;
      c.enqueue(new Uint8Array(4096).fill(0x61));
    },
    cancel() {
      cancelled = true;
    },
  });
  const r = await run(["head", "-c", "10"], { stdin: endless });
  assert.equal(dec.decode(r.stdout), "aaaaaaaaaa");
  assert.equal(r.status, 0);
  assert.ok(cancelled, "source stream was cancelled");
  assert.ok(pulls < 10_000);
});

Deno.test("a child that never reads large stdin bytes still completes", async () => {
  const big = new Uint8Array(8 * 1024 * 1024); // more than any pipe buffer
  const r = await run(["true"], { stdin: big });
  assert.equal(r.status, 0);
});

Deno.test("`> f` truncates, `>> f` appends, bytes written as they arrive", async () => {
  await withTempDir(async (dir) => {
    const f = join(dir, "out.txt");
    await Deno.writeTextFile(f, "old content that must go\n");
    const first = await spawnCapture({
      argv: ["printf", "a\\377\\n"],
      cwd: dir,
      env: ENV,
      stdout: { path: "out.txt" },
    });
    assert.equal(first.stdout.length, 0);
    assert.equal(first.stdoutBytes, 3);
    assert.deepEqual([...await Deno.readFile(f)], [0x61, 0xff, 0x0a]);

    await spawnCapture({
      argv: ["echo", "b"],
      cwd: dir,
      env: ENV,
      stdout: { path: f, append: true },
    });
    assert.equal(await Deno.readTextFile(f).then((s) => s.slice(2)), "\nb\n");

    // Written while the child is still running (not buffered until exit).
    const live = join(dir, "live.txt");
    const pending = spawnCapture({
      argv: ["sh", "-c", "echo early; sleep 0.4; echo late"],
      cwd: dir,
      env: ENV,
      stdout: { path: live },
    });
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(await Deno.readTextFile(live), "early\n");
    await pending;
    assert.equal(await Deno.readTextFile(live), "early\nlate\n");
  });
});

Deno.test("stdout and stderr to the same file keep their order (`&> f`)", async () => {
  await withTempDir(async (dir) => {
    const r = await spawnCapture({
      argv: ["sh", "-c", "echo 1; echo 2 >&2; echo 3"],
      cwd: dir,
      env: ENV,
      stdout: { path: "both" },
      stderr: { path: join(dir, "both") },
    });
    assert.equal(r.stdoutBytes, 6);
    assert.equal(r.stderrBytes, 0);
    assert.equal(await Deno.readTextFile(join(dir, "both")), "1\n2\n3\n");
  });
});

Deno.test("discard sends output to /dev/null", async () => {
  const r = await run(["sh", "-c", "echo out; echo err >&2"], {
    stdout: "discard",
    stderr: "discard",
  });
  assert.equal(r.stdout.length, 0);
  assert.equal(r.stderr.length, 0);
  assert.equal(r.status, 0);
});

Deno.test("result carries pid, pgid, duration and start time", async () => {
  const before = Date.now();
  const r = await run(["sh", "-c", "echo $$; ps -o pgid= -p $$; sleep 0.05"]);
  const [pid, pgid] = dec.decode(r.stdout).trim().split(/\s+/).map(Number);
  assert.equal(r.pid, pid);
  assert.equal(r.pgid, pgid, "child leads its own process group");
  assert.ok(r.durNs >= 50_000_000n, `durNs ${r.durNs}`);
  assert.ok(r.startedAt >= before && r.startedAt <= Date.now());
  assert.deepEqual(r.argv, ["sh", "-c", "echo $$; ps -o pgid= -p $$; sleep 0.05"]);
});
