// The language side of Reef in real temp trees: spawns use the locked binary and a view,
// `which` tells the truth in dispatch order, the `reef` commands, runners by extension and
// shebang, path heads, `with reef:`, and policies per host kind.

import assert from "node:assert/strict";
import { join } from "node:path";
import { type ListV, PathV, type RecordV } from "../../lib/value/types.ts";
import { readLock } from "../../lib/reef/mod.ts";
import { withTree } from "./_helpers.ts";

const field = (v: unknown, k: string) => (v as RecordV).fields.get(k);

Deno.test("a constrained spawn runs the locked binary; its child PATH starts with the view", async () => {
  await withTree(async (t) => {
    const mine = t.tool("tools/faketool", "2.0.0");
    t.tool("bin/faketool", "1.0.0"); // first on the session PATH
    t.write(".reef.toml", '[tools]\nfaketool = "2"\n');
    const repl = t.session(".", {
      repl: true,
      env: { ...t.env(), PATH: `${t.path("bin")}:${t.path("tools")}:/usr/bin:/bin` },
    });
    assert.equal(await repl.show("(faketool hi).out"), '"faketool 2.0.0 ran hi"');
    assert.match(repl.stderr, /reef: locked faketool@2\.0\.0 via system/);
    assert.equal(readLock(t.path("reef.lock")).ok, true);
    // The session PATH is untouched; only the child's PATH has the view in front.
    assert.equal(await repl.show('env.PATH.split(":").first()'), JSON.stringify(t.path("bin")));
    const s = t.session(".", {
      env: { ...t.env(), PATH: `${t.path("bin")}:${t.path("tools")}:/usr/bin:/bin` },
    });
    assert.equal(await s.show("(faketool).out"), '"faketool 2.0.0 ran"', "a script uses the lock");
    const path = `${t.path("bin")}:${t.path("tools")}:/usr/bin:/bin`;
    // sh is unconstrained: its child gets the session PATH as it is.
    assert.equal(await s.run('sh { printf %s "$PATH" }.out'), path);
    t.write(".reef.toml", '[tools]\nfaketool = "2"\nsh = "*"\n');
    const e = await s.error('sh { printf %s "$PATH" }');
    assert.equal(e.code, "reef_unlocked", "a script never picks an unlocked tool");
    await repl.run("reef lock");
    const p = String(await s.run('sh { printf %s "$PATH" }.out'));
    assert.ok(p.startsWith(t.path("run/shoal/views/")), p);
    assert.ok(p.endsWith(`:${t.path("bin")}:${t.path("tools")}:/usr/bin:/bin`), p);
    assert.equal((field(await s.run("(which faketool).out"), "path") as PathV).path, mine);
  });
});

Deno.test("which tells the truth in dispatch order: function, alias, builtin, Reef, PATH", async () => {
  await withTree(async (t) => {
    t.tool("bin/faketool", "1.2.3");
    t.write(".reef.toml", '[tools]\nfaketool = "1"\n');
    const s = t.session();
    const head = await s.run("(which head).out");
    assert.equal(field(head, "scope"), "builtin");
    assert.match(String(field(head, "note")), /Shoal builtin/);
    const ext = field(head, "external") as RecordV;
    assert.equal(field(ext, "scope"), "ambient", "the program `head` would be, by path");
    assert.equal(await s.show("(which which).out.scope"), '"builtin"');
    await s.run("fn greet() { 1 }");
    assert.equal(await s.show("(which greet).out.scope"), '"function"');
    const r = await s.run("(which faketool).out");
    assert.equal(field(r, "scope"), "reef");
    assert.equal(field(r, "constraint"), "1");
    assert.equal(field(r, "version"), "1.2.3");
    assert.equal(field(r, "provider"), "system");
    assert.match(String(field(r, "hash8")), /^[0-9a-f]{8}$/);
    assert.ok(field(r, "path") instanceof PathV);
    const chain = field(r, "chain") as ListV;
    const mine = chain.items.find((row) =>
      (field(row, "source") as PathV).path.includes(t.root)
    ) as RecordV;
    assert.equal(field(mine, "outcome"), "selected");
    assert.equal(field(mine, "scope"), "reef");
    // which resolved interactively and locked it, so a script spawn now works.
    assert.equal(await s.show("(faketool).out"), '"faketool 1.2.3 ran"');
    // Unconstrained: ambient; missing: null; arity: arg_error; unknown flag: arg_error.
    assert.equal(await s.show("(which sh).out.scope"), '"ambient"');
    assert.equal(await s.show("(which zz-not-here-zz).out"), "null");
    assert.equal((await s.error("which")).code, "arg_error");
    assert.equal((await s.error("which sh --bogus")).code, "arg_error");
  });
});

Deno.test("which --all: builtin first, then every provider candidate, nothing probed", async () => {
  await withTree(async (t) => {
    t.tool("bin/cat", "9.9");
    t.tool("home/.cargo/bin/cat", "9.8");
    const s = t.session();
    const rows = (await s.run("(which --all cat).out")) as ListV;
    const kinds = rows.items.map((r) => `${field(r, "provider")}/${field(r, "scope")}`);
    assert.equal(kinds[0], "builtin/builtin");
    assert.ok(kinds.includes("cargo/cargo"));
    assert.ok(kinds.includes("system/system"));
    assert.ok(kinds.includes("system/ambient"), "the tree's bin is an ambient PATH dir");
    assert.ok(
      rows.items.every((r) => field(r, "version") === "unknown" || field(r, "version") === null),
    );
    assert.equal(await s.show("(which -a zz-not-here-zz).out"), "[]");
  });
});

Deno.test("which surfaces refusals as unresolved records with note and hint", async () => {
  await withTree(async (t) => {
    const bin = t.tool("bin/faketool", "1.0.0");
    t.write(".reef.toml", '[tools]\nfaketool = "*"\n');
    t.write(
      "reef.lock",
      `[tool.faketool]\nname = "faketool"\nversion = "1.0.0"\nprovider = "system"\npath = "${bin}"\n` +
        `blake3 = "${"0".repeat(64)}"\nresolved_at = "2026-01-01T00:00:00Z"\n`,
    );
    const s = t.session();
    const r = await s.run("(which faketool).out");
    assert.equal(field(r, "scope"), "unresolved: reef_drift");
    assert.equal(field(r, "path"), null);
    assert.match(String(field(r, "note")), /changed since it was locked/);
    assert.match(String(field(r, "hint")), /reef lock --refresh/);
    assert.equal((await s.error("faketool")).code, "reef_drift");
  });
});

Deno.test("reef: binding table, lock, lock --refresh, doctor", async () => {
  await withTree(async (t) => {
    t.tool("bin/alpha", "1.0.0");
    t.tool("bin/beta", "2.0.0");
    t.write(".reef.toml", '[tools]\nalpha = "1"\nbeta = "3"\n');
    const s = t.session();
    const table = (await s.run("reef")) as ListV;
    const byName = (n: string) => table.items.find((r) => field(r, "name") === n) as RecordV;
    assert.equal(field(byName("alpha"), "scope"), "reef");
    assert.equal(field(byName("alpha"), "version"), "1.0.0");
    assert.equal(field(byName("beta"), "scope"), "unresolved: reef_not_found");
    const lock = (await s.run("reef lock")) as ListV;
    const row = (n: string) => lock.items.find((r) => field(r, "name") === n) as RecordV;
    assert.equal(field(row("alpha"), "locked"), true);
    assert.equal(field(row("beta"), "locked"), false);
    assert.equal(field(row("beta"), "error"), "reef_not_found");
    const before = readLock(t.path("reef.lock"));
    assert.ok(before.ok);
    t.tool("bin/alpha", "1.0.1"); // replaced: drift
    const doc = (await s.run("reef doctor")) as ListV;
    const statuses = doc.items.map((r) =>
      `${field(r, "name")}:${field(r, "check")}:${field(r, "status")}`
    );
    assert.ok(statuses.includes("alpha:drift:drift"), statuses.join(" "));
    assert.ok(statuses.includes("beta:drift:unlocked"), statuses.join(" "));
    assert.equal((await s.error("alpha")).code, "reef_drift");
    const again = (await s.run("reef lock")) as ListV;
    const a = again.items.find((r) => field(r, "name") === "alpha") as RecordV;
    assert.equal(
      field(a, "locked"),
      false,
      "reef lock keeps a drifted entry; --refresh replaces it",
    );
    assert.equal(field(a, "error"), "reef_drift");
    const refreshed = (await s.run("reef lock --refresh")) as ListV;
    assert.equal(
      field(refreshed.items.find((r) => field(r, "name") === "alpha")!, "version"),
      "1.0.1",
    );
    assert.equal(await s.show("(alpha).out"), '"alpha 1.0.1 ran"');
    assert.equal((await s.error("reef lock --bogus")).code, "arg_error");
    assert.equal((await s.error("reef frobnicate")).code, "arg_error");
  });
});

Deno.test("reef add edits the manifest in place (comments kept) and locks the tool", async () => {
  await withTree(async (t) => {
    t.tool("bin/faketool", "4.5.6");
    t.write(
      "p/.reef.toml",
      '# project tools\n[tools]\n# keep me\nnode = "22" # pinned\n\n[runners]\npy = "python3"\n',
    );
    const s = t.session("p");
    const r = await s.run("reef add faketool@4");
    assert.equal(field(r, "added"), "faketool@4");
    assert.equal(field(r, "locked"), true);
    assert.equal(field(r, "version"), "4.5.6");
    const text = Deno.readTextFileSync(t.path("p/.reef.toml"));
    assert.match(text, /# keep me/);
    assert.match(text, /node = "22" # pinned/);
    assert.match(text, /faketool = "4"/);
    assert.match(text, /\[runners\]\npy = "python3"/);
    // Updating an existing entry replaces its line.
    await s.run("reef add faketool@4.5");
    assert.equal(Deno.readTextFileSync(t.path("p/.reef.toml")).match(/faketool =/g)!.length, 1);
    // From a subdirectory the nearest ancestor manifest is edited; nowhere → a new one in cwd.
    const sub = t.session("p/deep/er");
    await sub.run("reef add other@1");
    assert.match(Deno.readTextFileSync(t.path("p/.reef.toml")), /other = "1"/);
    const fresh = t.session("q");
    const nr = await fresh.run("reef add faketool@4");
    assert.equal((field(nr, "manifest") as PathV).path, t.path("q/.reef.toml"));
    assert.equal(Deno.readTextFileSync(t.path("q/.reef.toml")), '[tools]\nfaketool = "4"\n');
    // A tool nothing provides: the edit stays, locked is false with the reason.
    const miss = await fresh.run("reef add nosuchtool-zz@1");
    assert.equal(field(miss, "locked"), false);
    assert.match(String(field(miss, "note")), /^reef_not_found/);
    assert.equal((await fresh.error("reef add bad/name@1")).code, "arg_error");
  });
});

Deno.test("reef fetch: mise installs (provider pins honoured), then the install is found", async () => {
  await withTree(async (t) => {
    // A real program standing in for mise: it creates the installs layout.
    t.write(
      "bin/mise",
      `#!/bin/sh\n[ "$1" = install ] || exit 2\nname=\${2%@*}; v=\${2#*@}\n[ "$v" = latest ] && v=9.0.0\n` +
        `d="$HOME/.local/share/mise/installs/$name/$v.0.0/bin"; mkdir -p "$d"\n` +
        `printf '#!/bin/sh\\necho %s %s\\n' "$name" "$v" > "$d/$name"; chmod +x "$d/$name"\n`,
      0o755,
    );
    t.write(".reef.toml", '[tools]\nzed = "7"\npinned = { version = "1", provider = "system" }\n');
    const s = t.session();
    const r = await s.run("reef fetch zed");
    assert.equal(field(r, "fetched"), true);
    assert.equal(field(r, "provider"), "mise");
    assert.equal(field(r, "version"), "7.0.0");
    assert.equal(
      (field(r, "path") as PathV).path,
      t.path("home/.local/share/mise/installs/zed/7.0.0/bin/zed"),
    );
    const p = await s.run("reef fetch pinned");
    assert.equal(field(p, "fetched"), false);
    assert.match(String(field(p, "note")), /pinned to provider system/);
    t.write("bin/mise", "#!/bin/sh\necho 'network down' >&2\nexit 1\n", 0o755);
    const e = await s.error("reef fetch zed");
    assert.equal(e.code, "reef_provider");
    assert.match(e.msg, /network down/);
  });
});

Deno.test("runners: extension table, [runners] overlays (empty [tools] too), shebang, .rs", async () => {
  await withTree(async (t) => {
    t.tool("bin/ruby", "3.3.0");
    t.tool("bin/lua", "5.4.6");
    t.tool("bin/deno", "2.0.0");
    t.write("x.rb", "puts 1\n");
    t.write("x.lua", "print(1)\n");
    t.write("x.ts", "console.log(1)\n");
    t.write("x.sh", 'echo sh-ran "$@"\n');
    t.write("tool", "#!/usr/bin/env lua -x\nprint(1)\n");
    t.write("noext", "#!/bin/sh\necho noext-ran\n");
    const s = t.session();
    assert.equal(await s.show('run("x.rb").out'), `"ruby 3.3.0 ran ${t.path("x.rb")}"`);
    assert.equal(await s.show('run("x.lua").out'), `"lua 5.4.6 ran ${t.path("x.lua")}"`);
    assert.equal(await s.show('run("x.ts").out'), `"deno 2.0.0 ran run ${t.path("x.ts")}"`);
    assert.equal(await s.show('run("x.sh", "a").out'), '"sh-ran a"');
    assert.equal(await s.show('run("./tool").out'), `"lua 5.4.6 ran -x ${t.path("tool")}"`);
    assert.equal(await s.show('run("./noext").out'), '"noext-ran"');
    // A runner-only manifest (no [tools]) applies: upstream dropped it.
    t.write(".reef.toml", '[runners]\nrb = { tool = "sh", args = ["-e"] }\n');
    t.write("y.rb", "echo overlay-ran\n");
    assert.equal(await s.show('run("y.rb").out'), '"overlay-ran"');
    // The nearest scope wins per extension.
    t.write("sub/.reef.toml", '[runners]\nrb = "ruby"\n');
    t.write("sub/z.rb", "x\n");
    assert.equal(
      await t.session("sub").show('run("z.rb").out'),
      `"ruby 3.3.0 ran ${t.path("sub/z.rb")}"`,
    );
    // .rs: rustc compiles to a temp binary that then runs (a stand-in rustc here).
    t.write(
      "bin/rustc",
      '#!/bin/sh\n[ "$1" = -o ] || exit 2\nprintf \'#!/bin/sh\\necho compiled "$@"\\n\' > "$2"; chmod +x "$2"\n',
      0o755,
    );
    t.write("m.rs", "fn main() {}\n");
    assert.equal(await s.show('run("m.rs", "q").out'), '"compiled q"');
    assert.equal((await s.error('run("./nothing.zzz")')).code, "runner_not_found");
  });
});

Deno.test("a non-executable path head with a runner runs through it; an executable one is exec'd", async () => {
  await withTree(async (t) => {
    t.write("a.sh", "echo via-runner\n"); // 0644
    t.write("b.sh", "#!/bin/sh\necho direct\n", 0o755);
    t.write("c", "#!/bin/sh\necho shebang-runner\n"); // 0644, no extension
    const s = t.session();
    assert.equal(await s.show("(./a.sh).out"), '"via-runner"');
    assert.equal(await s.show("(./b.sh).out"), '"direct"');
    assert.equal(await s.show("(./c).out"), '"shebang-runner"');
  });
});

Deno.test("with reef: constrains inside the block only; values must be strings", async () => {
  await withTree(async (t) => {
    t.tool("bin/faketool", "20.1.0");
    const s = t.session();
    assert.equal((await s.error('with reef: {faketool: "20"} { faketool }')).code, "reef_unlocked");
    assert.equal(await s.show("(faketool).out"), '"faketool 20.1.0 ran"');
    const w = await s.run('with reef: {faketool: "20"} { (which faketool).out }');
    assert.equal(field(w, "scope"), "override");
    assert.equal((await s.error("with reef: {faketool: 20} { }")).code, "type_error");
    // A script run inside the block sees the layer too.
    t.write("inner.shl", "faketool\n");
    assert.equal(
      (await s.error('with reef: {faketool: "21"} { run("inner.shl") }')).code,
      "reef_unlocked",
    );
    // Interactive: resolved, but nothing to save it beside (no manifest in scope).
    const repl = t.session(".", { repl: true });
    assert.equal(
      await repl.show('with reef: {faketool: "20"} { (faketool).out }'),
      '"faketool 20.1.0 ran"',
    );
    assert.match(repl.stderr, /not saved: no manifest in scope/);
  });
});

Deno.test("a malformed manifest is reported once per session, and farther scopes still apply", async () => {
  await withTree(async (t) => {
    t.tool("bin/faketool", "1.0.0");
    t.write(".reef.toml", '[tools]\nfaketool = "2"\n');
    t.write("sub/mise.toml", "[tools\n");
    const s = t.session("sub");
    assert.equal((await s.error("faketool")).code, "reef_unlocked");
    assert.equal((await s.error("faketool")).code, "reef_unlocked");
    const lines = s.stderr.split("\n").filter((l) => l.includes("ignoring"));
    assert.equal(lines.length, 1, s.stderr);
    assert.ok(lines[0].includes(join(t.path("sub"), "mise.toml")));
    const doc = (await s.run("reef doctor")) as ListV;
    assert.ok(
      doc.items.some((r) => field(r, "check") === "manifest" && field(r, "status") === "invalid"),
    );
  });
});
