/**
 * What a reader of the render sees of statements on the way (not the last): a list, record or
 * table — a builtin's like `rm` or `ls`, or a plain value — as the block the last value would
 * get, not one long inline line.
 */

import { match as assertMatch, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { client, withKernel } from "./_helpers.ts";

Deno.test("statements on the way render lists of records as tables", async () => {
  await withKernel(async (k, dir) => {
    Deno.mkdirSync(join(dir, "s"));
    for (const f of ["a.txt", "b.txt"]) Deno.writeTextFileSync(join(dir, "s", f), "x");
    const c = await client(k.path);
    try {
      const r = await c.call<{ render: string }>("exec", {
        src: 'ls s\n[{name: "x", n: 1}, {name: "y", n: 2}]\n"done"',
      });
      const lines = r.render.split("\n");
      assertMatch(lines[0], /^path\s+type\s+size\s+modified$/);
      assert(lines.some((l) => /^s\/a\.txt\s+file/.test(l)), r.render);
      assert(lines.some((l) => /^name\s+n$/.test(l)), r.render);
      // (the `› SOURCE` labels above expression statements' values quote the source)
      const values = lines.filter((l) => !l.startsWith("› ")).join("\n");
      assert(!values.includes("[{"), `an inline record list leaked: ${r.render}`);
      assert(lines.includes('› [{name: "x", n: 1}, {name: "y", n: 2}]'), r.render);
    } finally {
      c.close();
    }
  });
});
