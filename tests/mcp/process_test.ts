/**
 * `shoal-mcp` as a process: usage and exit codes, autostart from nothing (no kernel running) to a
 * first tool result, racing autostarts, SHOAL_NO_AUTOSTART, stdout carrying protocol frames only,
 * and a prompt exit when stdin closes.
 */

import {
  deepStrictEqual as assertEquals,
  match as assertMatch,
  ok as assert,
} from "node:assert/strict";
import { join } from "node:path";
import {
  CONFIG,
  connectMcp,
  killPid,
  MCP,
  pidsMentioning,
  rpcCode,
  sc,
  startedPids,
  startKernel,
  text,
  within,
} from "./_helpers.ts";
import { kernelAnswers } from "../../lib/client/autostart.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

function mcpCommand(args: string[], env: Record<string, string>) {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-worker-options", "--config", CONFIG, MCP, ...args],
    env: { ...Deno.env.toObject(), ...env },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  });
}

Deno.test(
  "usage: -h exits 0 with usage on stdout; unknown arguments exit 2 on stderr",
  opts,
  async () => {
    // Asked-for help is a success (CLI hygiene, issue 14); no MCP session starts either way.
    const hc = mcpCommand(["-h"], {}).spawn();
    await hc.stdin.close();
    const help = await within(30_000, hc.output(), "help exit");
    assertEquals(help.code, 0);
    assertMatch(new TextDecoder().decode(help.stdout), /usage: shoal-mcp/);
    for (const args of [["--bogus"], ["--socket"]]) {
      const child = mcpCommand(args, {}).spawn();
      await child.stdin.close();
      const out = await within(30_000, child.output(), "usage exit");
      assertEquals(out.code, 2, args.join(" "));
      assertMatch(new TextDecoder().decode(out.stderr), /usage: shoal-mcp/);
      assertEquals(out.stdout.length, 0);
    }
  },
);

Deno.test("SHOAL_NO_AUTOSTART with no kernel: exit 1 with a clear message", opts, async () => {
  const dir = await Deno.makeTempDir({ prefix: "shoal-mcp-noauto-" });
  try {
    const child = mcpCommand(["--socket", join(dir, "none.sock")], { SHOAL_NO_AUTOSTART: "1" })
      .spawn();
    await child.stdin.close();
    const out = await within(30_000, child.output(), "exit");
    assertEquals(out.code, 1);
    const err = new TextDecoder().decode(out.stderr);
    assertMatch(err, /no kernel answers on .*none\.sock and SHOAL_NO_AUTOSTART is set/);
    assertMatch(err, /kernel --socket/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test(
  "autostart from nothing to a first result; racing starts share one kernel",
  opts,
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "shoal-mcp-auto-" });
    const env = { XDG_RUNTIME_DIR: dir, XDG_STATE_HOME: join(dir, "state"), SHOAL_SOCKET: "" };
    const socket = join(dir, "shoal", "default.sock");
    const pids: number[] = [];
    try {
      assert(!(await kernelAnswers(socket)));
      const [a, b] = await Promise.all([
        connectMcp("legacy", [], env, dir),
        connectMcp("modern", [], env, dir),
      ]);
      try {
        const [ra, rb] = await Promise.all([
          within(
            30_000,
            a.client.callTool({ name: "shoal_exec", arguments: { src: "1 + 2" } }),
            "a",
          ),
          within(
            30_000,
            b.client.callTool({ name: "shoal_exec", arguments: { src: "6 * 7" } }),
            "b",
          ),
        ]);
        assertEquals(text(ra), "3");
        assertEquals(sc(rb).value, { $: "int", v: 42 });
        assert(await kernelAnswers(socket), "the kernel listens on the discovered socket");
        pids.push(...startedPids(a.stderr()), ...startedPids(b.stderr()));
        assert(pids.length >= 1, "at least one facade started a kernel");
        // Both talk to the same kernel: a value made through one is visible through the other.
        const ref = sc(ra).ref as string;
        const g = await within(
          10_000,
          b.client.callTool({ name: "shoal_get", arguments: { ref } }),
          "get",
        );
        assertEquals(sc(g).value, { $: "int", v: 3 });
      } finally {
        await a.close();
        await b.close();
      }
    } finally {
      // The facades' stderr lines name what they started; the /proc scan catches a line that
      // had not arrived yet. Both match this test's unique directory only.
      for (const pid of new Set([...pids, ...(await pidsMentioning(dir))])) await killPid(pid);
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
);

Deno.test(
  "stdout carries frames only (-32700 for a malformed line); prompt exit at stdin EOF",
  opts,
  async () => {
    const k = await startKernel();
    try {
      const child = mcpCommand(["--socket", k.socket], {}).spawn();
      const w = child.stdin.getWriter();
      const enc = new TextEncoder();
      await w.write(enc.encode("{not json\n")); // answered with -32700; reading continues
      await w.write(enc.encode(
        JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-06-18",
            capabilities: {},
            clientInfo: { name: "raw", version: "1" },
          },
        }) + "\n",
      ));
      await w.write(enc.encode(
        JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n" +
          JSON.stringify({
            jsonrpc: "2.0",
            id: 2,
            method: "tools/call",
            params: { name: "shoal_exec", arguments: { src: "echo hi; 5" } },
          }) + "\n",
      ));
      const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
      let out = "";
      await within(
        30_000,
        (async () => {
          while (!out.includes('"id":2')) {
            const { value, done } = await reader.read();
            if (done) break;
            out += value;
          }
        })(),
        "tool result",
      );
      const t0 = Date.now();
      await w.close();
      const status = await within(5_000, child.status, "exit after stdin EOF");
      assert(Date.now() - t0 < 3000, `exited ${Date.now() - t0} ms after EOF`);
      assertEquals(status.code, 0);
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        out += value;
      }
      const lines = out.split("\n").filter((l) => l !== "");
      for (const l of lines) assertEquals(JSON.parse(l).jsonrpc, "2.0");
      const parseError = JSON.parse(lines[0]);
      assertEquals(parseError.id, null);
      assertEquals(parseError.error.code, -32700);
      const init = JSON.parse(lines[1]);
      assertEquals(init.result.protocolVersion, "2025-06-18");
      assertEquals(init.result.serverInfo.name, "shoal-mcp");
      const res = lines.map((l) => JSON.parse(l)).find((m) => m.id === 2);
      assertEquals(res.result.structuredContent.value, { $: "int", v: 5 });
      await child.stderr.cancel();
    } finally {
      await k.stop();
    }
  },
);

Deno.test(
  "the kernel goes away: -32603 for the call in flight, the next call restarts it",
  opts,
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "shoal-mcp-restart-" });
    const socket = join(dir, "k.sock");
    const env = { XDG_STATE_HOME: join(dir, "state") };
    try {
      const m = await connectMcp("legacy", ["--socket", socket], env, dir);
      try {
        const call = (src: string) =>
          within(30_000, m.client.callTool({ name: "shoal_exec", arguments: { src } }), src);
        assertEquals(text(await call("1 + 2")), "3");
        const [first] = startedPids(m.stderr());
        assert(first, "an autostarted kernel");
        const inFlight = m.client.callTool({
          name: "shoal_exec",
          arguments: { src: "sleep 10s; 1", timeout_ms: 20_000 },
        });
        const failure = rpcCode(within(20_000, inFlight, "in-flight call"));
        await new Promise((r) => setTimeout(r, 500));
        await killPid(first);
        const e = await failure;
        assertEquals(e.code, -32603);
        assertMatch(e.message, /kernel connection lost/);
        const again = await call("6 * 7");
        assertEquals(sc(again).value, { $: "int", v: 42 });
        assert(startedPids(m.stderr()).length >= 2, "a second kernel was started");
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
  "stdin and stdout that are regular files (not pipes): every request is answered, then exit 0",
  opts,
  async () => {
    // Pipes are served on the event loop (node:net over fds 0 and 1); files cannot be, and must
    // still work.
    const k = await startKernel();
    try {
      const reqs = join(k.dir, "requests.jsonl");
      const answers = join(k.dir, "answers.jsonl");
      const msgs = [
        {
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "f" } },
        },
        { jsonrpc: "2.0", method: "notifications/initialized" },
        {
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: { name: "shoal_exec", arguments: { src: "6 * 7" } },
        },
      ];
      await Deno.writeTextFile(reqs, msgs.map((m) => JSON.stringify(m)).join("\n") + "\n");
      const sh = await new Deno.Command("sh", {
        args: [
          "-c",
          '"$0" run -A --unstable-worker-options --config "$1" "$2" --socket "$3" < "$4" > "$5"',
          Deno.execPath(),
          CONFIG,
          MCP,
          k.socket,
          reqs,
          answers,
        ],
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const out = await within(60_000, sh.output(), "shoal-mcp exit");
      assertEquals(out.code, 0, new TextDecoder().decode(out.stderr));
      const lines = (await Deno.readTextFile(answers)).trim().split("\n").map((l) => JSON.parse(l));
      assertEquals(lines.map((l) => l.id), [1, 2]);
      assertEquals(lines[1].result.structuredContent.value, { $: "int", v: 42 });
    } finally {
      await k.stop();
    }
  },
);

Deno.test(
  "responses larger than the stdout pipe arrive whole and in order, interleaved with small ones",
  opts,
  async () => {
    const k = await startKernel();
    try {
      const m = await connectMcp("legacy", ["--socket", k.socket]);
      try {
        const big = "sh { head -c 200000 /dev/zero | tr '\\0' a }";
        const calls = [big, "1 + 2", big, "6 * 7"].map((src) =>
          within(60_000, m.client.callTool({ name: "shoal_exec", arguments: { src } }), src)
        );
        const [b1, small1, b2, small2] = await Promise.all(calls);
        for (const b of [b1, b2]) {
          const size = JSON.stringify(b).length;
          assert(size > 65536, `a response over one pipe capacity (${size} bytes)`);
          assertMatch(text(b), /^a{1000}/);
        }
        assertEquals(text(small1), "3");
        assertEquals(text(small2), "42");
      } finally {
        await m.close();
      }
    } finally {
      await k.stop();
    }
  },
);
