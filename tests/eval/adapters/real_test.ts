/**
 * The bundled adapters against the real binaries of this machine (Debian 12; .ci/run installs
 * the Debian ones). A binary that is absent here (not a Debian package: kubectl, terraform,
 * cargo, docker …) skips its test — the test names say which.
 */

import {
  deepStrictEqual as assertEquals,
  match as assertMatch,
  ok as assert,
} from "node:assert/strict";
import { join } from "node:path";
import { which } from "../../../lib/exec/mod.ts";
import type { Evaluator } from "../../../lib/eval/mod.ts";
import {
  DateTimeV,
  DurationV,
  FloatV,
  ListV,
  OutcomeV,
  PathV,
  RecordV,
  SizeV,
  TableV,
  type Value,
} from "../../../lib/value/types.ts";
import { renderInline } from "../../../lib/value/render.ts";
import { error, lints, run, session, withTempDir } from "../commands/_helpers.ts";

const has = (bin: string) => which(bin, Deno.env.get("PATH"), "/") !== null;

function rows(v: Value): Map<string, Value>[] {
  assert(v instanceof TableV, `expected a table, got ${renderInline(v)}`);
  return v.rows.map((r) => r.fields);
}

async function withSession(fn: (ev: Evaluator, dir: string) => Promise<void>): Promise<void> {
  await withTempDir(async (dir) => {
    // HOME and git's identity live in the temp dir: no user configuration leaks in.
    const env = {
      ...Deno.env.toObject(),
      HOME: dir,
      GIT_AUTHOR_NAME: "Zoë Test",
      GIT_AUTHOR_EMAIL: "z@example.org",
      GIT_COMMITTER_NAME: "Zoë Test",
      GIT_COMMITTER_EMAIL: "z@example.org",
      GIT_CONFIG_NOSYSTEM: "1",
    };
    await fn(session(dir, { adapters: true, env }), dir);
  });
}

Deno.test("git: status, log, branch, ls_files, diff, tag, stash_list as values", async () => {
  await withSession(async (ev, dir) => {
    const repo = join(dir, "repo");
    await run(ev, `mkdir ${repo}; cd ${repo}; ^git init -q -b main`);
    Deno.writeTextFileSync(join(repo, "a.txt"), "a\n");
    Deno.writeTextFileSync(join(repo, "sp ace.txt"), "b\n");
    await run(ev, '^git add -A; ^git commit -q -m "first: ünïcode subject"');
    Deno.writeTextFileSync(join(repo, "a.txt"), "a\nmore\n");
    await run(ev, '^git mv "sp ace.txt" "renamed é.txt"');
    Deno.writeTextFileSync(join(repo, "new.txt"), "n\n");
    const st = rows(await run(ev, "(git status).out"));
    assertEquals(
      st.map((
        r,
      ) => [
        r.get("status"),
        r.get("state"),
        renderInline(r.get("path")!),
        renderInline(r.get("orig")!),
      ]),
      [[".M", "modified", "a.txt", "null"], ["R.", "renamed", '"renamed é.txt"', '"sp ace.txt"'], [
        "?",
        "untracked",
        "new.txt",
        "null",
      ]],
    );
    assert(st[0].get("path") instanceof PathV);
    // --short is accepted and not forwarded: the same table.
    assertEquals(
      renderInline(await run(ev, "(git status --short -b).out")),
      renderInline(await run(ev, "(git status).out")),
    );
    assertEquals(await run(ev, '(git status).out.where(r => r.state == "modified").len()'), 1);
    // A pathspec narrows it.
    assertEquals(rows(await run(ev, "(git status new.txt).out")).length, 1);
    await run(ev, '^git add -A; ^git commit -q -m "second"');
    const log = rows(await run(ev, "(git log).out"));
    assertEquals(log.map((r) => r.get("subject")), ["second", "first: ünïcode subject"]);
    assertEquals(log[0].get("author"), "Zoë Test");
    assert(log[0].get("date") instanceof DateTimeV);
    assertMatch(String(log[0].get("hash")), /^[0-9a-f]{40}$/);
    assertEquals(log[1].get("parents"), "");
    assertEquals(rows(await run(ev, "(git log -1).out")).length, 1);
    assertEquals(
      rows(await run(ev, "(git log --reverse).out"))[0].get("subject"),
      "first: ünïcode subject",
    );
    const br = rows(await run(ev, "(git branch).out"));
    assertEquals(br.map((r) => [r.get("current"), r.get("name"), r.get("upstream")]), [[
      true,
      "main",
      null,
    ]]);
    assertEquals(
      renderInline(await run(ev, "(git ls_files).out")),
      '[a.txt, new.txt, "renamed é.txt"]',
    );
    assertEquals(renderInline(await run(ev, "(git tag).out")), "[]");
    assertEquals(rows(await run(ev, "(git stash_list).out")).length, 0);
    Deno.writeTextFileSync(join(repo, "a.txt"), "changed\n");
    const diff = await run(ev, "(git diff).out");
    assert(diff instanceof ListV && diff.items.includes("+changed"), renderInline(diff));
    // ^git is the raw tool: its own text.
    assertEquals(typeof await run(ev, "(^git status --porcelain=v2).out"), "string");
    // A flag the adapter does not declare runs plain git, which reports its own typo (as in
    // bash); a failing git is a failed outcome with its stderr.
    const typo = await error(ev, "git status --shrot");
    assertEquals(typo.code, "cmd_failed");
    assertMatch(String(typo.stderr), /unknown option/);
    await run(ev, `cd ${dir}`);
    const e = await error(ev, "git status");
    assertEquals(e.code, "cmd_failed");
    assertMatch(String(e.hint), /not a git repository/);
    const o = await run(ev, "let o = (git log); o");
    assert(o instanceof OutcomeV && !o.ok && o.parsed === undefined);
  });
});

Deno.test("ps, df, du, vmstat, who: typed columns", async () => {
  await withSession(async (ev, dir) => {
    const ps = rows(await run(ev, "(ps).out"));
    const me = ps.find((r) => r.get("pid") === Deno.pid);
    assert(me !== undefined, "ps lists this process");
    assert(me.get("%cpu") instanceof FloatV && me.get("rss") instanceof SizeV);
    assert(me.get("elapsed") instanceof DurationV);
    assertMatch(String(me.get("command")), /deno/);
    assertEquals(await run(ev, `(ps --sort=-pid).out.len() > 1`), true);
    const df = rows(await run(ev, "(df /).out"));
    assertEquals(df.length, 1);
    assertEquals(renderInline(df[0].get("mounted")!), "/");
    assert(df[0].get("size") instanceof SizeV && df[0].get("avail") instanceof SizeV);
    assert(rows(await run(ev, "(df -h).out")).length >= 1); // -h accepted, sizes stay sizes
    Deno.mkdirSync(join(dir, "d/ünï"), { recursive: true });
    Deno.writeTextFileSync(join(dir, "d/ünï/f"), "x".repeat(10_000));
    const du = rows(await run(ev, "(du d).out"));
    assertEquals(du.map((r) => renderInline(r.get("path")!)), ["d/ünï", "d"]);
    assert((du[1].get("size") as SizeV).bytes >= 8192n);
    assertEquals(rows(await run(ev, "(du -s --apparent-size d).out")).length, 1);
    const vm = rows(await run(ev, "(vmstat).out"));
    assertEquals(vm.length, 1);
    assert(vm[0].get("free") instanceof SizeV && typeof vm[0].get("r") === "number");
    assert((await run(ev, "(who).out")) instanceof TableV);
  });
});

Deno.test("run env, run stat: the builtins' names reach their adapters through run", async () => {
  await withSession(async (ev, dir) => {
    await run(ev, 'env.SHOAL_ADAPTER_T = "zoë\\nline two"');
    const env = await run(ev, "(run env).out");
    assert(env instanceof RecordV);
    assertEquals(env.fields.get("SHOAL_ADAPTER_T"), "zoë\nline two");
    assertEquals(env.fields.get("HOME"), dir);
    Deno.writeTextFileSync(join(dir, "ü.txt"), "abcd");
    const st = rows(await run(ev, "(run stat ü.txt).out"));
    assertEquals(renderInline(st[0].get("size")!), "4b");
    assertEquals(st[0].get("type"), "regular file");
    assert(st[0].get("modified") instanceof DateTimeV);
    assertEquals((await error(ev, "run stat --bogus x")).code, "arg_error");
  });
});

Deno.test("ss, findmnt, lsblk, lscpu, ip: Linux system tables", async () => {
  await withSession(async (ev) => {
    const ss = await run(ev, "(ss -a).out");
    for (const r of rows(ss)) assert(typeof r.get("recv_q") === "number");
    const mounts = rows(await run(ev, "(findmnt /).out"));
    assertEquals(renderInline(mounts[0].get("target")!), "/");
    assertEquals(rows(await run(ev, "(findmnt /no/such/mount).out")).length, 0);
    for (const r of rows(await run(ev, "(lsblk).out"))) {
      const size = r.get("size");
      assert(size === null || size instanceof SizeV);
    }
    const cpu = rows(await run(ev, "(lscpu).out"));
    assert(cpu.some((r) => r.get("field") === "Architecture:"));
    const links = rows(await run(ev, "(ip link).out"));
    assert(links.some((r) => r.get("ifname") === "lo"));
    assert(rows(await run(ev, "(ip addr).out")).some((r) => r.get("ifname") === "lo"));
    assert((await run(ev, "(ip route).out")) instanceof TableV);
  });
});

Deno.test("sqlite3, jq, yq: queries and filters as values", async () => {
  await withSession(async (ev) => {
    await run(
      ev,
      "sqlite3 db.sqlite \"create table t(a integer, b text); insert into t values (1, 'zoë'), (2, 'ünï')\"",
    );
    const t = rows(await run(ev, '(sqlite3 db.sqlite "select a, b from t order by a").out'));
    assertEquals(t.map((r) => [r.get("a"), r.get("b")]), [[1, "zoë"], [2, "ünï"]]);
    assertEquals(
      rows(await run(ev, '(sqlite3 db.sqlite "select * from t where 0").out')).length,
      0,
    );
    assertEquals(
      rows(await run(ev, '(sqlite3 --readonly db.sqlite "select count(*) as n from t").out'))[0]
        .get("n"),
      2,
    );
    const bad = await run(ev, 'let r = (sqlite3 db.sqlite "select nope from t"); r');
    assert(bad instanceof OutcomeV && !bad.ok);
    assertEquals(renderInline(await run(ev, '({a: [1, 2], b: "ü"}).feed(jq ".a").out')), "[1, 2]");
    assertEquals(await run(ev, '({a: [1, 2], b: "ü"}).feed(jq { .b }).out'), "ü");
    // Several results are not one document: the raw text, and a note says why.
    lints.length = 0;
    assertEquals(typeof await run(ev, "([1, 2]).feed(jq '.[]').out"), "string");
    assertMatch(lints.join(""), /`jq`: output did not match the json parser/);
    assertEquals(await run(ev, '("a: 1\\nb: [x]").feed(yq ".a").out'), 1);
  });
});

Deno.test("tar, zip, unzip: archives with declared writes", async () => {
  await withSession(async (ev, dir) => {
    Deno.mkdirSync(join(dir, "src"));
    Deno.writeTextFileSync(join(dir, "src/ünï.txt"), "hello");
    await run(ev, "tar -czf out.tgz src");
    const list = await run(ev, "(tar -tzf out.tgz).out");
    assertMatch(String(list), /src\/ünï\.txt/);
    await run(ev, "mkdir x; tar -xzf out.tgz -C x");
    assertEquals(Deno.readTextFileSync(join(dir, "x/src/ünï.txt")), "hello");
    await run(ev, "zip -q -r out.zip src");
    assertEquals(renderInline(await run(ev, "(unzip list out.zip).out")), "[src/, src/ünï.txt]");
    await run(ev, "unzip -q -o -d y out.zip");
    assertEquals(Deno.readTextFileSync(join(dir, "y/src/ünï.txt")), "hello");
    assertEquals((await error(ev, "zip --recurse out.zip src")).code, "cmd_failed"); // zip's own
    assertEquals((await error(ev, "unzip list")).code, "arg_error"); // needs <archive>
  });
});

Deno.test("python, node, deno, bash: interpreter blocks and command forms", async () => {
  await withSession(async (ev) => {
    // `python` is python3 (Debian ships no `python`).
    assertEquals(await run(ev, "(python { print(40 + 2) }).out"), "42");
    assertEquals(
      renderInline(await run(ev, '(python { import json; print(json.dumps({"ü": [1]})) }).out')),
      '{"ü": [1]}',
    );
    assertEquals(await run(ev, "(python -c 'print(7)').out"), "7");
    assertEquals(await run(ev, "(node { console.log(6 * 7) }).out"), "42");
    assertEquals(await run(ev, "(node -e 'console.log(1)').out"), "1");
    assertEquals(await run(ev, "(bash { echo ünï }).out"), "ünï");
    assertEquals(await run(ev, "(deno { console.log('dé') }).out"), "dé");
    const e = await error(ev, "python { import sys; sys.exit(3) }");
    assertEquals([e.code, e.status], ["cmd_failed", 3]);
  });
});

Deno.test({
  name: "rg: matches as NDJSON events; no match is ok (needs ripgrep)",
  ignore: !has("rg"),
  fn: async () => {
    await withSession(async (ev, dir) => {
      Deno.writeTextFileSync(join(dir, "a.txt"), "héllo wörld\nbye\n");
      const ev2 = rows(await run(ev, "(rg héllo).out"));
      assertEquals(ev2.map((r) => r.get("type")), ["begin", "match", "end", "summary"]);
      const none = await run(ev, "let r = (rg absent-text); r");
      assert(none instanceof OutcomeV && none.ok && none.status === 1);
      assertEquals(rows(await run(ev, "(rg absent-text).out")).map((r) => r.get("type")), [
        "summary",
      ]);
      assertEquals((await error(ev, "rg --bogus x")).code, "cmd_failed"); // rg's own refusal
    });
  },
});

Deno.test("curl: a file:// URL through the adapter; bad flags refused", async () => {
  await withSession(async (ev, dir) => {
    Deno.writeTextFileSync(join(dir, "page.txt"), "ünï");
    assertEquals(await run(ev, `(curl -sS file://${dir}/page.txt).out`), "ünï");
    await run(ev, `curl -s -o copy.txt file://${dir}/page.txt`);
    assertEquals(Deno.readTextFileSync(join(dir, "copy.txt")), "ünï");
    assertEquals((await error(ev, "curl --max-time soon file:///x")).code, "arg_error");
  });
});

Deno.test({
  name: "cargo metadata, rustup, terraform show (present on this machine)",
  ignore: !has("cargo") || !has("rustup") || !has("terraform"),
  fn: async () => {
    await withSession(async (ev, dir) => {
      // Tools keep their real home for their own toolchains.
      await run(ev, `env.HOME = "${Deno.env.get("HOME")}"`);
      Deno.writeTextFileSync(
        join(dir, "Cargo.toml"),
        '[package]\nname = "zz"\nversion = "0.1.0"\nedition = "2021"\n',
      );
      Deno.mkdirSync(join(dir, "src"));
      Deno.writeTextFileSync(join(dir, "src/main.rs"), "fn main() {}\n");
      const meta = await run(ev, "(cargo metadata --offline --no-deps).out");
      assert(meta instanceof RecordV);
      assertEquals(rows(meta.fields.get("packages")!)[0].get("name"), "zz");
      assertEquals(renderInline(meta.fields.get("workspace_root")!), dir);
      assertEquals((await error(ev, "cargo build --jobs many")).code, "arg_error");
      const tc = await run(ev, "(rustup toolchain_list).out");
      assert(tc instanceof ListV && tc.items.length >= 1);
      const tf = await run(ev, "(terraform show).out");
      assert(tf instanceof RecordV && tf.fields.has("format_version"));
    });
  },
});

Deno.test({
  name: "npm ls, pip list (present on this machine)",
  ignore: !has("npm") || !has("pip"),
  fn: async () => {
    await withSession(async (ev, dir) => {
      await run(ev, `env.HOME = "${Deno.env.get("HOME")}"`);
      Deno.writeTextFileSync(join(dir, "package.json"), '{"name": "zz", "version": "1.0.0"}');
      const [npm, pip] = await Promise.all([run(ev, "(npm ls).out"), run(ev, "(pip list).out")]);
      assert(npm instanceof RecordV && npm.fields.get("name") === "zz");
      assert(rows(pip).every((r) => typeof r.get("name") === "string"));
    });
  },
});

Deno.test({
  name: "docker, kubectl, systemctl, journalctl without their daemons: honest failures",
  ignore: !has("docker") || !has("kubectl") || !has("systemctl") || !has("journalctl"),
  fn: async () => {
    await withSession(async (ev) => {
      // With a daemon, a table; without one (this machine), a failed outcome with the reason.
      const d = await run(ev, "let d = (docker ps -a); d");
      assert(d instanceof OutcomeV);
      if (d.ok) assert(d.parsed instanceof TableV);
      else assertMatch(new TextDecoder().decode(d.stderr), /docker/i);
      const k = await run(ev, "let k = (kubectl config_current_context); k");
      assert(k instanceof OutcomeV && (k.ok ? k.parsed instanceof ListV : k.parsed === undefined));
      const s = await run(ev, "let s = (systemctl list_units); s");
      assert(s instanceof OutcomeV && (s.ok ? s.parsed instanceof TableV : s.parsed === undefined));
      const j = await run(ev, "let j = (journalctl -n 1); j");
      assert(j instanceof OutcomeV && (j.ok ? j.parsed instanceof TableV : j.parsed === undefined));
      assertEquals((await error(ev, "docker ps --all=sometimes")).code, "arg_error");
    });
  },
});
