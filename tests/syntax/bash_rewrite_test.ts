/**
 * Bash-shaped source (issue 13): every "shoal has no pipe / no sigil / …" parse error carries
 * the rewritten source to resend — in `rewrites` (native first, then `sh { … }`) and in the
 * hint. One test per idiom: the exact rewrites, and both of them run in a real directory and
 * give what the bash would have meant.
 */

import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { parse, ParseError, type Rewrite, tryParse } from "../../lib/syntax/mod.ts";
import { Evaluator } from "../../lib/eval/mod.ts";
import { renderInline } from "../../lib/value/render.ts";

function rewrites(src: string, opts = {}): Rewrite[] {
  const r = tryParse(src, opts);
  assert(!r.ok, `${JSON.stringify(src)} parsed`);
  return r.error.rewrites;
}

function dir(): string {
  const d = Deno.makeTempDirSync({ prefix: "shoal-rewrite-test-" });
  Deno.writeTextFileSync(join(d, "notes.txt"), "alpha\nbeta\ngamma\ndelta\n");
  Deno.writeTextFileSync(join(d, "a.txt"), "a\n");
  Deno.writeTextFileSync(join(d, "b.txt"), "b\n");
  Deno.writeTextFileSync(join(d, "pkg.json"), '{"name": "demo", "version": "1.0.0"}\n');
  Deno.mkdirSync(join(d, "src"));
  Deno.writeTextFileSync(join(d, "src", "m.ts"), "");
  return d;
}

/** Runs `src` in a fresh fixture directory; the result's inline rendering. */
async function run(src: string, cwd = dir()): Promise<string> {
  const ev = new Evaluator({ cwd, env: { HOME: "/home/agent", PATH: Deno.env.get("PATH") ?? "" } });
  return renderInline(await ev.evalSource(src));
}

/** The rewrites of `src`, checked to be exactly `native` (or none) and `sh`. */
function expectRewrites(src: string, native: string | null, sh: string | null): void {
  const want: Rewrite[] = [];
  if (native !== null) want.push({ form: "native", src: native });
  if (sh !== null) want.push({ form: "sh", src: sh });
  assertEquals(rewrites(src), want, src);
}

Deno.test("a | b: the native chain and sh { … } (ls | wc -l, cat f | head -3, … | grep)", async () => {
  expectRewrites("ls | wc -l", "ls.len()", "sh { ls | wc -l }");
  assertEquals(await run("ls.len()"), "5");
  assertEquals(await run("sh { ls | wc -l }.out.trim()"), '"5"');

  expectRewrites(
    "cat notes.txt | head -3",
    'path("notes.txt").lines().take(3)',
    "sh { cat notes.txt | head -3 }",
  );
  assertEquals(await run('path("notes.txt").lines().take(3)'), '["alpha", "beta", "gamma"]');
  assertEquals(await run("sh { cat notes.txt | head -3 }.out"), '"alpha\\nbeta\\ngamma"');

  expectRewrites(
    "cat notes.txt | grep -v ph | wc -l",
    'path("notes.txt").lines().where(l => !(l.contains("ph"))).len()',
    "sh { cat notes.txt | grep -v ph | wc -l }",
  );
  assertEquals(await run('path("notes.txt").lines().where(l => !(l.contains("ph"))).len()'), "3");
  expectRewrites(
    "cat notes.txt | grep et | sort -r",
    'path("notes.txt").lines().where(.contains("et")).sort().reverse()',
    "sh { cat notes.txt | grep et | sort -r }",
  );
  assertEquals(
    await run('path("notes.txt").lines().where(.contains("et")).sort().reverse()'),
    '["beta"]',
  );
  expectRewrites(
    "git log --oneline | head -5",
    "(git log --oneline).stdout.lines().take(5)",
    "sh { git log --oneline | head -5 }",
  );
  expectRewrites(
    "cat pkg.json | jq .name",
    'json.parse(path("pkg.json").read()).name',
    "sh { cat pkg.json | jq .name }",
  );
  assertEquals(await run('json.parse(path("pkg.json").read()).name'), '"demo"');
  // a Shoal value on the left: the filters become methods
  expectRewrites("let n = ls | wc -l", "let n = ls.len()", "let n = sh { ls | wc -l }.out");
  expectRewrites("[1, 2] | head -1", "[1, 2].take(1)", null);
  // no faithful native form (awk): sh only
  expectRewrites("ls | awk '{print $1}'", null, "sh { ls | awk '{print $1}' }");
});

Deno.test("$VAR and ${VAR:-default}: env.NAME, or the Shoal binding of that name", async () => {
  expectRewrites("echo $HOME", "echo (env.HOME)", "sh { echo $HOME }");
  assertEquals(await run("(echo (env.HOME)).out"), '"/home/agent"');
  expectRewrites("echo ${HOME}/x", 'echo "{env.HOME}/x"', "sh { echo ${HOME}/x }");
  assertEquals(await run('(echo "{env.HOME}/x").out'), '"/home/agent/x"');
  expectRewrites(
    "echo ${NOPE:-none}",
    'echo ((env.NOPE catch "none"))',
    "sh { echo ${NOPE:-none} }",
  );
  assertEquals(await run('(echo ((env.NOPE catch "none"))).out'), '"none"');
  // a Shoal binding: `$y` means `y`; sh sees it through `with env:`
  expectRewrites(
    "let y = 3; echo $y",
    "let y = 3; echo (y)",
    "let y = 3; with env: {y: y} { sh { echo $y } }",
  );
  assertEquals(await run("let y = 3; with env: {y: y} { sh { echo $y } }.out"), '"3"');
  // inside an expression only the expansion changes
  expectRewrites("if $x > 1 { 2 }", "if env.x > 1 { 2 }", null);
  // positional parameters have no Shoal meaning
  expectRewrites("echo $1", null, "sh { echo $1 }");
  // session bindings count as Shoal values too
  assertEquals(rewrites("echo $n", { valueNames: ["n"] })[0], { form: "native", src: "echo (n)" });
});

Deno.test("$(…) and backticks: (cmd).out, or the native value of a pipeline", async () => {
  expectRewrites("let x = $(date +%Y)", "let x = (date +%Y).out", "let x = sh { date +%Y }.out");
  const year = String(new Date().getUTCFullYear());
  assertEquals(await run("let x = (date -u +%Y).out\nx"), `"${year}"`);
  assertEquals(await run("let x = sh { date -u +%Y }.out\nx"), `"${year}"`);
  expectRewrites("echo $(date +%Y)", "echo ((date +%Y).out)", "sh { echo $(date +%Y) }");
  expectRewrites("echo `date +%Y`", "echo ((date +%Y).out)", "sh { echo `date +%Y` }");
  expectRewrites("x=$(ls | wc -l)", "let x = ls.len()", "let x = sh { ls | wc -l }.out");
  assertEquals(await run("let x = ls.len()\nx"), "5");
});

Deno.test("cd DIR && CMD | …: the cd stays Shoal, the pipeline is rewritten", async () => {
  expectRewrites("cd src && ls | wc -l", "cd src && ls.len()", "cd src && sh { ls | wc -l }");
  assertEquals(await run("cd src && ls.len()"), "1");
  assertEquals(await run("cd src && sh { ls | wc -l }.out.trim()"), '"1"');
});

Deno.test("2>&1 and 2>/dev/null: an outcome keeps stderr apart, so they are dropped", async () => {
  expectRewrites("ls nope 2>&1", "ls nope", "sh { ls nope 2>&1 }");
  expectRewrites("ls 2> /dev/null", "ls", "sh { ls 2> /dev/null }");
  expectRewrites(
    "grep a notes.txt > out.txt 2>&1",
    "grep a notes.txt > out.txt",
    "sh { grep a notes.txt > out.txt 2>&1 }",
  );
  const d = dir();
  await run("grep a notes.txt > out.txt", d);
  assertEquals(Deno.readTextFileSync(join(d, "out.txt")), "alpha\nbeta\ngamma\ndelta\n");
  // `&>` merges the streams into one file: only sh does that
  expectRewrites("ls &> out.txt", null, "sh { ls &> out.txt }");
  // its hint still teaches the native way
  const e = tryParse("ls nope 2>&1");
  assert(!e.ok && e.error.hint!.includes("resend as: ls nope"), e.ok ? "" : e.error.hint!);
});

Deno.test("export NAME=value: env.NAME = value", async () => {
  expectRewrites("export FOO=1", 'env.FOO = "1"', "sh { export FOO=1 }");
  expectRewrites(
    "export PATH=$PATH:/opt/bin",
    'env.PATH = "{env.PATH}:/opt/bin"',
    "sh { export PATH=$PATH:/opt/bin }",
  );
  assertEquals(await run('env.FOO = "1"\n(sh { echo $FOO }).out'), '"1"');
  expectRewrites("export A=1 B=2", 'env.A = "1"; env.B = "2"', "sh { export A=1 B=2 }");
});

Deno.test("for … do … done: for x in … { … }", async () => {
  expectRewrites(
    "for f in *.txt; do echo $f; done",
    'for f in glob("*.txt") { echo (f) }',
    "sh { for f in *.txt; do echo $f; done }",
  );
  const d = dir();
  assertEquals(
    await run('var names = []\nfor f in glob("*.txt") { names = names + [f.name] }\nnames', d),
    '["a.txt", "b.txt", "notes.txt"]',
  );
  assertEquals(
    await run("sh { for f in *.txt; do echo $f; done }.out", d),
    '"a.txt\\nb.txt\\nnotes.txt"',
  );
  expectRewrites(
    "for i in 1 2 3\ndo\n  echo $i\ndone",
    'for i in ["1", "2", "3"] { echo (i) }',
    "sh {\nfor i in 1 2 3\ndo\n  echo $i\ndone\n}",
  );
  expectRewrites(
    "for i in {1..3}; do echo $i; echo x; done",
    "for i in 1..=3 {\n  echo (i)\n  echo x\n}",
    "sh { for i in {1..3}; do echo $i; echo x; done }",
  );
  // while/if the shell way: sh only
  expectRewrites("while true; do sleep 1; done", null, "sh { while true; do sleep 1; done }");
  expectRewrites("if [ -f x ]; then echo y; fi", null, "sh { if [ -f x ]; then echo y; fi }");
});

Deno.test("heredocs and here-strings: a multi-line string, saved or fed", async () => {
  expectRewrites("cat <<EOF\nhello\nEOF", "'''\nhello\n\n'''", "sh {\ncat <<EOF\nhello\nEOF\n}");
  assertEquals(await run("'''\nhello\n\n'''"), '"hello\\n"');
  const d = dir();
  const src = "cat > f.txt <<'EOF'\nline {1}\n$not_expanded\nEOF\necho done";
  expectRewrites(
    src,
    "'''\nline {1}\n$not_expanded\n\n'''.save(\"f.txt\")\necho done",
    "sh {\ncat > f.txt <<'EOF'\nline {1}\n$not_expanded\nEOF\n}\necho done",
  );
  await run(rewrites(src)[0].src, d);
  assertEquals(Deno.readTextFileSync(join(d, "f.txt")), "line {1}\n$not_expanded\n");
  await run(rewrites(src)[1].src, d);
  assertEquals(Deno.readTextFileSync(join(d, "f.txt")), "line {1}\n$not_expanded\n");
  // common indentation would be dedented by '''…''': an escaped string keeps it exact
  expectRewrites(
    "cat <<EOF\n  two\n  lines\nEOF",
    '"  two\\n  lines\\n"',
    "sh {\ncat <<EOF\n  two\n  lines\nEOF\n}",
  );
  // an expanding body ($VAR) is only reproduced by sh
  expectRewrites("cat <<EOF\n$HOME\nEOF", null, "sh {\ncat <<EOF\n$HOME\nEOF\n}");
  expectRewrites(
    "wc -l <<EOF\na\nb\nEOF",
    "'''\na\nb\n\n'''.feed(wc -l)",
    "sh {\nwc -l <<EOF\na\nb\nEOF\n}",
  );
  assertEquals(await run("'''\na\nb\n\n'''.feed(wc -l).out.trim()"), '"2"');
  expectRewrites('grep foo <<< "text"', '"text".feed(grep foo)', 'sh { grep foo <<< "text" }');
});

Deno.test("every rewrite parses, later bash-isms are fixed too, and non-bash errors get none", () => {
  // two bash-isms on two lines: both rounds applied
  expectRewrites(
    "echo $HOME\nls | wc -l",
    "echo (env.HOME)\nls.len()",
    "sh { echo $HOME }\nsh { ls | wc -l }",
  );
  for (const src of ["1 < 2 < 3", "let x = ", "[1, 2", '"a{b"', "match 5 { | 1 => 2 }"]) {
    assertEquals(rewrites(src), [], src);
  }
  // a corpus-pinned teaching error keeps its message; the rewrite is extra
  const r = tryParse("ls | wc");
  assert(!r.ok);
  assertEquals(r.error.msg, "shoal has no pipe operator");
  assert(r.error.hint!.startsWith("chain methods instead"));
  assert(r.error.hint!.includes("or run it as POSIX sh: sh { ls | wc }"));
  // rewrites are computed once, lazily, on a copy with the source's own offsets
  const u = tryParse("echo é $HOME");
  assert(!u.ok);
  assertEquals(u.error.span, [8, 9]); // bytes
  assertEquals(u.error.rewrites[0].src, "echo é (env.HOME)");
  for (const w of rewrites("cat f | head -3\nexport X=1\nfor a in 1; do echo $a; done")) {
    parse(w.src); // throws if a rewrite does not parse
  }
});

Deno.test("a huge source is not rewritten (bounded work)", () => {
  const big = "ls | wc -l\n" + "1\n".repeat(40_000);
  const r = tryParse(big);
  assert(!r.ok && r.error instanceof ParseError);
  assertEquals(r.error.rewrites, []);
});

Deno.test("fuzz: on random shell-shaped sources every rewrite offered parses", () => {
  const pieces = [
    "ls",
    " | ",
    "wc -l",
    "$HOME",
    "$(",
    ")",
    "`",
    "2>&1",
    "<<EOF\n",
    "EOF\n",
    "\n",
    "; do ",
    "for f in *.txt; do ",
    "done",
    "echo ",
    "'",
    '"',
    "{",
    "}",
    "export A=",
    "cat f",
    "|",
    "&&",
    ";",
    "${X:-y}",
    "<<<",
    "head -3",
    "grep -v x",
    "let x = ",
    "(",
    "[",
    "]",
    "jq .a",
    " ",
    "\\",
  ];
  let seed = 13;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  let offered = 0;
  for (let i = 0; i < 3000; i++) {
    let src = "";
    for (let j = 0, k = 1 + rand(8); j < k; j++) src += pieces[rand(pieces.length)];
    const r = tryParse(src);
    if (r.ok) continue;
    for (const w of r.error.rewrites) {
      offered++;
      assert(tryParse(w.src).ok, `${JSON.stringify(src)} → ${JSON.stringify(w.src)}`);
    }
  }
  assert(offered > 100, `only ${offered} rewrites offered`);
});
