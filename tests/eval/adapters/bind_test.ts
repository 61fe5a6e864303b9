/**
 * Argument binding, ok codes, raw fallback and declared effects through a real evaluator and
 * real processes: a test adapter whose binary is `printf '%s\n'` shows the exact argv an
 * adapted call spawns; another proves a refused call never spawns.
 */

import {
  deepStrictEqual as assertEquals,
  match as assertMatch,
  ok as assert,
} from "node:assert/strict";
import { join } from "node:path";
import { declaredEffects, loadCatalog } from "../../../lib/eval/adapters/mod.ts";
import { spawnCapture } from "../../../lib/exec/mod.ts";
import type { CmdExpr } from "../../../lib/syntax/ast.ts";
import type { Evaluator } from "../../../lib/eval/mod.ts";
import { ListV, OutcomeV, type Value } from "../../../lib/value/types.ts";
import { error, lints, run, session, withTempDir } from "../commands/_helpers.ts";

const ADAPTERS = `
[cmd.args]
bin = "printf"
invoke = ["%s\\n"]
params = { all = "bool", dry_run = "bool", name = "str?", n = "int?", size = "size?", when = "duration?", tags = "list<str>?", pattern = "glob?", files = "list<path>?", human = "bool", need = "str?" }
positional = ["pattern", "files"]
flags = { short = { a = "all", t = "tags", h = "human" }, number = "n" }
consumed = ["human"]
output = { parse = "lines", type = "list<str>" }
effects = ["fs.read($files|cwd)", "fs.write($name)", "net.connect($need)"]

[cmd.args.sub.sub_cmd]
params = { x = "bool" }
invoke = ["%s\\n", "SUB"]
output = { parse = "lines", type = "list<str>" }

[cmd.needs]
bin = "printf"
invoke = ["%s\\n"]
params = { target = "path" }
positional = ["target"]
output = { parse = "lines" }

[cmd.loose]
bin = "printf"
invoke = ["%s\\n"]
output = { parse = "lines" }

[cmd.status3]
bin = "sh"
invoke = ["-c", "printf '[1, 2]'; exit 3", "sh"]
ok_codes = [0, 3]
output = { parse = "json", type = "list<int>" }

[cmd.notjson]
bin = "printf"
invoke = ["not json"]
output = { parse = "json" }
`;

async function withAdapters(
  fn: (ev: Evaluator, dir: string) => void | Promise<void>,
): Promise<void> {
  await withTempDir(async (dir) => {
    const adir = join(dir, "adapters");
    Deno.mkdirSync(adir);
    Deno.writeTextFileSync(join(adir, "test.toml"), ADAPTERS);
    Deno.writeTextFileSync(
      join(adir, "touch.toml"),
      `[cmd.mark]\nbin = "sh"\ninvoke = ["-c", "touch ${dir}/spawned", "sh"]\nparams = { count = "int?" }\n`,
    );
    const catalog = loadCatalog([adir]);
    assertEquals(catalog.warnings, []);
    Deno.writeTextFileSync(join(dir, "a.txt"), "");
    Deno.writeTextFileSync(join(dir, "b.txt"), "");
    await fn(session(dir, { adapters: catalog }), dir);
  });
}

async function argv(ev: Evaluator, src: string): Promise<string[]> {
  const v = await run(ev, `(${src}).out`);
  assert(v instanceof ListV, `not a list: ${src}`);
  return v.items as string[];
}

Deno.test("binding: flags, shorts, numbers, consumed, positionals, extras, --", async () => {
  await withAdapters(async (ev, dir) => {
    assertEquals(await argv(ev, "args --all --dry-run"), ["--all", "--dry-run"]);
    assertEquals(await argv(ev, "args --all=false --name=zoë"), ["--name=zoë"]);
    assertEquals(await argv(ev, "args --name zoë -n 5"), ["--name=zoë", "-n", "5"]);
    assertEquals(await argv(ev, "args --n=5 -n7 -3"), ["-n", "5", "-n", "7", "-n", "3"]);
    assertEquals(await argv(ev, "args -ah -t x --tags=y"), ["--all", "--tags=x", "--tags=y"]);
    assertEquals(await argv(ev, "args --size 4kb --when 1h30m"), ["--size=4kb", "--when=1h30m"]);
    assertEquals(await argv(ev, "args --size (4kb)"), ["--size=4000"]);
    // The glob parameter keeps its pattern; a path list expands its glob.
    assertEquals(await argv(ev, "args *.md *.txt extra"), [
      "*.md",
      `${dir}/a.txt`,
      `${dir}/b.txt`,
      "extra",
    ]);
    assertEquals(await argv(ev, "args p -- --not-a-flag -x"), ["p", "--", "--not-a-flag", "-x"]);
    assertEquals(await argv(ev, 'args "-"'), ["-"]);
    // A subcommand only by its exact first word.
    assertEquals(await argv(ev, "args sub_cmd --x"), ["SUB", "-x"]);
    assertEquals(await argv(ev, 'args ("sub_cmd")'), ["sub_cmd"]);
    // A head without params forwards everything unchecked.
    assertEquals(await argv(ev, "loose --any -xyz --k=v w"), ["--any", "-xyz", "--k=v", "w"]);
    // The outcome keeps the pinned argv as its cmd.
    assertEquals(await run(ev, "(args -a).cmd"), "printf %s\n --all");
  });
});

Deno.test("binding: arg_error before anything spawns", async () => {
  await withAdapters(async (ev, dir) => {
    const cases: [string, RegExp, RegExp | null][] = [
      ["args -n many", /`args` -n: expected int, found "many"/, null],
      ["args --size huge", /`args` --size: expected size, found "huge"/, null],
      ["args --name", /`args` --name requires a value/, null],
      ["args -t", /`args` -t requires a value/, null],
      ["args --all=maybe", /`args` --all: expected bool, found "maybe"/, null],
      ["needs", /`needs` needs <target> \(path\)/, null],
    ];
    for (const [src, msg, hint] of cases) {
      const e = await error(ev, src);
      assertEquals(e.code, "arg_error", src);
      assertMatch(e.msg, msg);
      if (hint) assertMatch(String(e.hint), hint);
    }
    // A flag the adapter does not declare runs the plain tool (its binary, its text output),
    // as bash would, with a note on stderr naming the flag and the adapter's flags.
    for (const src of ["args --al", "args -z", "args sub_cmd --all"]) {
      assertEquals(await run(ev, `(${src}).cmd`), `printf ${src.slice(5)}`, src);
    }
    const e = await error(ev, "mark --count lots");
    assertEquals(e.code, "arg_error");
    assert(!exists(join(dir, "spawned")), "a refused call spawned its program");
    await run(ev, "mark --count 2");
    assert(exists(join(dir, "spawned")));
    // ^ bypasses the adapter: `args` is then looked up as a program (there is none).
    assertEquals((await error(ev, "^args --al")).code, "not_found");
  });
});

function exists(p: string): boolean {
  try {
    Deno.statSync(p);
    return true;
  } catch {
    return false;
  }
}

Deno.test("ok_codes, raw fallback with a diagnostic, truncated output stays raw", async () => {
  await withAdapters(async (ev, dir) => {
    assertEquals(
      await run(ev, "let r = (status3); [r.ok, r.status, r.out]").then(show),
      "[true,3,[1,2]]",
    );
    lints.length = 0;
    assertEquals(await run(ev, "(notjson).out"), "not json");
    assertMatch(lints.join(""), /`notjson`: output did not match the json parser .*; kept raw/);
    const o = await run(ev, "notjson");
    assert(o instanceof OutcomeV && o.parsed === undefined && o.ok);
    // A host's capture cap cuts stdout: a partial table is never built.
    const small = session(dir, {
      adapters: ev.adapters(),
      ports: {
        stderr: (t) => lints.push(t),
        process: { capture: (opts) => spawnCapture({ ...opts, stdoutCap: 4 }) },
      },
    });
    lints.length = 0;
    const cut = await run(small, "args a b c d e f");
    assert(cut instanceof OutcomeV && cut.parsed === undefined && cut.stdoutTruncated);
    assertMatch(lints.join(""), /exceeded the capture cap; kept raw/);
  });
});

function show(v: Value): string {
  return JSON.stringify(v, (_k, x) => (x instanceof ListV ? x.items : x));
}

function cmdOf(ev: Evaluator, src: string): CmdExpr {
  const p = ev.parse(src);
  const s = p.body[0] as { kind: string; expr?: CmdExpr };
  return (s.expr ?? s) as CmdExpr;
}

Deno.test("declared effects: templates with the call's values, from the source alone", async () => {
  await withAdapters((ev, dir) => {
    assertEquals(
      declaredEffects(ev, cmdOf(ev, "args p a.txt --name out.bin --need https://example.org/x")),
      [
        { kind: "proc_spawn", bin_hash: "", argv0: "printf" },
        { kind: "fs_read", paths: [join(dir, "a.txt")] },
        { kind: "fs_write", paths: [join(dir, "out.bin")] },
        { kind: "net_connect", host: "example.org", port: 443 },
      ],
    );
    // Nothing bound: the fallback; an effect with no term is dropped.
    assertEquals(declaredEffects(ev, cmdOf(ev, "args")), [
      { kind: "proc_spawn", bin_hash: "", argv0: "printf" },
      { kind: "fs_read", paths: [dir] },
    ]);
    // A value only known at run time: that effect is opaque.
    assertEquals(declaredEffects(ev, cmdOf(ev, "args --name (x)"))![2], { kind: "opaque" });
    assertEquals(declaredEffects(ev, cmdOf(ev, "^args")), null);
    assertEquals(declaredEffects(ev, cmdOf(ev, "echo hi")), null);
    assertEquals(declaredEffects(ev, cmdOf(ev, "args > out.txt")), null);
    // An undeclared flag runs the plain tool: an unknown external, planned as opaque.
    assertEquals(declaredEffects(ev, cmdOf(ev, "args --bogus")), null);
    let code = "";
    try {
      declaredEffects(ev, cmdOf(ev, "args -n many"));
    } catch (e) {
      code = (e as { err: { code: string } }).err.code;
    }
    assertEquals(code, "arg_error");
  });
});

Deno.test("declared effects of the bundled catalog", async () => {
  await withTempDir((dir) => {
    const ev = session(dir, { adapters: true, env: { ...Deno.env.toObject(), HOME: "/home/z" } });
    const fx = (src: string) => declaredEffects(ev, cmdOf(ev, src))!.slice(1);
    assertEquals(fx("git status"), [{ kind: "fs_read", paths: [dir] }]);
    assertEquals(fx("git push origin main"), [
      { kind: "fs_read", paths: [dir] },
      { kind: "net_connect", host: "*", port: 0 },
    ]);
    assertEquals(fx("git rebase -i HEAD~3"), [{ kind: "opaque" }]);
    assertEquals(fx("curl -sSL -o page.html https://example.org/a http://h:8080/b"), [
      { kind: "net_connect", host: "example.org", port: 443 },
      { kind: "net_connect", host: "h", port: 8080 },
      { kind: "fs_write", paths: [join(dir, "page.html")] },
    ]);
    assertEquals(fx("curl -O https://example.org/f.tgz")[1], { kind: "fs_write", paths: [dir] });
    assertEquals(fx("tar -czf out.tgz src"), [
      { kind: "fs_read", paths: [join(dir, "out.tgz"), join(dir, "src")] },
      { kind: "fs_write", paths: [join(dir, "out.tgz"), dir] },
    ]);
    assertEquals(fx("kubectl config_current_context"), [{
      kind: "fs_read",
      paths: ["/home/z/.kube"],
    }]);
    assertEquals(fx("python -c 'print(1)'"), [{ kind: "opaque" }]);
  });
});

Deno.test("help HEAD describes an adapted tool from its spec", async () => {
  await withAdapters(async (ev) => {
    const text = String(await run(ev, "(help args).out"));
    assertMatch(text, /^args — adapted: its results are values/);
    assertMatch(text, /--all/);
    assertMatch(text, /flags not listed, run plain args/);
  });
});
