/**
 * What deployed MCP hosts validate: the real `shoal-mcp` driven by `@modelcontextprotocol/sdk`
 * 1.0.x, 1.12.x and 1.32.x clients in every protocol version each supports, and by the v2 client
 * in both eras. Each lists the tools first (as hosts do, which arms the client's output-schema
 * validation), then goes through every error path: each result must be accepted by the client's
 * own validation, and no client gets a content type its protocol version does not have.
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
  rpcCode,
  startKernel,
  type TestKernel,
  within,
} from "./_helpers.ts";
import { connectSdk1, type Sdk1, SDK1_VERSIONS } from "./_sdk1.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

type Result = Record<string, unknown>;
type Caller = {
  listTools(): Promise<{ tools: Array<Record<string, unknown>> }>;
  callTool(p: { name: string; arguments?: Record<string, unknown> }): Promise<Result>;
  readResource(p: { uri: string }): Promise<Result>;
};

/** Protocol versions that have `resource_link` content. */
const HAS_LINKS = (v: string) => v >= "2025-06-18";

const content = (r: Result) => r.content as Array<{ type: string; text?: string }>;
const textOf = (r: Result) =>
  content(r).filter((c) => c.type === "text").map((c) => c.text).join("\n");
// deno-lint-ignore no-explicit-any
const scOf = (r: Result) => r.structuredContent as any;

/** Every error path a tool has, as [tool, arguments, what the text twin must say]. */
const ERROR_PATHS: Array<[string, Record<string, unknown>, RegExp]> = [
  ["shoal_exec", { src: "cat /nonexistent/file" }, /nonexistent/],
  ["shoal_exec", { src: "ls -la | head -3" }, /pipe/],
  ["shoal_exec", { src: "1 / 0" }, /division by zero/],
  ["shoal_exec", { src: "sh { exit 3 }", position: "stmt" }, /status 3/],
  ["shoal_exec", { src: 5 }, /src/],
  ["shoal_exec", { src: "1", bogus: true }, /bogus/],
  ["shoal_exec", {}, /src/],
  ["shoal_get", { ref: "out:99999" }, /unknown value ref/],
  ["shoal_get", { ref: "out:1", path: "[" }, /unterminated/],
  ["shoal_get", { ref: 7 }, /ref/],
  ["shoal_wait", { task: "task:999999" }, /task/],
  ["shoal_wait", { task: "nope" }, /task/],
  ["shoal_cancel", { task: "task:999999" }, /task/],
  ["shoal_journal", { since: "yesterday-ish" }, /since/],
  ["shoal_journal", { limit: 0 }, /limit/],
];

const PRIMER = await Deno.readTextFile(new URL("../../docs/agent_primer.md", import.meta.url));

async function conformance(
  t: Deno.TestContext,
  label: string,
  c: Caller,
  version: string,
  instructions: string | undefined,
) {
  await t.step(`${label}: instructions carry the primer; shoal://docs/primer is it`, async () => {
    assert(instructions?.endsWith(PRIMER), `${label} instructions end with the primer`);
    assert(instructions!.length - PRIMER.length < 600, "a short lead before the primer");
    const r = await within(10_000, c.readResource({ uri: "shoal://docs/primer" }), "read primer");
    const contents = r.contents as Array<{ text: string; mimeType: string }>;
    assertEquals(contents[0].text, PRIMER);
    assertEquals(contents[0].mimeType, "text/markdown");
  });
  const { tools } = await within(20_000, c.listTools(), `${label} listTools`);
  const names = tools.map((x) => x.name as string);
  const call = (name: string, args: Record<string, unknown>) =>
    within(30_000, c.callTool({ name, arguments: args }), `${label} ${name}`);
  const noForeignContent = (r: Result, what: string) => {
    for (const x of content(r)) {
      assert(
        x.type === "text" || (x.type === "resource_link" && HAS_LINKS(version)),
        `${label} ${what}: ${x.type} content on ${version}`,
      );
    }
  };

  await t.step(`${label}: success results carry only content the version has`, async () => {
    await call("shoal_exec", { src: "1 + 2" }); // out:1 exists for the bad-path case below
    const r = await call("shoal_exec", { src: "echo hi" });
    assertEquals(r.isError, false);
    noForeignContent(r, "echo");
    assertEquals(content(r).some((x) => x.type === "resource_link"), HAS_LINKS(version));
    const h = await call("shoal_exec", { src: "sleep 100ms", background: true });
    noForeignContent(h, "handle");
    assertMatch(scOf(h).task, /^task:\d+$/);
    const w = await call("shoal_wait", { task: scOf(h).task });
    assertEquals(w.isError, false);
    noForeignContent(w, "wait");
  });

  await t.step(`${label}: every error path is an isError result the client accepts`, async () => {
    for (const [name, args, says] of ERROR_PATHS) {
      if (!names.includes(name)) continue;
      const r = await call(name, args);
      const what = `${name} ${JSON.stringify(args)}`;
      assertEquals(r.isError, true, `${label} ${what} isError`);
      noForeignContent(r, what);
      assertMatch(textOf(r), says, `${label} ${what} text`);
      assertEquals(typeof scOf(r)?.error?.code, "number", `${label} ${what} error.code`);
    }
  });

  await t.step(`${label}: a cancelled task waits to state cancelled, not an error`, async () => {
    const h = await call("shoal_exec", { src: "sleep 30s", background: true });
    const task = scOf(h).task;
    const c1 = await call("shoal_cancel", { task });
    assertEquals(c1.isError, false);
    const w = await call("shoal_wait", { task });
    assertEquals(w.isError, false, `${label} wait on cancelled: ${textOf(w)}`);
    assertEquals(scOf(w).state, "cancelled");
    assertMatch(textOf(w), /cancelled/);
  });
}

Deno.test("SDK 1.x and v2 clients accept every result in every era they speak", opts, async (t) => {
  const k: TestKernel = await startKernel();
  try {
    for (const line of Object.keys(SDK1_VERSIONS) as Sdk1[]) {
      for (const version of SDK1_VERSIONS[line]) {
        const m = await connectSdk1(line, version, ["--socket", k.socket, "--session", `s${line}`]);
        try {
          assertEquals(m.negotiated, version, `sdk ${line} negotiated`);
          await conformance(t, `sdk ${line} @${version}`, m.client, version, m.instructions);
        } finally {
          await m.close();
        }
      }
    }
    for (const era of ERAS as Era[]) {
      const m = await connectMcp(era, ["--socket", k.socket, "--session", `v2${era}`]);
      try {
        const v = m.client.getNegotiatedProtocolVersion() ?? "";
        const caller = m.client as unknown as Caller;
        await conformance(t, `v2 ${era} @${v}`, caller, v, m.client.getInstructions());
        await t.step(`v2 ${era}: an unknown tool stays a protocol error`, async () => {
          const e = await rpcCode(m.client.callTool({ name: "shoal_nope", arguments: {} }));
          assertEquals(e.code, -32602);
        });
      } finally {
        await m.close();
      }
    }
  } finally {
    await k.stop();
  }
});
