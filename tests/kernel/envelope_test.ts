/**
 * Every request answered under its id (issue 19), over a real socket: ids verbatim (big
 * integers, `1.0`), envelope faults with their id, batches refused element by element, invalid
 * UTF-8 refused (never run with replacement characters), out-of-range numeric params -32602,
 * a half-closed connection and a final line without a newline still answered.
 */

import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { startKernel } from "../../lib/kernel/server.ts";
import { RawConn, tempDir } from "./_helpers.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

/** An in-process kernel with an in-memory journal, and a raw connection to it. */
async function withRaw(fn: (raw: RawConn, socket: string) => Promise<void>): Promise<void> {
  const dir = await tempDir();
  const k = await startKernel({
    socket: join(dir, "run", "k.sock"),
    ephemeral: true,
    cwd: dir,
    onError: () => {},
  });
  const raw = await RawConn.open(k.path);
  try {
    await fn(raw, k.path);
  } finally {
    raw.close();
    await k.close();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** Read one raw response line (text, so the id's digits can be checked as sent). */
async function rawLine(c: Deno.UnixConn, ms = 5000): Promise<string> {
  const buf = new Uint8Array(1 << 16);
  let text = "";
  const end = Date.now() + ms;
  while (!text.includes("\n")) {
    if (Date.now() > end) throw new Error(`no response line (got ${JSON.stringify(text)})`);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const n = await Promise.race([
      c.read(buf),
      new Promise<"t">((r) => (timer = setTimeout(() => r("t"), end - Date.now()))),
    ]);
    clearTimeout(timer);
    if (n === "t") continue;
    if (n === null) throw new Error(`connection closed before a response (${text})`);
    text += new TextDecoder().decode(buf.subarray(0, n));
  }
  return text.slice(0, text.indexOf("\n"));
}

const enc = new TextEncoder();

Deno.test("number ids come back as the digits they were sent with", opts, async () => {
  await withRaw(async (raw) => {
    for (const id of ["18446744073709551617", "1.0", "-0", "1e3", "7"]) {
      await raw.write(`{"jsonrpc":"2.0","id":${id},"method":"parse","params":{"src":"1"}}\n`);
      const line = await rawLine(raw.conn);
      assert(line.startsWith(`{"jsonrpc":"2.0","id":${id},"result":`), line);
    }
    // An id after a params object that has its own `id` member: the top-level one is echoed.
    await raw.write(
      `{"jsonrpc":"2.0","method":"parse","params":{"src":"1","id":5},"id":18446744073709551618}\n`,
    );
    assert((await rawLine(raw.conn)).includes(`"id":18446744073709551618,`));
  });
});

Deno.test("envelope faults are -32600 under the request's id", opts, async () => {
  await withRaw(async (raw) => {
    const cases: Array<[string, unknown, number]> = [
      ['{"jsonrpc":"1.0","id":7,"method":"parse"}', 7, -32600],
      ['{"jsonrpc":"2.0","id":"m","method":5}', "m", -32600],
      ['{"jsonrpc":"2.0","id":8,"method":"parse","params":5}', 8, -32600],
      ['{"jsonrpc":"2.0","id":9,"method":"parse","params":[1]}', 9, -32602],
      ['{"jsonrpc":"2.0","id":10,"result":1}', 10, -32600],
      ["5", null, -32600],
      ['"x"', null, -32600],
      ['{"jsonrpc":"2.0","id":{},"method":"parse"}', null, -32600],
      ["{nope", null, -32700],
    ];
    for (const [frame, id, code] of cases) {
      await raw.write(frame + "\n");
      const r = await raw.next();
      assertEquals([r.id, (r.error as { code: number }).code], [id, code], frame);
    }
    // A notification with a fault gets no answer: the next response is the next request's.
    await raw.write('{"jsonrpc":"1.0","method":"parse"}\n');
    const r = await raw.call(11, "parse", { src: "1" });
    assertEquals(r.id, 11);
  });
});

Deno.test("a batch is answered element by element, each under its id", opts, async () => {
  await withRaw(async (raw) => {
    await raw.write(
      '[{"jsonrpc":"2.0","id":3,"method":"parse","params":{"src":"1"}},' +
        '{"jsonrpc":"2.0","method":"parse"},{"jsonrpc":"2.0","id":"b","method":5},7]\n',
    );
    const r = await raw.next() as unknown as Array<Record<string, unknown>>;
    assert(Array.isArray(r), JSON.stringify(r));
    assertEquals(
      r.map((x) => [x.id, (x.error as { code: number }).code]),
      [[3, -32600], ["b", -32600], [null, -32600]],
    );
    await raw.write("[]\n");
    const empty = await raw.next();
    assertEquals([empty.id, (empty.error as { code: number }).code], [null, -32600]);
  });
});

Deno.test("invalid UTF-8 in a frame is refused under its id, never run", opts, async () => {
  await withRaw(async (raw) => {
    assertEquals((await raw.call(1, "session.attach", {})).id, 1);
    const head = enc.encode('{"jsonrpc":"2.0","id":6,"method":"exec","params":{"src":"\\"');
    const tail = enc.encode('\\""}}\n');
    await raw.write(new Uint8Array([...head, 0xff, 0xfe, ...tail]));
    const r = await raw.next();
    assertEquals([r.id, (r.error as { code: number }).code], [6, -32700]);
    // Nothing ran: the transcript is still empty.
    const v = await raw.call(2, "value.get", { ref: "out:1" });
    assertEquals((v.error as { code: number }).code, -32004);
  });
});

Deno.test("out-of-range numeric params are -32602, not -32603", opts, async () => {
  await withRaw(async (raw) => {
    await raw.call(1, "session.attach", {});
    for (const since of ["1e308", "-1e308"]) {
      await raw.write(
        `{"jsonrpc":"2.0","id":2,"method":"journal.query","params":{"since":${since}}}\n`,
      );
      const r = await raw.next();
      assertEquals((r.error as { code: number }).code, -32602, JSON.stringify(r));
    }
    const ok = await raw.call(3, "journal.query", { since: 0, until: 1.7e18 });
    assert(Array.isArray(ok.result));
  });
});

Deno.test("a half-closed connection still gets its responses", opts, async () => {
  await withRaw(async (_raw, socket) => {
    const c = await Deno.connect({ transport: "unix", path: socket });
    await c.write(enc.encode('{"jsonrpc":"2.0","id":1,"method":"session.attach"}\n'));
    assertEquals(JSON.parse(await rawLine(c)).id, 1);
    await c.write(enc.encode(
      '{"jsonrpc":"2.0","id":2,"method":"exec","params":{"src":"sleep 300ms; 42"}}\n',
    ));
    await c.closeWrite();
    const lines: string[] = [];
    const buf = new Uint8Array(65536);
    let text = "";
    for (let n = await c.read(buf); n !== null; n = await c.read(buf)) {
      text += new TextDecoder().decode(buf.subarray(0, n));
    }
    lines.push(...text.split("\n").filter((l) => l !== ""));
    c.close();
    const byId = new Map(lines.map((l) => JSON.parse(l)).map((m) => [m.id, m]));
    assertEquals(byId.get(2)?.result?.value, { $: "int", v: 42 });
  });
});

Deno.test("a final line without a newline is answered", opts, async () => {
  await withRaw(async (_raw, socket) => {
    const c = await Deno.connect({ transport: "unix", path: socket });
    await c.write(
      enc.encode('{"jsonrpc":"2.0","id":"last","method":"parse","params":{"src":"1"}}'),
    );
    await c.closeWrite();
    const line = await rawLine(c);
    assertEquals(JSON.parse(line).id, "last");
    c.close();
  });
});

Deno.test(
  "queued execs of a client that left are cancelled; background work is kept",
  opts,
  async () => {
    await withRaw(async (raw, socket) => {
      await raw.call(1, "session.attach", { session: "q" });
      // Hold the session's queue with background work.
      const bg = await raw.call(2, "exec", { src: "sleep 800ms; 1", async: true });
      const bgTask = (bg.result as { task: string }).task;
      const leaver = await RawConn.open(socket);
      await leaver.call(1, "session.attach", { session: "q" });
      for (let i = 0; i < 3; i++) {
        await leaver.write(
          JSON.stringify({
            jsonrpc: "2.0",
            id: 10 + i,
            method: "exec",
            params: { src: "sleep 1s" },
          }) +
            "\n",
        );
      }
      const late = await leaver.call(20, "exec", { src: "sleep 1s; 2", async: true });
      const lateTask = (late.result as { task: string }).task;
      leaver.close();
      // A new exec of the session runs after the background work, not behind the leaver's.
      const r = await raw.call(3, "exec", { src: "99" });
      assertEquals((r.result as { value: unknown }).value, { $: "int", v: 99 });
      const list = (await raw.call(4, "task.list", {})).result as Array<
        {
          task: string;
          state: string;
          started_ns: number | null;
          error: { message: string } | null;
        }
      >;
      const byTask = new Map(list.map((t) => [t.task, t]));
      assertEquals(byTask.get(bgTask)?.state, "completed");
      const left = list.filter((t) => t.task !== bgTask && t.task !== lateTask && t.task !== "");
      const cancelled = left.filter((t) => t.state === "cancelled");
      assertEquals(cancelled.length, 3, JSON.stringify(list));
      for (const t of cancelled) {
        assertEquals(t.started_ns, null);
        assert(t.error?.message.includes("disconnected"), t.error?.message);
      }
      // Background work of the client that left is kept.
      const kept = (await raw.call(5, "task.await", { task: lateTask })).result as {
        state: string;
      };
      assertEquals(kept.state, "completed");
    });
  },
);
