/**
 * Effect derivation (protocol §11.1) under a real evaluator in a temp directory: every builtin
 * head with concrete paths resolved against the session cwd, `cd`/`with cwd:` moving it, the
 * session's bindings (functions, aliases, values), nested bodies (`spawn`, `parallel`,
 * `retry`, `on`, lambdas, `.shl` scripts read from disk), and `opaque` for unknown externals,
 * interpreter blocks and dynamic calls.
 */

import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { Evaluator } from "../../lib/eval/mod.ts";
import { deriveEffects, type Effect, evaluatorHost } from "../../lib/leash/mod.ts";

const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "shoal-derive-" }));
await Deno.mkdir(join(dir, "sub"));
for (const f of ["a.txt", "b.txt", "sub/c.txt"]) await Deno.writeTextFile(join(dir, f), f);
await Deno.writeTextFile(join(dir, "job.shl"), "rm ./from-script\n");
await Deno.writeTextFile(join(dir, "mod.shl"), "export let x = 1\ntouch ./from-module\n");
const HOME = "/home/tester";
const ev = new Evaluator({ cwd: dir, env: { HOME, PATH: Deno.env.get("PATH") ?? "" } });
await ev.evalSource(
  "fn del(p: path) { rm (p) }\nalias wipe = rm ./aliased\nlet target = path('./bound')\n" +
    "let rec = {go: () => { touch ./via-record }}",
);

function derive(src: string): { effects: Effect[]; reversibility: string } {
  return deriveEffects(ev.parse(src), evaluatorHost(ev));
}
const p = (f: string) => join(dir, f);
const fx = (src: string) => derive(src).effects;
const OPAQUE = { kind: "opaque" };

Deno.test("filesystem builtins: concrete, absolute paths", () => {
  assertEquals(fx("ls"), [{ kind: "fs_read", paths: [dir] }]);
  assertEquals(fx("ls sub"), [{ kind: "fs_read", paths: [p("sub")] }]);
  assertEquals(fx("cat a.txt b.txt"), [{ kind: "fs_read", paths: [p("a.txt"), p("b.txt")] }]);
  assertEquals(fx("head a.txt 3"), [{ kind: "fs_read", paths: [p("a.txt")] }]);
  assertEquals(fx("stat ./a.txt"), [{ kind: "fs_read", paths: [p("a.txt")] }]);
  assertEquals(fx("mkdir -p ./n/m"), [{ kind: "fs_write", paths: [p("n/m")] }]);
  assertEquals(fx("touch ~/x"), [{ kind: "fs_write", paths: [`${HOME}/x`] }]);
  assertEquals(fx("cp a.txt sub"), [
    { kind: "fs_read", paths: [p("a.txt")] },
    { kind: "fs_write", paths: [p("sub/a.txt")] },
  ]);
  assertEquals(fx("cp -r sub /tmp/copy"), [
    { kind: "fs_read", paths: [p("sub"), p("sub/**")] },
    { kind: "fs_write", paths: ["/tmp/copy", "/tmp/copy/**"] },
  ]);
  assertEquals(fx("mv a.txt b.txt sub"), [
    { kind: "fs_write", paths: [p("sub/a.txt"), p("sub/b.txt")] },
    { kind: "fs_delete", paths: [p("a.txt"), p("b.txt")] },
  ]);
  assertEquals(fx("rm *.txt"), [{ kind: "fs_delete", paths: [p("a.txt"), p("b.txt")] }]);
  assertEquals(fx("rm -r sub"), [{ kind: "fs_delete", paths: [p("sub"), p("sub/**")] }]);
  assertEquals(fx("ln -s a.txt l"), [{ kind: "fs_write", paths: [p("l")] }]);
  assertEquals(fx("save ./s.json 1"), [{ kind: "fs_write", paths: [p("s.json")] }]);
  assertEquals(fx("echo x > ./out.txt"), [{ kind: "fs_write", paths: [p("out.txt")] }]);
  assertEquals(fx("cat < ./a.txt"), [{ kind: "fs_read", paths: [p("a.txt")] }]);
  assertEquals(fx('"x".save("./m.txt")'), [{ kind: "fs_write", paths: [p("m.txt")] }]);
  assertEquals(fx("path('./a.txt').read()"), [{ kind: "fs_read", paths: [p("a.txt")] }]);
  assertEquals(fx("watch('./sub')"), [{ kind: "fs_read", paths: [p("sub")] }]);
  // Reversibility: trash-backed rm is conditional, --permanent irreversible, reads reversible.
  assertEquals(derive("rm a.txt").reversibility, "conditional");
  assertEquals(derive("rm --permanent a.txt").reversibility, "irreversible");
  assertEquals(derive("cat a.txt").reversibility, "reversible");
});

Deno.test("other builtins: env, time, session, journal, scripts", () => {
  assertEquals(fx("echo hi; pwd; dirs; jobs; assert true"), []);
  assertEquals(fx("env"), [{ kind: "env_read", names: ["*"] }]);
  assertEquals(fx("env HOME"), [{ kind: "env_read", names: ["HOME"] }]);
  assertEquals(fx("env.HOME"), [{ kind: "env_read", names: ["HOME"] }]);
  assertEquals(fx("env.X = 1"), [{ kind: "env_write", names: ["X"] }]);
  assertEquals(fx("which git"), [{ kind: "env_read", names: ["PATH"] }]);
  assertEquals(fx("sleep 1s"), [{ kind: "time" }]);
  assertEquals(fx("let t = now"), [{ kind: "time" }]);
  assertEquals(fx("journal"), [{ kind: "journal_read" }]);
  assertEquals(fx("undo"), [{ kind: "journal_read" }, OPAQUE]);
  assertEquals(fx("echo (secret.get('gh'))"), [{ kind: "secret_use", names: ["gh"] }]);
  assertEquals(fx("run ./job.shl"), [
    { kind: "fs_read", paths: [p("job.shl")] },
    { kind: "fs_delete", paths: [p("from-script")] },
  ]);
  assertEquals(fx("./job.shl"), [
    { kind: "fs_read", paths: [p("job.shl")] },
    { kind: "fs_delete", paths: [p("from-script")] },
  ]);
  assertEquals(fx("use ./mod"), [
    { kind: "fs_read", paths: [p("mod.shl")] },
    { kind: "fs_write", paths: [p("from-module")] },
  ]);
  assertEquals(fx("run ./missing.shl"), [{ kind: "fs_read", paths: [p("missing.shl")] }, OPAQUE]);
});

Deno.test("cd and with cwd: move the cwd later paths resolve against", () => {
  assertEquals(fx("cd sub; rm c.txt"), [
    { kind: "fs_delete", paths: [p("sub/c.txt")] },
    { kind: "session_write" },
  ]);
  assertEquals(fx("with cwd: './sub' { touch z }"), [{ kind: "fs_write", paths: [p("sub/z")] }]);
  assertEquals(fx("with cwd: './sub' { touch z }; touch y"), [
    { kind: "fs_write", paths: [p("sub/z"), p("y")] },
  ]);
  // Branches that end in different places leave the cwd unknown: relative paths go opaque.
  assertEquals(fx("if true { cd /tmp } else { cd /etc }; rm q"), [
    { kind: "session_write" },
    OPAQUE,
  ]);
});

Deno.test("functions, aliases, bound values and nested bodies count", () => {
  assertEquals(fx("del ./gone"), [{ kind: "fs_delete", paths: [p("gone")] }]);
  assertEquals(fx("wipe"), [{ kind: "fs_delete", paths: [p("aliased")] }]);
  assertEquals(fx("rm (target)"), [{ kind: "fs_delete", paths: [p("bound")] }]);
  assertEquals(fx("rec.go()"), [{ kind: "fs_write", paths: [p("via-record")] }]);
  assertEquals(fx("fn f() { touch ./later }"), [], "a definition does nothing");
  assertEquals(fx("fn f() { touch ./later }; f()"), [{ kind: "fs_write", paths: [p("later")] }]);
  assertEquals(fx("let t = spawn { rm ./s }"), [{ kind: "fs_delete", paths: [p("s")] }]);
  assertEquals(fx("parallel(() => { cat ./a.txt }, () => { rm ./b.txt })"), [
    { kind: "fs_read", paths: [p("a.txt")] },
    { kind: "fs_delete", paths: [p("b.txt")] },
  ]);
  assertEquals(fx("retry(3, () => { touch ./r })"), [{ kind: "fs_write", paths: [p("r")] }]);
  assertEquals(fx("on('user.x', e => { rm ./h })"), [{ kind: "fs_delete", paths: [p("h")] }]);
  assertEquals(fx("[1, 2].each(x => { touch ./e })"), [{ kind: "fs_write", paths: [p("e")] }]);
  assertEquals(fx("fn r(n) { if n > 0 { r(n - 1) } else { rm ./deep } }; r(3)"), [
    { kind: "fs_delete", paths: [p("deep")] },
  ]);
  // Both branches of a conditional are in the plan.
  assertEquals(fx("if false { rm ./never } else { touch ./always }"), [
    { kind: "fs_write", paths: [p("always")] },
    { kind: "fs_delete", paths: [p("never")] },
  ]);
});

Deno.test("opaque: unknown externals, interpreter blocks, dynamic calls, unknown paths", () => {
  assertEquals(fx("git status"), [{ kind: "proc_spawn", bin_hash: "", argv0: "git" }, OPAQUE]);
  assertEquals(fx("sh { rm -rf / }"), [{ kind: "proc_spawn", bin_hash: "", argv0: "sh" }, OPAQUE]);
  assertEquals(fx("python3 '''print(1)'''"), [
    { kind: "proc_spawn", bin_hash: "", argv0: "python3" },
    OPAQUE,
  ]);
  assertEquals(fx("x.frobnicate()"), [OPAQUE], "a dynamic call of some record's function");
  assertEquals(fx("(ls).each(r => r.path.read())"), [{ kind: "fs_read", paths: [dir] }, OPAQUE]);
  assertEquals(fx("rm (['a'].first())"), [OPAQUE], "a path computed at run time");
  assert(derive("git status").reversibility === "irreversible");
  // A hand-made AST with a node kind the walker does not know.
  const weird = deriveEffects(
    { kind: "Program", ast_version: 2, body: [{ kind: "Mystery" }], span: [0, 0] } as never,
    evaluatorHost(ev),
  );
  assertEquals(weird.effects, [OPAQUE]);
});

Deno.test("derivation is linear and bounded", () => {
  const src = Array.from({ length: 2000 }, (_, i) => `touch ./f${i}`).join("\n");
  const t0 = performance.now();
  const d = derive(src);
  assertEquals((d.effects[0] as { paths: string[] }).paths.length, 2000);
  assert(performance.now() - t0 < 5000);
});

Deno.test("adapted commands plan with their declared effects, against the cwd they run in", () => {
  const a = new Evaluator({
    cwd: dir,
    env: { HOME, PATH: Deno.env.get("PATH") ?? "" },
    adapters: true,
  });
  const plan = (src: string) => deriveEffects(a.parse(src), evaluatorHost(a));
  const st = plan("git status");
  assertEquals(st.effects.find((e) => e.kind === "proc_spawn"), {
    kind: "proc_spawn",
    bin_hash: "",
    argv0: "git",
  });
  assert(!st.effects.some((e) => e.kind === "opaque"), JSON.stringify(st.effects));
  assert(
    st.effects.some((e) => e.kind === "fs_read" && e.paths.includes(dir)),
    JSON.stringify(st.effects),
  );
  // After a `cd`, the declared paths are where the command will run.
  Deno.mkdirSync(join(dir, "sub"), { recursive: true });
  const moved = plan("cd sub; git status");
  assert(
    moved.effects.some((e) => e.kind === "fs_read" && e.paths.includes(join(dir, "sub"))),
    JSON.stringify(moved.effects),
  );
  // A flag the adapter does not know runs the plain tool: an unknown external again.
  assert(plan("git log --oneline").effects.some((e) => e.kind === "opaque"));
  // ^git is the plain tool too.
  assert(plan("^git status").effects.some((e) => e.kind === "opaque"));
});
