/**
 * The facade's fast path for plain 2025-era `shoal_exec` calls (`fastExec` in server.ts) answers
 * exactly what the SDK path answers: the same calls through two facades on one kernel, one of them
 * with SHOAL_MCP_SDK_ONLY, compared response by response (refs, task numbers, pids and times
 * masked; key order ignored). Cancelling a fast-path call stops its task and sends nothing.
 */

import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { startKernel, within } from "./_helpers.ts";
import { type RawMcp, rawMcp } from "./_raw.ts";

type Obj = Record<string, unknown>;

/** Keys sorted at every level, volatile numbers masked. */
function normal(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(normal);
  if (v !== null && typeof v === "object") {
    const out: Obj = {};
    for (const k of Object.keys(v as Obj).sort()) {
      out[k] = ["pid", "dur_ns", "behind_ms", "id"].includes(k) ? 0 : normal((v as Obj)[k]);
    }
    return out;
  }
  if (typeof v === "string") {
    return v.replace(/\b(out|task):\d+/g, "$1:N").replace(/^task\.\d+$/, "task.N").replace(
      /plan:[0-9a-f]+/g,
      "plan:H",
    ).replace(
      /shoal:\/\/(out|task)\/\d+/g,
      "shoal://$1/N",
    )
      .replace(/\b\d+(\.\d+)? s\b/g, "T s").replace(/\b\d+ ms\b/g, "T ms");
  }
  return v;
}

async function opened(socket: string, session: string, version: string, env = {}) {
  const c = rawMcp(["--socket", socket, "--session", session], env);
  const init = await c.request("initialize", {
    protocolVersion: version,
    capabilities: {},
    clientInfo: { name: "fast-path-test", version: "1" },
  });
  assertEquals((init.result as Obj).protocolVersion, version);
  await c.notify("notifications/initialized");
  return c;
}

const CALLS: Obj[] = [
  { src: "1 + 2" },
  { src: "let x = 40\nx + 2" },
  { src: "x * 2", position: "stmt" },
  { src: "^true" },
  { src: "/bin/echo hi" },
  { src: "sh { echo out; echo err >&2; exit 3 }" },
  { src: "sh { exit 4 }", position: "stmt" },
  { src: "nosuchcmd_zz 1" },
  { src: "1 +" },
  { src: "[1, 2] - 1" },
  { src: '(0..3000).map(i => {n: i, s: "row"})' },
  { src: "(0..3000).map(i => i)", elide: { max_items: 5 } },
  { src: "sleep 2s; 5", timeout_ms: 100 },
  { src: "1", mode: "plan" },
  { src: 5 },
  { src: "1", bogus: true },
];

for (const version of ["2025-06-18", "2025-03-26"]) {
  Deno.test(`fast path and SDK path answer alike (${version})`, async () => {
    const k = await startKernel();
    let fast: RawMcp | null = null, sdk: RawMcp | null = null;
    try {
      fast = await opened(k.socket, "fast", version);
      sdk = await opened(k.socket, "sdk", version, { SHOAL_MCP_SDK_ONLY: "1" });
      for (const args of CALLS) {
        const params = { name: "shoal_exec", arguments: args };
        const [a, b]: Obj[] = await Promise.all([
          fast.request("tools/call", params),
          sdk.request("tools/call", params),
        ]);
        assertEquals(normal(a), normal(b), JSON.stringify(args));
      }
      // Another tool and an unknown one still go the SDK's way on both.
      for (const params of [{ name: "shoal_get", arguments: { ref: "out:1" } }, { name: "nope" }]) {
        const [a, b]: Obj[] = await Promise.all([
          fast.request("tools/call", params),
          sdk.request("tools/call", params),
        ]);
        assertEquals(normal(a), normal(b), JSON.stringify(params));
      }
    } finally {
      await fast?.close();
      await sdk?.close();
      await k.stop();
    }
  });
}

Deno.test("a cancelled fast-path call stops its task and is never answered", async () => {
  const k = await startKernel();
  const c = await opened(k.socket, "cancel", "2025-06-18");
  try {
    const call = c.start("tools/call", { name: "shoal_exec", arguments: { src: "sleep 30s; 1" } });
    await new Promise((r) => setTimeout(r, 400)); // past the first round: a task now
    await c.notify("notifications/cancelled", { requestId: call.id, reason: "test" });
    const answered = await Promise.race([
      call.answer.then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), 1500)),
    ]);
    assertEquals(answered, false, "a cancelled request gets no response");
    // The session is free again at once: the task was cancelled, not left running.
    const t0 = Date.now();
    const next = await within(
      10_000,
      c.request("tools/call", { name: "shoal_exec", arguments: { src: "7" } }),
      "the next call",
    );
    assertEquals(((next.result as Obj).structuredContent as Obj).value, { $: "int", v: 7 });
    assert(Date.now() - t0 < 5_000, `took ${Date.now() - t0} ms`);
  } finally {
    await c.close();
    await k.stop();
  }
});
