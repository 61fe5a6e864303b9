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
      assertMatch((await raised(c, `rm ${dir}/ok/f`)).message, /ermission denied/);
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
        assertEquals((await run(c, `sh { ls -A ${state} }`)).value.out?.v, "");
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
