// The PTY core (lib/exec/pty.ts) with real programs on real pseudo-terminals, checked
// against what the programs print and against /proc — never against our own bookkeeping.

import assert from "node:assert/strict";
import {
  cgroupKillAvailable,
  isExecError,
  openPty,
  type Pty,
  type PtyJobChange,
  sessionMembers,
} from "../../lib/exec/mod.ts";
import { cmdline, dec, isDead, sleep, waitFor, withTempDir } from "./_helpers.ts";

const ENV = { PATH: "/usr/local/bin:/usr/bin:/bin", TERM: "xterm-256color", LC_ALL: "C.UTF-8" };

/** Output of a PTY collected in the background. */
class Screenless {
  text = "";
  done: Promise<void>;
  constructor(readonly pty: Pty) {
    this.done = (async () => {
      const buf = new Uint8Array(65536);
      for (;;) {
        const n = await pty.read(buf);
        if (n === 0) return;
        this.text += dec.decode(buf.subarray(0, n), { stream: true });
      }
    })();
  }

  /** Wait until the output matches `re` (throws with the output so far after `ms`). */
  async until(re: RegExp, ms = 10_000): Promise<RegExpMatchArray> {
    const deadline = performance.now() + ms;
    for (;;) {
      const m = this.text.match(re);
      if (m) return m;
      if (performance.now() > deadline) {
        throw new Error(`timed out waiting for ${re}; output: ${JSON.stringify(this.text)}`);
      }
      await sleep(10);
    }
  }
}

async function withPty(
  argv: string[],
  fn: (p: Pty, out: Screenless) => Promise<void>,
  extra: Partial<Parameters<typeof openPty>[0]> = {},
): Promise<void> {
  const p = openPty({ argv, cwd: "/", env: ENV, ...extra });
  const out = new Screenless(p);
  try {
    await fn(p, out);
  } finally {
    await p.close();
    await out.done;
  }
}

/** Pids of live processes of session `sid` running `sleep <arg>`. */
function sleepers(sid: number, arg: string): number[] {
  return (sessionMembers(sid) ?? []).filter((m) => {
    if (m.state === "Z" || m.state === "X") return false;
    const w = cmdline(m.pid);
    return w[0]?.endsWith("sleep") && w[1] === arg;
  }).map((m) => m.pid);
}

Deno.test("the child leads a session with the PTY as its controlling terminal", async () => {
  await withPty(
    ["sh", "-c", "tty; stty size; ps -o pid=,pgid=,sid=,tpgid= -p $$; exit 3"],
    async (p, out) => {
      assert.deepEqual(await p.exit, { status: 3, signal: null });
      const m = await out.until(
        /(\/dev\/pts\/\d+)\r\n(\d+) (\d+)\r\n\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)/,
      );
      assert.equal(m[2], "24"); // rows
      assert.equal(m[3], "80"); // cols
      // pid = pgid = sid = the terminal's foreground group.
      assert.deepEqual([m[4], m[5], m[6], m[7]].map(Number), [p.pid, p.pid, p.pid, p.pid]);
      assert.equal(p.state, "exited");
    },
    { cols: 80, rows: 24 },
  );
});

Deno.test("input reaches the program; echo and hidden input behave like a terminal", async () => {
  const script = 'read a; stty -echo; read b; stty echo; echo "a=$a b=$b"';
  await withPty(["sh", "-c", script], async (p, out) => {
    await p.write("visible\r");
    await out.until(/visible\r\n/);
    await sleep(100); // stty -echo has run once sh reads again
    await p.write("secret\r");
    const m = await out.until(/a=visible b=(\w+)/);
    assert.equal(m[1], "secret");
    assert.equal(out.text.split("secret").length, 2, "the hidden answer was not echoed");
    assert.equal((await p.exit).status, 0);
  });
});

Deno.test("resize is seen by the program (stty size) and reported by size()", async () => {
  await withPty(["sh", "-c", "read x; stty size; read y; stty size"], async (p, out) => {
    await p.write("\r");
    await out.until(/24 80\r\n/);
    p.resize(132, 43);
    assert.deepEqual(p.size(), { cols: 132, rows: 43 });
    assert.equal(p.cols, 132);
    await p.write("\r");
    await out.until(/43 132\r\n/);
    assert.throws(() => p.resize(0, 10), (e) => isExecError(e, "invalid_argument"));
    assert.throws(() => p.resize(80, 70000), (e) => isExecError(e, "invalid_argument"));
  });
});

Deno.test("SIGWINCH reaches the foreground program on resize", async () => {
  await withPty(
    ["sh", "-c", 'trap "stty size" WINCH; echo ready; while :; do sleep 0.05; done'],
    async (p, out) => {
      await out.until(/ready/);
      p.resize(100, 30);
      await out.until(/30 100/);
    },
  );
});

Deno.test("Ctrl-C interrupts a running sleep through the terminal", async () => {
  await withPty(["sleep", "100"], async (p) => {
    await sleep(100);
    await p.write("\x03");
    assert.deepEqual(await p.exit, { status: null, signal: "SIGINT" });
  });
});

Deno.test("job control: Ctrl-Z stops the program, resume() continues it", async () => {
  const changes: PtyJobChange[] = [];
  await withPty(["sleep", "100"], async (p) => {
    p.onJobState((c) => changes.push(c));
    assert.ok(await waitFor(() => p.jobGroup() !== null, 5000), "the job started");
    const job = p.jobGroup()!;
    assert.notEqual(job, p.pid, "the program runs as a job of the keeper");
    assert.deepEqual(sleepers(p.pid, "100"), [job]);
    await p.write("\x1a"); // Ctrl-Z: the line discipline sends SIGTSTP to the foreground job
    assert.ok(await waitFor(() => p.state === "stopped", 5000), "stopped");
    assert.deepEqual(changes[0], { state: "stopped", signal: null });
    assert.ok(p.resume());
    assert.ok(await waitFor(() => p.state === "running", 5000), "running again");
    assert.ok(await waitFor(() => p.foregroundGroup() === job, 5000), "the job has the terminal");
    assert.ok(p.suspend());
    assert.ok(await waitFor(() => p.state === "stopped", 5000), "stopped by SIGSTOP");
    assert.ok(p.resume());
    assert.ok(await waitFor(() => p.state === "running", 5000), "running again");
    await p.write("\x03");
    assert.deepEqual(await p.exit, { status: null, signal: "SIGINT" }, "the job's death, mirrored");
    assert.equal(changes.at(-1)!.state, "exited");
  }, { jobControl: true });
});

Deno.test("job control: a program that suspends itself (vim's Ctrl-Z) stops and resumes", async () => {
  await withTempDir(async (dir) => {
    await withPty(["vim", "-u", "NONE", "-N", "-n", `${dir}/f.txt`], async (p, out) => {
      await out.until(/f\.txt/);
      await p.write("\x1a");
      assert.ok(await waitFor(() => p.state === "stopped", 5000), "vim stopped itself");
      assert.ok(p.resume());
      assert.ok(await waitFor(() => p.state === "running", 5000), "vim runs again");
      await sleep(200);
      await p.write("ihi\x1b:wq\r");
      assert.deepEqual(await p.exit, { status: 0, signal: null });
      assert.equal(await Deno.readTextFile(`${dir}/f.txt`), "hi\n");
    }, { jobControl: true, cwd: dir });
  });
});

Deno.test("job control: the keeper reports the program's exit status", async () => {
  await withPty(["sh", "-c", "exit 7"], async (p) => {
    assert.deepEqual(await p.exit, { status: 7, signal: null });
  }, { jobControl: true });
  await withPty(["sh", "-c", "kill -TERM $$"], async (p) => {
    assert.deepEqual(await p.exit, { status: null, signal: "SIGTERM" });
  }, { jobControl: true });
});

Deno.test("a shell's foreground job is the terminal's foreground group and can be signalled", async () => {
  await withPty(["bash", "--norc", "--noprofile", "-i"], async (p, out) => {
    await p.write("PS1='$ '; sleep 77\r");
    assert.ok(await waitFor(() => sleepers(p.pid, "77").length === 1), "sleep started");
    const [sleeper] = sleepers(p.pid, "77");
    assert.ok(await waitFor(() => p.foregroundGroup() === sleeper), "sleep is in the foreground");
    assert.ok(p.signal("SIGINT", "foreground"));
    assert.ok(await waitFor(() => isDead(sleeper)), "sleep was interrupted");
    assert.ok(await waitFor(() => p.foregroundGroup() === p.pid), "bash is back in the foreground");
    await p.write("exit 5\r");
    assert.deepEqual(await p.exit, { status: 5, signal: null });
    assert.match(out.text, /\$ /);
  });
});

Deno.test("close kills a program that ignores SIGHUP, SIGINT and SIGTERM", async () => {
  const p = openPty({ argv: ["sh", "-c", 'trap "" HUP INT TERM; sleep 91'], cwd: "/", env: ENV });
  assert.ok(await waitFor(() => sleepers(p.pid, "91").length === 1), "sleep started");
  const victims = [p.pid, ...sleepers(p.pid, "91")];
  assert.deepEqual(await p.close(), { status: null, signal: "SIGKILL" });
  for (const pid of victims) assert.ok(await waitFor(() => isDead(pid)), `${pid} survived`);
  assert.deepEqual(await p.close(), { status: null, signal: "SIGKILL" }, "idempotent");
  assert.equal(await p.read(new Uint8Array(16)), 0, "reads end after close");
  await assert.rejects(p.write("x"), /closed/);
  assert.equal(p.signal("SIGTERM"), false);
});

Deno.test("close also kills jobs a shell put in process groups of their own", async () => {
  await withPty(["bash", "--norc", "--noprofile", "-i"], async (p) => {
    await p.write("trap '' HUP; sleep 92 & disown\r");
    assert.ok(await waitFor(() => sleepers(p.pid, "92").length === 1), "job started");
    const [job] = sleepers(p.pid, "92");
    assert.notEqual(job, p.pid);
    await p.close();
    assert.ok(await waitFor(() => isDead(job)), "the background job was killed");
  });
});

Deno.test("the exit is seen while a background process still holds the terminal", async () => {
  // Ignored SIGHUP survives exec: the sleep outlives the hangup its session leader's exit sends.
  await withPty(["sh", "-c", 'trap "" HUP; sleep 93 & echo started; exit 4'], async (p, out) => {
    assert.deepEqual(await p.exit, { status: 4, signal: null });
    await out.until(/started/);
    // The shell may exit before its forked child has exec'd sleep: wait for it to appear.
    assert.ok(
      await waitFor(() => sleepers(p.pid, "93").length === 1, 5000),
      "the sleep keeps the slave open",
    );
    assert.equal(p.readNow(new Uint8Array(16)), -1, "no end of output yet");
    await p.close();
    assert.equal(sleepers(p.pid, "93").length, 0);
  });
});

Deno.test("the output ends (read → 0) once every process on the terminal is gone", async () => {
  const p = openPty({ argv: ["seq", "1", "20000"], cwd: "/", env: ENV });
  const buf = new Uint8Array(65536);
  let text = "";
  for (;;) {
    const n = await p.read(buf);
    if (n === 0) break;
    text += dec.decode(buf.subarray(0, n));
  }
  assert.equal((await p.exit).status, 0);
  assert.ok(text.endsWith("19999\r\n20000\r\n"), "no output lost at the end");
  await p.close();
});

Deno.test("the child gets fds 0–2 only and default signal dispositions", async () => {
  // `[ -e ]` is a builtin: it opens nothing, so any fd ≥ 3 of the shell is a leak of ours.
  const script = 'for i in $(seq 3 40); do [ -e /proc/$$/fd/$i ] && echo "leaked $i"; done; ' +
    'echo checked; yes | head -1 >/dev/null; echo "ps=${PIPESTATUS[*]}"';
  await withPty(["bash", "--norc", "-c", script], async (_p, out) => {
    const m = await out.until(/checked\r\nps=(\d+) (\d+)/);
    assert.doesNotMatch(out.text, /leaked/);
    assert.equal(m[1], "141", "yes died of SIGPIPE (not ignored)");
  });
});

Deno.test("raw passthrough: readable() yields the program's escape sequences", async () => {
  const p = openPty({ argv: ["printf", "\\033[31mred\\033[0m"], cwd: "/", env: ENV });
  let text = "";
  for await (const chunk of p.readable()) text += dec.decode(chunk);
  assert.equal(text, "\x1b[31mred\x1b[0m");
  await p.close();
});

Deno.test("cwd and env are the given ones; PATH from the env resolves the program", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/tool`, '#!/bin/sh\necho "tool in $PWD with $GREETING"\n');
    await Deno.chmod(`${dir}/tool`, 0o755);
    const env = { ...ENV, PATH: `${dir}:${ENV.PATH}`, GREETING: "hi" };
    const p = openPty({ argv: ["tool"], cwd: dir, env });
    const out = new Screenless(p);
    await out.until(new RegExp(`tool in ${dir} with hi`));
    assert.equal(p.program, `${dir}/tool`);
    await p.close();
    await out.done;
  });
});

Deno.test("spawn errors are ExecErrors with stable kinds", () => {
  assert.throws(
    () => openPty({ argv: ["no-such-program-xyz"], cwd: "/", env: ENV }),
    (e) => isExecError(e, "not_found") && /command not found/.test(e.message),
  );
  assert.throws(
    () => openPty({ argv: ["sh"], cwd: "/no/such/dir", env: ENV }),
    (e) => isExecError(e, "cwd_not_found"),
  );
  assert.throws(
    () => openPty({ argv: ["sh"], cwd: "/", env: ENV, cols: 0 }),
    (e) => isExecError(e, "invalid_argument") && /cols/.test(e.message),
  );
  assert.throws(
    () => openPty({ argv: [], cwd: "/", env: ENV }),
    (e) => isExecError(e, "invalid_argument"),
  );
});

Deno.test("an aborted signal runs the kill ladder", async () => {
  const ac = new AbortController();
  const p = openPty({
    argv: ["sleep", "100"],
    cwd: "/",
    env: ENV,
    signal: ac.signal,
    graceMs: 200,
  });
  await sleep(50);
  ac.abort();
  assert.deepEqual(await p.exit, { status: null, signal: "SIGINT" });
  await p.close();
});

Deno.test("closing PTYs releases their fds", async () => {
  const fds = () => [...Deno.readDirSync("/proc/self/fd")].length;
  const before = fds();
  const ptys = Array.from(
    { length: 8 },
    () => openPty({ argv: ["sleep", "50"], cwd: "/", env: ENV }),
  );
  assert.ok(fds() >= before + 8 * 2);
  await Promise.all(ptys.map((p) => p.close()));
  assert.ok(await waitFor(() => fds() <= before, 2000), `fds ${fds()} > ${before}`);
});

Deno.test({
  name: "killScope cgroup: close also kills a process that left the session",
  ignore: !cgroupKillAvailable(),
  fn: async () => {
    const p = openPty({
      argv: ["sh", "-c", "setsid sleep 94 & echo ok; sleep 100"],
      cwd: "/",
      env: ENV,
      killScope: "cgroup",
    });
    assert.equal(p.killScope, "cgroup");
    const escaped = () =>
      [...Deno.readDirSync("/proc")].filter((e) => /^\d+$/.test(e.name)).map((e) => Number(e.name))
        .filter((pid) => {
          const w = cmdline(pid);
          return w[0]?.endsWith("sleep") && w[1] === "94" && !isDead(pid);
        });
    assert.ok(await waitFor(() => escaped().length === 1), "escaper started");
    const [pid] = escaped();
    await p.close();
    assert.ok(await waitFor(() => isDead(pid)), "the escaper was killed");
  },
});
