/**
 * The agent primer (`docs/agent_primer.md`) cannot rot: every code example in it — each
 * ```shoal block and every `code` span in the Shoal column of its tables — runs in a real
 * journaled kernel session (as an agent's would), in a fresh directory holding the files the
 * examples name. A block whose last line ends `# → X` must produce a value rendering as `X`; a
 * `# next call` line splits a block into consecutive exec calls (undo sees the previous one).
 * The file also stays within its size budget (it is sent as MCP server instructions).
 */

import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { RpcError } from "../../lib/client/errors.ts";
import { decodeWire } from "../../lib/value/wire.ts";
import { renderInline } from "../../lib/value/render.ts";
import { client, withJournaledKernel } from "../kernel/_helpers.ts";

const PRIMER = new URL("../../docs/agent_primer.md", import.meta.url);

/** One runnable example: its source, where it is in the primer, and the value it promises. */
export interface Example {
  src: string;
  line: number;
  expect: string | null;
}

/** The examples of a primer text (fenced `shoal` blocks, then table Shoal cells). */
export function primerExamples(md: string): Example[] {
  const out: Example[] = [];
  const lines = md.split("\n");
  let block: string[] | null = null;
  let start = 0;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    if (block === null && l.trim() === "```shoal") {
      block = [];
      start = i + 2;
    } else if (block !== null && l.trim() === "```") {
      const last = block[block.length - 1] ?? "";
      const m = /#\s*→\s*(.+)$/.exec(last);
      out.push({ src: block.join("\n"), line: start, expect: m ? m[1].trim() : null });
      block = null;
    } else if (block !== null) {
      block.push(l);
    } else if (l.startsWith("|") && !/^\|\s*-/.test(l)) {
      // A table row: the second column holds Shoal (`\|` is a literal pipe in Markdown).
      const cells = l.replaceAll("\\|", "\u0000").split("|").map((c) =>
        c.replaceAll("\u0000", "|")
      );
      const shoal = cells[2] ?? "";
      if (/^\s*(write|Shoal)\s*$/.test(shoal)) continue; // the header row
      for (const m of shoal.matchAll(/`([^`]+)`/g)) {
        out.push({ src: m[1], line: i + 1, expect: null });
      }
    }
  }
  return out;
}

/** The files the examples read (a tiny project). */
async function fixture(dir: string): Promise<void> {
  await Deno.mkdir(join(dir, "src"), { recursive: true });
  await Deno.writeTextFile(
    join(dir, "deno.json"),
    '{"name": "demo", "tasks": {"dev": "deno run main.ts"}}\n',
  );
  await Deno.writeTextFile(join(dir, "notes.txt"), "alpha\nbeta\ngamma\ndelta\n");
  await Deno.writeTextFile(join(dir, "src", "main.ts"), "console.log(1)\n");
  await Deno.writeTextFile(join(dir, "src", "util.ts"), "export const x = 1\n");
  await Deno.writeTextFile(join(dir, "a.txt"), "a\n");
  await Deno.writeTextFile(join(dir, "big.bin"), "x".repeat(3000));
  // A repository with history, for the git examples.
  const git = (...args: string[]) =>
    new Deno.Command("git", {
      args,
      cwd: dir,
      env: {
        GIT_AUTHOR_NAME: "P",
        GIT_AUTHOR_EMAIL: "p@example.com",
        GIT_COMMITTER_NAME: "P",
        GIT_COMMITTER_EMAIL: "p@example.com",
      },
      stdout: "null",
      stderr: "null",
    }).output();
  await git("init", "-q");
  for (const m of ["first", "second"]) await git("commit", "-q", "--allow-empty", "-m", m);
}

Deno.test("the primer stays within its size budget (it is the MCP server instructions)", async () => {
  const bytes = (await Deno.readFile(PRIMER)).length;
  assert(bytes <= 5 * 1024, `docs/agent_primer.md is ${bytes} bytes; the hard limit is 5 KiB`);
});

Deno.test("the primer's examples are found (the extractor is not vacuous)", async () => {
  const ex = primerExamples(await Deno.readTextFile(PRIMER));
  assert(ex.length >= 25, `only ${ex.length} examples found`);
  assert(ex.some((e) => e.expect !== null), "no example states its value");
  assertEquals(
    primerExamples("| bash | Shoal |\n|---|---|\n| `a \\| b` | `x.y()`, `sh { a \\| b }` |\n"),
    [{ src: "x.y()", line: 3, expect: null }, { src: "sh { a | b }", line: 3, expect: null }],
  );
});

Deno.test({
  name: "every primer example runs in a journaled kernel session",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const examples = primerExamples(await Deno.readTextFile(PRIMER));
    const failures: string[] = [];
    await withJournaledKernel(async (k, dir) => {
      const c = await client(k.path, "primer");
      try {
        for (const [i, e] of examples.entries()) {
          const work = join(dir, `ex${i}`);
          await Deno.mkdir(work);
          await fixture(work);
          await c.call("exec", { src: `cd ${JSON.stringify(work)}` });
          try {
            let r: { value: unknown } = { value: null };
            for (const call of e.src.split(/^# next call$/m)) {
              r = await c.call<{ value: unknown }>("exec", { src: call });
            }
            if (e.expect !== null) {
              const got = renderInline(decodeWire(r.value));
              if (got !== e.expect) {
                failures.push(`line ${e.line}: ${e.src}\n  → ${got}, primer says ${e.expect}`);
              }
            }
          } catch (err) {
            if (!(err instanceof RpcError)) throw err;
            const d = err.data as { code?: string; hint?: string } | undefined;
            failures.push(
              `line ${e.line}: ${e.src}\n  ${d?.code ?? err.code}: ${err.message}${
                d?.hint ? ` (hint: ${d.hint})` : ""
              }`,
            );
          }
        }
      } finally {
        c.close();
      }
    });
    assertEquals(failures, [], `primer examples that fail:\n${failures.join("\n")}`);
  },
});
