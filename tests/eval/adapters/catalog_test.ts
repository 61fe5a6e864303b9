/**
 * The adapter catalog: the bundled files (49 heads, each file one head named after it, no
 * warnings), schema checks with the loader's warnings (a bad head is skipped, its siblings
 * survive), directories merged per head in order (bundled < `adapters.dirs` <
 * `SHOAL_ADAPTER_PATH`), lazy reading of the bundled directory, and edits seen by the next load.
 */

import {
  deepStrictEqual as assertEquals,
  match as assertMatch,
  ok as assert,
} from "node:assert/strict";
import { join } from "node:path";
import { BUNDLED_DIR, loadCatalog, parseAdapterFile } from "../../../lib/eval/adapters/mod.ts";
import { ListV, RecordV } from "../../../lib/value/types.ts";
import { run, session, withTempDir } from "../commands/_helpers.ts";

Deno.test("the bundled catalog: 49 heads, one file each, no warnings", () => {
  const all = loadCatalog([BUNDLED_DIR]); // read eagerly: every file is validated
  assertEquals(all.warnings, []);
  assertEquals(all.size, 49);
  for (const e of Deno.readDirSync(BUNDLED_DIR)) {
    const r = parseAdapterFile(Deno.readTextFileSync(join(BUNDLED_DIR, e.name)), e.name);
    assertEquals(r.specs.map((s) => s.head), [e.name.replace(/\.toml$/, "")], e.name);
  }
  const git = all.get("git")!;
  assertEquals(git.subs.size, 13);
  assertEquals(git.subs.get("status")!.output.parse, "porcelain-v2");
  assertEquals([...git.subs.get("status")!.consumed], ["short", "branch"]);
  assertEquals(all.get("python")!.bin, "python3");
  assertEquals(all.get("rg")!.top.okCodes, [0, 1]);
  const interpreters = all.heads().filter((h) => all.get(h)!.class === "interpreter");
  assertEquals(interpreters, ["bash", "deno", "jq", "node", "python", "ruby", "yq"]);
  // Every parser is used by some adapter.
  const used = new Set<string>();
  for (const h of all.heads()) {
    const s = all.get(h)!;
    used.add(s.top.output.parse);
    for (const sub of s.subs.values()) used.add(sub.output.parse);
  }
  for (
    const p of [
      "json",
      "ndjson",
      "tsv-headerless",
      "z-records",
      "porcelain-v2",
      "cols",
      "cols2",
      "lines",
      "kv",
      "none",
    ]
  ) assert(used.has(p), p);
});

function write(dir: string, name: string, text: string): void {
  Deno.writeTextFileSync(join(dir, name), text);
}

Deno.test("schema errors skip the head with a warning; siblings survive", async () => {
  await withTempDir((dir) => {
    write(dir, "a.toml", '[cmd.good]\nbin = "true"\n[cmd.bad]\noutput = { parse = "yaml" }\n');
    write(dir, "b.toml", "[cmd.broken\n");
    write(
      dir,
      "c.toml",
      `
[cmd.pos]
params = { a = "int" }
positional = ["b"]
[cmd.cons]
params = { a = "bool" }
consumed = ["z"]
[cmd.pay]
invoke_payload = "stdin"
[cmd.eff]
params = { out = "path?" }
effects = ["fs.write($nope)"]
[cmd.kind]
effects = ["disk.format(/)"]
[cmd.ty]
params = { n = "integer" }
[cmd.hint]
output = { parse = "cols", type = "table<{a: int, b: bogus}>" }
[cmd.nohint]
output = { parse = "tsv-headerless" }
[cmd.short]
params = { all = "bool" }
flags = { short = { ab = "all" } }
[cmd.ok]
params = { n = "int?" }
ok_codes = []
[cmd.typo]
ouput = { parse = "json" }
`,
    );
    const c = loadCatalog([dir]);
    const text = c.warnings.join("\n");
    for (
      const re of [
        /a\.toml: bad: unknown parser `yaml`/,
        /b\.toml: not valid TOML at line 1/,
        /positional names undeclared parameter `b`/,
        /consumed names undeclared parameter `z`/,
        /invoke_payload applies to class = "interpreter" only/,
        /uses undeclared `\$nope`/,
        /unknown effect kind `disk\.format`/,
        /unknown parameter type `integer`/,
        /unknown type `bogus`/,
        /tsv-headerless parser needs an output\.type/,
        /flags\.short key `ab` is not one character/,
        /ok_codes must be a non-empty array/,
        /cmd\.typo: unknown key `ouput` \(ignored\)/,
      ]
    ) assertMatch(text, re);
    assertEquals(c.heads(), ["good", "typo"]);
  });
});

Deno.test("directories merge per head: later ones win, a head defined twice in one warns", async () => {
  await withTempDir((dir) => {
    const user = join(dir, "user");
    const env = join(dir, "env");
    Deno.mkdirSync(user);
    Deno.mkdirSync(env);
    write(user, "git.toml", '[cmd.git]\nbin = "mygit"\n[cmd.mine]\nbin = "true"\n');
    write(user, "z.toml", '[cmd.mine]\nbin = "false"\n');
    write(env, "x.toml", '[cmd.mine]\nbin = "echo"\n');
    const c = loadCatalog([BUNDLED_DIR, user], { lazyFirst: true });
    assertEquals(c.get("git")!.bin, "mygit"); // replaced by the user's
    assertEquals(c.get("ps")!.bin, "ps"); // the bundled ones stay (upstream lost them)
    assertEquals(c.get("mine")!.bin, "false");
    assertMatch(
      c.warnings.join("\n"),
      /z\.toml: `mine` is also defined in .*git\.toml; this one wins/,
    );
    assertEquals(c.size, 50);
    assertEquals(
      loadCatalog([BUNDLED_DIR, user, env], { lazyFirst: true }).get("mine")!.bin,
      "echo",
    );
  });
});

Deno.test("hosts: config adapters.dirs then SHOAL_ADAPTER_PATH, warnings on the diagnostics port", async () => {
  await withTempDir(async (dir) => {
    const a = join(dir, "a");
    const b = join(dir, "b");
    Deno.mkdirSync(a);
    Deno.mkdirSync(b);
    write(
      a,
      "t.toml",
      '[cmd.tool]\nbin = "printf"\ninvoke = ["from-a"]\n[cmd.only_a]\nbin = "true"\n',
    );
    write(
      b,
      "t.toml",
      '[cmd.tool]\nbin = "printf"\ninvoke = ["from-b"]\n[cmd.bad]\nclass = "gui"\n',
    );
    const config = new RecordV(
      new Map([[
        "adapters",
        new RecordV(new Map([["dirs", new ListV([a, join(dir, "missing")])]])),
      ]]),
    );
    const seen: string[] = [];
    const ev = session(dir, {
      adapters: true,
      config,
      env: { ...Deno.env.toObject(), SHOAL_ADAPTER_PATH: `${b}:` },
      ports: { stderr: (t) => seen.push(t) },
    });
    assertEquals((await run(ev, "(tool).out")) as string, "from-b");
    assert(ev.adapters().get("only_a") !== undefined);
    assert(ev.adapters().get("git") !== undefined);
    const text = seen.join("");
    assertMatch(text, /shoal: adapters: adapter directory .*missing: /);
    assertMatch(text, /class `gui` is not cli, tui, daemon or interpreter/);
    // A config whose adapters.dirs is not a list says so.
    const odd = session(dir, {
      adapters: true,
      config: new RecordV(new Map([["adapters", new RecordV(new Map([["dirs", "nope"]]))]])),
      ports: { stderr: (t) => seen.push(t) },
    });
    assert(odd.adapters().get("git") !== undefined);
    assertMatch(seen.join(""), /adapters\.dirs must be a list/);
  });
});

Deno.test("the bundled directory is read lazily; an edited file is seen by the next load", async () => {
  await withTempDir((dir) => {
    write(dir, "one.toml", '[cmd.one]\nbin = "true"\n');
    write(dir, "two.toml", "[cmd.two\n"); // malformed: only noticed when `two` is asked for
    const warned: string[] = [];
    const c = loadCatalog([dir], { lazyFirst: true, warn: (w) => warned.push(w) });
    assertEquals(c.heads(), ["one", "two"]);
    assertEquals(c.get("one")!.bin, "true");
    assertEquals(warned.length, 0);
    assertEquals(c.get("two"), undefined);
    assertMatch(warned.join("\n"), /two\.toml: not valid TOML/);
    write(dir, "one.toml", '[cmd.one]\nbin = "false"\n# longer: a new size\n');
    assertEquals(loadCatalog([dir]).get("one")!.bin, "false");
    // A lazily read file must define the head it is named after.
    write(dir, "three.toml", '[cmd.other]\nbin = "true"\n');
    assertEquals(
      loadCatalog([dir], { lazyFirst: true, warn: (w) => warned.push(w) }).get("three"),
      undefined,
    );
    assertMatch(
      warned.join("\n"),
      /defines `other`; a bundled file defines only the head it is named after/,
    );
  });
});

Deno.test("without adapters a host runs plain externals (the conformance run)", async () => {
  await withTempDir(async (dir) => {
    const ev = session(dir);
    assertEquals(ev.adapters().size, 0);
    assertEquals(await run(ev, "(git --version).ok"), true);
  });
});
