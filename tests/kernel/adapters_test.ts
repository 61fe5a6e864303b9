/**
 * Kernel sessions load the adapter catalog (upstream loaded none): `git status` in a session
 * is a table of `{status, state, path, orig}` on the wire and in the render, and a statement
 * value printed along the way shows the table, not git's machine format.
 */

import {
  deepStrictEqual as assertEquals,
  match as assertMatch,
  ok as assert,
} from "node:assert/strict";
import { join } from "node:path";
import { client, withKernel } from "./_helpers.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
type R = Record<string, unknown>;

Deno.test("a kernel session shows git status as a table", opts, async () => {
  await withKernel(async (k, dir) => {
    const repo = join(dir, "repo");
    Deno.mkdirSync(repo);
    const c = await client(k.path, "adapters");
    try {
      await c.call("exec", { src: `cd ${repo}; ^git init -q -b main` });
      Deno.writeTextFileSync(join(repo, "ünï.txt"), "x\n");
      const r = await c.call<R>("exec", { src: "git status" });
      const v = r.value as R;
      assertEquals([v.$, v.ok, v.cmd], ["outcome", true, "git status --porcelain=v2 -z"]);
      const out = v.out as { $: string; n: number; cols: Record<string, { v?: string }[]> };
      assertEquals([out.$, out.n], ["table", 1]);
      assertEquals(Object.keys(out.cols), ["status", "state", "path", "orig"]);
      assertEquals(out.cols.state[0].v, "untracked");
      assertEquals(out.cols.path[0], { $: "path", v: "ünï.txt" });
      assertMatch(String(r.render), /^status\s+state\s+path\s+orig\n\?\s+untracked\s+ünï\.txt/);
      // `.out` is the table itself; a flag the adapter does not know runs plain git, whose
      // own refusal comes back as a failed outcome (in value position).
      const t = await c.call<R>("exec", { src: "(git status).out.len()" });
      assertEquals(t.value, { $: "int", v: 1 });
      const e = await c.call<R>("exec", { src: "git status --shrot", position: "value" });
      const bad = e.value as R;
      assertEquals([bad.$, bad.ok, bad.cmd], ["outcome", false, "git status --shrot"]);
      // A statement value shown on the way (not the last) renders as the table too.
      const two = await c.call<R>("exec", { src: "git status\n1" });
      assertMatch(
        String(two.render),
        /^status\s+state\s+path\s+orig\n\?\s+untracked\s+ünï\.txt\n1$/,
      );
      assert(!String(two.render).includes("\0"), "the machine format leaked into the render");
    } finally {
      await c.close();
    }
  });
});
