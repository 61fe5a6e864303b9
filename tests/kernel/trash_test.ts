/**
 * `rm`'s trash lives under the state directory (issue 13): in a kernel session it is
 * `<state>/trash`, never /tmp; it outlives the kernel and the content-store GC, so `undo`
 * after a restart puts the file back; each row says where it went and how to restore it. The
 * CLI uses its default state directory the same way.
 */

import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { startKernel } from "../../lib/kernel/server.ts";
import { client, tempDir } from "./_helpers.ts";

type R = Record<string, unknown>;
const MAIN = new URL("../../main.ts", import.meta.url).pathname;
const opts = { sanitizeOps: false, sanitizeResources: false };

function start(dir: string) {
  return startKernel({
    socket: join(dir, "run", "k.sock"),
    stateDir: join(dir, "state"),
    cwd: join(dir, "work"),
    onError: () => {},
  });
}

async function shoal(args: string[], env: Record<string, string> = {}, cwd?: string) {
  const o = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-worker-options", MAIN, ...args],
    env,
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: o.code, out: dec.decode(o.stdout), err: dec.decode(o.stderr) };
}

Deno.test({
  name: "a kernel session's trash is <state>/trash; it survives a restart and GC, and undo works",
  ...opts,
  async fn() {
    const dir = await tempDir();
    await Deno.mkdir(join(dir, "work"));
    const file = join(dir, "work", "notes.txt");
    await Deno.writeTextFile(file, "keep me\n");
    try {
      let k = await start(dir);
      let c = await client(k.path, "main");
      const r = await c.call<R>("exec", { src: "(rm notes.txt).out.first()" });
      const row = r.value as { $: string; v: Record<string, { v: string }> };
      const trash = String(row.v.trash.v);
      assert(trash.startsWith(join(dir, "state", "trash") + "/"), trash);
      assert(!trash.startsWith("/tmp/shoal-trash"), trash);
      assertEquals(row.v.restore.v, `mv '${trash}' '${file}'`);
      assertEquals(await Deno.readTextFile(trash), "keep me\n");
      c.close();
      await k.close();

      // The content-store GC leaves the trash alone.
      const gc = await shoal([
        "gc",
        "--state-dir",
        join(dir, "state"),
        "--ttl",
        "1d",
        "--budget",
        "0",
        "--apply",
      ]);
      assertEquals(gc.code, 0, gc.err);
      assertEquals(await Deno.readTextFile(trash), "keep me\n");

      // A new kernel on the same state directory can still undo the rm.
      k = await start(dir);
      c = await client(k.path, "main");
      await c.call("exec", { src: "undo" });
      assertEquals(await Deno.readTextFile(file), "keep me\n");
      // And the restore command a row carries does the same by hand.
      const r2 = await c.call<R>("exec", { src: "(rm notes.txt).out.first().restore" });
      await c.call("exec", { src: String((r2.value as { v: string }).v) });
      assertEquals(await Deno.readTextFile(file), "keep me\n");
      c.close();
      await k.close();
    } finally {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});

Deno.test({
  name: "the CLI's rm uses the default state directory ($XDG_STATE_HOME/shoal/trash)",
  ...opts,
  async fn() {
    const dir = await tempDir();
    try {
      await Deno.writeTextFile(join(dir, "x.txt"), "x");
      const env = { XDG_STATE_HOME: join(dir, "xdg"), PATH: Deno.env.get("PATH") ?? "" };
      const r = await shoal(["-c", "(rm x.txt).out.first().trash"], env, dir);
      assertEquals(r.code, 0, r.err);
      assert(r.out.trim().startsWith(join(dir, "xdg", "shoal", "trash") + "/"), r.out);
      const info = await Deno.stat(join(dir, "xdg", "shoal", "trash"));
      assertEquals(info.mode! & 0o777, 0o700);
    } finally {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});
