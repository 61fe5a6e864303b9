/**
 * The REPL at a real terminal (tmux): streaming, Ctrl-C, Ctrl-Z + fg, vi, python3, history
 * across restarts, Tab completion, a bare `ls` as a table.
 */

import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { haveTmux, pidsMatching, shoalCommand, sleep, Tmux } from "./_tmux.ts";

// capture-pane drops trailing spaces: the prompt line ends in ">".
const PROMPT = / >$/m;
const ignore = !haveTmux();

/** A REPL in a fresh terminal; `fn` drives it. */
async function withRepl(
  fn: (t: Tmux) => Promise<void>,
  opts: { cwd?: (dir: string) => string } = {},
): Promise<void> {
  const t = await Tmux.create();
  try {
    const cwd = opts.cwd ? opts.cwd(t.dir) : t.dir;
    await Deno.mkdir(cwd, { recursive: true });
    await t.spawn(shoalCommand(), { cwd });
    await t.waitFor(PROMPT, 20_000);
    await fn(t);
  } finally {
    await t.close();
  }
}

/** The lines after the last prompt line that contains `cmd`. */
function after(screen: string, cmd: string): string[] {
  const lines = screen.split("\n");
  const i = lines.findLastIndex((l) => l.includes("> " + cmd));
  return lines.slice(i + 1);
}

Deno.test({
  name: "repl: external output streams to the terminal while the command still runs",
  ignore,
  fn: () =>
    withRepl(async (t) => {
      await t.type("sh { echo first-line; sleep 3; echo second-line }");
      await t.send("Enter");
      const s = await t.waitFor(/^first-line$/m, 10_000);
      assert(!/^second-line$/m.test(s), "the second line must not be there yet:\n" + s);
      await t.waitFor(/^second-line$/m, 10_000);
      await t.waitFor(PROMPT);
    }),
});

Deno.test({
  name: "repl: Ctrl-C during a sleep ends the child, not the REPL; the next command runs",
  ignore,
  fn: () =>
    withRepl(async (t) => {
      const marker = "31.4159";
      await t.type(`sh { sleep ${marker} }`);
      await t.send("Enter");
      const end = Date.now() + 10_000;
      while (pidsMatching(`sleep ${marker}`, true).length === 0 && Date.now() < end) {
        await sleep(50);
      }
      assert(pidsMatching(`sleep ${marker}`, true).length > 0, "sleep should be running");
      await t.send("C-c");
      const gone = Date.now() + 5_000;
      while (pidsMatching(`sleep ${marker}`, true).length > 0 && Date.now() < gone) await sleep(50);
      assertEquals(pidsMatching(`sleep ${marker}`, true), [], "the child must be gone");
      await t.waitFor(PROMPT);
      await t.type("echo still-alive");
      await t.send("Enter");
      await t.waitFor(/^still-alive$/m);
    }),
});

Deno.test({
  name: "repl: Ctrl-Z stops the foreground job, jobs lists it, fg resumes it",
  ignore,
  fn: () =>
    withRepl(async (t) => {
      await t.type("sh { sleep 1.5; echo woke-up }");
      await t.send("Enter");
      await sleep(400);
      await t.send("C-z");
      await t.waitFor(/\[1\]\+\s+Stopped/);
      await t.waitFor(/\[1 job\] >$/m);
      // Stopped: it does not finish on its own.
      await sleep(2_000);
      assert(!/^woke-up$/m.test(await t.screen(100)), "a stopped job must not run");
      await t.type("jobs");
      await t.send("Enter");
      await t.waitFor(/\[1\]\s+stopped\s+sh -c/);
      await t.type("fg");
      await t.send("Enter");
      await t.waitFor(/^woke-up$/m, 10_000);
      await t.waitFor(PROMPT);
    }),
});

Deno.test({
  name: "repl: vi edits and saves a file",
  ignore,
  fn: () =>
    withRepl(async (t) => {
      const file = join(t.dir, "note.txt");
      await t.type("vi note.txt");
      await t.send("Enter");
      await t.waitFor(/note\.txt/);
      await sleep(300);
      await t.send("i");
      await t.type("written by vi");
      await t.send("Escape");
      await t.type(":wq");
      await t.send("Enter");
      await t.waitFor(PROMPT);
      assertEquals((await Deno.readTextFile(file)).trim(), "written by vi");
    }),
});

Deno.test({
  name: "repl: a python3 REPL round trip",
  ignore,
  fn: () =>
    withRepl(async (t) => {
      await t.type("python3 -q");
      await t.send("Enter");
      await t.waitFor(/^>>>$/m);
      await t.type("print(6 * 7)");
      await t.send("Enter");
      await t.waitFor(/^42$/m);
      await t.type("exit()");
      await t.send("Enter");
      await t.waitFor(PROMPT);
      await t.type("echo back-in-shoal");
      await t.send("Enter");
      await t.waitFor(/^back-in-shoal$/m);
    }),
});

Deno.test({
  name: "repl: history persists across restarts (Up recalls, the file has it)",
  ignore,
  fn: async () => {
    const t = await Tmux.create();
    try {
      await t.spawn(shoalCommand(), { cwd: t.dir });
      await t.waitFor(PROMPT, 20_000);
      await t.type("let remembered = 40 + 2");
      await t.send("Enter");
      await t.type(" let secret_not_kept = 1");
      await t.send("Enter");
      await t.waitFor(/secret_not_kept = 1\n.* >$/m);
      await t.send("C-d");
      await sleep(500);
      await t.kill();
      const file = join(t.env.XDG_STATE_HOME, "shoal", "history.txt");
      assertEquals(await Deno.readTextFile(file), "let remembered = 40 + 2\n");
      await t.spawn(shoalCommand(), { cwd: t.dir });
      await t.waitFor(PROMPT, 20_000);
      await t.send("Up");
      await t.waitFor(/> let remembered = 40 \+ 2$/m);
      await t.send("Enter");
      await t.type("remembered");
      await t.send("Enter");
      await t.waitFor(/^42$/m);
    } finally {
      await t.close();
    }
  },
});

Deno.test({
  name: "repl: Tab completes a method after `.` and a path",
  ignore,
  fn: () =>
    withRepl(async (t) => {
      await Deno.writeTextFile(join(t.dir, "zebra_notes.txt"), "stripes\n");
      await t.type("let ys = [3, 1, 2]");
      await t.send("Enter");
      await t.waitFor(PROMPT);
      await t.type("ys.sor");
      await t.send("Tab");
      await t.send("Tab");
      await t.waitFor(/sort\s+sort_by/);
      await t.type("()");
      await t.send("Enter");
      await t.waitFor(/^\[1, 2, 3\]$/m);
      await t.type("cat zeb");
      await t.send("Tab");
      await t.waitFor(/> cat zebra_notes\.txt$/m);
      await t.send("Enter");
      await t.waitFor(/stripes/);
    }),
});

Deno.test({
  name: "repl: a bare `ls` is an aligned table with relative names",
  ignore,
  fn: () =>
    withRepl(async (t) => {
      const work = join(t.dir, "work");
      await Deno.writeTextFile(join(work, "a.txt"), "x".repeat(2000));
      await Deno.mkdir(join(work, "subdir"));
      await t.type("ls");
      await t.send("Enter");
      const s = await t.waitFor(/^subdir .*\n.* >$/m);
      const lines = after(s, "ls").filter((l) => l.trim() !== "" && !l.endsWith(" >"));
      const header = lines[0];
      assert(/^path\s+name\s+type\s+size\s+modified/.test(header), header);
      assert(/^─+$/.test(lines[1]), lines[1]);
      const row = lines.find((l) => l.startsWith("a.txt"))!;
      assert(row !== undefined, lines.join("\n"));
      // Columns line up under their headers (size is right-aligned).
      assertEquals(row.indexOf("file"), header.indexOf("type"));
      assertEquals(row.indexOf("2kb") + 3, header.indexOf("size") + 4);
      assertEquals(lines.length, 4, lines.join("\n"));
    }, { cwd: (d) => join(d, "work") }),
});

/** The parent pid of a live `pid` (from /proc); null once it has exited (zombies included). */
function parentOf(pid: number): number | null {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    const [state, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return state === "Z" ? null : Number(ppid);
  } catch {
    return null;
  }
}

Deno.test({
  name: "repl: SIGHUP (the terminal went away) ends shoal and the program it runs",
  ignore,
  fn: () =>
    withRepl(async (t) => {
      const marker = "32.7183";
      await t.type(`sh { sleep ${marker} }`);
      await t.send("Enter");
      const end = Date.now() + 10_000;
      while (pidsMatching(`sleep ${marker}`, true).length === 0 && Date.now() < end) {
        await sleep(50);
      }
      const [child] = pidsMatching(`sleep ${marker}`, true);
      assert(child !== undefined, "sleep should be running");
      // Up the tree to shoal itself (the deno process running main.ts).
      let shoalPid: number | null = child;
      while (shoalPid !== null && shoalPid > 1) {
        const cmd = Deno.readTextFileSync(`/proc/${shoalPid}/cmdline`);
        if (cmd.includes("main.ts")) break;
        shoalPid = parentOf(shoalPid);
      }
      assert(shoalPid !== null && shoalPid > 1, "shoal's pid");
      Deno.kill(shoalPid, "SIGHUP");
      const gone = Date.now() + 10_000;
      while (
        (pidsMatching(`sleep ${marker}`, true).length > 0 || parentOf(shoalPid) !== null) &&
        Date.now() < gone
      ) await sleep(50);
      assertEquals(pidsMatching(`sleep ${marker}`, true), [], "the child must be gone");
      assertEquals(parentOf(shoalPid), null, "shoal must have exited");
    }),
});
