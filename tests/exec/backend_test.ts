// The two spawn backends (posix_spawn through FFI, the default; Deno.Command + setsid(1),
// the fallback) must behave the same; these run the same checks on each one available.

import assert from "node:assert/strict";
import { join } from "node:path";
import { isExecError, isExecutableFile, spawnCapture, spawnStreaming } from "../../lib/exec/mod.ts";
import { setSpawnBackend, type SpawnBackend, spawnBackend } from "../../lib/exec/child.ts";
import { setChildIsolation } from "../../lib/exec/posix_spawn.ts";
import { dec, ENV, killGroupQuietly, liveMembers, waitFor, withTempDir } from "./_helpers.ts";

const AVAILABLE: SpawnBackend[] = (() => {
  const before = spawnBackend();
  const out = (["posix_spawn", "command"] as const).filter((b) => setSpawnBackend(b) === b);
  setSpawnBackend(before);
  return out;
})();

/** Run `fn` once per available backend, restoring the one in force afterwards. */
async function onEachBackend(fn: (b: SpawnBackend) => Promise<void>): Promise<void> {
  const before = spawnBackend();
  try {
    for (const b of AVAILABLE) {
      setSpawnBackend(b);
      await fn(b);
    }
  } finally {
    setSpawnBackend(before);
  }
}

const run = (argv: (string | Uint8Array)[], extra: Record<string, unknown> = {}) =>
  spawnCapture({ argv, cwd: "/", env: ENV, ...extra });

/** Fields of /proc/PID/stat after the command name: state, ppid, pgrp, session… */
function statFields(pid: number): string[] {
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

Deno.test("posix_spawn is the default where FFI is granted", () => {
  assert.ok(AVAILABLE.includes("command"));
  const forced = Deno.env.get("SHOAL_SPAWN_BACKEND") === "command";
  if (AVAILABLE.includes("posix_spawn") && !forced) assert.equal(spawnBackend(), "posix_spawn");
});

Deno.test("both backends: status, signals, byte argv, exact env, cwd", async () => {
  await onEachBackend(async (b) => {
    assert.equal((await run(["sh", "-c", "exit 7"])).status, 7, b);
    const sig = await run(["sh", "-c", "kill -USR1 $$"]);
    assert.deepEqual([sig.status, sig.signal], [null, "SIGUSR1"], b);
    const rt = await run(["sh", "-c", "kill -40 $$"]);
    assert.equal(rt.signal, "SIGRTMIN+6", b);
    const bytes = new Uint8Array([0xfe, 0x20, 0x0a]);
    const r = await run(["printf", "%s|%s", bytes, "x"]);
    assert.deepEqual([...r.stdout], [...bytes, 0x7c, 0x78], b);
    const env = await spawnCapture({ argv: ["env"], cwd: "/tmp", env: { A: "1", PATH: "/bin" } });
    assert.deepEqual(dec.decode(env.stdout).trim().split("\n").sort(), ["A=1", "PATH=/bin"], b);
    const pwd = await spawnCapture({ argv: ["pwd"], cwd: "/tmp", env: ENV });
    assert.equal(dec.decode(pwd.stdout), "/tmp\n", b);
    // Spawn after spawn, each child gets exactly its own environment (the direct backend
    // reuses the last one's C strings only when nothing differs).
    const envOf = async (e: Record<string, string>) =>
      dec.decode((await spawnCapture({ argv: ["env"], cwd: "/", env: e })).stdout).trim()
        .split("\n").sort();
    const base = { A: "1", B: "2", PATH: "/bin" };
    assert.deepEqual(await envOf(base), ["A=1", "B=2", "PATH=/bin"], b);
    assert.deepEqual(await envOf({ ...base }), ["A=1", "B=2", "PATH=/bin"], b);
    assert.deepEqual(await envOf({ ...base, B: "3" }), ["A=1", "B=3", "PATH=/bin"], b);
    assert.deepEqual(await envOf({ A: "1", PATH: "/bin" }), ["A=1", "PATH=/bin"], b);
    assert.deepEqual(await envOf({ ...base, C: "" }), ["A=1", "B=2", "C=", "PATH=/bin"], b);
    assert.deepEqual(await envOf({ A: "1", PATH: "/bin", C: "" }), ["A=1", "C=", "PATH=/bin"], b);
  });
});

Deno.test("both backends: `&>` order, 3 MB of stdin through cat, stdin from a stream", async () => {
  await withTempDir(async (dir) => {
    await onEachBackend(async (b) => {
      const both = join(dir, `both-${b}`);
      await run(["sh", "-c", "echo 1; echo 2 >&2; echo 3; echo 4 >&2"], {
        stdout: { path: both },
        stderr: { path: both },
      });
      assert.equal(await Deno.readTextFile(both), "1\n2\n3\n4\n", b);

      const big = new Uint8Array(3_000_000);
      for (let i = 0; i < big.length; i++) big[i] = (i * 31 + (i >> 11)) & 0xff;
      const cat = await run(["cat"], { stdin: big });
      assert.equal(cat.stdoutBytes, big.length, b);
      assert.ok(cat.stdout.every((v, i) => v === big[i]), `${b}: bytes round-trip`);

      const parts = ["a", "b", "c"].map((s) => new TextEncoder().encode(s));
      const stream = new ReadableStream<Uint8Array>({
        pull(c) {
          const next = parts.shift();
          if (next === undefined) c.close();
          else c.enqueue(next);
        },
      });
      assert.equal(dec.decode((await run(["cat"], { stdin: stream })).stdout), "abc", b);
    });
  });
});

Deno.test("both backends: stdin held by a grandchild that never reads does not hold us", async () => {
  await onEachBackend(async (b) => {
    const t0 = performance.now();
    const r = await run(["sh", "-c", "sleep 2 <&0 >/dev/null 2>&1 & exit 3"], {
      stdin: new Uint8Array(4 << 20), // far more than a pipe holds: the write blocks
    });
    killGroupQuietly(r.pgid); // the sleep
    assert.equal(r.status, 3, b);
    assert.ok(performance.now() - t0 < 1500, `${b}: returned when the child exited`);
  });
});

Deno.test("both backends: no #! runs under sh; missing #! interpreter, missing cwd", async () => {
  await withTempDir(async (dir) => {
    const plain = join(dir, "plain");
    await Deno.writeTextFile(plain, 'echo "plain $1"\n');
    await Deno.chmod(plain, 0o755);
    const bad = join(dir, "bad");
    await Deno.writeTextFile(bad, "#!/nonexistent/interp\n");
    await Deno.chmod(bad, 0o755);
    await onEachBackend(async (b) => {
      assert.equal(dec.decode((await run([plain, "x"])).stdout), "plain x\n", b);
      for (
        const [argv, cwd, kind] of [
          [[bad], "/", "not_found"],
          [["true"], join(dir, "gone"), "cwd_not_found"],
        ] as const
      ) {
        await assert.rejects(
          spawnCapture({ argv: [...argv], cwd, env: ENV }),
          (e) => isExecError(e, kind),
          `${b}: ${kind}`,
        );
      }
    });
  });
});

Deno.test("both backends: cancel kills the whole group", async () => {
  await onEachBackend(async (b) => {
    const ac = new AbortController();
    const child = await spawnStreaming({
      argv: ["sh", "-c", "sleep 300 & sleep 300 & wait"],
      cwd: "/",
      env: ENV,
      signal: ac.signal,
      graceMs: 200,
    });
    try {
      assert.ok(await waitFor(() => liveMembers(child.pgid).length === 3), `${b}: started`);
      ac.abort();
      await child.stdout.cancel();
      const r = await child.result;
      assert.ok(r.cancelled, b);
      assert.deepEqual(liveMembers(child.pgid), [], b);
    } finally {
      killGroupQuietly(child.pgid);
    }
  });
});

Deno.test({
  name: "posix_spawn: the child leads its group (or session) as soon as the spawn returns",
  ignore: !AVAILABLE.includes("posix_spawn"),
  fn: async () => {
    const before = setSpawnBackend("posix_spawn");
    try {
      for (const mode of ["group", "session"] as const) {
        setChildIsolation(mode);
        const child = await spawnStreaming({ argv: ["sleep", "5"], cwd: "/", env: ENV });
        try {
          const [, , pgrp, session] = statFields(child.pid).map(Number);
          assert.equal(pgrp, child.pid, mode);
          if (mode === "session") assert.equal(session, child.pid);
          else assert.equal(session, Number(statFields(Deno.pid)[3]), "our session");
        } finally {
          child.cancel();
          await child.stdout.cancel();
          await child.result;
        }
      }
    } finally {
      setChildIsolation("auto");
      setSpawnBackend(before);
    }
  },
});

/** Our open fds whose link target contains `kind` (all of them without one). */
function openFds(kind = ""): number {
  let n = 0;
  for (const e of Deno.readDirSync("/proc/self/fd")) {
    try {
      if (Deno.readLinkSync(`/proc/self/fd/${e.name}`).includes(kind)) n++;
    } catch {
      // closed meanwhile (the fd of the readDir itself)
    }
  }
  return n;
}

Deno.test({
  name: "posix_spawn: once children are done, none of our fds stay open (pipes, pidfds, epoll)",
  ignore: !AVAILABLE.includes("posix_spawn"),
  fn: async () => {
    const before = setSpawnBackend("posix_spawn");
    try {
      await run(["true"]); // first use: libc is loaded
      const [fds, epolls] = [openFds(), openFds("eventpoll")];
      const sleeper = await spawnStreaming({ argv: ["sleep", "5"], cwd: "/", env: ENV });
      const exit = sleeper.result; // the reactor now watches its pidfd
      assert.equal(openFds("eventpoll"), epolls + 1, "our epoll fd exists while a child runs");
      sleeper.cancel();
      await sleeper.stdout.cancel();
      await exit;
      await Promise.all(
        Array.from({ length: 10 }, () => run(["cat"], { stdin: new Uint8Array(9) })),
      );
      const yes = await spawnStreaming({ argv: ["yes"], cwd: "/", env: ENV });
      await yes.stdout.cancel(); // EPIPE for yes
      await yes.result;
      // A closed kernel session's worker could not close them later.
      assert.equal(openFds("eventpoll"), epolls, "the epoll fd is closed when idle");
      assert.equal(openFds(), fds);
    } finally {
      setSpawnBackend(before);
    }
  },
});

Deno.test("both backends: 40 concurrent children each get their own output and status", async () => {
  await onEachBackend(async (b) => {
    const rs = await Promise.all(
      Array.from(
        { length: 40 },
        (_, i) => run(["sh", "-c", `printf ${i}; printf e${i} >&2; exit ${i % 5}`]),
      ),
    );
    rs.forEach((r, i) => {
      assert.equal(dec.decode(r.stdout), String(i), b);
      assert.equal(dec.decode(r.stderr), `e${i}`, b);
      assert.equal(r.status, i % 5, b);
    });
  });
});

/** What a child sees: whether it leads its group/session, and whether it can open a tty. */
const WHO_AM_I = 'set -- $(cut -d" " -f1,5,6 /proc/$$/stat); ' +
  'if [ "$1" = "$3" ]; then printf session; elif [ "$1" = "$2" ]; then printf group; ' +
  "else printf none; fi; (exec 3</dev/tty) 2>/dev/null && echo ' tty' || echo ' notty'";

/**
 * In a child Deno with `flags` and `env` (under script(1), so with a controlling terminal,
 * when `tty`): the backend, the posix_spawn isolation, and what a spawned child sees.
 */
function probe(flags: string[], env: Record<string, string>, tty = false): Promise<string> {
  const mod = new URL("../../lib/exec/mod.ts", import.meta.url).href;
  const child = new URL("../../lib/exec/child.ts", import.meta.url).href;
  const posix = new URL("../../lib/exec/posix_spawn.ts", import.meta.url).href;
  return withTempDir(async (dir) => {
    const script = join(dir, "probe.ts");
    await Deno.writeTextFile(
      script,
      `import { spawnCapture } from ${JSON.stringify(mod)};
import { spawnBackend } from ${JSON.stringify(child)};
import { childIsolation } from ${JSON.stringify(posix)};
const r = await spawnCapture({ argv: ["sh", "-c", ${
        JSON.stringify(WHO_AM_I)
      }], cwd: "/", env: { PATH: "/usr/bin:/bin" } });
console.log(spawnBackend(), childIsolation(), new TextDecoder().decode(r.stdout).trim());
`,
    );
    const argv = [Deno.execPath(), "run", "--no-check", ...flags, script];
    const quoted = argv.map((a) => `'${a.replaceAll("'", `'\\''`)}'`).join(" ");
    const o = await new Deno.Command(tty ? "script" : argv[0], {
      args: tty ? ["-qec", quoted, "/dev/null"] : argv.slice(1),
      clearEnv: true, // never our SHOAL_SPAWN_BACKEND
      env: {
        HOME: Deno.env.get("HOME") ?? "/",
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        ...env,
      },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(o.code, 0, dec.decode(o.stdout) + dec.decode(o.stderr));
    return dec.decode(o.stdout).replaceAll("\r", "").trim();
  });
}

Deno.test("the fallback is used without --allow-ffi and with SHOAL_SPAWN_BACKEND=command", async () => {
  // setsid(1): a new session either way; we have no terminal here (deno test, piped).
  assert.equal(
    await probe(["--allow-run", "--allow-read", "--allow-env"], {}),
    "command session session notty",
  );
  assert.equal(
    await probe(["-A"], { SHOAL_SPAWN_BACKEND: "command" }),
    "command group session notty",
  );
});

Deno.test({
  name: "posix_spawn: a new session while we have a controlling terminal, else a new group",
  ignore: !AVAILABLE.includes("posix_spawn") || !isExecutableFile("/usr/bin/script"),
  fn: async () => {
    assert.equal(await probe(["-A"], {}), "posix_spawn group group notty");
    // Under script(1) the Deno process has a terminal; its children must not get it.
    assert.equal(await probe(["-A"], {}, true), "posix_spawn session session notty");
  },
});
