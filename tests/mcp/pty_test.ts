/**
 * The six PTY tools and `shoal://pty` through `shoal-mcp`, in both protocol eras, against a
 * real kernel: open → wait_for the prompt → send → read → close, the framed text twin, the
 * screen resource, and a subscription notified on screen changes that stops on unsubscribe.
 */

import {
  deepStrictEqual as assertEquals,
  match as assertMatch,
  ok as assert,
} from "node:assert/strict";
import {
  connectMcp,
  type Era,
  ERAS,
  kernelClient,
  type McpHandle,
  sc,
  startKernel,
  type TestKernel,
  text,
  waitFor,
  within,
} from "./_helpers.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

async function call(m: McpHandle, name: string, args: Record<string, unknown>) {
  return await within(30_000, m.client.callTool({ name, arguments: args }), name);
}

async function eraSuite(t: Deno.TestContext, k: TestKernel, era: Era) {
  const session = `pty-${era}`;
  const m = await connectMcp(era, ["--socket", k.socket, "--session", session]);
  const seen: Array<{ uri: string }> = [];
  m.client.setNotificationHandler("notifications/resources/updated", (n) => {
    seen.push(n.params as { uri: string });
  });
  try {
    await t.step("the six PTY tools are listed, read has wait_for", async () => {
      const { tools } = await m.client.listTools() as {
        tools: Array<{ name: string; inputSchema: { properties: Record<string, unknown> } }>;
      };
      const names = tools.map((x) => x.name).filter((n) => n.startsWith("shoal_pty_")).sort();
      assertEquals(names, [
        "shoal_pty_close",
        "shoal_pty_list",
        "shoal_pty_open",
        "shoal_pty_read",
        "shoal_pty_resize",
        "shoal_pty_send",
      ]);
      const read = tools.find((x) => x.name === "shoal_pty_read")!;
      for (const p of ["wait_for", "until_exit", "match", "timeout_ms", "scrollback"]) {
        assert(p in read.inputSchema.properties, p);
      }
    });

    await t.step("a silent job: until_exit waits for its end and says how it ended", async () => {
      const o = await call(m, "shoal_pty_open", { cmd: "sh", args: ["-c", "sleep 0.3; exit 5"] });
      const id = sc(o).pty_id as string;
      const r = await call(m, "shoal_pty_read", { pty_id: id, until_exit: true });
      assertEquals(sc(r).alive, false);
      assertEquals(sc(r).exit, { status: 5, signal: null });
      assertMatch(text(r), /ended after \d+ ms of waiting/);
      await call(m, "shoal_pty_close", { pty_id: id });
      // Still running when the wait ends: timed out, and the text says how to wait on.
      const long = await call(m, "shoal_pty_open", { cmd: "sleep", args: ["30"] });
      const lid = sc(long).pty_id as string;
      const w = await call(m, "shoal_pty_read", { pty_id: lid, until_exit: true, timeout_ms: 300 });
      assertEquals([sc(w).alive, sc(w).timed_out], [true, true]);
      assertMatch(text(w), /still running after \d+ ms/);
      await call(m, "shoal_pty_close", { pty_id: lid });
    });

    await t.step("open → wait_for the prompt → send → read → close", async () => {
      const o = await call(m, "shoal_pty_open", { cmd: "python3", args: ["-q"] });
      assertEquals(o.isError, false, text(o));
      const id = sc(o).pty_id as string;
      assertMatch(id, /^pty:\d+$/);
      assertMatch(text(o), /shoal_pty_read/);
      const r1 = await call(m, "shoal_pty_read", {
        pty_id: id,
        wait_for: ">>> ",
        timeout_ms: 15000,
      });
      assertEquals(sc(r1).matched, { source: "output", text: ">>> " });
      assertEquals(sc(r1).screen[0], ">>>");
      // The text twin is the framed screen: header, numbered rows, a caret under the cursor.
      const frame = text(r1);
      assertMatch(frame.split("\n")[0], new RegExp(`^${id} · python3 -q · 80x24 · running`));
      assertMatch(frame, /cursor at row 0, col 4/);
      assertMatch(frame, /\n 0│>>>\n {2}│ {4}\^\n/);
      assertMatch(frame, /rows 1–23 blank/);
      const link = (r1.content as Array<Record<string, unknown>>)[1];
      assertEquals(link.uri, `shoal://pty/${id.slice(4)}`);
      const s = await call(m, "shoal_pty_send", {
        pty_id: id,
        input: ["print('from', 'mcp')", { key: "Enter" }],
      });
      assertEquals(sc(s).sent, 21);
      const r2 = await call(m, "shoal_pty_read", {
        pty_id: id,
        wait_for: "^from mcp$",
        flags: "m",
        match: "screen",
      });
      assertEquals(sc(r2).screen.slice(0, 2), [">>> print('from', 'mcp')", "from mcp"]);
      // The screen as a resource, and the list.
      const res = await within(
        10_000,
        m.client.readResource({ uri: `shoal://pty/${id.slice(4)}` }),
        "read",
      );
      assertEquals(res.contents[0].mimeType, "text/plain");
      assertMatch((res.contents[0] as { text: string }).text, / 1│from mcp/);
      assertEquals((res.structuredContent as { pty_id: string }).pty_id, id);
      const list = await within(10_000, m.client.readResource({ uri: "shoal://pty" }), "list");
      const ptys = (list.structuredContent as { ptys: Array<{ pty_id: string }> }).ptys;
      assertEquals(ptys.map((p) => p.pty_id), [id]);
      const all = await within(10_000, m.client.listResources(), "listResources");
      assert(all.resources.some((r) => r.uri === `shoal://pty/${id.slice(4)}` && r.name === id));
      const c = await call(m, "shoal_pty_close", { pty_id: id });
      assertEquals(sc(c).closed, true);
      assertEquals(sc(c).exit.signal, "SIGKILL");
      const again = await call(m, "shoal_pty_close", { pty_id: id });
      assertEquals(sc(again), sc(c), "close is idempotent");
      const gone = await call(m, "shoal_pty_read", { pty_id: id });
      assertEquals(gone.isError, true);
      assertEquals(sc(gone).error.code, -32022);
      assertEquals(sc(await call(m, "shoal_pty_list", {})).ptys, []);
    });

    await t.step("bad arguments are refused before the kernel (isError, SEP-1303)", async () => {
      const bad = [
        ["shoal_pty_open", { cmd: "" }],
        ["shoal_pty_open", { cmd: "sh", cols: 5000 }],
        ["shoal_pty_read", { pty_id: "pty:1", match: "both" }],
        ["shoal_pty_send", { pty_id: "pty:1" }],
        ["shoal_pty_resize", { pty_id: "pty:1", cols: 10 }],
      ] as const;
      for (const [name, args] of bad) {
        const r = await call(m, name, args);
        assertEquals(r.isError, true, `${name} ${JSON.stringify(args)}`);
        assertEquals(sc(r).error.code, -32602, `${name} ${JSON.stringify(args)}`);
      }
      const nf = await call(m, "shoal_pty_open", { cmd: "no-such-program-xyz" });
      assertEquals(nf.isError, true);
      assertEquals(sc(nf).error.code, -32023);
    });

    await t.step(
      "a subscription is notified on screen changes and stops on unsubscribe",
      async () => {
        const kc = await kernelClient(k.socket, session);
        try {
          const stats = () => kc.call<{ subscriptions: number }>("kernel.stats");
          const before = (await stats()).subscriptions;
          const o = await call(m, "shoal_pty_open", {
            cmd: "sh",
            args: ["-c", 'while read l; do echo "got $l"; done'],
          });
          assertEquals(o.isError, false, text(o));
          const id = sc(o).pty_id as string;
          const uri = `shoal://pty/${id.slice(4)}`;
          const count = () => seen.filter((x) => x.uri === uri).length;
          let close: () => Promise<void>;
          if (era === "modern") {
            const sub = await m.client.listen({ resourceSubscriptions: [uri] });
            close = () => sub.close();
          } else {
            await m.client.subscribeResource({ uri });
            close = async () => {
              await m.client.unsubscribeResource({ uri });
            };
          }
          await waitFor(
            async () => (await stats()).subscriptions === before + 1,
            5000,
            "subscribed",
          );
          await call(m, "shoal_pty_send", { pty_id: id, input: "one\r" });
          await waitFor(() => count() >= 1, 5000, "a screen-change notification");
          // The notification says "updated"; the resource has the screen.
          const now = await within(10_000, m.client.readResource({ uri }), "read");
          assertMatch((now.contents[0] as { text: string }).text, /│got one/);
          await close();
          await waitFor(async () => (await stats()).subscriptions === before, 5000, "unsubscribed");
          const got = count();
          await call(m, "shoal_pty_send", { pty_id: id, input: "two\r" });
          await call(m, "shoal_pty_read", { pty_id: id, wait_for: "got two" });
          await new Promise((r) => setTimeout(r, 300));
          assertEquals(count(), got, "nothing after unsubscribe");
          await call(m, "shoal_pty_close", { pty_id: id });
        } finally {
          kc.close();
        }
      },
    );
  } finally {
    await m.close();
  }
}

Deno.test("PTY tools and resources through shoal-mcp, both protocol eras", opts, async (t) => {
  const k = await startKernel();
  try {
    for (const era of ERAS) await t.step(`${era} era`, (t2) => eraSuite(t2, k, era));
  } finally {
    await k.stop();
  }
});
