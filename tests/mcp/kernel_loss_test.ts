/**
 * Losing the kernel or its directory (issue 19), with real processes: a kernel whose working
 * directory was deleted still starts new sessions (elsewhere, and says so); a facade whose
 * kernel refuses to attach keeps serving and reports the kernel's error; and a facade whose
 * kernel died reconnects to a kernel on the same state directory and tells the agent, in the
 * next result, that the session restarted and which refs are gone — never reusing out:1.
 */

import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { KernelClient } from "../../lib/client/client.ts";
import { startKernel as startInProcess } from "../../lib/kernel/server.ts";
import { connectMcp, killPid, pidsMentioning, sc, startedPids, text, within } from "./_helpers.ts";
import { spawnKernel } from "../kernel/_helpers.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test(
  "a kernel that outlived its directory starts new sessions elsewhere and says so",
  opts,
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "shoal-t19-gone-" });
    const gone = join(dir, "was-here");
    await Deno.mkdir(gone);
    const sock = join(dir, "run", "k.sock");
    // The kernel's own working directory is `gone` (as an autostarted kernel inherits it).
    const cli = new URL("../../lib/kernel/cli.ts", import.meta.url).pathname;
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--unstable-worker-options", cli, "--socket", sock, "--ephemeral"],
      cwd: gone,
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
    try {
      let err = "";
      while (!err.includes("ready")) {
        const r = await within(30_000, reader.read(), "kernel ready");
        if (r.done) throw new Error(`kernel exited: ${err}`);
        err += r.value;
      }
      await Deno.remove(gone);
      const c = await KernelClient.connect({ socket: sock, attach: { session: "fresh" } });
      const cwd = c.attached!.cwd;
      assert(cwd.note?.includes("no longer exists"), JSON.stringify(cwd));
      assertEquals(cwd.display, Deno.env.get("HOME") ?? "/");
      assertEquals((await c.call<{ value: unknown }>("exec", { src: "6 * 7" })).value, {
        $: "int",
        v: 42,
      });
      c.close();
    } finally {
      child.kill("SIGTERM");
      await child.status;
      await reader.cancel().catch(() => {});
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
);

Deno.test(
  "a kernel that refuses the attach is reported by the facade, which keeps serving",
  opts,
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "shoal-t19-refuse-" });
    // Every attach fails (no session may be created): the kernel answers, with an error.
    const k = await startInProcess({
      socket: join(dir, "run", "k.sock"),
      ephemeral: true,
      journal: false,
      maxSessions: 0,
      onError: () => {},
    });
    try {
      const m = await connectMcp("legacy", ["--socket", k.path], { SHOAL_NO_AUTOSTART: "1" });
      try {
        const r = await within(
          30_000,
          m.client.callTool({ name: "shoal_exec", arguments: { src: "1" } }),
          "tool call",
        );
        assertEquals(r.isError, true);
        assertEquals(sc(r).error.code, -32603);
        assert(/sessions/.test(text(r)), text(r));
        // Still serving: a second call gets the same honest answer.
        const again = await m.client.callTool({ name: "shoal_exec", arguments: { src: "2" } });
        assertEquals(again.isError, true);
      } finally {
        await m.close();
      }
    } finally {
      await k.close();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
);

Deno.test(
  "after a kernel loss the facade says the session restarted and which refs are gone",
  opts,
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "shoal-t19-loss-" });
    const socket = join(dir, "k.sock");
    const state = join(dir, "state");
    try {
      // The first kernel runs on `state`; the facade is configured with the same directory.
      const first = await spawnKernel(socket, ["--state-dir", state]);
      // Elsewhere, a default state directory the facade's kernel must not fall back to.
      const env = { XDG_STATE_HOME: join(dir, "default-state") };
      const m = await connectMcp("legacy", ["--socket", socket, "--state-dir", state], env, dir);
      try {
        const call = (src: string) =>
          within(60_000, m.client.callTool({ name: "shoal_exec", arguments: { src } }), src);
        assertEquals(sc(await call("1")).ref, "out:1");
        assertEquals(sc(await call("2")).ref, "out:2");
        first.child.kill("SIGKILL");
        await first.child.status;
        const after = await call("3");
        const notice = sc(after).session_restarted;
        assert(notice, `no restart notice: ${JSON.stringify(sc(after))}`);
        assertEquals(notice.lost_values, { from: "out:1", to: "out:2" });
        assert(text(after).startsWith("The Shoal session"), text(after));
        assert(text(after).includes("out:1…out:2"), text(after));
        // The new value does not take a ref an agent already holds for another value.
        assert(!["out:1", "out:2"].includes(sc(after).ref), sc(after).ref);
        assertEquals(sc(after).value, { $: "int", v: 3 });
        // Once: the next result carries no notice.
        assertEquals(sc(await call("4")).session_restarted, undefined);
        // The new kernel uses the configured state directory: its journal has both kernels' rows.
        const j = await m.client.callTool({ name: "shoal_journal", arguments: {} });
        const srcs = (sc(j).entries as Array<{ src: string }>).map((e) => e.src);
        for (const s of ["1", "2", "3", "4"]) assert(srcs.includes(s), `${s} in ${srcs}`);
        assert(startedPids(m.stderr()).length >= 1, "a kernel was autostarted");
      } finally {
        await m.close();
      }
    } finally {
      for (const pid of await pidsMentioning(dir)) await killPid(pid);
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
);

Deno.test(
  "a session an MCP facade creates starts in the directory its host launched it in",
  opts,
  async () => {
    const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "shoal-launch-" }));
    for (const d of ["kernel-here", "project"]) await Deno.mkdir(join(dir, d));
    // A kernel already running elsewhere (started for another project).
    const k = await startInProcess({
      socket: join(dir, "run", "k.sock"),
      ephemeral: true,
      cwd: join(dir, "kernel-here"),
      onError: () => {},
    });
    try {
      const m = await connectMcp(
        "legacy",
        ["--socket", k.path, "--session", "proj"],
        {},
        join(
          dir,
          "project",
        ),
      );
      try {
        const r = await m.client.callTool({ name: "shoal_exec", arguments: { src: "pwd" } });
        assertEquals(text(r), join(dir, "project"));
      } finally {
        await m.close();
      }
    } finally {
      await k.close();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
);
