/**
 * Reef in a kernel session (real socket, real session Worker, real files): a manifest edited
 * between two execs is seen without a `cd`, kernel sessions follow the script policy, and
 * `session.reef` reports the live scope and bindings.
 */

import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { RPC } from "../../lib/client/errors.ts";
import { resolveTool } from "../../lib/reef/mod.ts";
import { withTree } from "../reef/_helpers.ts";
import { client, rpcError, withKernel } from "./_helpers.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
type R = Record<string, unknown>;

Deno.test(
  "Reef in a kernel session: edits between execs, script policy, session.reef",
  opts,
  async () => {
    await withTree(async (t) => {
      t.tool("bin/faketool", "18.1.0");
      t.tool("alt/faketool", "22.0.0");
      const env = t.env({ PATH: `${t.path("bin")}:${t.path("alt")}:/usr/bin:/bin` });
      const lockNow = () => resolveTool("faketool", { cwd: t.root, env, policy: "interactive" });
      const manifest = t.write(".reef.toml", '[tools]\nfaketool = "18"\n');
      const tick = new Date();
      Deno.utimeSync(manifest, tick, tick);
      await lockNow();
      await withKernel(async (k) => {
        const c = await client(k.path, "reef");
        await c.call("exec", { src: `cd ${JSON.stringify(t.root)}` });
        const out = async () => ((await c.call<R>("exec", { src: "(faketool).out" })).value as R).v;
        assertEquals(await out(), "faketool 18.1.0 ran");

        // Same directory, same size, same mtime: only the content changes.
        t.write(".reef.toml", '[tools]\nfaketool = "22"\n');
        Deno.utimeSync(manifest, tick, tick);
        const e = await rpcError(c.call("exec", { src: "faketool" }));
        assertEquals(e.code, RPC.RAISED);
        assertEquals((e.data as R).code, "reef_unlocked", "an agent's session never picks a tool");
        await lockNow();
        assertEquals(await out(), "faketool 22.0.0 ran");

        const src = "let w = (which faketool).out\n[w.scope, w.version]";
        assertEquals((await c.call<R>("exec", { src })).render, '["reef", "22.0.0"]');

        const view = await c.call<R>("session.reef", {});
        assertEquals(view.active_scope, t.root);
        const mine = (view.bindings as R[]).filter((b) => b.tool === "faketool");
        assertEquals(mine, [{
          tool: "faketool",
          version: "22.0.0",
          provider: "system",
          scope: t.root,
          constrained: true,
        }]);
        // The view follows the session cwd and the files: a new unlocked constraint shows unbound.
        t.write("sub/.reef.toml", '[tools]\nnewtool = "*"\n');
        await c.call("exec", { src: "cd sub" });
        const sub = await c.call<R>("session.reef", {});
        assertEquals(sub.active_scope, t.path("sub"));
        const nb = (sub.bindings as R[]).find((b) => b.tool === "newtool")!;
        assertEquals([nb.version, nb.provider, nb.constrained], [null, null, true]);
        assert(
          (sub.bindings as R[]).some((b) => b.tool === "faketool"),
          "farther scopes still count",
        );
        c.close();
      }, { env });
    });
  },
);
