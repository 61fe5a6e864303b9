// pty.* over a real socket with real programs (protocol §12 and what goes beyond it):
// python3, a getpass prompt, vi, less, top, stty size, Ctrl-C, SIGHUP-proof programs, 32 PTYs,
// a `yes` flood beside a responsive session, and a kernel shutdown that leaves nothing behind.

import assert from "node:assert/strict";
import { join } from "node:path";
import type { KernelClient } from "../../lib/client/client.ts";
import { RPC } from "../../lib/client/errors.ts";
import { sessionMembers } from "../../lib/exec/mod.ts";
import { client, rpcError, spawnKernel, tempDir, waitFor, withKernel } from "./_helpers.ts";

type R = Record<string, unknown> & {
  pty_id: string;
  screen: string[];
  alive: boolean;
  exit: { status: number | null; signal: string | null } | null;
  matched?: { source: string; text: string } | null;
  timed_out?: boolean;
};

const open = (c: KernelClient, cmd: string, args: string[] = [], extra = {}) =>
  c.call<{ pty_id: string; pid: number; cols: number; rows: number; cmd: string }>(
    "pty.open",
    { cmd, args, ...extra },
  );
const read = (c: KernelClient, pty_id: string, extra: Record<string, unknown> = {}) =>
  c.call<R>("pty.read", { pty_id, ...extra });
const waitText = (c: KernelClient, pty_id: string, re: string, extra = {}) =>
  read(c, pty_id, { wait_for: re, timeout_ms: 15000, ...extra });
const send = (c: KernelClient, pty_id: string, input: unknown) =>
  c.call<{ sent: number }>("pty.send", { pty_id, input });

/** Read until the program is gone (its exit recorded). */
async function untilExit(c: KernelClient, id: string): Promise<R> {
  const r = await read(c, id, { until_exit: true, timeout_ms: 20_000 });
  if (!r.alive) return r;
  throw new Error(`${id} did not exit`);
}

/** Live processes of the session led by `sid`. */
const liveIn = (sid: number) =>
  (sessionMembers(sid) ?? []).filter((m) => m.state !== "Z" && m.state !== "X");

Deno.test("python3 on a PTY: the prompt, print and the exit status", async () => {
  await withKernel(async (k) => {
    const c = await client(k.path);
    const o = await open(c, "python3", ["-q"]);
    assert.match(o.pty_id, /^pty:\d+$/);
    assert.deepEqual([o.cols, o.rows, o.cmd], [80, 24, "python3 -q"]);
    let r = await waitText(c, o.pty_id, ">>> ");
    assert.deepEqual(r.matched, { source: "output", text: ">>> " });
    assert.equal(r.changed, true);
    assert.deepEqual(r.cursor, { row: 0, col: 4, hidden: false });
    assert.equal(r.screen.length, 24);
    assert.equal(r.screen[0], ">>>", "trailing blanks trimmed");
    assert.equal((await send(c, o.pty_id, ["print(6 * 7)", { key: "Enter" }])).sent, 13);
    r = await waitText(c, o.pty_id, "^42$", { flags: "m" });
    assert.equal(r.screen[0], ">>> print(6 * 7)");
    assert.equal(r.screen[1], "42");
    await send(c, o.pty_id, "raise SystemExit(3)\r");
    r = await untilExit(c, o.pty_id);
    assert.deepEqual(r.exit, { status: 3, signal: null });
    assert.equal(r.alive, false);
    const closed = await c.call<Record<string, unknown>>("pty.close", { pty_id: o.pty_id });
    assert.deepEqual(closed, { pty_id: o.pty_id, closed: true, exit: { status: 3, signal: null } });
    c.close();
  });
});

Deno.test("a getpass prompt answered through wait_for: two calls, nothing echoed", async () => {
  await withKernel(async (k) => {
    const c = await client(k.path);
    const script =
      "import getpass\np = getpass.getpass('Password: ')\nprint('got', len(p), 'chars')";
    const o = await open(c, "python3", ["-c", script]);
    const r1 = await waitText(c, o.pty_id, "Password: $");
    assert.equal(r1.timed_out, false);
    await send(c, o.pty_id, ["hunter2", { key: "Enter" }]);
    const r2 = await waitText(c, o.pty_id, "got (\\d+) chars");
    assert.equal(r2.matched?.text, "got 7 chars");
    assert.ok(!r2.screen.join("\n").includes("hunter2"), "the secret was not echoed");
    await c.call("pty.close", { pty_id: o.pty_id });
    c.close();
  });
});

Deno.test("vi: insert text, :wq, the file is saved", async () => {
  await withKernel(async (k, dir) => {
    const c = await client(k.path);
    const file = join(dir, "notes.txt");
    const o = await open(c, "vi", ["-u", "NONE", "-N", "-n", file]);
    const r = await waitText(c, o.pty_id, "notes\\.txt", { match: "screen" });
    assert.equal(r.alternate, true, "vi uses the alternate screen");
    await send(c, o.pty_id, ["i", "hello from vi", { key: "Escape" }]);
    await waitText(c, o.pty_id, "hello from vi", { match: "screen" });
    await send(c, o.pty_id, [":wq", { key: "Enter" }]);
    const done = await untilExit(c, o.pty_id);
    assert.deepEqual(done.exit, { status: 0, signal: null });
    assert.equal(await Deno.readTextFile(file), "hello from vi\n");
    await c.call("pty.close", { pty_id: o.pty_id });
    c.close();
  });
});

Deno.test("less: PageDown pages, q quits", async () => {
  await withKernel(async (k, dir) => {
    const file = join(dir, "sample.txt");
    await Deno.writeTextFile(
      file,
      Array.from({ length: 200 }, (_, i) => `line ${i + 1} of the sample`).join("\n") + "\n",
    );
    const c = await client(k.path);
    const o = await open(c, "less", [file]);
    let r = await waitText(c, o.pty_id, "line 23 of", { match: "screen" });
    assert.equal(r.screen[0], "line 1 of the sample");
    await send(c, o.pty_id, { key: "PageDown" });
    r = await waitText(c, o.pty_id, "^line 24 of", { match: "screen", flags: "m" });
    assert.equal(r.screen[0], "line 24 of the sample");
    await send(c, o.pty_id, "q");
    const done = await untilExit(c, o.pty_id);
    assert.deepEqual(done.exit, { status: 0, signal: null });
    assert.equal(done.alternate, false, "back on the normal screen");
    await c.call("pty.close", { pty_id: o.pty_id });
    c.close();
  });
});

Deno.test("top -d 0.2: the screen keeps changing; q quits", async () => {
  await withKernel(async (k) => {
    const c = await client(k.path);
    const o = await open(c, "top", ["-d", "0.2"], { cols: 120, rows: 30 });
    let r = await waitText(c, o.pty_id, "PID\\s+USER", { match: "screen" });
    assert.match(r.screen[0], /^top - /);
    // Each refresh redraws the header: wait for the next one, then the screen differs.
    r = await waitText(c, o.pty_id, "top - ", { match: "output" });
    r = await waitText(c, o.pty_id, "top - ", { match: "output" });
    assert.equal(r.matched?.source, "output");
    assert.equal(r.changed, true, "the screen changed since the last read");
    await send(c, o.pty_id, "q");
    const done = await untilExit(c, o.pty_id);
    assert.deepEqual(done.exit, { status: 0, signal: null });
    await c.call("pty.close", { pty_id: o.pty_id });
    c.close();
  });
});

Deno.test("resize is seen by the program (stty size); sizes clamp to 1–1000", async () => {
  await withKernel(async (k) => {
    const c = await client(k.path);
    const o = await open(c, "sh", ["-c", "while read l; do stty size; done"], {
      cols: 90,
      rows: 20,
    });
    await send(c, o.pty_id, { key: "Enter" });
    await waitText(c, o.pty_id, "20 90");
    const z = await c.call("pty.resize", { pty_id: o.pty_id, cols: 132, rows: 43 });
    assert.deepEqual(z, { pty_id: o.pty_id, cols: 132, rows: 43 });
    let r = await read(c, o.pty_id);
    assert.equal(r.changed, true, "a resize forces a change");
    assert.deepEqual([r.cols, r.rows], [132, 43]);
    await send(c, o.pty_id, { key: "Enter" });
    await waitText(c, o.pty_id, "43 132");
    const big = await c.call("pty.resize", { pty_id: o.pty_id, cols: 5000, rows: 0 });
    assert.deepEqual(big, { pty_id: o.pty_id, cols: 1000, rows: 1 });
    r = await read(c, o.pty_id);
    assert.deepEqual([r.cols, r.rows], [1000, 1]);
    const e = await rpcError(c.call("pty.resize", { pty_id: o.pty_id, cols: 70000, rows: 10 }));
    assert.equal(e.code, RPC.INVALID_PARAMS);
    const e2 = await rpcError(c.call("pty.resize", { pty_id: o.pty_id, cols: 10 }));
    assert.equal(e2.code, RPC.INVALID_PARAMS);
    assert.match(e2.message, /rows/);
    const clamped = await open(c, "true", [], { cols: 0, rows: 2000 });
    assert.deepEqual([clamped.cols, clamped.rows], [1, 1000]);
    c.close();
  });
});

Deno.test("Ctrl-C interrupts a running sleep", async () => {
  await withKernel(async (k) => {
    const c = await client(k.path);
    const o = await open(c, "sleep", ["100"]);
    await new Promise((r) => setTimeout(r, 100));
    await send(c, o.pty_id, { key: "Ctrl-C" });
    const r = await untilExit(c, o.pty_id);
    assert.deepEqual(r.exit, { status: null, signal: "SIGINT" });
    await c.call("pty.close", { pty_id: o.pty_id });
    c.close();
  });
});

Deno.test("close kills a program that ignores SIGHUP (and its whole session); close is idempotent", async () => {
  await withKernel(async (k) => {
    const c = await client(k.path);
    const o = await open(c, "bash", [
      "--norc",
      "-c",
      'trap "" HUP INT TERM; sleep 1001 & echo ready; wait',
    ]);
    await waitText(c, o.pty_id, "ready");
    assert.ok(liveIn(o.pid).length >= 2, "bash and its sleep run");
    const closed = await c.call<Record<string, unknown>>("pty.close", { pty_id: o.pty_id });
    assert.deepEqual(closed, {
      pty_id: o.pty_id,
      closed: true,
      exit: { status: null, signal: "SIGKILL" },
    });
    await waitFor(() => liveIn(o.pid).length === 0, 5000, "the session to be gone");
    assert.deepEqual(await c.call("pty.close", { pty_id: o.pty_id }), closed, "idempotent");
    const e = await rpcError(read(c, o.pty_id));
    assert.equal(e.code, RPC.UNKNOWN_PTY);
    assert.deepEqual((await c.call<{ ptys: unknown[] }>("pty.list")).ptys, []);
    c.close();
  });
});

Deno.test("a session's commands ending leave its PTY programs (and their jobs) alone", async () => {
  await withKernel(async (k) => {
    const c = await client(k.path);
    const o = await open(c, "bash", ["--norc", "--noprofile", "-i"]);
    await send(c, o.pty_id, "sleep 1006 &\r");
    await waitFor(() => liveIn(o.pid).length >= 2, 5000, "the job");
    // An exec that ran a command sweeps the session's strays (issue 16): not these.
    await c.call("exec", { src: "^true" });
    await c.call("exec", { src: "sh { setsid sleep 1 & }" });
    await new Promise((r) => setTimeout(r, 200));
    assert.ok(liveIn(o.pid).length >= 2, "bash and its job still run");
    await send(c, o.pty_id, "echo still here\r");
    await waitText(c, o.pty_id, "^still here", { flags: "m" });
    await c.call("pty.close", { pty_id: o.pty_id });
    await waitFor(() => liveIn(o.pid).length === 0, 5000, "all gone on close");
    c.close();
  });
});

Deno.test("the screen answers terminal queries (cursor position) for the program", async () => {
  await withKernel(async (k) => {
    const c = await client(k.path);
    // The program asks where the cursor is (DSR 6) and waits for the terminal's answer.
    const script = 'printf "ab"; IFS= read -rs -d R -p $\'\\e[6n\' pos; echo; echo "pos=${pos#*[}"';
    const o = await open(c, "bash", ["--norc", "-c", script]);
    const r = await waitText(c, o.pty_id, "pos=\\d+;\\d+");
    assert.equal(r.matched?.text, "pos=1;3", 'row 1, column 3 (1-based), after "ab"');
    c.close();
  });
});

Deno.test("cwd and env come from the session; env overrides; TERM is injected", async () => {
  await withKernel(async (k, dir) => {
    const c = await client(k.path);
    await Deno.mkdir(join(dir, "sub"));
    await c.call("exec", { src: `cd sub\nenv.SHOAL_PTY_T = "from-session"` });
    const o = await open(c, "sh", ["-c", 'echo "cwd=$(pwd) t=$SHOAL_PTY_T o=$OVR term=$TERM"'], {
      env: { OVR: "over" },
      cols: 300,
    });
    const r = await waitText(c, o.pty_id, "term=\\S+");
    assert.ok(
      r.screen[0].endsWith(`cwd=${join(dir, "sub")} t=from-session o=over term=xterm-256color`),
      r.screen[0],
    );
    const o2 = await open(c, "sh", ["-c", "echo term=$TERM"], { env: { TERM: "vt100" } });
    await waitText(c, o2.pty_id, "term=vt100");
    c.close();
  }, { env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" } }); // no TERM in the session
});

Deno.test("input: named keys, text, bytes, nesting; bad input is -32602", async () => {
  await withKernel(async (k) => {
    const c = await client(k.path);
    const o = await open(c, "od", ["-An", "-c"]);
    await send(c, o.pty_id, [
      "a",
      [{ text: "b" }, { bytes: btoa("c") }],
      { key: "tab" },
      { key: "Ctrl-D" },
      { key: "ctrl-d" },
    ]);
    // od prints what it read: a b c \t (raw mode is off, so Ctrl-D ends the input).
    const r = await waitText(c, o.pty_id, "a\\s+b\\s+c\\s+\\\\t");
    assert.equal(r.timed_out, false);
    for (
      const bad of [
        { key: "NoSuchKey" },
        { bytes: "***" },
        { text: 1 },
        { key: "a", text: "b" },
        {},
        42,
        null,
        [["x", [true]]],
      ]
    ) {
      const e = await rpcError(send(c, o.pty_id, bad));
      assert.equal(e.code, RPC.INVALID_PARAMS, JSON.stringify(bad));
    }
    const e = await rpcError(c.call("pty.send", { pty_id: o.pty_id }));
    assert.match(e.message, /input/);
    c.close();
  });
});

Deno.test("changed: the first read, after output, after a resize; pty.list does not consume it", async () => {
  await withKernel(async (k) => {
    const c = await client(k.path);
    const o = await open(c, "sh", ["-c", "echo one; read x; echo two; read y"]);
    let r = await waitText(c, o.pty_id, "one");
    assert.equal(r.changed, true);
    r = await read(c, o.pty_id);
    assert.equal(r.changed, false);
    await c.call("pty.list");
    r = await read(c, o.pty_id);
    assert.equal(r.changed, false);
    await send(c, o.pty_id, "\r");
    r = await waitText(c, o.pty_id, "two");
    assert.equal(r.changed, true);
    const list = await c.call<{ ptys: Record<string, unknown>[] }>("pty.list");
    assert.deepEqual(list.ptys, [{
      pty_id: o.pty_id,
      cmd: "sh -c echo one; read x; echo two; read y",
      pid: o.pid,
      cols: 80,
      rows: 24,
      alive: true,
    }]);
    c.close();
  });
});

Deno.test("scrollback: the lines that scrolled off, by range", async () => {
  await withKernel(async (k) => {
    const c = await client(k.path);
    const o = await open(c, "seq", ["1", "300"], { scrollback: 100 });
    let r = await untilExit(c, o.pty_id);
    // 300 lines and the final empty cursor row on a 24-row screen: 277 scrolled off.
    assert.deepEqual(r.scrollback, { first: 177, total: 277 });
    assert.equal(r.screen[0], "278");
    r = await read(c, o.pty_id, { scrollback: [-3] });
    assert.deepEqual(r.scrollback, {
      first: 177,
      total: 277,
      start: 274,
      end: 277,
      lines: ["275", "276", "277"],
    });
    r = await read(c, o.pty_id, { scrollback: [0, 180] });
    const sb = r.scrollback as { start: number; lines: string[] };
    assert.equal(sb.start, 177, "clamped to what is kept");
    assert.deepEqual(sb.lines, ["178", "179", "180"]);
    const e = await rpcError(read(c, o.pty_id, { scrollback: "last" }));
    assert.equal(e.code, RPC.INVALID_PARAMS);
    c.close();
  });
});

Deno.test("wait_for: times out, sees the exit, and rejects bad patterns", async () => {
  await withKernel(async (k) => {
    const c = await client(k.path);
    const o = await open(c, "sh", ["-c", "read x; exit 4"]);
    let r = await read(c, o.pty_id, { wait_for: "never", timeout_ms: 150 });
    assert.equal(r.timed_out, true);
    assert.equal(r.matched, null);
    assert.ok((r.waited_ms as number) >= 140);
    const pending = read(c, o.pty_id, { wait_for: "never", timeout_ms: 15000 });
    await send(c, o.pty_id, "\r");
    r = await pending;
    assert.equal(r.timed_out, false, "the exit ended the wait");
    assert.equal(r.alive, false);
    assert.deepEqual(r.exit, { status: 4, signal: null });
    for (
      const bad of [
        { wait_for: "(" },
        { wait_for: "" },
        { wait_for: "x", flags: "g" },
        { wait_for: "x", match: "both" },
        { match: "screen" },
        { wait_for: "x", timeout_ms: -1 },
      ]
    ) {
      const e = await rpcError(read(c, o.pty_id, bad));
      assert.equal(e.code, RPC.INVALID_PARAMS, JSON.stringify(bad));
    }
    c.close();
  });
});

Deno.test("until_exit: waits for a program that prints nothing, times out, and takes no pattern", async () => {
  await withKernel(async (k) => {
    const c = await client(k.path);
    const o = await open(c, "sh", ["-c", "sleep 0.4; exit 3"]);
    let r = await read(c, o.pty_id, { until_exit: true, timeout_ms: 50 });
    assert.equal(r.timed_out, true);
    assert.equal(r.alive, true);
    assert.equal("matched" in r, false);
    r = await read(c, o.pty_id, { until_exit: true, timeout_ms: 15000 });
    assert.equal(r.timed_out, false, "the exit ended the wait");
    assert.equal(r.alive, false);
    assert.deepEqual(r.exit, { status: 3, signal: null });
    assert.ok((r.waited_ms as number) < 10_000, String(r.waited_ms));
    // Already ended: returns at once.
    r = await read(c, o.pty_id, { until_exit: true });
    assert.equal(r.timed_out, false);
    for (const bad of [{ until_exit: true, wait_for: "x" }, { until_exit: true, match: "any" }]) {
      const e = await rpcError(read(c, o.pty_id, bad));
      assert.equal(e.code, RPC.INVALID_PARAMS, JSON.stringify(bad));
      assert.match(e.message, /until_exit/);
    }
    const notBool = await rpcError(read(c, o.pty_id, { until_exit: "yes" }));
    assert.equal(notBool.code, RPC.INVALID_PARAMS);
    assert.match(notBool.message, /`until_exit` must be a boolean/);
    c.close();
  });
});

Deno.test("errors: unknown PTY, other session, bad open params, spawn failures, quota", async () => {
  await withKernel(async (k) => {
    const c = await client(k.path);
    const other = await client(k.path, "other");
    for (const id of ["pty:999", "nope", "pty:0"]) {
      const e = await rpcError(read(c, id));
      assert.equal(e.code, RPC.UNKNOWN_PTY);
      assert.equal(e.message, "unknown or closed pty_id");
    }
    const o = await open(c, "sleep", ["30"]);
    const e1 = await rpcError(read(other, o.pty_id));
    assert.equal(e1.code, RPC.UNKNOWN_PTY, "another session's PTY is unknown");
    const e1b = await rpcError(
      other.call("events.subscribe", { channel: o.pty_id.replace(":", ".") }),
    );
    assert.equal(e1b.code, RPC.UNKNOWN_PTY, "and so is its event channel");
    assert.deepEqual((await other.call<{ ptys: unknown[] }>("pty.list")).ptys, []);
    for (
      const bad of [
        {},
        { cmd: "" },
        { cmd: 5 },
        { cmd: "sh", args: "x" },
        { cmd: "sh", cols: 65536 },
        { cmd: "sh", rows: 1.5 },
        { cmd: "sh", env: { A: 1 } },
      ]
    ) {
      const e = await rpcError(c.call("pty.open", bad));
      assert.equal(e.code, RPC.INVALID_PARAMS, JSON.stringify(bad));
    }
    // The language's `interact` needs a person at a terminal; a kernel session points at pty.*.
    const ei = await rpcError(c.call("exec", { src: "interact vim notes.txt" }));
    assert.equal(ei.code, RPC.RAISED);
    assert.match(ei.message, /needs a person at a terminal/);
    assert.match(String((ei.data as Record<string, unknown>).hint), /pty\.open/);
    const e2 = await rpcError(open(c, "no-such-program-xyz", ["a"]));
    assert.equal(e2.code, RPC.PTY_SPAWN_FAILED);
    assert.deepEqual((e2.data as Record<string, unknown>).cmd, "no-such-program-xyz a");
    assert.equal((e2.data as Record<string, unknown>).kind, "not_found");
    c.close();
    other.close();
  });
});

Deno.test("the per-principal PTY quota refuses with a clear error and frees on close", async () => {
  await withKernel(async (k) => {
    const a = await client(k.path);
    const b = await client(k.path, "second-session");
    const p1 = await open(a, "sleep", ["30"]);
    await open(b, "sleep", ["30"]);
    const e = await rpcError(open(a, "sleep", ["30"]));
    // The one quota error (D-31): -32040 with {quota, limit, used, principal}.
    assert.equal(e.code, RPC.QUOTA_EXCEEDED);
    assert.match(e.message, /already has 2 open PTYs \(the limit\).*pty\.list/);
    const d = e.data as Record<string, unknown>;
    assert.deepEqual([d.quota, d.limit, d.used, d.cmd], ["ptys", 2, 2, "sleep 30"]);
    assert.match(String(d.principal), /^uid:/);
    await a.call("pty.close", { pty_id: p1.pty_id });
    await open(a, "sleep", ["30"]);
    a.close();
    b.close();
  }, { quotas: { ptys: 2 } }); // the kernel's `--quota ptys=2`
});

Deno.test("32 concurrent PTYs", async () => {
  await withKernel(async (k) => {
    const c = await client(k.path);
    const ids = await Promise.all(
      Array.from(
        { length: 32 },
        (_, i) => open(c, "sh", ["-c", `echo ready-${i}; read x; echo "bye-${i}-$x"`]),
      ),
    );
    await Promise.all(ids.map((o, i) => waitText(c, o.pty_id, `ready-${i}`)));
    await Promise.all(ids.map((o, i) => send(c, o.pty_id, `n${i}\r`)));
    const done = await Promise.all(ids.map((o, i) => waitText(c, o.pty_id, `bye-${i}-n${i}`)));
    assert.ok(done.every((r) => r.timed_out === false));
    assert.equal((await c.call<{ ptys: unknown[] }>("pty.list")).ptys.length, 32);
    await Promise.all(ids.map((o) => c.call("pty.close", { pty_id: o.pty_id })));
    assert.equal((await c.call<{ ptys: unknown[] }>("pty.list")).ptys.length, 0);
    c.close();
  });
});

Deno.test("a PTY flooding output (yes) leaves another session responsive", async () => {
  await withKernel(async (k) => {
    const flood = await client(k.path, "flood");
    const calm = await client(k.path, "calm");
    const o = await open(flood, "yes");
    const first = await waitText(flood, o.pty_id, "y\\ny\\n");
    assert.ok((first.output_bytes as number) > 0);
    // The other session answers execs and PTY reads while the flood runs.
    const p = await open(calm, "sh", ["-c", "read x; echo calm-$x"]);
    for (let i = 0; i < 10; i++) {
      const r = await calm.call<{ value: unknown }>("exec", { src: "1 + 2" });
      assert.deepEqual(r.value, { $: "int", v: 3 });
    }
    await send(calm, p.pty_id, "ok\r");
    await waitText(calm, p.pty_id, "calm-ok");
    // The flood is still running, its reads still answer, and it stops on close.
    const later = await read(flood, o.pty_id);
    assert.equal(later.alive, true);
    assert.ok((later.output_bytes as number) > 0, "still flooding");
    // What was printed between two reads is kept up to a bound; the rest is counted as dropped.
    let dropped = 0;
    for (let i = 0; i < 50 && dropped === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      dropped = ((await read(flood, o.pty_id)).output_dropped as number | undefined) ?? 0;
    }
    assert.ok(dropped > 0, "the output kept between reads is bounded");
    assert.equal(later.screen[0], "y");
    await flood.call("pty.close", { pty_id: o.pty_id });
    flood.close();
    calm.close();
  });
});

Deno.test("pty.N events: screen changes (coalesced), the exit, the close", async () => {
  await withKernel(async (k) => {
    const c = await client(k.path);
    const o = await open(c, "sh", [
      "-c",
      "read x; for i in 1 2 3 4 5 6 7 8 9 10; do echo tick $i; done; read y; exit 6",
    ]);
    const channel = `pty.${o.pty_id.slice(4)}`;
    const events: Record<string, unknown>[] = [];
    await c.subscribe(channel, (e) => void events.push(e.payload as Record<string, unknown>));
    await send(c, o.pty_id, "\r");
    await waitFor(
      () => events.some((e) => e.kind === "screen"),
      5000,
      "a screen event",
    );
    await read(c, o.pty_id, { wait_for: "tick 10" });
    await new Promise((r) => setTimeout(r, 200)); // any later notice has arrived by now
    const screenEvents = events.filter((e) => e.kind === "screen");
    assert.ok(screenEvents.length >= 1);
    assert.ok(
      screenEvents.length <= 3,
      `ten quick lines are coalesced (${screenEvents.length} events)`,
    );
    assert.deepEqual(Object.keys(screenEvents[0]).sort(), [
      "alive",
      "cursor",
      "kind",
      "line",
      "pty_id",
    ]);
    await send(c, o.pty_id, "\r");
    await waitFor(() => events.some((e) => e.kind === "exit"), 5000, "the exit event");
    assert.deepEqual(events.find((e) => e.kind === "exit"), {
      pty_id: o.pty_id,
      kind: "exit",
      alive: false,
      exit: { status: 6, signal: null },
    });
    await c.call("pty.close", { pty_id: o.pty_id });
    await waitFor(() => events.some((e) => e.kind === "closed"), 5000, "the closed event");
    c.close();
  });
});

Deno.test("kernel shutdown (SIGTERM) leaves no PTY child behind", async () => {
  const dir = await tempDir();
  const socket = join(dir, "k.sock");
  const { child } = await spawnKernel(socket);
  try {
    const c = await client(socket);
    const pids: number[] = [];
    for (
      const script of ['trap "" HUP INT TERM; echo up; sleep 1002', "sleep 1003 & echo up; wait"]
    ) {
      const o = await open(c, "bash", ["--norc", "-c", script]);
      await waitText(c, o.pty_id, "up");
      pids.push(o.pid);
    }
    const other = await client(socket, "s2");
    const o3 = await open(other, "bash", ["--norc", "-i"]);
    await send(other, o3.pty_id, "sleep 1004 &\r");
    await waitFor(() => liveIn(o3.pid).length >= 2, 5000, "the job");
    pids.push(o3.pid);
    assert.ok(pids.every((p) => liveIn(p).length > 0));
    c.close();
    other.close();
    child.kill("SIGTERM");
    const status = await child.status;
    assert.equal(status.code, 0);
    await waitFor(() => pids.every((p) => liveIn(p).length === 0), 5000, "every PTY session gone");
  } finally {
    try {
      child.kill("SIGKILL");
    } catch { /* exited */ }
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
