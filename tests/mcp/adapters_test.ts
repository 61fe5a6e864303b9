/**
 * `shoal_exec` through the MCP facade shows `git status` as a table: the text twin an agent
 * reads is the rendered table and the structured value is a table with typed columns — in
 * both protocol eras.
 */

import {
  deepStrictEqual as assertEquals,
  match as assertMatch,
  ok as assert,
} from "node:assert/strict";
import { join } from "node:path";
import { connectMcp, ERAS, sc, startKernel, text, within } from "./_helpers.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test("MCP shoal_exec: git status is a table", opts, async () => {
  const k = await startKernel();
  try {
    const repo = join(k.dir, "repo");
    Deno.mkdirSync(repo);
    for (const era of ERAS) {
      const m = await connectMcp(era, ["--socket", k.socket, "--session", `adapters-${era}`]);
      try {
        const exec = (src: string) =>
          within(20_000, m.client.callTool({ name: "shoal_exec", arguments: { src } }), src);
        await exec(`cd ${repo}; ^git init -q -b main`);
        Deno.writeTextFileSync(join(repo, `${era}.txt`), "x\n");
        const r = await exec("git status");
        assertMatch(
          text(r),
          new RegExp(`status\\s+state\\s+path\\s+orig\\n\\?\\s+untracked\\s+${era}\\.txt`),
        );
        const out = sc(r).value.out;
        assertEquals([out.$, out.n], ["table", 1]);
        assertEquals(out.cols.path[0], { $: "path", v: `${era}.txt` });
        // A log row (two full hashes, an email, a date) is shown whole to a reader of text: at
        // 160 columns this one (about 175) had its hash cut.
        const git = "^git -c user.name=T -c user.email=trial-runner@example.invalid";
        await exec(
          `cd ${repo}; ^git add ${era}.txt; ${git} commit -q -m "add ${era}"; ` +
            `${git} commit -q --allow-empty -m "again ${era}, with a subject long enough"`,
        );
        const log = text(await exec("git log -n 1"));
        const [head, row] = log.split("\n");
        assertMatch(head, /^hash\s+short\s+author\s+email\s+date\s+parents\s+subject$/);
        assertMatch(row, /^[0-9a-f]{40}\s+[0-9a-f]{7}\s+T\s+\S+\s+\S+\s+[0-9a-f]{40}\s+again/);
        assert(!row.includes("…"), row);
      } finally {
        await m.close();
      }
    }
  } finally {
    await k.stop();
  }
});
