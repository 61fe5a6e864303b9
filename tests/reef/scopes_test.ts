// Manifests and scope discovery in real temp trees: formats, order, nearest first, the user
// scope, empty-[tools] manifests, malformed files reported, and same-directory edits seen.

import assert from "node:assert/strict";
import { decide, discoverScopes, renderConstraint } from "../../lib/reef/mod.ts";
import { parseManifest } from "../../lib/reef/manifest.ts";
import { withTree } from "./_helpers.ts";

const ok = (text: string, kind: "reef" | "mise" | "tool-versions" | "user" = "reef") => {
  const r = parseManifest(kind, "/x/m", { ok: true, text });
  if (!r.ok) throw new Error(r.missing ? "missing" : r.problem.error);
  return r.manifest;
};
const bad = (text: string, kind: "reef" | "mise" | "user" = "reef") => {
  const r = parseManifest(kind, "/x/m", { ok: true, text });
  assert.ok(!r.ok && !r.missing, `expected a problem for ${text}`);
  return r.problem.error;
};

Deno.test("native manifest: strings, tables, provider pins, runners, options", () => {
  const m = ok(`
[tools]
node = "22"
deno = { version = "1.46", provider = "mise" }
go = { provider = "system" }
jq = 1
[runners]
py = "python"
ts = { tool = "deno", args = ["run", "-A"] }
[options]
hermetic = true
[unknown]
ignored = 1
`);
  assert.equal(m.tools.get("node")!.text, "22");
  assert.equal(m.tools.get("deno")!.provider, "mise");
  assert.equal(renderConstraint(m.tools.get("go")!.constraint), "*");
  assert.equal(m.tools.get("jq")!.text, "1");
  assert.deepEqual(m.runners.get("ts"), { tool: "deno", args: ["run", "-A"] });
  assert.equal(m.hermetic, true);
});

Deno.test("native manifest problems are errors with a reason, not silent skips", () => {
  assert.match(bad("not toml [[["), /invalid TOML/);
  assert.match(bad("tools = 5"), /\[tools\] is not a table/);
  assert.match(bad("[tools]\npython = 3.10"), /write the version as a string/);
  assert.match(bad('[tools]\nnode = { provider = "brew" }'), /unknown provider "brew"/);
  assert.match(bad("[runners]\npy = 3"), /\[runners\] py/);
  assert.match(bad('[options]\nhermetic = "yes"'), /hermetic must be a bool/);
});

Deno.test("mise, .tool-versions and the user [reef] table", () => {
  const mise = ok(
    '[tools]\nnode = ["20", "18"]\npython = { version = "3.12" }\nrust = "stable"\nweird = 5\n' +
      '[env]\nX = "1"\n',
    "mise",
  );
  assert.deepEqual([...mise.tools.keys()], ["node", "python", "rust"]);
  assert.equal(mise.tools.get("node")!.text, "20");
  assert.equal(mise.runners.size, 0);
  const tv = parseManifest("tool-versions", "/x/.tool-versions", {
    ok: true,
    text: "# comment\nnodejs 20.1.0 19 # fallback\n\npython 3.11.2\nlonely\n",
  });
  assert.ok(tv.ok);
  assert.deepEqual([...tv.manifest.tools].map(([k, v]) => [k, v.text]), [
    ["nodejs", "20.1.0"],
    ["python", "3.11.2"],
  ]);
  const user = ok('[reef.tools]\nrg = "14"\n[reef.options]\nhermetic = false\n', "user");
  assert.equal(user.kind, "user");
  assert.equal(user.tools.get("rg")!.text, "14");
  const none = parseManifest("user", "/x/shoal.toml", {
    ok: true,
    text: "[render]\ncolor = false\n",
  });
  assert.ok(!none.ok && none.missing, "a shoal.toml without [reef] is no scope");
});

Deno.test("discovery: every directory up to /, formats in order, user scope last", async () => {
  await withTree((t) => {
    t.write(".reef.toml", '[tools]\nnode = "22"\n');
    t.write(".tool-versions", "node 22.3.1\n");
    t.write("a/mise.toml", '[tools]\nnode = "22.3"\n');
    t.write("a/.mise.toml", '[tools]\npython = "3.12"\n');
    t.write("a/b/.reef.toml", '[runners]\nrb = "sh"\n'); // no [tools]: still a scope
    t.write("home/.config/shoal/shoal.toml", '[reef.tools]\nnode = "*"\n');
    const chain = discoverScopes(t.path("a/b"), t.env());
    const mine = chain.scopes.filter((s) => s.path!.startsWith(t.root));
    assert.deepEqual(mine.map((s) => s.path!.slice(t.root.length)), [
      "/a/b/.reef.toml",
      "/a/mise.toml",
      "/a/.mise.toml",
      "/.reef.toml",
      "/.tool-versions",
      "/home/.config/shoal/shoal.toml",
    ]);
    assert.deepEqual(mine.map((s) => s.kind), [
      "reef",
      "mise",
      "mise",
      "reef",
      "tool-versions",
      "user",
    ]);
    // Beside the nearest .reef.toml that declares tools (a/b's only sets a runner).
    assert.equal(chain.lockPath, t.path("reef.lock"));
    assert.equal(discoverScopes(t.path("a"), t.env()).lockPath, t.path("reef.lock"));
    const d = decide("node", chain)!;
    assert.equal(renderConstraint(d.constraint), "22.3.1");
    assert.equal(d.base.path, t.path("a/mise.toml"));
    assert.deepEqual(d.chain.filter((r) => r.source.startsWith(t.root)).map((r) => r.outcome), [
      "absent",
      "selected",
      "absent",
      "shadowed",
      "shadowed",
      "shadowed",
    ]);
    assert.equal(decide("git", chain), null, "unmentioned tools are not Reef's");
    // XDG_CONFIG_HOME moves the user scope.
    const xdg = discoverScopes(t.path("a/b"), t.env({ XDG_CONFIG_HOME: t.path("nowhere") }));
    assert.ok(!xdg.scopes.some((s) => s.kind === "user"));
  });
});

Deno.test("a foreign-only chain locks beside its first scope; the user scope alone too", async () => {
  await withTree((t) => {
    t.write("p/.tool-versions", "node 20\n");
    assert.equal(discoverScopes(t.path("p"), t.env()).lockPath, t.path("p/reef.lock"));
    t.write("home/.config/shoal/shoal.toml", '[reef.tools]\nnode = "20"\n');
    assert.equal(
      discoverScopes(t.path("q"), t.env()).lockPath,
      t.path("home/.config/shoal/reef.lock"),
    );
  });
});

Deno.test("malformed manifests are reported and do not hide farther scopes", async () => {
  await withTree((t) => {
    t.write(".reef.toml", '[tools]\nnode = "22"\n');
    t.write("sub/.reef.toml", "[tools\nbroken");
    const chain = discoverScopes(t.path("sub"), t.env());
    assert.equal(chain.problems.length, 1);
    assert.equal(chain.problems[0].path, t.path("sub/.reef.toml"));
    assert.match(chain.problems[0].error, /invalid TOML/);
    assert.equal(decide("node", chain)!.base.path, t.path(".reef.toml"));
  });
});

Deno.test("same-directory edits are seen at once (no cd needed), also within one clock tick", async () => {
  await withTree((t) => {
    const cwd = t.path("p");
    const file = t.write("p/.reef.toml", '[tools]\nfaketool = "18"\n');
    // A coarse file-system clock: both writes get the same mtime (and the same size), so the
    // file's identity does not change — only its content does.
    const tick = new Date();
    Deno.utimeSync(file, tick, tick);
    const c = () => renderConstraint(decide("faketool", discoverScopes(cwd, t.env()))!.constraint);
    assert.equal(c(), "18");
    t.write("p/.reef.toml", '[tools]\nfaketool = "22"\n');
    Deno.utimeSync(file, tick, tick);
    assert.equal(c(), "22");
    // A new nearer-format file in the same directory; then the manifest removed.
    t.write("p/mise.toml", '[tools]\nother = "1"\n');
    assert.ok(decide("other", discoverScopes(cwd, t.env())) !== null);
    Deno.removeSync(t.path("p/.reef.toml"));
    assert.equal(decide("faketool", discoverScopes(cwd, t.env())), null);
    // Unchanged files give the very same chain object (cheap checks downstream).
    assert.equal(discoverScopes(cwd, t.env()), discoverScopes(cwd, t.env()));
  });
});
