import { deepStrictEqual as assertEquals, ok as assert, throws } from "node:assert/strict";
import { join } from "node:path";
import { ConfigError, configRecord, loadConfig } from "../../lib/config/mod.ts";
import { renderInline } from "../../lib/value/render.ts";

/** A temp tree: HOME with a user config, a project with a nested working directory. */
function tree(files: Record<string, string>): { dir: string; env: Record<string, string> } {
  const dir = Deno.makeTempDirSync({ prefix: "shoal-config-" });
  for (const [rel, text] of Object.entries(files)) {
    const p = join(dir, rel);
    Deno.mkdirSync(join(p, ".."), { recursive: true });
    Deno.writeTextFileSync(p, text);
  }
  Deno.mkdirSync(join(dir, "proj", "sub", "deeper"), { recursive: true });
  return { dir, env: { HOME: join(dir, "home"), XDG_CONFIG_HOME: join(dir, "home", ".config") } };
}

const sys = (dir: string) => join(dir, "etc", "shoal.toml");

Deno.test("defaults only: every key has its default", () => {
  const { dir, env } = tree({});
  const r = loadConfig({ cwd: join(dir, "proj"), env, systemFile: sys(dir) });
  assertEquals(r.layers, []);
  assertEquals(r.warnings, []);
  assertEquals(r.config.history.max_entries, 10000);
  assertEquals(r.config.render.paging, "never");
  assertEquals(r.config.kernel.session, "default");
  assertEquals(r.config.adapters.dirs, []);
});

Deno.test("layers: system < user < nearest .shoal.toml < env < NO_COLOR; tables merge", () => {
  const { dir, env } = tree({
    "etc/shoal.toml":
      'version = 1\n[history]\nmax_entries = 5\ndedup = false\n[aliases]\na = "echo a"\n',
    "home/.config/shoal/shoal.toml": '[history]\nmax_entries = 50\n[aliases]\nb = "echo b"\n',
    "proj/.shoal.toml": '[render]\nwidth = 120\n[init]\nfiles = ["init.shl", "~/x.shl"]\n',
    "proj/sub/.other": "",
  });
  const r = loadConfig({
    cwd: join(dir, "proj", "sub", "deeper"),
    env: { ...env, SHOAL_HISTORY_DEDUP: "yes", SHOAL_RENDER_COLOR: "on", NO_COLOR: "1" },
    systemFile: sys(dir),
  });
  assertEquals(r.layers, [
    sys(dir),
    join(dir, "home/.config/shoal/shoal.toml"),
    join(dir, "proj/.shoal.toml"),
    "env",
  ]);
  assertEquals(r.config.history.max_entries, 50); // user over system
  assertEquals(r.config.history.dedup, true); // env over system
  assertEquals(r.config.aliases, { a: "echo a", b: "echo b" }); // merged key by key
  assertEquals(r.config.render.width, 120); // the project file, found from a subdirectory
  assertEquals(r.config.render.color, false); // NO_COLOR wins over everything
  // Paths are resolved against the file that names them (and ~ against HOME).
  assertEquals(r.config.init.files, [join(dir, "proj", "init.shl"), join(dir, "home", "x.shl")]);
});

Deno.test("unknown keys warn with a did-you-mean naming the file", () => {
  const { dir, env } = tree({
    "proj/.shoal.toml": "[editor]\nbracketde_paste = false\n[nope]\nx = 1\n",
  });
  const r = loadConfig({ cwd: join(dir, "proj"), env, systemFile: sys(dir) });
  const f = join(dir, "proj/.shoal.toml");
  assertEquals(r.warnings, [
    `${f}: unknown config key \`editor.bracketde_paste\` (did you mean \`editor.bracketed_paste\`?)`,
    `${f}: unknown config key \`nope\``,
  ]);
  assertEquals(r.config.editor.bracketed_paste, true);
});

Deno.test("hard errors: wrong type, bad value, malformed TOML, bad env override", () => {
  const cases: [string, RegExp][] = [
    [
      '[history]\nmax_entries = "ten"\n',
      /history\.max_entries: expected a positive integer, found string/,
    ],
    ["[history]\nmax_entries = 0\n", /history\.max_entries: must be greater than 0/],
    ['[render]\npaging = "sometimes"\n', /render\.paging: must be `never` or `auto`/],
    ["version = 2\n", /unsupported config version 2/],
    ['[aliases]\n"g s" = "git status"\n', /alias name "g s" must not contain whitespace/],
    ["[history\n", /malformed TOML/],
    ['[init]\nfiles = ["a", 3]\n', /init\.files\[1\]: expected a string, found integer/],
  ];
  for (const [text, re] of cases) {
    const { dir, env } = tree({ "proj/.shoal.toml": text });
    throws(() => loadConfig({ cwd: join(dir, "proj"), env, systemFile: sys(dir) }), (e) => {
      assert(e instanceof ConfigError && re.test(e.message), `${text}: ${(e as Error).message}`);
      return true;
    });
  }
  const { dir, env } = tree({});
  throws(
    () => loadConfig({ cwd: dir, env: { ...env, SHOAL_HISTORY: "maybe" }, systemFile: sys(dir) }),
    /SHOAL_HISTORY: expected a boolean/,
  );
  throws(
    () =>
      loadConfig({ cwd: dir, env: { ...env, SHOAL_RENDER_WIDTH: "wide" }, systemFile: sys(dir) }),
    /SHOAL_RENDER_WIDTH: expected an integer/,
  );
});

Deno.test("config.all() sees the resolved values as a record", () => {
  const { dir, env } = tree({});
  const r = loadConfig({
    cwd: dir,
    env: { ...env, SHOAL_KERNEL_SESSION: "pair" },
    systemFile: sys(dir),
  });
  const rec = configRecord(r.config);
  assertEquals(renderInline(rec.fields.get("kernel")!), '{enabled: true, session: "pair"}');
});
