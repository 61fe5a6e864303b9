/**
 * Nothing acknowledged is lost (issue 19): a kernel whose state directory is a 2 MiB tmpfs runs
 * execs with big values and big stdout until the file system is full. Every result either says
 * its journal record could not be made durable, or its row is in the journal once space is
 * freed and the kernel restarted; and the database passes `PRAGMA integrity_check`.
 * Needs root (to mount a tmpfs); skips with a visible message elsewhere.
 */

import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { KernelClient } from "../../lib/client/client.ts";
import { RpcError } from "../../lib/client/errors.ts";
import { spawnKernel } from "../kernel/_helpers.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

async function run(cmd: string, args: string[]): Promise<{ code: number; err: string }> {
  const r = await new Deno.Command(cmd, { args, stdout: "null", stderr: "piped" }).output();
  return { code: r.code, err: new TextDecoder().decode(r.stderr) };
}

type Obj = Record<string, unknown>;

async function availKiB(path: string): Promise<number> {
  const out = await new Deno.Command("df", {
    args: ["--output=avail", "-k", path],
    stdout: "piped",
  })
    .output();
  return Number(new TextDecoder().decode(out.stdout).trim().split("\n").pop());
}

Deno.test("a full state file system loses no acknowledged exec", opts, async () => {
  if (Deno.uid() !== 0) {
    console.warn("SKIPPED (disk full): needs root to mount a 2 MiB tmpfs");
    return;
  }
  const dir = await Deno.makeTempDir({ prefix: "shoal-t19-full-" });
  const state = join(dir, "state");
  await Deno.mkdir(state);
  const m = await run("mount", ["-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", state]);
  if (m.code !== 0) {
    console.warn(`SKIPPED (disk full): mount -t tmpfs failed: ${m.err.trim()}`);
    await Deno.remove(dir, { recursive: true });
    return;
  }
  const sock = join(dir, "run", "k.sock");
  try {
    let k = await spawnKernel(sock, ["--state-dir", state]);
    const c = await KernelClient.connect({ socket: sock, attach: {} });
    const said: string[] = [];
    const acknowledged: string[] = [];
    /** Results that said nothing at all: their rows must be whole (every output kept). */
    const whole: string[] = [];
    await c.call("exec", { src: "1" }); // the session's intake exists
    // Leave the journal little room: a filler file takes all but ~160 KiB.
    const free = await availKiB(state);
    const filler = join(state, "filler");
    await Deno.writeFile(filler, new Uint8Array(Math.max(0, free - 160) * 1024));
    const pad = "x".repeat(30_000); // big rows: the journal must grow
    for (let i = 0; i < 60; i++) {
      // Random bytes, so the content store's compression cannot make them small.
      const src = i % 3 === 0
        ? `(sh { head -c 30000 /dev/urandom | base64 -w0 }).out + "${i}"`
        : i % 3 === 1
        ? `sh { head -c 60000 /dev/urandom | base64 -w0; echo ${i} }`
        : `"${pad}".len() + ${i}`;
      let r: Obj;
      try {
        r = await c.call<Obj>("exec", { src });
      } catch (e) {
        // An error result is an acknowledgement too (its row must exist, or it says why not).
        if (!(e instanceof RpcError)) throw e;
        r = { error: e.toJSON() };
        if (Deno.env.get("T19_DEBUG")) console.log(i, JSON.stringify(r).slice(0, 300));
        const j = (e.data as Obj | undefined)?.journal as Obj | undefined;
        if (j && j.durable === false) {
          said.push(src);
          continue;
        }
        acknowledged.push(src);
        continue;
      }
      const j = r.journal as Obj | undefined;
      if (j && j.durable === false) said.push(src);
      else acknowledged.push(src);
      if (!j) whole.push(src);
      if (Deno.env.get("T19_DEBUG")) console.log(i, JSON.stringify(r).slice(0, 300));
    }
    c.close();
    if (Deno.env.get("T19_DEBUG")) console.log(k.stderr());
    const avail = await availKiB(state);
    assert(avail < 64, `the file system never filled (${avail} KiB free): the test proves nothing`);
    // Free space, restart the kernel on the same state directory.
    k.child.kill("SIGTERM");
    await k.child.status;
    await Deno.remove(filler);
    assertEquals((await run("mount", ["-o", "remount,size=64m", state])).code, 0);
    k = await spawnKernel(sock, ["--state-dir", state]);
    const c2 = await KernelClient.connect({ socket: sock, attach: {} });
    const rows = await c2.call<Array<{ src: string; outputs: Array<{ kind: string }> }>>(
      "journal.query",
      { limit: 1000 },
    );
    c2.close();
    k.child.kill("SIGTERM");
    await k.child.status;
    const have = new Set(rows.map((r) => r.src));
    const lost = acknowledged.filter((s) => !have.has(s));
    assertEquals(lost, [], `${lost.length} acknowledged execs have no journal row`);
    const bySrc = new Map(rows.map((r) => [r.src, r]));
    for (const src of whole) {
      const kinds = bySrc.get(src)!.outputs.map((o) => o.kind);
      assert(kinds.includes("render"), `${src.slice(0, 40)}: outputs ${kinds} (said nothing)`);
    }
    const check = await new Deno.Command("python3", {
      args: [
        "-c",
        "import sqlite3,sys;print(sqlite3.connect(sys.argv[1]).execute('PRAGMA integrity_check').fetchone()[0])",
        join(state, "journal.db"),
      ],
      stdout: "piped",
    }).output();
    assertEquals(new TextDecoder().decode(check.stdout).trim(), "ok");
    console.log(
      `disk full: ${acknowledged.length} acknowledged (all journaled, ${whole.length} whole), ` +
        `${said.length} said not durable`,
    );
  } finally {
    await run("umount", ["-l", state]);
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
