/**
 * The kernel as a real process (`lib/kernel/cli.ts`): ready line, socket/dir modes, SIGTERM
 * shutdown (children ended, socket removed), kill -9 then restart over the stale socket, a
 * second kernel refusing a live path, and a frame over 16 MiB refused without the kernel's
 * memory growing by 16 MiB.
 */

import {
  deepStrictEqual as assertEquals,
  match as assertMatch,
  ok as assert,
} from "node:assert/strict";
import { join } from "node:path";
import { KernelClient } from "../../lib/client/client.ts";
import { RPC } from "../../lib/client/errors.ts";
import { RawConn, rssKiB, spawnKernel, tempDir, waitFor } from "./_helpers.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
type R = Record<string, unknown>;

function alive(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return !/^\d+ \(.*\) Z/.test(stat); // a zombie is dead
  } catch {
    return false;
  }
}

Deno.test("kernel process: modes, SIGTERM ends children and removes the socket", opts, async () => {
  const dir = await tempDir();
  const sock = join(dir, "rt", "k.sock");
  const { child, stderr } = await spawnKernel(sock);
  try {
    assertMatch(stderr(), new RegExp(`shoal-kernel: ready ${sock}`));
    assertEquals((await Deno.stat(join(dir, "rt"))).mode! & 0o777, 0o700);
    assertEquals((await Deno.lstat(sock)).mode! & 0o777, 0o600);
    const c = await KernelClient.connect({ socket: sock, attach: { session: "s" } });
    const pidFile = join(dir, "child.pid");
    await c.call("exec", { src: `sh -c 'echo $$ > ${pidFile}; exec sleep 60'`, async: true });
    await waitFor(
      async () => {
        try {
          return (await Deno.readTextFile(pidFile)).trim() !== "";
        } catch {
          return false;
        }
      },
      10000,
      "child started",
    );
    const pid = Number((await Deno.readTextFile(pidFile)).trim());
    assert(alive(pid));
    c.close();
    child.kill("SIGTERM");
    const status = await child.status;
    assertEquals(status.code, 0);
    await waitFor(() => !alive(pid), 5000, "the exec's child to end");
    let exists = true;
    try {
      await Deno.lstat(sock);
    } catch {
      exists = false;
    }
    assertEquals(exists, false, "socket removed on shutdown");
  } finally {
    try {
      child.kill("SIGKILL");
    } catch { /* exited */ }
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});

Deno.test(
  "kill -9 then restart reclaims the stale socket; a second kernel refuses",
  opts,
  async () => {
    const dir = await tempDir();
    const sock = join(dir, "k.sock");
    const first = await spawnKernel(sock);
    let second: Awaited<ReturnType<typeof spawnKernel>> | null = null;
    try {
      // A second kernel on a live path refuses and exits 1.
      const cli = new URL("../../lib/kernel/cli.ts", import.meta.url).pathname;
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", cli, "--socket", sock],
        env: { XDG_STATE_HOME: join(dir, "state") },
        stdout: "null",
        stderr: "piped",
      }).output();
      assertEquals(out.code, 1);
      assertMatch(new TextDecoder().decode(out.stderr), /already listening/);
      first.child.kill("SIGKILL");
      await first.child.status;
      assert((await Deno.lstat(sock)).isSocket, "the stale socket is left behind by kill -9");
      second = await spawnKernel(sock);
      const c = await KernelClient.connect({ socket: sock, attach: {} });
      assertEquals((await c.call<R>("exec", { src: "1 + 2" })).value, { $: "int", v: 3 });
      c.close();
    } finally {
      for (const k of [first, second]) {
        try {
          k?.child.kill("SIGKILL");
          await k?.child.status;
        } catch { /* exited */ }
      }
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
);

Deno.test("a frame over 16 MiB is refused without the kernel growing by 16 MiB", opts, async () => {
  const dir = await tempDir();
  const sock = join(dir, "k.sock");
  const { child } = await spawnKernel(sock);
  try {
    const c = await RawConn.open(sock);
    await c.call(1, "session.attach", {});
    await c.call(2, "exec", { src: "1" });
    // Frames of 20 and 64 MiB, written in 1 MiB chunks: refused, and the kernel's resident
    // memory does not grow with them (the partial line waits in an unlinked temp file).
    const chunk = new TextEncoder().encode("a".repeat(1 << 20));
    for (const [id, mib] of [[3, 20], [4, 64]]) {
      const before = rssKiB(child.pid);
      await c.write(`{"jsonrpc":"2.0","id":${id},"method":"parse","params":{"src":"`);
      for (let i = 0; i < mib; i++) await c.write(chunk);
      await c.write('"}}\n');
      const f = await c.next(60000);
      assertEquals((f.error as R).code, RPC.INVALID_REQUEST);
      assertEquals(((f.error as R).data as R).limit, 16 * 1024 * 1024);
      const grew = rssKiB(child.pid) - before;
      assert(grew < 8 * 1024, `a ${mib} MiB frame grew the kernel's RSS by ${grew} KiB`);
    }
    // A legal 3 MiB frame (read back from the spill) still works.
    const big = "1 + ".repeat(3 * (1 << 18)) + "1";
    await c.write(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 5,
        method: "complete",
        params: { src: big, cursor: 1 },
      }) + "\n",
    );
    const legal = await c.next(60000);
    assertEquals(legal.id, 5);
    assert(Array.isArray((legal.result as R).candidates));
    // The connection and kernel keep serving.
    const ok = await c.call(6, "parse", { src: "1 + 1" });
    assertEquals((ok.result as R).ast_version, 2);
    c.close();
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
