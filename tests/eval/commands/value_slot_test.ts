/**
 * A command written bare where a value goes (issue 13: the commonest slip agents made in the
 * trials): `let f = ls d`, `[n, ls -a d]`, `f(1, git log -n 2)`, `{a: ls d}`, `x = cmd`,
 * `return cmd` run the command as `( )` would. Everything that parsed before keeps its
 * meaning (`[ls]`, `[now - 1d]`, a bound name), a `,` ends the command in a list, a `catch`
 * after it applies to it, and what is neither an expression nor a command keeps its error.
 */

import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { parse, tryParse } from "../../../lib/syntax/mod.ts";
import { session, show, withTempDir } from "./_helpers.ts";

function fixture(dir: string): void {
  Deno.mkdirSync(join(dir, "d"));
  Deno.writeTextFileSync(join(dir, "d", "a.txt"), "a\n");
  Deno.writeTextFileSync(join(dir, "d", "b.tmp"), "b\n");
}

/** The same program written with the command in ( ). */
function parenthesized(src: string, cmd: string): string {
  return src.replace(cmd, `(${cmd})`);
}

Deno.test("a bare command in a value slot is the ( ) form, to the AST", () => {
  const cases: [string, string][] = [
    ["let f = ls -a d", "ls -a d"],
    ["var g = git log -n 2; 1", "git log -n 2"],
    ["[1, ls -a t13/media, 2]", "ls -a t13/media"],
    ["[ls d, 3]", "ls d"],
    ["f(1, git log -n 2)", "git log -n 2"],
    ["f(k: ls -l d)", "ls -l d"],
    ["{a: ls t11, b: 2}", "ls t11"],
    ["{\n  a: ls t11\n  b: 2\n}", "ls t11"],
    ["let x = 1\nx = git status\nx", "git status"],
    ["fn f() { return ls d }", "ls d"],
    ['[echo "a, b", 2]', 'echo "a, b"'],
    ['[echo """a, "b" c""", 2]', 'echo """a, "b" c"""'],
    ["[sh -c 'exit 3', 1]", "sh -c 'exit 3'"],
    ["let t = git log -n 2 && echo ok", "git log -n 2 && echo ok"],
    // a flag glued to its dash is the command's, even with nothing after it (not `ls - a`)
    ["[pwd, ls -a]", "ls -a"],
    ["let f = ls -la", "ls -la"],
    ["[tail --help, 2]", "tail --help"],
  ];
  const strip = (v: unknown): unknown =>
    JSON.parse(JSON.stringify(v, (k, x) => (k === "span" || k === "headSpan" ? undefined : x)));
  for (const [src, cmd] of cases) {
    assertEquals(strip(parse(src)), strip(parse(parenthesized(src, cmd))), src);
  }
});

Deno.test("forms that parsed before keep their meaning", () => {
  const item = (src: string) => {
    const st = parse(src).body.at(-1)!;
    assert(st.kind === "ExprStmt" && st.expr.kind === "List", src);
    return st.expr.items.map((e) => e.kind);
  };
  assertEquals(item("[ls]"), ["Ident"]);
  assertEquals(item("[now - 1d, today]"), ["Binary", "Ident"]);
  assertEquals(item("[now -1d, today -1d]"), ["Binary", "Binary"]);
  assertEquals(item("let x = 1\n[x - 1]"), ["Binary"]);
  // `ls (x)` was already a call (language §7.5), which runs the command
  assertEquals(item('[ls (glob("*.tmp")), 1]'), ["Call", "Int"]);
  // a bound value is never a command head: `x y` stays an error
  assert(!tryParse("let x = 1\n[x y]").ok);
  assert(!tryParse("let x = 1\nlet y = x z").ok);
});

Deno.test("a name a let bound is the variable; the error says so and ^name runs the command", () => {
  const r = tryParse("let ls = [1]\n[ls -a t11, 1]");
  assert(!r.ok);
  assertEquals(r.error.msg, "`ls` is a variable here, so `ls …` is not the command");
  assert(/write \^ls/.test(r.error.hint ?? ""), String(r.error.hint));
  const forced = parse("let ls = [1]\n[^ls -a t11, 1]").body[1];
  assert(forced.kind === "ExprStmt" && forced.expr.kind === "List");
  assertEquals(forced.expr.items[0].kind, "Cmd");
  // an operator after the name is still arithmetic
  assert(tryParse("let x = 3\nlet a = 1\n[x -a, x - 1, x in [3]]").ok);
  // …and a whole line that starts with it says why its next word is stray (a trial agent's
  // `let ls = …` earlier, then `ls -a t11/scratch`)
  const line = tryParse("let ls = [1]\nls -a t11/scratch");
  assert(!line.ok);
  assertEquals(line.error.msg, "expected newline or `;` between statements");
  assert(/`ls` is a variable here, so `ls …` is not the command/.test(line.error.hint ?? ""));
  assert(/write \^ls/.test(line.error.hint ?? ""), String(line.error.hint));
});

Deno.test("a catch after the command applies to it", () => {
  const st = parse('let x = cat nope catch "none"').body[0];
  assert(st.kind === "Let" && st.value.kind === "Catch" && st.value.expr.kind === "Cmd");
});

Deno.test("neither an expression nor a command: the expression's error, with its rewrites", () => {
  const r = tryParse("let n = ls | wc -l");
  assert(!r.ok);
  assert(/no pipe operator/.test(r.error.msg), r.error.msg);
  assert(r.error.rewrites.length > 0, JSON.stringify(r.error));
  const q = tryParse("[ls d ]]");
  assert(!q.ok);
});

Deno.test("the bare commands run and give the values the ( ) forms give", async () => {
  await withTempDir(async (dir) => {
    fixture(dir);
    const ev = session(dir);
    assertEquals(await show(ev, "let f = ls d\nf.map(.name)"), '["a.txt", "b.tmp"]');
    assertEquals(
      await show(ev, "[(ls d).len(), ls d/*.tmp][1].map(.name)"),
      '["b.tmp"]',
    );
    assertEquals(await show(ev, "{n: (ls d).len(), c: cat d/a.txt}.c.str()"), '"a\\n"');
    assertEquals(await show(ev, 'let x = cat nope catch "none"\nx'), '"none"');
    // value position: a failing external command is a failed outcome, not a raise
    assertEquals(await show(ev, "[sh -c 'exit 3', 1][0].status"), "3");
    assertEquals(await show(ev, 'fn names(d) { return ls (d) }\nnames("d").len()'), "2");
  });
});

Deno.test("a command called with ( ) values: a list is its items, a glob its paths", async () => {
  await withTempDir(async (dir) => {
    fixture(dir);
    const ev = session(dir);
    // `let x = cmd (v)` is the call form cmd(v) (§7.5), which must mean what the statement does
    assertEquals(await show(ev, 'let e = echo (["a", "b"])\ne.out'), '"a b"');
    assertEquals(await show(ev, 'let p = echo (glob("d/*.tmp"))\np.out'), `"${dir}/d/b.tmp"`);
    assertEquals(
      await show(ev, 'let q = echo ([glob("d/*.txt").expand(), "x"])\nq.out'),
      `"${dir}/d/a.txt x"`,
    );
    const bad = await show(ev, "try { let r = echo ([{a: 1}]) } catch e { [e.code, e.hint] }");
    assert(bad.includes("type_error") && bad.includes(".map(.path)"), bad);
  });
});
