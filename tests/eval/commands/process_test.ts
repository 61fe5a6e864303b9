/**
 * External commands through the evaluator with real processes: cancellation reaching
 * grandchildren, capped capture of huge output, raw bytes, concurrent sessions, redirects,
 * env prefixes, statement vs value position.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { type CaptureResult, spawnCapture } from "../../../lib/exec/mod.ts";
import { BytesV, OutcomeV } from "../../../lib/value/types.ts";
import { dec, error, isDead, run, session, show, waitFor, withTempDir } from "./_helpers.ts";

const MiB = 1024 * 1024;

Deno.test("cancelling a command through the cancel flag kills its grandchildren too", async () => {
  await withTempDir(async (dir) => {
    const cancel = new Int32Array(new SharedArrayBuffer(4));
    const ev = session(dir, { cancel });
    // The shell starts a grandchild, records its pid and waits on it.
    const pending = run(ev, `sh -c 'sleep 60 & echo $! > gc.pid; wait'`).then(
      () => null,
      (e) => e,
    );
    const pidFile = join(dir, "gc.pid");
    assert.ok(
      await waitFor(() => {
        try {
          return Deno.readTextFileSync(pidFile).trim() !== "";
        } catch {
          return false;
        }
      }),
    );
    const gc = Number(Deno.readTextFileSync(pidFile).trim());
    assert.ok(!isDead(gc), "grandchild should be running");
    const t0 = performance.now();
    Atomics.store(cancel, 0, 1);
    const e = await pending;
    assert.equal(e?.err?.code, "cancelled");
    assert.ok(await waitFor(() => isDead(gc), 10_000), `grandchild ${gc} survived the cancel`);
    assert.ok(performance.now() - t0 < 10_000);
  });
});

Deno.test("a 200 MB output is capped and flagged without the process growing past the cap", async () => {
  await withTempDir(async (dir) => {
    const cap = 4 * MiB;
    // The host configures the capture cap through its process port.
    let last: CaptureResult | null = null;
    const ev = session(dir, {
      ports: {
        process: {
          capture: async (o) => (last = await spawnCapture({ ...o, stdoutCap: cap })),
        },
      },
    });
    // Warm up so module/JIT allocations are not counted.
    await run(ev, `sh -c 'head -c 1000 /dev/zero'`);
    const before = Deno.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => peak = Math.max(peak, Deno.memoryUsage().rss), 5);
    let o;
    try {
      o = await run(ev, `let o = (sh -c 'head -c 200000000 /dev/zero')\no`);
    } finally {
      clearInterval(sampler);
    }
    peak = Math.max(peak, Deno.memoryUsage().rss);
    assert.ok(o instanceof OutcomeV);
    assert.equal(o.ok, true);
    assert.equal(o.stdout.length, cap);
    assert.equal(o.stdoutTruncated, true);
    const growth = peak - before;
    console.log(
      `RSS growth for 200 MB through a ${cap / MiB} MiB cap: ${(growth / MiB).toFixed(1)} MiB`,
    );
    // cap + a small constant for pipe buffers and heap noise.
    assert.ok(growth < cap + 32 * MiB, `RSS grew by ${(growth / MiB).toFixed(1)} MiB`);
    // Every byte was drained, and none was spilled to a temp file nobody would own.
    const r = last as CaptureResult | null;
    assert.equal(r?.stdoutBytes, 200_000_000);
    assert.equal(r?.stdoutSpill, undefined);
  });
});

Deno.test("a 0xFF byte survives into .stdout exactly", async () => {
  await withTempDir(async (dir) => {
    const ev = session(dir);
    const b = await run(ev, `sh { printf 'a\\377b\\000c' }.stdout`);
    assert.ok(b instanceof BytesV);
    assert.deepEqual([...b.data], [0x61, 0xff, 0x62, 0x00, 0x63]);
    assert.equal(await show(ev, `sh { printf '\\377' }.stdout.len()`), "1");
    assert.equal((await error(ev, `sh { printf '\\377' }.stdout.str()`)).code, "utf8_error");
    // Redirected to a file, the bytes stay raw too.
    await run(ev, `sh -c "printf '\\\\377'" > ff.bin`);
    assert.deepEqual([...Deno.readFileSync(join(dir, "ff.bin"))], [0xff]);
  });
});

Deno.test("two sessions with different cwds run commands concurrently without interfering", async () => {
  await withTempDir(async (dir) => {
    const a = join(dir, "a");
    const b = join(dir, "b");
    Deno.mkdirSync(a);
    Deno.mkdirSync(b);
    const evA = session(a);
    const evB = session(b);
    const jobs = [];
    for (let i = 0; i < 8; i++) {
      jobs.push(run(evA, `sh -c 'sleep 0.05; pwd'`).then((o) => ["a", o] as const));
      jobs.push(run(evB, `sh -c 'sleep 0.05; pwd'`).then((o) => ["b", o] as const));
      jobs.push(run(evA, `touch "a${i}.txt"`).then((o) => ["ta", o] as const));
      jobs.push(run(evB, `touch "b${i}.txt"`).then((o) => ["tb", o] as const));
    }
    for (const [who, o] of await Promise.all(jobs)) {
      assert.ok(o instanceof OutcomeV);
      if (who === "a") assert.equal(dec.decode(o.stdout).trim(), a);
      if (who === "b") assert.equal(dec.decode(o.stdout).trim(), b);
    }
    const names = (d: string) => [...Deno.readDirSync(d)].map((e) => e.name).sort();
    assert.deepEqual(names(a), [0, 1, 2, 3, 4, 5, 6, 7].map((i) => `a${i}.txt`));
    assert.deepEqual(names(b), [0, 1, 2, 3, 4, 5, 6, 7].map((i) => `b${i}.txt`));
    // A cd in one session is invisible to the other.
    Deno.mkdirSync(join(a, "sub"));
    await run(evA, "cd sub");
    assert.equal(evA.cwd(), join(a, "sub"));
    assert.equal(evB.cwd(), b);
  });
});

Deno.test("redirects: builtin values write value bytes and yield null; externals write raw stdout", async () => {
  await withTempDir(async (dir) => {
    const ev = session(dir);
    const read = (f: string) => Deno.readTextFileSync(join(dir, f));
    assert.equal(await run(ev, "echo hi > b.txt"), null);
    assert.equal(read("b.txt"), "hi\n");
    assert.equal(await run(ev, "echo more >> b.txt"), null);
    assert.equal(read("b.txt"), "hi\nmore\n");
    assert.equal(await run(ev, "echo x > b.txt"), null, "> truncates");
    assert.equal(read("b.txt"), "x\n");
    // Special heads too: their bare value's bytes.
    assert.equal(await run(ev, "pwd > p.txt"), null);
    assert.equal(read("p.txt"), dir + "\n");
    // A list renders with display_top + newline.
    await run(ev, "echo ([1, 2]) > l.txt");
    assert.equal(read("l.txt"), "[1, 2]\n");
    // Externals: raw bytes, no newline added, and the outcome is returned.
    const o = await run(ev, `sh -c 'printf abc' > e.txt`);
    assert.ok(o instanceof OutcomeV && o.ok);
    assert.equal(read("e.txt"), "abc");
    await run(ev, `sh -c 'printf def' >> e.txt`);
    assert.equal(read("e.txt"), "abcdef");
    // `< file` feeds stdin.
    Deno.writeTextFileSync(join(dir, "in.txt"), "b\na\nc\n");
    assert.equal(await show(ev, `(sort < in.txt).out`), `"a\\nb\\nc"`);
    // Redirect targets resolve against the session cwd, not the process cwd.
    Deno.mkdirSync(join(dir, "sub"));
    await run(ev, "cd sub\necho inside > f.txt");
    assert.equal(read("sub/f.txt"), "inside\n");
    // A non-path target is an arg_error.
    assert.equal((await error(ev, "echo hi > (5)")).code, "arg_error");
  });
});

Deno.test("env prefixes apply to one spawn only; env.X = and with env: reach children", async () => {
  await withTempDir(async (dir) => {
    const ev = session(dir);
    assert.equal(await show(ev, `(FOO=hello sh -c 'printf %s "$FOO"').out`), `"hello"`);
    assert.equal(await show(ev, `(sh -c 'printf %s "\${FOO:-unset}"').out`), `"unset"`);
    assert.equal(await show(ev, `(FOO=x env FOO).out`), `"x"`);
    await run(ev, `env.SHOAL_T1 = "v1"`);
    assert.equal(await show(ev, `(sh -c 'printf %s "$SHOAL_T1"').out`), `"v1"`);
    assert.equal(
      await show(ev, `with env: {SHOAL_T2: 5} { (sh -c 'printf %s "$SHOAL_T2"').out }`),
      `"5"`,
    );
    assert.equal(await show(ev, `(env SHOAL_T2).out`), "null");
  });
});

Deno.test("statement position raises cmd_failed; value position returns the failed outcome", async () => {
  await withTempDir(async (dir) => {
    const ev = session(dir);
    const e = await error(ev, `sh -c 'echo oops >&2; exit 7'`);
    assert.equal(e.code, "cmd_failed");
    assert.match(e.msg, /exited with status 7/);
    assert.equal(e.status, 7);
    assert.equal(e.hint, "oops");
    assert.equal(await show(ev, `(sh -c 'exit 3').status`), "3");
    assert.equal(await show(ev, `let o = (sh -c 'exit 3')\no.ok`), "false");
    // A builtin's own failure raises in any position.
    assert.equal((await error(ev, "let x = (cat nope.txt)")).code, "custom");
    // && / || return the deciding operand.
    assert.equal(await show(ev, `((sh -c 'exit 1') || echo fallback).out`), `"fallback"`);
    assert.equal(await show(ev, `((echo a) && (echo b)).out`), `"b"`);
  });
});

Deno.test("cmd & gives a task whose .await() is the outcome", async () => {
  await withTempDir(async (dir) => {
    const ev = session(dir);
    assert.equal(await show(ev, `let t = (sh -c 'printf done' &)\nt.await().out`), `"done"`);
    assert.equal(await show(ev, `let t = (echo hi &)\nt.await().out`), `"hi"`);
  });
});

Deno.test("not_found with a did-you-mean hint from builtins and session bindings", async () => {
  await withTempDir(async (dir) => {
    const ev = session(dir);
    const e = await error(ev, "pusd");
    assert.equal(e.code, "not_found");
    assert.equal(e.hint, "did you mean 'pushd'?");
    const f = await error(ev, "fn deploy() { 1 }\ndeplyo");
    assert.equal(f.hint, "did you mean 'deploy'?");
    assert.equal((await error(ev, "qqqqqqqqqzzz")).hint, null);
  });
});
