/**
 * The facade's envelope layer (issue 19) over a real `shoal-mcp` subprocess and raw stdio:
 * every request answered under its id (verbatim, big integers too), -32600 for invalid but
 * parseable requests, -32602 for by-position params, invalid UTF-8 refused, a 2025-03-26
 * client's batch served as one array, and a last line without a newline answered at EOF.
 */

import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { CONFIG, MCP, startKernel, type TestKernel, within } from "./_helpers.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const enc = new TextEncoder();

/** `shoal-mcp` on raw pipes: write bytes, read response lines as text. */
class RawFacade {
  #buf = "";
  #reader: ReadableStreamDefaultReader<string>;
  private constructor(readonly child: Deno.ChildProcess) {
    this.#reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  }

  static spawn(socket: string): RawFacade {
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--unstable-worker-options", "--config", CONFIG, MCP, "--socket", socket],
      env: { SHOAL_NO_AUTOSTART: "1" },
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    return new RawFacade(child);
  }

  async write(bytes: string | Uint8Array): Promise<void> {
    const w = this.child.stdin.getWriter();
    await w.write(typeof bytes === "string" ? enc.encode(bytes) : bytes);
    w.releaseLock();
  }

  /** The next line as text (null at EOF). */
  async line(ms = 30_000): Promise<string | null> {
    return await within(
      ms,
      (async () => {
        while (!this.#buf.includes("\n")) {
          const { value, done } = await this.#reader.read();
          if (done) return null;
          this.#buf += value;
        }
        const i = this.#buf.indexOf("\n");
        const l = this.#buf.slice(0, i);
        this.#buf = this.#buf.slice(i + 1);
        return l;
      })(),
      "a line from shoal-mcp",
    );
  }

  async json(): Promise<Record<string, unknown>> {
    const l = await this.line();
    if (l === null) throw new Error("shoal-mcp closed stdout");
    return JSON.parse(l);
  }

  async initialize(version = "2025-06-18"): Promise<void> {
    await this.write(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: {
          protocolVersion: version,
          capabilities: {},
          clientInfo: { name: "raw", version: "1" },
        },
      }) + "\n" + '{"jsonrpc":"2.0","method":"notifications/initialized"}\n',
    );
    const r = await this.json();
    assertEquals(r.id, 0, JSON.stringify(r));
  }

  async close(): Promise<void> {
    try {
      await this.child.stdin.close();
    } catch { /* closed */ }
    await within(15_000, this.child.status, "shoal-mcp exit");
    await this.#reader.cancel().catch(() => {});
  }
}

async function withFacade(fn: (f: RawFacade, k: TestKernel) => Promise<void>): Promise<void> {
  const k = await startKernel();
  const f = RawFacade.spawn(k.socket);
  try {
    await fn(f, k);
  } finally {
    await f.close().catch(() => {});
    await k.stop();
  }
}

const code = (r: Record<string, unknown>) => (r.error as { code: number } | undefined)?.code;

Deno.test("facade: every request is answered under its id", opts, async () => {
  await withFacade(async (f) => {
    await f.initialize();
    await f.write('{"jsonrpc":"2.0","id":18446744073709551617,"method":"ping"}\n');
    const big = await f.line();
    assert(big?.includes('"id":18446744073709551617') && big.includes('"result"'), big ?? "");
    const cases: Array<[string, unknown, number]> = [
      ['{"jsonrpc":"1.0","id":7,"method":"ping"}', 7, -32600],
      ['{"jsonrpc":"2.0","id":8,"method":5}', 8, -32600],
      ['{"jsonrpc":"2.0","id":"p","method":"tools/call","params":[1,2]}', "p", -32602],
      ["5", null, -32600],
      ["{oops", null, -32700],
    ];
    for (const [frame, id, c] of cases) {
      await f.write(frame + "\n");
      const r = await f.json();
      assertEquals([r.id, code(r)], [id, c], frame);
      // No zod dump: a short message, and `data` present (null or an object).
      assert(String((r.error as { message: string }).message).length < 200);
      assert("data" in (r.error as object));
    }
    // A null id is answered with null (the SDK cannot carry it; the facade can).
    await f.write('{"jsonrpc":"2.0","id":null,"method":"ping"}\n');
    const nul = await f.json();
    assertEquals([nul.id, nul.result], [null, {}]);
  });
});

Deno.test("facade: invalid UTF-8 is refused under its id, never run", opts, async () => {
  await withFacade(async (f) => {
    await f.initialize();
    const head = enc.encode(
      '{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"shoal_exec",' +
        '"arguments":{"src":"\\"',
    );
    await f.write(new Uint8Array([...head, 0xff, 0xfe, ...enc.encode('\\""}}}\n')]));
    const r = await f.json();
    assertEquals([r.id, code(r)], [12, -32700]);
    // Nothing ran: the first exec of the session is out:1.
    await f.write(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 13,
        method: "tools/call",
        params: { name: "shoal_exec", arguments: { src: "5" } },
      }) + "\n",
    );
    const ran = await f.json();
    assertEquals(
      (ran.result as { structuredContent: { ref: string } }).structuredContent.ref,
      "out:1",
    );
  });
});

Deno.test("facade: a 2025-03-26 client's batch is served as one array", opts, async () => {
  await withFacade(async (f) => {
    await f.initialize("2025-03-26");
    await f.write(
      JSON.stringify([
        { jsonrpc: "2.0", id: 10, method: "ping" },
        {
          jsonrpc: "2.0",
          method: "notifications/progress",
          params: { progressToken: 1, progress: 1 },
        },
        {
          jsonrpc: "2.0",
          id: "t",
          method: "tools/call",
          params: { name: "shoal_exec", arguments: { src: "6 * 7" } },
        },
        { jsonrpc: "1.0", id: 11, method: "ping" },
      ]) + "\n",
    );
    const r = await f.json() as unknown as Array<Record<string, unknown>>;
    assert(Array.isArray(r), JSON.stringify(r));
    const byId = new Map(r.map((x) => [x.id, x]));
    assertEquals(byId.size, 3, JSON.stringify(r));
    assertEquals(byId.get(10)?.result, {});
    assertEquals(
      (byId.get("t")?.result as { structuredContent: { value: unknown } }).structuredContent.value,
      { $: "int", v: 42 },
    );
    assertEquals(code(byId.get(11)!), -32600);
  });
});

Deno.test("facade: a last line without a newline is answered at EOF", opts, async () => {
  await withFacade(async (f) => {
    await f.initialize();
    await f.write(
      JSON.stringify({
        jsonrpc: "2.0",
        id: "last",
        method: "tools/call",
        params: { name: "shoal_exec", arguments: { src: "sleep 300ms; 1" } },
      }),
    );
    await f.child.stdin.close();
    const r = await f.json();
    assertEquals(r.id, "last");
    assertEquals((r.result as { isError: boolean }).isError, false);
    assertEquals(await f.line(), null);
  });
});
