/**
 * Socket trust and start-up errors (issue 19), with real kernel and facade processes and a
 * second Unix user playing the intruder: directories another user made or symlinked, a fake
 * kernel on the default socket, planted lock files, shared directories that must not be
 * chmodded, private state files, and a state directory the kernel cannot use.
 */

import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { KernelClient } from "../../lib/client/client.ts";
import { UntrustedSocket } from "../../lib/client/socket_trust.ts";
import { intruder } from "./_intruder.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const MAIN = fileURLToPath(new URL("../../main.ts", import.meta.url));
const MCP = fileURLToPath(new URL("../../mcp.ts", import.meta.url));
const CONFIG = fileURLToPath(new URL("../../deno.json", import.meta.url));

/** A directory every user may write (like /tmp), removed afterwards. */
async function sharedDir(): Promise<string> {
  const d = await Deno.makeTempDir({ prefix: "shoal-t19-shared-" });
  await Deno.chmod(d, 0o1777);
  return d;
}

const mode = (p: string) => (Deno.lstatSync(p).mode ?? 0) & 0o7777;

/** Start `shoal kernel` and wait until it is ready or has exited. */
async function kernel(
  args: string[],
  env: Record<string, string> = {},
  cwd?: string,
): Promise<{
  ready: boolean;
  code: number | null;
  stderr: string;
  stop(): Promise<void>;
  kill(): Promise<void>;
}> {
  const base = Deno.env.toObject();
  delete base.XDG_RUNTIME_DIR;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-worker-options", "--config", CONFIG, MAIN, "kernel", ...args],
    env: { ...base, ...env },
    clearEnv: true,
    cwd,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let stderr = "";
  let code: number | null = null;
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  const exited = child.status.then((s) => (code = s.code));
  const end = Date.now() + 30_000;
  while (!stderr.includes("shoal-kernel: ready") && code === null && Date.now() < end) {
    const r = await Promise.race([reader.read(), exited.then(() => null)]);
    if (r === null || r.done) break;
    stderr += r.value;
  }
  const ready = stderr.includes("shoal-kernel: ready");
  if (!ready) {
    await exited;
    for (let r = await reader.read(); !r.done; r = await reader.read()) stderr += r.value;
  }
  if (ready) {
    (async () => {
      try {
        for (let r = await reader.read(); !r.done; r = await reader.read()) stderr += r.value;
      } catch { /* closed */ }
    })();
  }
  return {
    ready,
    code,
    get stderr() {
      return stderr;
    },
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch { /* gone */ }
      await child.status;
    },
    async kill() {
      try {
        child.kill("SIGKILL");
      } catch { /* gone */ }
      await child.status;
    },
  };
}

/** A refusal: exit 1, one line on stderr, no stack trace (a kernel that started is stopped). */
async function refused(
  k: { ready: boolean; code: number | null; stderr: string; stop(): Promise<void> },
  what: RegExp,
) {
  if (k.ready) await k.stop();
  assert(!k.ready, `the kernel started: ${k.stderr}`);
  assertEquals(k.code, 1, k.stderr);
  const lines = k.stderr.trim().split("\n");
  assertEquals(lines.length, 1, k.stderr);
  assert(lines[0].startsWith("shoal-kernel: "), k.stderr);
  assert(what.test(lines[0]), k.stderr);
}

Deno.test(
  "a default socket directory another user made is refused (kernel and clients)",
  opts,
  async () => {
    const who = await intruder("default socket directory of another user");
    if (!who) return;
    const tmp = await sharedDir();
    const state = await Deno.makeTempDir();
    try {
      // The intruder takes $TMPDIR/shoal-0/shoal first and serves a fake kernel there.
      const own = join(tmp, `shoal-${Deno.uid()}`, "shoal");
      assertEquals((await who.run(["mkdir", "-p", own])).code, 0);
      await who.run(["chmod", "-R", "755", join(tmp, `shoal-${Deno.uid()}`)]);
      const k = await kernel([], { TMPDIR: tmp, XDG_STATE_HOME: state });
      await refused(k, /belongs to uid \d+, not to you/);

      const log = join(tmp, "fake.log");
      const fake = who.spawn([
        "/usr/bin/python3",
        "-c",
        `import socket,sys
s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8)
open(sys.argv[2],"w").close()
while True:
    c,_=s.accept(); c.settimeout(2)
    try:
        d=c.recv(65536)
        open(sys.argv[2],"ab").write(d)
        c.sendall(b'{"jsonrpc":"2.0","id":1,"result":{"session":"default"}}\\n')
    except Exception: pass`,
        join(own, "default.sock"),
        log,
      ]);
      try {
        const t0 = Date.now();
        while (Date.now() - t0 < 10_000) {
          try {
            Deno.statSync(join(own, "default.sock"));
            Deno.statSync(log);
            break;
          } catch { /* not yet */ }
          await new Promise((r) => setTimeout(r, 50));
        }
        // The facade refuses before sending anything (no session.attach, no source).
        const base = Deno.env.toObject();
        delete base.XDG_RUNTIME_DIR;
        const mcp = await new Deno.Command(Deno.execPath(), {
          args: ["run", "-A", "--unstable-worker-options", "--config", CONFIG, MCP],
          env: { ...base, TMPDIR: tmp, SHOAL_NO_AUTOSTART: "1" },
          clearEnv: true,
          stdin: "null",
          stdout: "null",
          stderr: "piped",
        }).output();
        const err = new TextDecoder().decode(mcp.stderr);
        assertEquals(mcp.code, 1, err);
        assert(/belongs to uid \d+, not to you/.test(err), err);
        assertEquals(Deno.readTextFileSync(log), "", "the fake kernel received data");
        // So does the typed client (the CLI's and the facade's way in).
        let threw: unknown = null;
        try {
          (await KernelClient.connect({ socket: join(own, "default.sock") })).close();
        } catch (e) {
          threw = e;
        }
        assert(threw instanceof UntrustedSocket, String(threw));
        assertEquals(Deno.readTextFileSync(log), "");
      } finally {
        try {
          fake.kill("SIGKILL");
        } catch { /* gone */ }
        await fake.status;
      }
    } finally {
      await who.remove();
      await Deno.remove(tmp, { recursive: true }).catch(() => {});
      await Deno.remove(state, { recursive: true }).catch(() => {});
    }
  },
);

Deno.test("a symlinked socket directory is refused and its target left alone", opts, async () => {
  const who = await intruder("symlinked socket directory");
  if (!who) return;
  const runtime = await sharedDir();
  const victim = await Deno.makeTempDir({ prefix: "shoal-t19-victim-" });
  const state = await Deno.makeTempDir();
  try {
    await Deno.chmod(victim, 0o755);
    assertEquals((await who.run(["ln", "-s", victim, join(runtime, "shoal")])).code, 0);
    const k = await kernel([], { XDG_RUNTIME_DIR: runtime, XDG_STATE_HOME: state });
    await refused(k, /is a symlink/);
    assertEquals(mode(victim), 0o755);
    assertEquals([...Deno.readDirSync(victim)].length, 0);
  } finally {
    await who.remove();
    for (const d of [runtime, victim, state]) {
      await Deno.remove(d, { recursive: true }).catch(() => {});
    }
  }
});

Deno.test("a planted lock file is never followed or used", opts, async () => {
  const who = await intruder("planted lock file");
  if (!who) return;
  const shared = await sharedDir();
  const state = await Deno.makeTempDir();
  const target = join(await Deno.makeTempDir(), "created-by-the-kernel");
  try {
    await Deno.chmod(join(target, ".."), 0o777);
    assertEquals((await who.run(["ln", "-s", target, join(shared, ".k.sock.lock")])).code, 0);
    const k = await kernel(["--socket", join(shared, "k.sock")], { XDG_STATE_HOME: state });
    await refused(k, /lock file .* symlink/);
    assert(!(await exists(target)), "the kernel created the symlink's target");
    // A regular lock file of someone else's is refused too.
    await Deno.remove(join(shared, ".k.sock.lock"));
    assertEquals((await who.run(["touch", join(shared, ".k.sock.lock")])).code, 0);
    const k2 = await kernel(["--socket", join(shared, "k.sock")], { XDG_STATE_HOME: state });
    await refused(k2, /not a regular file of yours/);
  } finally {
    await who.remove();
    for (const d of [shared, state, join(target, "..")]) {
      await Deno.remove(d, { recursive: true }).catch(() => {});
    }
  }
});

async function exists(p: string): Promise<boolean> {
  try {
    await Deno.lstat(p);
    return true;
  } catch {
    return false;
  }
}

Deno.test(
  "a shared directory named by --socket is used as it is, never chmodded",
  opts,
  async () => {
    const shared = await sharedDir();
    const state = await Deno.makeTempDir();
    try {
      for (
        const [args, cwd] of [[["--socket", join(shared, "k.sock")]], [
          ["--socket", "k.sock"],
          shared,
        ]] as const
      ) {
        const k = await kernel([...args], { XDG_STATE_HOME: state }, cwd);
        assert(k.ready, k.stderr);
        assertEquals(mode(shared), 0o1777);
        assertEquals(mode(join(shared, "k.sock")) & 0o077, 0);
        await k.stop();
        // Shutdown removes the socket and its lock file (no stale lock left behind).
        assertEquals([...Deno.readDirSync(shared)].map((e) => e.name), []);
      }
      // A killed kernel leaves its socket and lock file: the next one takes both over and
      // cleans them up when it stops.
      const sock = join(shared, "k.sock");
      const killed = await kernel(["--socket", sock], { XDG_STATE_HOME: state });
      assert(killed.ready, killed.stderr);
      await killed.kill();
      const left = [...Deno.readDirSync(shared)].map((e) => e.name).sort();
      assertEquals(left, [".k.sock.lock", "k.sock"]);
      const next = await kernel(["--socket", sock], { XDG_STATE_HOME: state });
      assert(next.ready, next.stderr);
      await next.stop();
      assertEquals([...Deno.readDirSync(shared)].map((e) => e.name), []);
    } finally {
      await Deno.remove(shared, { recursive: true }).catch(() => {});
      await Deno.remove(state, { recursive: true }).catch(() => {});
    }
  },
);

Deno.test("bad socket paths are refused before ready, leaving nothing behind", opts, async () => {
  const dir = await Deno.makeTempDir();
  try {
    const k = await kernel(["--socket", `${dir}/sub/`, "--ephemeral"]);
    await refused(k, /ends with '\/'/);
    const long = join(dir, "d".repeat(60), "e".repeat(60), "k.sock");
    const k2 = await kernel(["--socket", long, "--ephemeral"]);
    await refused(k2, /at most 107/);
    assertEquals([...Deno.readDirSync(dir)].map((e) => e.name), []);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});

Deno.test("every state file is 0600 and every state directory 0700", opts, async () => {
  const dir = await Deno.makeTempDir();
  try {
    const sock = join(dir, "run", "k.sock");
    const state = join(dir, "state");
    const k = await kernel(["--socket", sock, "--state-dir", state]);
    assert(k.ready, k.stderr);
    const c = await KernelClient.connect({ socket: sock, attach: {} });
    await c.call("exec", { src: "(0..20000).map(x => {n: x})" });
    await c.call("journal.query", {});
    c.close();
    const loose: string[] = [];
    const walk = (p: string) => {
      for (const e of Deno.readDirSync(p)) {
        const f = join(p, e.name);
        if ((mode(f) & 0o077) !== 0) loose.push(`${f} ${mode(f).toString(8)}`);
        if (e.isDirectory) walk(f);
      }
    };
    walk(state);
    walk(join(dir, "run"));
    await k.stop();
    assertEquals(loose, []);
    assert((mode(state) & 0o077) === 0);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});

Deno.test(
  "a state directory the kernel cannot use fails before the socket is bound",
  opts,
  async () => {
    const dir = await Deno.makeTempDir();
    try {
      const sock = join(dir, "run", "k.sock");
      // Not a directory.
      await Deno.writeTextFile(join(dir, "file"), "");
      const k = await kernel(["--socket", sock, "--state-dir", join(dir, "file")]);
      await refused(k, /cannot use the state directory/);
      assert(!(await exists(sock)));
      // Locked: another process holds the journal's write lock.
      const state = join(dir, "state");
      await Deno.mkdir(state);
      const holder = new Deno.Command("python3", {
        args: [
          "-c",
          "import sqlite3,sys,time\nc=sqlite3.connect(sys.argv[1],isolation_level=None)\n" +
          "c.execute('BEGIN EXCLUSIVE'); print('held', flush=True); time.sleep(60)",
          join(state, "journal.db"),
        ],
        stdout: "piped",
        stderr: "null",
      }).spawn();
      const out = holder.stdout.pipeThrough(new TextDecoderStream()).getReader();
      await out.read(); // "held"
      try {
        const k2 = await kernel(["--socket", sock, "--state-dir", state]);
        await refused(k2, /cannot use the state directory .*locked/);
        assert(!(await exists(sock)));
      } finally {
        holder.kill("SIGKILL");
        await holder.status;
        await out.cancel().catch(() => {});
      }
      // Read-only (a read-only mount: even root cannot write there).
      if (Deno.uid() === 0) {
        const ro = join(dir, "ro");
        await Deno.mkdir(ro);
        const m = await new Deno.Command("mount", {
          args: ["-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", ro],
          stderr: "piped",
        }).output();
        if (m.code === 0) {
          try {
            const k3 = await kernel(["--socket", sock, "--state-dir", ro]);
            await refused(k3, /cannot use the state directory/);
            assert(!(await exists(sock)));
          } finally {
            await new Deno.Command("umount", { args: [ro] }).output();
          }
        } else {console.warn(
            `SKIPPED (read-only state dir): mount failed: ${new TextDecoder().decode(m.stderr)}`,
          );}
      } else console.warn("SKIPPED (read-only state dir): needs root to mount a read-only tmpfs");
    } finally {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
);
