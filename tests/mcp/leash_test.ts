/**
 * Leash through the MCP facade (issue 15), in both protocol eras: the plan tools listed once the
 * kernel serves them, `--token`/`SHOAL_TOKEN`, plan → cap_request → apply, approval in the host
 * through an elicitation-capable SDK client (accept and decline), the three-step flow for a
 * client without elicitation (finished by the person's `shoal plan approve`), and
 * `shoal://plan/{ref}` resources.
 */

import {
  deepStrictEqual as assertEquals,
  match as assertMatch,
  ok as assert,
} from "node:assert/strict";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { KernelClient } from "../../lib/client/mod.ts";
import { TokenStore } from "../../lib/leash/mod.ts";
import {
  CONFIG,
  type Era,
  ERAS,
  MAIN,
  MCP,
  sc,
  startKernel,
  type TestKernel,
  text,
  within,
} from "./_helpers.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
type Obj = Record<string, unknown>;

interface Setup extends TestKernel {
  bearer: Record<string, string>;
}

/** A kernel subprocess with a state dir, a policy and tokens for the agents of this suite. */
async function kernel(): Promise<Setup> {
  const bearer: Record<string, string> = {};
  const k = await startKernel(async (dir) => {
    const state = join(dir, "state");
    await Deno.mkdir(state);
    await Deno.writeTextFile(
      join(state, "policy.toml"),
      `
[principal."agent:narrow"]
fs.read = ["${dir}/**"]
opaque = "ask"
auto_apply = "in-grant"

[principal."agent:selfie"]
opaque = "ask"
auto_apply = "in-grant"
self_approve = true
`,
    );
    const tokens = new TokenStore(join(state, "tokens.json"));
    for (const p of ["narrow", "selfie"]) bearer[p] = (await tokens.create(`agent:${p}`, p)).bearer;
    return ["--state-dir", state];
  });
  return { ...k, bearer };
}

/** shoal-mcp as `token`'s agent; `elicit` makes the SDK client elicitation-capable. */
async function mcp(
  era: Era,
  s: Setup,
  env: Record<string, string>,
  elicit?: (req: Obj) => Obj,
): Promise<{ client: Client; asked: Obj[]; close(): Promise<void> }> {
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: ["run", "-A", "--unstable-worker-options", "--config", CONFIG, MCP, "--socket", s.socket],
    env: { ...Deno.env.toObject(), SHOAL_NO_AUTOSTART: "1", ...env },
    stderr: "pipe",
  });
  const client = new Client(
    { name: "shoal-leash-test", version: "1" },
    {
      ...(era === "modern" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {}),
      ...(elicit ? { capabilities: { elicitation: { form: {} } } } : {}),
    } as never,
  );
  const asked: Obj[] = [];
  if (elicit) {
    client.setRequestHandler("elicitation/create", (req: Obj) => {
      asked.push(req.params as Obj);
      return elicit(req.params as Obj) as never;
    });
  }
  await within(60_000, client.connect(transport), `${era} connect`);
  return { client, asked, close: () => within(10_000, client.close(), "close") };
}

const call = (c: Client, name: string, args: Obj) =>
  within(60_000, c.callTool({ name, arguments: args }) as Promise<Obj>, name);

Deno.test("Leash through shoal-mcp in both eras", opts, async (t) => {
  const s = await kernel();
  const human = await KernelClient.connect({ socket: s.socket, attach: {} });
  try {
    for (const era of ERAS) {
      await t.step(
        `${era}: plan tools listed; --token attaches as the agent; plan → cap_request → apply`,
        async () => {
          const m = await mcp(era, s, { SHOAL_TOKEN: s.bearer.selfie });
          try {
            const names = (await m.client.listTools()).tools.map((x) => x.name);
            for (const n of ["shoal_plan", "shoal_apply", "shoal_cap_request"]) {
              assert(names.includes(n), n);
            }
            const plan = sc(await call(m.client, "shoal_plan", { src: "git --version" }));
            assertEquals([plan.verdict, plan.approval_pending], ["approval_required", true]);
            const g = sc(await call(m.client, "shoal_cap_request", { plan_ref: plan.plan_ref }));
            assertEquals(
              [g.grant, g.approver],
              ["approved", "agent:selfie"],
              "its policy allows self-approval",
            );
            const r = await call(m.client, "shoal_apply", { plan_ref: plan.plan_ref });
            assertMatch(text(r), /git version/);
            // shoal://plan/{ref}: listed, readable.
            const hex = String(plan.plan_ref).slice(5);
            const list = (await m.client.listResources()).resources.map((x) => x.uri);
            assert(list.includes(`shoal://plan/${hex}`));
            const read = await m.client.readResource({ uri: `shoal://plan/${hex}` });
            const body = (read as Obj).structuredContent as Obj;
            assertEquals([body.principal, body.src, body.applied], [
              "agent:selfie",
              "git --version",
              1,
            ]);
          } finally {
            await m.close();
          }
        },
      );

      await t.step(
        `${era}: the person approves in the host (elicitation), through the configured approver`,
        async () => {
          const m = await mcp(
            era,
            s,
            { SHOAL_TOKEN: s.bearer.narrow, SHOAL_APPROVER: "local" },
            () => ({
              action: "accept",
              content: { approve: true },
            }),
          );
          try {
            const r = await call(m.client, "shoal_exec", { src: "git --version" });
            assertEquals(r.isError, false, text(r));
            assertMatch(text(r), new RegExp(`Approved in the host by uid:${Deno.uid()}`));
            assertMatch(text(r), /git version/);
            assertEquals(m.asked.length, 1);
            const q = String(m.asked[0].message);
            assertMatch(q, /agent:narrow asks to run this/);
            assertMatch(q, /git --version/);
            assertMatch(q, /"kind":"opaque"/);
            assertMatch(q, /Reversibility: irreversible/);
          } finally {
            await m.close();
          }
        },
      );

      await t.step(
        `${era}: the person declines in the host; nothing runs, the decline is recorded`,
        async () => {
          const m = await mcp(
            era,
            s,
            { SHOAL_TOKEN: s.bearer.narrow, SHOAL_APPROVER: "local" },
            () => ({
              action: "decline",
            }),
          );
          try {
            const r = await call(m.client, "shoal_exec", { src: "git --version # declined" });
            assertEquals(r.isError, true);
            assertMatch(text(r), /Declined by the person/);
            const ref = String(sc(r).plan_ref);
            const seen = await human.call<Obj>("plan.get", { plan_ref: ref });
            assertEquals((seen.declined as Obj).by, `uid:${Deno.uid()}`);
            assertEquals([seen.applied, seen.approved], [0, false], "never applied");
          } finally {
            await m.close();
          }
        },
      );

      await t.step(
        `${era}: a client without elicitation gets the three steps; the person finishes them`,
        async () => {
          const m = await mcp(era, s, { SHOAL_TOKEN: s.bearer.narrow, SHOAL_APPROVER: "local" });
          try {
            const r = await call(m.client, "shoal_exec", { src: "git --version" });
            assertEquals(r.isError, true);
            const words = text(r);
            assertMatch(words, /^Not run: this needs approval/);
            const ref = /shoal plan approve (plan:[0-9a-f]{16})/.exec(words)![1];
            assertMatch(words, new RegExp(`shoal://plan/${ref.slice(5)}`));
            assertMatch(words, new RegExp(`shoal_apply \\{"plan_ref":"${ref}"\\}`));
            // Step 2, as the person would: the CLI, as the kernel's own user.
            const cli = await new Deno.Command(Deno.execPath(), {
              args: [
                "run",
                "-A",
                "--config",
                CONFIG,
                MAIN,
                "plan",
                "approve",
                ref,
                "--socket",
                s.socket,
              ],
              stdout: "piped",
              stderr: "piped",
            }).output();
            assertEquals(cli.code, 0, new TextDecoder().decode(cli.stderr));
            assertMatch(new TextDecoder().decode(cli.stdout), /^approved\tplan:/);
            // Step 3.
            assertMatch(
              text(await call(m.client, "shoal_apply", { plan_ref: ref })),
              /git version/,
            );
            // The agent cannot approve itself through cap_request: the three steps again.
            const p2 = sc(await call(m.client, "shoal_plan", { src: "git --version" }));
            const own = await call(m.client, "shoal_cap_request", { plan_ref: p2.plan_ref });
            assertEquals(own.isError, true);
            assertMatch(text(own), /may not approve its own plans/);
          } finally {
            await m.close();
          }
        },
      );
    }
  } finally {
    human.close();
    await s.stop();
  }
});
