/**
 * The `shoal` command line as a subprocess: exit statuses (§10), help on every subcommand,
 * `--version`, `--`, doctor, config, and a state directory that is never created by a read.
 */

import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { SUBCOMMANDS, VERSION } from "../../main.ts";
import {
  CONFIG,
  DENO_DIR,
  haveTmux,
  MAIN,
  pidsMatching,
  shoalCommand,
  sleep,
  Tmux,
} from "./_tmux.ts";

async function shoal(
  args: string[],
  opts: { cwd?: string; env?: Record<string, string>; stdin?: string } = {},
): Promise<{ code: number; out: string; err: string }> {
  const home = await Deno.makeTempDir({ prefix: "shoal-cli-home-" });
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-worker-options", "--config", CONFIG, MAIN, ...args],
    cwd: opts.cwd ?? home,
    env: {
      HOME: home,
      XDG_STATE_HOME: join(home, "state"),
      XDG_CONFIG_HOME: join(home, "config"),
      NO_COLOR: "1",
      // Deno's caches stay where they are (a new HOME would mean new downloads).
      DENO_DIR: DENO_DIR,
      ...opts.env,
    },
    stdin: opts.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (opts.stdin !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(opts.stdin));
    await w.close();
  }
  const r = await child.output();
  await Deno.remove(home, { recursive: true }).catch(() => {});
  const dec = new TextDecoder();
  return { code: r.code, out: dec.decode(r.stdout), err: dec.decode(r.stderr) };
}

Deno.test("exit statuses of shoal -c (not a terminal): child status, parse 2, exit N, error 1", async () => {
  assertEquals((await shoal(["-c", "sh { exit 7 }"])).code, 7);
  assertEquals((await shoal(["--command", "1 +"])).code, 2);
  assertEquals((await shoal(["-c", "exit 4"])).code, 4);
  assertEquals((await shoal(["-c", "1 / 0"])).code, 1);
  assertEquals((await shoal(["-c", "6 * 7"])).out, "42\n");
  // A failed command's stdout and stderr are both shown, and its status is the exit status.
  const r = await shoal(["-c", "sh { echo to-out; echo to-err >&2; exit 3 }"]);
  assertEquals(r.code, 3);
  assertEquals(r.out, "to-out\n");
  assert(r.err.includes("to-err\n"), r.err);
  assert(r.err.includes("error[cmd_failed]"), r.err);
  // stderr of a successful command is not dropped either.
  const ok = await shoal(["-c", "sh { echo fine; echo warn >&2 }; 1"]);
  assertEquals([ok.code, ok.out, ok.err], [0, "fine\n1\n", "warn\n"]);
  // Source on stdin.
  assertEquals((await shoal([], { stdin: "sh { exit 9 }" })).code, 9);
});

Deno.test("--help lists every subcommand; each one answers --help; --version; bad usage is 2", async () => {
  const help = await shoal(["--help"]);
  assertEquals(help.code, 0);
  for (const name of [...SUBCOMMANDS.keys()].filter((n) => !n.startsWith("__"))) {
    assert(new RegExp(`^  ${name}\\b`, "m").test(help.out), `${name} missing from --help`);
  }
  for (const name of [...SUBCOMMANDS.keys()].filter((n) => !n.startsWith("__"))) {
    const r = await shoal([name, "--help"]);
    assertEquals(r.code, 0, `${name} --help: ${r.err}`);
    assert(/usage/i.test(r.out), `${name} --help prints a usage: ${r.out}`);
  }
  assertEquals((await shoal(["help", "gc"])).code, 0);
  assertEquals((await shoal(["--version"])).out, `shoal ${VERSION}\n`);
  assertEquals((await shoal(["-V"])).out, `shoal ${VERSION}\n`);
  assertEquals((await shoal(["--frobnicate"])).code, 2);
  const typo = await shoal(["doctr"]);
  assertEquals(typo.code, 2);
  assert(typo.err.includes("did you mean the subcommand `doctor`"), typo.err);
});

Deno.test("`shoal -- FILE ARGS` runs a script with its arguments", async () => {
  const dir = await Deno.makeTempDir();
  await Deno.writeTextFile(join(dir, "-odd.shl"), "args.len()");
  const r = await shoal(["--", join(dir, "-odd.shl"), "a", "b"]);
  assertEquals([r.code, r.out], [0, "2\n"]);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a mistyped --state-dir is an error and creates nothing", async () => {
  const dir = await Deno.makeTempDir();
  const typo = join(dir, "stat-dir-typo");
  for (const args of [["journal"], ["gc"], ["undo", "1"]]) {
    const r = await shoal([...args, "--state-dir", typo]);
    assertEquals(r.code, 1, r.err);
    assert(r.err.includes("no journal in"), r.err);
    assert(!(await Deno.stat(typo).then(() => true, () => false)), `${args[0]} created it`);
  }
  await Deno.remove(dir, { recursive: true });
});

Deno.test("shoal doctor --json reports every check", async () => {
  const r = await shoal(["doctor", "--json"]);
  assert(r.code === 0 || r.code === 1, r.err);
  const names = (JSON.parse(r.out) as { name: string }[]).map((c) => c.name);
  for (const n of ["deno", "ffi", "pty", "landlock", "cgroup", "config", "state dir", "kernel"]) {
    assert(names.includes(n), `${n} missing: ${names}`);
  }
});

Deno.test("config: the nearest .shoal.toml and SHOAL_* feed config.get, aliases and env", async () => {
  const dir = await Deno.makeTempDir();
  await Deno.mkdir(join(dir, "sub"));
  await Deno.writeTextFile(
    join(dir, ".shoal.toml"),
    '[history]\nmax_entries = 7\nmaxentries = 1\n[aliases]\nhi = "echo hello-alias"\n[env]\nGREETING = "from-config"\n',
  );
  const r = await shoal(
    ["-c", 'hi; env.GREETING; config.get("history").max_entries; config.get("render").width'],
    { cwd: join(dir, "sub"), env: { SHOAL_RENDER_WIDTH: "77", SHOAL_RENDER_ECHO: "all" } },
  );
  assertEquals(r.code, 0, r.err);
  assertEquals(r.out, "hello-alias\nfrom-config\n7\n77\n");
  assert(r.err.includes("unknown config key `history.maxentries` (did you mean"), r.err);
  // Scripts echo only command output by default (render.echo = quiet).
  const quiet = await shoal(["-c", 'hi; "not echoed"; [1]; 2'], { cwd: dir });
  assertEquals(quiet.out, "hello-alias\n2\n");
  const bad = await shoal(["-c", "1"], { cwd: dir, env: { SHOAL_HISTORY_MAX_ENTRIES: "0" } });
  assertEquals(bad.code, 2);
  assert(bad.err.includes("error[config_invalid]"), bad.err);
  const shown = await shoal(["config", "history.max_entries"], { cwd: dir });
  assertEquals(shown.out, "7\n");
  await Deno.remove(dir, { recursive: true });
});

Deno.test({
  name: "exit statuses of shoal -c at a terminal (PTY foreground)",
  ignore: !haveTmux(),
  fn: async () => {
    const t = await Tmux.create({ NO_COLOR: "1" });
    try {
      const cmd = shoalCommand(["-c", "sh { echo on-a-tty; exit 5 }"]);
      await t.spawn(`bash --norc --noprofile -c "${cmd.replaceAll('"', '\\"')}; echo rc=\\$?"`);
      const s = await t.waitFor(/^rc=\d+$/m, 20_000);
      assert(/^on-a-tty$/m.test(s), s);
      assert(/^rc=5$/m.test(s), s);
    } finally {
      await t.close();
    }
  },
});

Deno.test("SIGINT to shoal -c cancels its command: status 130, no child left behind", async () => {
  const marker = "33.1415";
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--unstable-worker-options",
      "--config",
      CONFIG,
      MAIN,
      "-c",
      `let x = (sh { sleep ${marker} }); 1`,
    ],
    env: { DENO_DIR, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const end = Date.now() + 15_000;
  while (pidsMatching(`sleep ${marker}`, true).length === 0 && Date.now() < end) await sleep(50);
  assert(pidsMatching(`sleep ${marker}`, true).length > 0, "the command should be running");
  child.kill("SIGINT");
  const r = await child.output();
  assertEquals(r.code, 130);
  assertEquals(pidsMatching(`sleep ${marker}`, true), []);
});
