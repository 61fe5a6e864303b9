/**
 * Confinement (issue 16): a restricted principal's session runs under the sandbox lowered from
 * its spec — filesystem, network, the kernel socket, spawn pins, hermetic — and `session.attach`
 * says exactly what is in force. Real kernel, real session processes, real sockets; the same
 * actions on the permissive local human show nothing blocked.
 */

import {
  deepStrictEqual as assertEquals,
  match as assertMatch,
  ok as assert,
} from "node:assert/strict";
import { join } from "node:path";
import type { KernelClient } from "../../lib/client/client.ts";
import { RPC } from "../../lib/client/errors.ts";
import type { AttachResult } from "../../lib/client/protocol.ts";
import { emptySandboxSpec, type SandboxSpec } from "../../lib/exec/sandbox_spec.ts";
import { hostSandbox } from "../../lib/exec/sandbox.ts";
import { type KernelHandle, startKernel } from "../../lib/kernel/server.ts";
import { blake3Hex } from "../../lib/store/blake3.ts";
import { client, rpcError, tempDir } from "./_helpers.ts";

const host = hostSandbox();
/** Confinement needs Landlock and a socket filter; without them these tests cannot run. */
const canConfine = host.landlockAbi >= 4 && host.seccomp;

type Outcome = { $: string; ok?: boolean; status?: number; err?: string; out?: { v: unknown } };
type Exec = { ref: string; value: Outcome };

/** A kernel with a journal in `dir/state`, confining every principal to `spec(dir)` (or not). */
async function withConfined(
  spec: ((dir: string) => SandboxSpec) | null,
  fn: (k: KernelHandle, dir: string) => Promise<void>,
): Promise<void> {
  const dir = await Deno.realPath(await tempDir());
  for (const d of ["ok", "no", "bin"]) await Deno.mkdir(join(dir, d));
  await Deno.writeTextFile(join(dir, "ok", "f"), "fine\n");
  await Deno.writeTextFile(join(dir, "no", "secret"), "secret\n");
  const k = await startKernel({
    socket: join(dir, "run", "k.sock"),
    stateDir: join(dir, "state"),
    cwd: dir,
    onError: () => {},
    confinement: spec === null ? () => null : () => spec(dir),
  });
  try {
    await fn(k, dir);
  } finally {
    await k.close();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** Read `ok/` and `bin/`, write `ok/`, nothing else; `extra` replaces keys. */
function narrow(
  extra: (dir: string) => Partial<SandboxSpec> = () => ({}),
): (dir: string) => SandboxSpec {
  return (dir) => ({
    ...emptySandboxSpec(),
    fs_read: [join(dir, "ok", "**"), join(dir, "bin", "**"), ...pythonRoots()],
    fs_write: [join(dir, "ok", "**")],
    ...extra(dir),
  });
}

/** Where python3 lives (its prefix may be outside /usr, e.g. pyenv). */
function pythonRoots(): string[] {
  const r = new Deno.Command("python3", {
    args: [
      "-c",
      "import sys, shutil, os; print(sys.base_prefix); print(os.path.dirname(shutil.which('python3')))",
    ],
    stdout: "piped",
    stderr: "null",
  }).outputSync();
  const roots = new TextDecoder().decode(r.stdout).split("\n").filter((l) => l !== "");
  const pyenv = Deno.env.get("PYENV_ROOT") ?? join(Deno.env.get("HOME") ?? "/", ".pyenv");
  try {
    Deno.statSync(pyenv);
    roots.push(pyenv); // its shims are scripts that run pyenv itself
  } catch { /* no pyenv */ }
  return roots.map((p) => join(p, "**"));
}

async function run(c: KernelClient, src: string): Promise<Exec> {
  return await c.call<Exec>("exec", { src, position: "value" });
}

/** The exec's language error code and message (it must fail). */
async function raised(c: KernelClient, src: string): Promise<{ code: string; message: string }> {
  const e = await rpcError(c.call("exec", { src, position: "value" }));
  assertEquals(e.code, RPC.RAISED, `${src}: ${e.message}`);
  return { code: (e.data as { code: string }).code, message: e.message };
}

const caps = (c: KernelClient) => c.attached!.caps as AttachResult["caps"];

Deno.test({
  name: "confined: reads and writes outside the roots fail, builtin and child alike",
  ignore: !canConfine,
  fn: () =>
    withConfined(narrow(), async (k, dir) => {
      const c = await client(k.path, "s");
      // Inside the roots: allowed.
      const ok = await run(c, `cat ${dir}/ok/f`);
      assertEquals(ok.value.ok, true);
      assertEquals((await run(c, `sh { cat ${dir}/ok/f }`)).value.out?.v, "fine");
      await run(c, `echo hi > "${dir}/ok/w"`);
      assertEquals(await Deno.readTextFile(join(dir, "ok", "w")), "hi\n");
      // Outside: builtin cat, a child's cat, a builtin redirect, a child's write.
      assertMatch((await raised(c, `cat ${dir}/no/secret`)).message, /Permission denied/);
      const sh = await run(c, `sh { cat ${dir}/no/secret }`);
      assertEquals(sh.value.ok, false);
      assertMatch(sh.value.err ?? "", /Permission denied/);
      assertMatch((await raised(c, `echo hi > "${dir}/no/w"`)).message, /Permission denied/);
      const w = await run(c, `sh { echo x > ${dir}/no/w2 }`);
      assertEquals(w.value.ok, false);
      // `rm` moves to the session's own trash: allowed in a write root, refused elsewhere.
      await run(c, `echo bye > "${dir}/ok/gone"`);
      await run(c, `rm ${dir}/ok/gone`);
      assert(!(await Deno.stat(join(dir, "ok", "gone")).then(() => true, () => false)));
      assertMatch((await raised(c, `rm ${dir}/no/secret`)).message, /ermission denied/);
      assert(await Deno.stat(join(dir, "no", "secret")).then(() => true, () => false));
      for (const f of ["w", "w2"]) {
        assert(!(await Deno.stat(join(dir, "no", f)).then(() => true, () => false)), f);
      }
      const cp = caps(c);
      assertEquals(cp.filesystem_enforced, true);
      assertEquals(cp.network_enforced, true);
      assertEquals(cp.kernel_socket_unreachable, true);
      assertEquals(cp.tier, "A");
      assertEquals(c.attached!.caps_enforced, true);
      assertEquals(cp.enforced, true);
      c.close();
    }),
});

Deno.test({
  name: "the permissive local human: the same actions are not blocked, nothing claimed",
  ignore: !canConfine,
  fn: () =>
    withConfined(null, async (k, dir) => {
      const c = await client(k.path, "s");
      assertEquals((await run(c, `cat ${dir}/no/secret`)).value.ok, true);
      assertEquals((await run(c, `sh { cat ${dir}/no/secret }`)).value.out?.v, "secret");
      await run(c, `echo hi > "${dir}/no/w"`);
      assertEquals((await run(c, `sh { echo x > ${dir}/no/w2 }`)).value.ok, true);
      assertEquals((await run(c, `sh { ls ${dir}/state }`)).value.ok, true);
      assertEquals(c.attached!.caps_enforced, false);
      assertEquals(caps(c).tier, null);
      assertEquals(caps(c).filesystem_enforced, false);
      assertEquals(caps(c).available_tier, "A");
      c.close();
    }),
});

Deno.test({
  name:
    "confined: the state directory is out of reach even inside a write root; the journal stays right",
  ignore: !canConfine,
  fn: () =>
    withConfined(
      narrow((dir) => ({ fs_read: ["/**"], fs_write: [join(dir, "**")] })),
      async (k, dir) => {
        const c = await client(k.path, "s");
        const state = join(dir, "state");
        const r = await run(
          c,
          `sh { ls ${state}; cat ${state}/journal.db; touch ${state}/intake/x ${state}/cas/x }`,
        );
        assertEquals(r.value.ok, false);
        // Only its own corner (its trash) is there: nothing of the kernel's.
        assertEquals((await run(c, `sh { ls -A ${state} }`)).value.out?.v, "confined");
        assertMatch(
          String((await run(c, `sh { ls -A ${state}/confined }`)).value.out?.v),
          /^s\.[0-9a-f]{12}$/,
        );
        assertMatch((await raised(c, `cat ${state}/journal.db`)).message, /not found|No such/i);
        // What it ran is journaled, attributed by the kernel, with its stored output.
        await run(c, `sh { seq 1 200000 }`);
        const rows = await c.call<Array<{ src: string; principal: string; session: string }>>(
          "journal.query",
          { limit: 10 },
        );
        const srcs = rows.map((x) => x.src);
        assert(srcs.some((s) => s.includes("seq 1 200000")), JSON.stringify(srcs));
        assert(rows.every((x) => x.principal === c.attached!.principal && x.session === "s"));
        for (const f of ["x"]) {
          for (const d of ["intake", "cas"]) {
            assert(!(await Deno.stat(join(state, d, f)).then(() => true, () => false)));
          }
        }
        c.close();
      },
    ),
});

/** A python3 one-liner run through `sh { }`, printing what happened. */
function py(code: string): string {
  return `sh { python3 -c '${code}' }`;
}

/** Connect to 127.0.0.1:port and say "connected", or the error. */
function connectPy(port: number): string {
  return py(
    `import socket\ntry:\n  socket.create_connection(("127.0.0.1", ${port}), 3); print("connected")\n` +
      `except Exception as e: print("refused", e)`,
  );
}

/** A loopback TCP server for the duration of `fn`. */
async function withServer(fn: (port: number) => Promise<void>): Promise<void> {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const accepting = (async () => {
    for await (const c of l) c.close();
  })().catch(() => {});
  try {
    await fn((l.addr as Deno.NetAddr).port);
  } finally {
    l.close();
    await accepting;
  }
}

Deno.test({
  name: "confined: a loopback TCP connect fails without a grant and succeeds with one",
  ignore: !canConfine,
  fn: () =>
    withServer(async (port) => {
      await withConfined(narrow(), async (k) => {
        const c = await client(k.path, "none");
        const r = await run(c, connectPy(port));
        assertMatch(String(r.value.out?.v), /refused .*Permission denied/);
        assertEquals(caps(c).network_enforced, true);
        c.close();
      });
      await withConfined(narrow(() => ({ net_connect: [`*:${port}`] })), async (k) => {
        const c = await client(k.path, "granted");
        assertEquals((await run(c, connectPy(port))).value.out?.v, "connected");
        // Only that port: another is refused, and so is UDP.
        const other = await run(c, connectPy(port === 1 ? 2 : port - 1));
        assertMatch(String(other.value.out?.v), /refused .*Permission denied/);
        const udp = await run(
          c,
          py(
            `import socket\ntry:\n  socket.socket(socket.AF_INET, socket.SOCK_DGRAM); print("udp")\n` +
              `except Exception as e: print("refused", e)`,
          ),
        );
        assertMatch(String(udp.value.out?.v), /refused/);
        assertEquals(caps(c).network_enforced, true);
        assertEquals(c.attached!.caps_enforced, true);
        c.close();
      });
      await withConfined(null, async (k) => {
        const c = await client(k.path, "human");
        assertEquals((await run(c, connectPy(port))).value.out?.v, "connected");
        c.close();
      });
    }),
});

/** A python3 client of the kernel socket (`session.attach`, then `cap.request`) in `ok/`. */
async function kernelClientPy(dir: string, socket: string): Promise<string> {
  const script = join(dir, "ok", "client.py");
  await Deno.writeTextFile(
    script,
    [
      "import socket, json",
      "try:",
      "    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)",
      `    s.connect(${JSON.stringify(socket)})`,
      `    s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"session.attach","params":{"session":"x"}}\\n')`,
      `    s.sendall(b'{"jsonrpc":"2.0","id":2,"method":"cap.request","params":{"plan_ref":"plan:0000000000000000"}}\\n')`,
      "    f = s.makefile()",
      '    print("answered", json.loads(f.readline())["id"])',
      "except Exception as e:",
      '    print("refused", e)',
      "",
    ].join("\n"),
  );
  return `sh { python3 ${script} }`;
}

Deno.test({
  name: "confined: a python3 client of the kernel socket cannot connect (the human's can)",
  ignore: !canConfine,
  fn: async () => {
    await withConfined(narrow(), async (k, dir) => {
      const c = await client(k.path, "s");
      const r = await run(c, await kernelClientPy(dir, k.path));
      assertMatch(String(r.value.out?.v), /^refused /);
      assertEquals(caps(c).kernel_socket_unreachable, true);
      // Nor can it start a kernel of its own (no Unix socket can be made).
      const own = await run(
        c,
        py(
          `import socket\ntry:\n  socket.socket(socket.AF_UNIX).bind("${
            join(dir, "ok", "x.sock")
          }"); print("bound")\nexcept Exception as e: print("refused", e)`,
        ),
      );
      assertMatch(String(own.value.out?.v), /^refused /);
      c.close();
    });
    await withConfined(null, async (k, dir) => {
      const c = await client(k.path, "s");
      // It reaches the kernel, which answers (requests are handled concurrently: either first).
      const r = await run(c, await kernelClientPy(dir, k.path));
      assertMatch(String(r.value.out?.v), /^answered [12]$/);
      c.close();
    });
  },
});

Deno.test({
  name: "confined: spawn pinning by binary hash refuses a swapped binary",
  ignore: !canConfine,
  fn: async () => {
    const echo = await Deno.readFile("/usr/bin/echo");
    const pin = await blake3Hex(echo);
    await withConfined(narrow(() => ({ proc_spawn: [pin] })), async (k, dir) => {
      const tool = join(dir, "bin", "tool");
      await Deno.writeFile(tool, echo, { mode: 0o755 });
      const c = await client(k.path, "s");
      assertEquals(caps(c).spawn_exec_enforced, true);
      assertEquals((await run(c, `${tool} pinned`)).value.out?.v, "pinned");
      // Swapped in place (same path, other bytes): refused before it starts.
      await Deno.writeFile(tool, await Deno.readFile("/usr/bin/false"), { mode: 0o755 });
      const swapped = await raised(c, `${tool} pinned`);
      assertEquals(swapped.code, "spawn_denied");
      assertMatch(swapped.message, /matches no binary pinned/);
      // Swapped by rename (a new file under the old name): refused too.
      await Deno.writeFile(tool + ".new", await Deno.readFile("/usr/bin/true"), { mode: 0o755 });
      await Deno.rename(tool + ".new", tool);
      assertEquals((await raised(c, `${tool} pinned`)).code, "spawn_denied");
      // Back to the pinned bytes: allowed again.
      await Deno.writeFile(tool + ".new", echo, { mode: 0o755 });
      await Deno.rename(tool + ".new", tool);
      assertEquals((await run(c, `${tool} again`)).value.out?.v, "again");
      // Unpinned programs (a shell among them) are refused.
      assertEquals((await raised(c, `sh { true }`)).code, "spawn_denied");
      // The pinned bytes where the principal can write: refused (it could swap them itself).
      const planted = join(dir, "ok", "tool");
      await Deno.writeFile(planted, echo, { mode: 0o755 });
      assertMatch((await raised(c, `${planted} x`)).message, /can write/);
      c.close();
    });
  },
});

Deno.test({
  name: "hermetic refuses a dimension this host cannot enforce; caps_enforced only when all hold",
  ignore: !canConfine,
  fn: async () => {
    // A host-named grant is enforced by port only: not enforceable as granted.
    const hostGrant = () => ({ net_connect: ["example.com:443"] });
    await withConfined(narrow(() => ({ ...hostGrant(), hermetic: true })), async (k) => {
      const e = await rpcError(client(k.path, "s"));
      assertEquals(e.code, RPC.SANDBOX_UNENFORCEABLE);
      assertEquals((e.data as { missing: string[] }).missing, ["network"]);
      assertMatch(e.message, /hermetic/);
    });
    await withConfined(narrow(hostGrant), async (k) => {
      const c = await client(k.path, "s");
      assertEquals(caps(c).network_enforced, false);
      assertEquals(caps(c).filesystem_enforced, true);
      assertEquals(c.attached!.caps_enforced, false);
      assertMatch(caps(c).detail ?? "", /enforced by port only/);
      c.close();
    });
    // A glob narrower than a directory is widened to it: filesystem not enforced as granted.
    await withConfined(narrow((dir) => ({ fs_read: [join(dir, "ok", "*.txt")] })), async (k) => {
      const c = await client(k.path, "s");
      assertEquals(caps(c).filesystem_enforced, false);
      assertEquals(c.attached!.caps_enforced, false);
      c.close();
    });
    // Hermetic and enforceable: it runs, everything enforced.
    await withConfined(narrow(() => ({ hermetic: true })), async (k, dir) => {
      const c = await client(k.path, "s");
      assertEquals(c.attached!.caps_enforced, true);
      assertEquals((await run(c, `cat ${dir}/ok/f`)).value.ok, true);
      c.close();
    });
  },
});

Deno.test("a malformed spec is refused at attach with a clear error", async () => {
  await withConfined(narrow(() => ({ net_connect: ["no-port"] })), async (k) => {
    const e = await rpcError(client(k.path, "s"));
    assertEquals(e.code, RPC.SANDBOX_UNENFORCEABLE);
    assertMatch(e.message, /needs host:port/);
  });
});

Deno.test({
  name: "a session runs under its creator's confinement: another principal's attach is refused",
  ignore: !canConfine,
  fn: async () => {
    const dir = await Deno.realPath(await tempDir());
    let calls = 0;
    // Two principals as the seam sees them: the first attach narrow, the second unconfined.
    const k = await startKernel({
      socket: join(dir, "k.sock"),
      ephemeral: true,
      cwd: dir,
      onError: () => {},
      confinement: () => (calls++ === 0 ? narrow()(dir) : null),
    });
    try {
      const a = await client(k.path, "shared");
      const e = await rpcError(client(k.path, "shared"));
      assertEquals(e.code, RPC.LEASH_DENIED);
      assertMatch(e.message, /runs under another confinement/);
      a.close();
    } finally {
      await k.close();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});

Deno.test({
  name: "confined: a PTY opens inside the sandbox and its program is confined too",
  ignore: !canConfine,
  fn: () =>
    withConfined(narrow(), async (k, dir) => {
      const c = await client(k.path, "s");
      const p = await c.call<{ pty_id: string }>("pty.open", { cmd: "sh", args: [] });
      await c.call("pty.send", { pty_id: p.pty_id, input: `cat ${dir}/no/secret; echo\r` });
      const r = await c.call<{ screen?: string; text?: string }>("pty.read", {
        pty_id: p.pty_id,
        wait_for: "denied",
        timeout_ms: 15000,
      });
      assertEquals((r as { timed_out?: boolean }).timed_out, false);
      assertMatch(JSON.stringify(r), /Permission denied/);
      await c.call("pty.close", { pty_id: p.pty_id }).catch(() => {});
      c.close();
    }),
});
