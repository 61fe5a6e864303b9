/**
 * The text twin of tool results, read as an agent that sees only text would read it: a failed
 * command's status and stderr, UTF-8 bytes as text, a big output's size and a call that really
 * pages it (followed to the end of a page and checked against the real output), tables with
 * paths relative to the session cwd, where `rm` put a file, `.err` of a failed outcome, and
 * parse errors with their resendable rewrites.
 */

import {
  deepStrictEqual as assertEquals,
  match as assertMatch,
  ok as assert,
} from "node:assert/strict";
import { connectMcp, type McpHandle, sc, startKernel, text, within } from "./_helpers.ts";
import { errorText } from "../../lib/mcp/twin.ts";
import { whenNs } from "../../lib/mcp/tools/journal.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

async function call(m: McpHandle, name: string, args: Record<string, unknown>) {
  return await within(30_000, m.client.callTool({ name, arguments: args }), name);
}
const exec = (m: McpHandle, src: string) => call(m, "shoal_exec", { src });

/** The `shoal_get` arguments of a text twin's "Read on:" line. */
function readOn(t: string): Record<string, unknown> | null {
  const m = /^Read on: shoal_get (\{.*\})/m.exec(t);
  return m ? JSON.parse(m[1]) : null;
}

Deno.test("text twins an agent can act on in one call", opts, async (t) => {
  const k = await startKernel();
  const dir = await Deno.realPath(k.dir);
  await Deno.mkdir(`${dir}/src`);
  await Deno.writeTextFile(`${dir}/src/app.ts`, "console.log(1);\n");
  await Deno.writeTextFile(`${dir}/notes.txt`, "alpha\nbeta\ngamma\n");
  const m = await connectMcp("legacy", ["--socket", k.socket, "--session", "twin"], {}, dir);
  try {
    await m.client.listTools();
    await exec(m, `cd ${dir}`);

    await t.step("a failed command: its status and the first lines of stderr", async () => {
      const r = await exec(m, `sh { echo partial; echo "no such thing" >&2; exit 3 }`);
      assertEquals(r.isError, false);
      assertEquals(text(r), "partial\nfailed: exit status 3; stderr:\n  no such thing");
      const e = await call(m, "shoal_get", { ref: sc(r).ref, path: ".err" });
      assertEquals(e.isError, false);
      assertEquals(text(e), "no such thing");
      // the link the result shows is taken where its ref goes
      assertMatch(String(sc(r).uri), /^shoal:\/\/out\/\d+$/);
      const byLink = await call(m, "shoal_get", { ref: `${sc(r).uri}?path=.err` });
      assertEquals(text(byLink), "no such thing");
      const stmt = await call(m, "shoal_exec", {
        src: "sh { echo bad >&2; exit 4 }",
        position: "stmt",
      });
      assertEquals(stmt.isError, true);
      assertMatch(text(stmt), /^Error cmd_failed: .*exited with status 4/);
      assertMatch(text(stmt), /stderr:\n {2}bad/);
    });

    await t.step("UTF-8 bytes read as text; other bytes say what they are", async () => {
      const r = await exec(m, "cat notes.txt");
      // shown as lines, and told whether it ends in a newline (no call to ask)
      assertEquals(text(r), "alpha\nbeta\ngamma\n(3 lines, ending in a newline)");
      const bare = await exec(m, '"a\\nb"');
      assertEquals(text(bare), "a\nb\n(2 lines, no newline at the end)");
      const b = await exec(m, `sh { printf '\\377\\376ab' }.stdout`);
      assertMatch(text(b), /^bytes\(4b\) \(not UTF-8: ff fe 61 62\)$/);
    });

    await t.step("a big output: how big, and a shoal_get that really pages it", async () => {
      const r = await exec(m, "^seq 1 100000");
      const tx = text(r);
      assertMatch(tx, /^1\n2\n3\n/);
      assertMatch(tx, /… 99,950 more lines \(588\.89kb in all\)/);
      assert(tx.length < 600, `first page is short (${tx.length} chars)`);
      let args = readOn(tx);
      assertEquals(args, { ref: sc(r).ref, path: "stdout", slice: [141, 4141] });
      // Follow the pages: each continues exactly where the previous one stopped.
      let seen = tx.split("\n").slice(0, 50).join("\n");
      for (let page = 0; page < 3 && args; page++) {
        const g = await call(m, "shoal_get", args);
        assertEquals(g.isError, false);
        const body = text(g).replace(/\nRead on: .*$/, "");
        seen += "\n" + body;
        args = readOn(text(g));
      }
      const want = Array.from({ length: 100000 }, (_, i) => String(i + 1)).join("\n");
      assert(want.startsWith(seen), "pages concatenate to the real output");
      assert(seen.length > 12_000, "three pages were read");
      // The same page as a resource URI (for hosts that expose resources).
      const uri = sc(r).more.uri as string;
      assertEquals(
        uri,
        `shoal://out/${sc(r).ref.slice(4)}?path=stdout&slice=141..4141&format=render`,
      );
      const rr = await m.client.readResource({ uri });
      const page = (rr.contents[0] as { text: string }).text;
      assertMatch(page, /^51\n52\n/);
      assert(!page.includes("0 more lines"));
    });

    await t.step("tables: readable, with paths relative to the session cwd", async () => {
      const r = await exec(m, "ls src");
      const lines = text(r).split("\n");
      assertMatch(lines[0], /^path\s+type\s+size\s+modified$/);
      // no rule under the header; a datetime to the second
      assertMatch(lines[1], /^src\/app\.ts\s+file\s+16b\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      assertEquals(lines.at(-1), "(.name = last part of path, not shown)");
      assert(!text(r).includes(dir), "no absolute paths under cwd");
      // a longer listing has the same shape, with its count
      Deno.mkdirSync(`${dir}/five`);
      for (let i = 0; i < 5; i++) Deno.writeTextFileSync(`${dir}/five/f${i}.tmp`, "x");
      const five = text(await exec(m, "ls five")).split("\n");
      assertMatch(five[0], /^path\s+type\s+size\s+modified$/);
      assertMatch(five[1], /^five\/f0\.tmp\s+file\s+1b\s/);
      assertEquals(five[6], "(5 rows; .name = last part of path, not shown)");
      const names = await exec(m, '(ls five).map(.name).join(",")');
      assert(text(names).includes("f0.tmp,f1.tmp,f2.tmp,f3.tmp,f4.tmp"), text(names));
      Deno.removeSync(`${dir}/five`, { recursive: true });
      // sizes unrounded, so "how many bytes" needs no second call
      await Deno.writeTextFile(`${dir}/src/big.txt`, "x".repeat(48_213));
      const sized = await exec(m, '[ls src, path("src/big.txt").size]');
      assertMatch(text(sized), /big\.txt\s+file\s+48\.213kb\s/);
      assertMatch(text(sized), /^\[1\] 48\.213kb$/m);
      await Deno.remove(`${dir}/src/big.txt`);
      // laid out at 200 columns for a reader of text: two 50-character cells are not cut
      const [a, b] = ["a".repeat(50), "b".repeat(50)];
      const wide = await exec(m, `[{k: "${a}", v: "${b}", n: 1}, {k: "x", v: "y", n: 2}]`);
      assert(text(wide).includes(`${a}  ${b}`), text(wide));
      const big = await exec(m, "(0..300).map(x => {n: x, sq: x * x})");
      assertMatch(
        text(big),
        /… 250 more rows\nRead on: shoal_get \{"ref":"out:\d+","slice":\[50,150\]\}/,
      );
      const g = await call(m, "shoal_get", readOn(text(big))!);
      assertMatch(text(g).split("\n")[1], /^\s*50\s+2500$/);
    });

    await t.step("rm says where the file went and how to bring it back", async () => {
      const r = await exec(m, "rm notes.txt");
      const tx = text(r);
      // one line: what moved (relative to the cwd) and where the trash is
      assertMatch(tx, /^moved to the trash in \/\S+\/trash \(undo puts back\): notes\.txt$/m);
      const trash = /trash in (\S+)/.exec(tx)![1];
      const kept = [...Deno.readDirSync(trash)].map((e) => e.name);
      assert(kept.some((n) => n.endsWith("notes.txt")), `the trash ${trash} holds it: ${kept}`);
      const u = await exec(m, "undo");
      assertEquals(u.isError, false);
      assert((await Deno.stat(`${dir}/notes.txt`)).isFile, "undo put it back");
    });

    await t.step("journal: durations and RFC 3339 as well as ns; one line per entry", async () => {
      for (
        const since of [
          "1h",
          new Date(Date.now() - 3600_000).toISOString(),
          Date.now() * 1e6 - 3.6e12,
        ]
      ) {
        const r = await call(m, "shoal_journal", { since, head: "sh", limit: 3 });
        assertEquals(r.isError, false, `since ${since}`);
        assertMatch(text(r), /^\d+ entr(y|ies), newest first:\n#\d+ \S+Z (ok|failed)/);
        assert(sc(r).entries.length >= 1);
      }
      const future = await call(m, "shoal_journal", { since: "2999-01-01" });
      assertEquals(text(future), "No journal entries match.");
      const bad = await call(m, "shoal_journal", { since: "last tuesday" });
      assertEquals(bad.isError, true);
      assertMatch(text(bad), /duration ago \("2h"/);
    });

    await t.step("a task handle, a cancel and a wait read as sentences", async () => {
      const h = await call(m, "shoal_exec", { src: "sleep 30s", background: true });
      const task = sc(h).task;
      assertEquals(
        text(h),
        `Started in the background as ${task}; until it ends, later execs of this session ` +
          `wait behind it (a job to run beside your other calls: shoal_pty_open). Wait: ` +
          `shoal_wait {"task":"${task}"}. Stop: shoal_cancel {"task":"${task}"}. Result when ` +
          `done: shoal://task/${task.slice(5)}/out.`,
      );
      const c = await call(m, "shoal_cancel", { task });
      assertMatch(
        text(c),
        new RegExp(`^(Cancel requested: ${task} is cancelling|${task} has ended)`),
      );
      const w = await call(m, "shoal_wait", { task });
      assertEquals(text(w), `${task} was cancelled; nothing more will run.`);
    });

    await t.step("tool descriptions say defaults and what comes back, tightly", async () => {
      const { tools } = await m.client.listTools();
      const byName = new Map(tools.map((x) => [x.name, x]));
      assertMatch(byName.get("shoal_wait")!.description!, /default 25 s/);
      assertMatch(byName.get("shoal_exec")!.description!, /default 25 s/);
      assertMatch(byName.get("shoal_journal")!.description!, /"2h"/);
      const core = ["shoal_exec", "shoal_get", "shoal_wait", "shoal_cancel", "shoal_journal"];
      for (const x of tools.filter((x) => core.includes(x.name))) {
        assertMatch(x.description!, /[Tt]ext|Returns|[Ss]tructured|result/, `${x.name} result`);
      }
      const size = JSON.stringify(tools.filter((x) => core.includes(x.name))).length;
      assert(size < 7500, `tools/list of the core tools is ${size} characters`);
    });

    await t.step("errors point into the source and say what to do", async () => {
      const p = await exec(m, "ls -la | head -3");
      assertEquals(p.isError, true);
      assertMatch(text(p), /^Parse error: shoal has no pipe operator \(at line 1, column 8\)\n/);
      assertMatch(text(p), /\n {2}ls -la \| head -3\n {9}\^\n/);
      assertMatch(text(p), /\nhint: .*sh \{/);
      // The kernel's rewrites, once each, as source to send back.
      assertMatch(text(p), /\nResend as:\n {2}native: \S.*\n {2}sh: sh \{ ls -la \| head -3 \}\n/);
      assertEquals(text(p).split("head -3 }").length, 2);
      const again = await exec(m, /native: (.*)/.exec(text(p))![1]);
      assertEquals(again.isError, false, `the native rewrite runs: ${text(again)}`);
      assertMatch(text(p), /Nothing ran\.$/);
      const arg = await call(m, "shoal_exec", { src: 1 });
      assertEquals(arg.isError, true);
      assertMatch(
        text(arg),
        /^invalid arguments for shoal_exec: src: .*\nNothing ran; fix the arguments/,
      );
    });
  } finally {
    await m.close();
    await k.stop();
  }
});

Deno.test("parse errors show the kernel's rewrites as source to resend", () => {
  const t = errorText(
    {
      code: -32001,
      message: "shoal has no pipe operator",
      data: {
        span: { start: 6, end: 7 },
        hint: "chain methods instead",
        rewrites: [
          { form: "native", src: "(cat f).str().lines().take(3)" },
          { form: "sh", src: "sh { cat f | head -3 }" },
        ],
      },
    },
    "cat f | head -3",
  );
  assertEquals(
    t,
    [
      "Parse error: shoal has no pipe operator (at line 1, column 7)",
      "  cat f | head -3",
      "        ^",
      "hint: chain methods instead",
      "Resend as:",
      "  native: (cat f).str().lines().take(3)",
      "  sh: sh { cat f | head -3 }",
      "Nothing ran.",
    ].join("\n"),
  );
});

Deno.test("journal times: durations ago, RFC 3339, ns", () => {
  const now = Date.UTC(2026, 0, 2, 12, 0, 0);
  assertEquals(whenNs("2h", now), (now - 7200_000) * 1e6);
  assertEquals(whenNs("1h30m", now), (now - 5400_000) * 1e6);
  assertEquals(whenNs("1d", now), (now - 86400_000) * 1e6);
  assertEquals(whenNs("2026-01-01T00:00:00Z", now), Date.UTC(2026, 0, 1) * 1e6);
  assertEquals(whenNs("2026-01-01", now), Date.UTC(2026, 0, 1) * 1e6);
  assertEquals(whenNs("2026-01-01T01:00:00+01:00", now), Date.UTC(2026, 0, 1) * 1e6);
  assertEquals(whenNs(1767225600000000000, now), 1767225600000000000);
  assertEquals(whenNs("1767225600000000000", now), 1767225600000000000);
  for (const bad of ["", "2 hours", "yesterday", "2026-13-45", "h2"]) {
    assertEquals(whenNs(bad, now), null, bad);
  }
});
