/** Focused tests for the statement dispatch, expression grammar and command grammar. */

import assert from "node:assert/strict";
import {
  type Expr,
  type Node,
  parse,
  ParseError,
  type ParseOptions,
  type Stmt,
  tryParse,
  walk,
} from "../../lib/syntax/mod.ts";

const assertEquals: (actual: unknown, expected: unknown, msg?: string) => void =
  assert.deepStrictEqual;
const assertThrows = assert.throws;

/** Drops spans so shapes can be compared structurally. */
function strip<T>(v: T): T {
  return JSON.parse(
    JSON.stringify(v, (k, x) => (k === "span" || k === "headSpan" ? undefined : x)),
  );
}

function stmts(src: string, opts?: ParseOptions): Stmt[] {
  return strip(parse(src, opts).body);
}

/** The expression of the last statement (which must be an expression statement). */
function expr(src: string, opts?: ParseOptions): Expr {
  const body = stmts(src, opts);
  const last = body[body.length - 1];
  if (last.kind !== "ExprStmt") throw new Error(`last statement is ${last.kind}`);
  return last.expr;
}

function kindOf(src: string, opts?: ParseOptions): string {
  return expr(src, opts).kind;
}

function parseErr(src: string, opts?: ParseOptions): ParseError {
  try {
    parse(src, opts);
  } catch (e) {
    if (e instanceof ParseError) return e;
    throw e;
  }
  throw new Error(`expected a parse error for ${JSON.stringify(src)}`);
}

// ---------------------------------------------------------------------------------------------
// Statement dispatch (language §2)

Deno.test("dispatch: a value binding shadows a command name", () => {
  assertEquals(expr("let ls = 5\nls"), { kind: "Ident", name: "ls" });
});

Deno.test("dispatch: ^ forces a command even over a value", () => {
  const e = expr("let ls = 5\n^ls");
  assert(e.kind === "Cmd" && e.forced && e.head === "ls");
});

Deno.test("dispatch: unbound name at statement start is a command with word args", () => {
  const e = expr("pwd == root");
  assert(e.kind === "Cmd");
  assertEquals(e.head, "pwd");
  assertEquals(e.args, [{ kind: "Word", text: "==" }, { kind: "Word", text: "root" }]);
});

Deno.test("dispatch: now/today are commands at statement start, values in let", () => {
  assertEquals(kindOf("now"), "Cmd");
  const [let_] = stmts("let n = now");
  assert(let_.kind === "Let");
  assertEquals(let_.value, { kind: "Ident", name: "now" });
});

Deno.test("dispatch: a glued postfix opener makes an expression", () => {
  assertEquals(kindOf("ls.len()"), "MethodCall");
  assertEquals(kindOf('run("x")'), "Call");
  assertEquals(kindOf("xs[0]"), "Index");
  assertEquals(kindOf("r?.a"), "Field");
});

Deno.test("dispatch: env prefix only when more follows on the line", () => {
  const e = expr('FOO="a b" BAR=1 sh -c x');
  assert(e.kind === "Cmd");
  assertEquals(e.env, [{ name: "FOO", value: "a b" }, { name: "BAR", value: "1" }]);
  assertEquals(e.head, "sh");
  assertEquals(stmts("x=5")[0].kind, "Assign");
  assertEquals(stmts('x="hi"')[0].kind, "Assign");
  assertEquals(stmts("x=(1 + 2)")[0].kind, "Assign");
  assertEquals(stmts("x=[1, 2]")[0].kind, "Assign");
});

Deno.test("dispatch: assignments and env assignments", () => {
  assertEquals(stmts("x += 1")[0], {
    kind: "Assign",
    target: "x",
    op: "+=",
    value: { kind: "Int", value: "1" },
  });
  assertEquals(stmts('env.FOO = "v"')[0], {
    kind: "EnvAssign",
    name: "FOO",
    op: "=",
    value: { kind: "Str", value: "v" },
  });
  assertEquals(kindOf('env.FOO == "v"'), "Binary");
});

Deno.test("dispatch: fn and alias names stay commands", () => {
  assertEquals(kindOf("fn f() { 1 }\nf"), "Cmd");
  assertEquals(kindOf("alias gs = git status\ngs --short"), "Cmd");
  assertEquals(kindOf("fn f(a: int) { a }\nf(1)"), "Call");
});

Deno.test("dispatch: parameters and lambda params are values inside bodies", () => {
  const [fn] = stmts("fn f(ls) { ls }");
  assert(fn.kind === "FnDecl");
  assertEquals(fn.body.body[0], { kind: "ExprStmt", expr: { kind: "Ident", name: "ls" } });
  const lam = expr("(acc, x) => { acc + x }");
  assert(lam.kind === "Lambda" && lam.body.kind === "Block");
  assertEquals(lam.body.body[0].kind, "ExprStmt");
  assertEquals((lam.body.body[0] as { expr: Expr }).expr.kind, "Binary");
});

Deno.test("dispatch: parenthesized command vs variable vs lambda", () => {
  assertEquals(kindOf("(echo hi)"), "Cmd");
  assertEquals(kindOf("let x = 1\n(x)"), "Ident");
  assertEquals(kindOf("(x => x + 1)"), "Lambda");
  assertEquals(kindOf("(FOO=hello sh -c 'printf %s $FOO')"), "Cmd");
});

Deno.test("dispatch: it/out are REPL-only in scripts", () => {
  for (const src of ["it", "out", "it + 1", "(it)", "it.foo", "let x = out", '"{it}"']) {
    assert(parseErr(src).msg.includes("REPL-only"), src);
  }
  assertEquals(kindOf("it + 1", { repl: true }), "Binary");
  assertEquals(expr(".len()", { repl: true }), {
    kind: "MethodCall",
    target: { kind: "Ident", name: "it" },
    name: "len",
    args: [],
    optional: false,
  });
  assertEquals(kindOf("./x.sh", { repl: true }), "Cmd");
});

Deno.test("dispatch: session names pre-seed the scopes", () => {
  assertEquals(kindOf("count", { valueNames: ["count"] }), "Ident");
  assertEquals(kindOf("count"), "Cmd");
  assertEquals(kindOf("(deploy)", { commandNames: ["deploy"] }), "Cmd");
  assertEquals(kindOf("path"), "Ident");
});

Deno.test("dispatch: statements need a separator; a bare variable gets the ^name hint", () => {
  const e = parseErr("let x = 1\nx y");
  assertEquals(e.msg, "expected newline or `;` between statements");
  assert(e.hint?.includes("^x"));
  assertEquals(stmts("1; 2\n3").length, 3);
});

Deno.test("dispatch: a non-variable assignment target is a teaching error", () => {
  assert(parseErr("let r = {a: 1}\nr.a = 2").msg.includes("assignment target"));
});

// ---------------------------------------------------------------------------------------------
// Expressions

Deno.test("expr: precedence and associativity", () => {
  assertEquals(
    expr("1 + 2 * 3 - 4"),
    strip(parse("(1 + (2 * 3)) - 4").body[0] as { expr: Expr }).expr,
  );
  const e = expr("a ?? b || c && d", { valueNames: ["a", "b", "c", "d"] });
  assert(e.kind === "Binary" && e.op === "??");
  assert(e.right.kind === "Logical" && e.right.op === "||");
  assert(e.right.right.kind === "Logical" && e.right.right.op === "&&");
  const u = expr("-x.abs()", { valueNames: ["x"] });
  assert(u.kind === "Unary" && u.operand.kind === "MethodCall");
  const r = expr("1..5 + 1");
  assert(r.kind === "Range" && r.end.kind === "Binary");
});

Deno.test("expr: comparisons do not chain, parenthesized ones may", () => {
  assert(parseErr("1 < 2 < 3").msg.includes("do not chain"));
  assert(parseErr("1 <= 2 == true").msg.includes("do not chain"));
  assertEquals(kindOf("(1 < 2) == true"), "Binary");
  assertEquals(kindOf("1 < 2 && 2 < 3"), "Logical");
});

Deno.test("expr: `|` teaches there is no pipe", () => {
  for (const src of ["1 | 2", "(1 | 2)", "let a = 1 | 2", "ls | wc"]) {
    const e = parseErr(src);
    assert(e.msg.includes("no pipe operator"), src);
    assert(e.hint?.includes(".feed("), src);
  }
});

Deno.test("expr: `&&`/`||` operands may be commands", () => {
  const e = expr("true && echo hi");
  assert(e.kind === "Logical" && e.right.kind === "Cmd");
  const c = expr("^true && ^true || echo no");
  assert(c.kind === "Logical" && c.op === "||" && c.left.kind === "Logical");
  assertEquals(kindOf("true && (echo hi)"), "Logical");
});

Deno.test("expr: postfix chains continue across newlines only before . and ?.", () => {
  const e = expr("[1, 2]\n  # note\n  .map(x => x * 2)\n  ?.sum()");
  assert(e.kind === "MethodCall" && e.optional && e.name === "sum");
  assertEquals(stmts("let f = 1\nf\n(2)").length, 3);
  assertEquals(stmts("let xs = [1]\nxs\n[0]").length, 3);
  assertEquals(stmts("let x = 1\nx\n./run.sh").length, 3);
});

Deno.test("expr: `else` and `catch` may start the next line", () => {
  const e = expr("if true { 1 }\nelse { 2 }");
  assert(e.kind === "If" && e.else?.kind === "Block");
  const c = expr("(1 / 0)\ncatch e { e.code }");
  assert(c.kind === "Catch" && c.binder === "e");
  const t = expr("try { 1 }\ncatch { 2 }");
  assert(t.kind === "Try" && t.binder === undefined);
});

Deno.test("expr: postfix catch binds the name after it when a handler follows", () => {
  const c = expr("let x = 1\nx catch err err.msg");
  assert(c.kind === "Catch" && c.binder === "err" && c.handler.kind === "Field");
  const d = expr('(1 / 0) catch "fallback"');
  assert(d.kind === "Catch" && d.binder === undefined && d.handler.kind === "Str");
  // divergence from the reference quirk: keywords and a lone name are handlers
  const t = expr("let x = 1\nx catch true");
  assert(t.kind === "Catch" && t.binder === undefined && t.handler.kind === "Bool");
  const n = expr("let x = 1\nlet d = 0\n[x catch d]");
  assert(n.kind === "List" && n.items[0].kind === "Catch" && n.items[0].binder === undefined);
  const b = expr("let x = 1\nx catch e { e.code }");
  assert(b.kind === "Catch" && b.binder === "e" && b.handler.kind === "Block");
});

Deno.test("expr: records vs blocks", () => {
  assertEquals(expr("{}"), { kind: "Record", fields: [] });
  assertEquals(kindOf("{a: 1}"), "Record");
  assertEquals(kindOf('{"k-2": 2}'), "Record");
  assertEquals(kindOf("let a = 1\n{a}"), "Block");
  const r = expr("{\n  a: 1\n  b: 2,\n  c: 3,\n}");
  assert(r.kind === "Record");
  assertEquals(r.fields.map((f) => f.key), ["a", "b", "c"]);
  const b = expr("{ let x = 1\n x }");
  assert(b.kind === "Block" && b.body.length === 2);
});

Deno.test("expr: lambdas only at a fresh expression start", () => {
  const l = expr("x => x + 1");
  assert(l.kind === "Lambda" && l.params[0].name === "x" && l.body.kind === "Binary");
  const m = expr("let a = 2\nlet b = 1\nmatch a { n if a > b => n; _ => 0 }");
  assert(m.kind === "Match" && m.arms[0].guard?.kind === "Binary");
  const t = expr("(a: int, b: list<str>?) => a");
  assert(t.kind === "Lambda");
  assertEquals(t.params[1].type, {
    name: "list",
    args: [{ name: "str", args: [], optional: false }],
    optional: true,
  });
  assertEquals(kindOf("() => { 42 }"), "Lambda");
  const nested = expr("x => y => x + y");
  assert(nested.kind === "Lambda" && nested.body.kind === "Lambda");
});

Deno.test("expr: immediate calls of non-names lower to __iife blocks", () => {
  for (const src of ["(x => x * 2)(3)", "((a, b) => a + b)(2, 3)", "f()()"]) {
    const e = expr(src);
    assert(e.kind === "Block", src);
    const [l, s] = e.body;
    assert(l.kind === "Let" && l.name === "__iife" && !l.mutable, src);
    assert(s.kind === "ExprStmt" && s.expr.kind === "Call" && s.expr.callee === "__iife", src);
  }
});

Deno.test("expr: calls with named and positional args in any order", () => {
  const e = expr("f(b: 1, 2, k: x => x)");
  assert(e.kind === "Call");
  assertEquals(e.args.map((a) => a.name ?? null), ["b", null, "k"]);
  assertEquals(e.args[2].value.kind, "Lambda");
});

Deno.test("expr: implicit item lambda only as an argument", () => {
  const e = expr("ls.where(.size > 1mb)");
  assert(e.kind === "MethodCall");
  const lam = e.args[0].value;
  assert(lam.kind === "Lambda" && lam.implicit && !lam.trailing);
  assertEquals(lam.params.map((p) => p.name), ["__item"]);
  assert(lam.body.kind === "Binary" && lam.body.left.kind === "Field");
  for (const src of ["[{a: 1}].map({x: .a})", "(.foo)", ".foo", "let y = .a"]) {
    assert(parseErr(src).msg.includes("a leading `.` has no receiver here"), src);
  }
});

Deno.test("expr: trailing blocks become zero-parameter lambdas", () => {
  const r = expr("retry(3) { 1 }");
  assert(r.kind === "Call" && r.args.length === 2);
  const lam = r.args[1].value;
  assert(lam.kind === "Lambda" && lam.trailing && lam.params.length === 0);
  const each = expr("let xs = [1]\nxs.each { 1 }");
  assert(each.kind === "MethodCall" && each.args[0].value.kind === "Lambda");
});

Deno.test("expr: headers never capture their body as a trailing block", () => {
  const f = stmts('for p in glob("*.md") { p }')[0];
  assert(f.kind === "For" && f.iter.kind === "Call" && f.iter.args.length === 1);
  const i = expr("let xs = []\nif xs.is_empty() { 1 } else { 2 }");
  assert(i.kind === "If" && i.cond.kind === "MethodCall" && i.cond.args.length === 0);
  const ok = expr("let o = 1\nif o.ok { 1 }");
  assert(ok.kind === "If" && ok.cond.kind === "Field");
  const w = stmts("while f() { 1 }")[0];
  assert(w.kind === "While" && w.cond.kind === "Call" && w.cond.args.length === 0);
  const m = expr('match path("a") { _ => 1 }');
  assert(m.kind === "Match" && m.subject.kind === "Call" && m.subject.args.length === 1);
  const wi = expr('with cwd: path("x"), env: {A: "1"} { 1 }');
  assert(wi.kind === "With" && wi.settings.length === 2 && wi.body.body.length === 1);
  // nested parentheses inside a header restore capture
  const n = stmts("for x in (retry(3) { [1] }) { x }")[0];
  assert(n.kind === "For" && n.iter.kind === "Call" && n.iter.args.length === 2);
});

Deno.test("expr: .feed( takes a command when a command head follows", () => {
  const e = expr('"b\\na".feed(sort -r)');
  assert(e.kind === "MethodCall" && e.args[0].value.kind === "Cmd");
  const v = expr('sort.feed(["b", "a"])');
  assert(v.kind === "MethodCall" && v.target.kind === "Ident" && v.args[0].value.kind === "List");
  const g = expr('"x".feed(grep "foo")');
  assert(g.kind === "MethodCall" && g.args[0].value.kind === "Cmd");
});

Deno.test("expr: control expressions", () => {
  const e = expr("if a { 1 } else if b { 2 } else { 3 }", { valueNames: ["a", "b"] });
  assert(e.kind === "If" && e.else?.kind === "If" && e.else.else?.kind === "Block");
  assert(parseErr("with bogus: 1 { }").msg.includes("with accepts only cwd, env, and reef"));
  assertEquals(kindOf("spawn { 1 }"), "Spawn");
  const lb = expr("sh { echo {a} 'b}' \"c}\" }.out");
  assert(lb.kind === "Field" && lb.target.kind === "LangBlock");
  assertEquals(lb.target.src, "echo {a} 'b}' \"c}\"");
  const raw = expr("python3'''\n  print(1)\n  '''");
  assertEquals(raw, { kind: "LangBlock", lang: "python3", src: "print(1)" });
  assertEquals(kindOf("sh -c 'exit 3'"), "Cmd");
  assertEquals(kindOf("python 'x.py'"), "Cmd");
  assertEquals(expr("sh '''\n  printf hi\n  '''"), {
    kind: "LangBlock",
    lang: "sh",
    src: "printf hi",
  });
  assertEquals(expr("sh'echo {'"), { kind: "LangBlock", lang: "sh", src: "echo {" });
  assert(parseErr("sh { echo {hi}").msg.includes("unbalanced braces"));
});

Deno.test("expr: match arms, alternation, guards and separators", () => {
  const m = expr('match 5 { 1 | 2 => "a", int n if n > 3 => n; _ => { 0 }\n 3..=4 => 1 }');
  assert(m.kind === "Match");
  assertEquals(m.arms.length, 4);
  assertEquals(m.arms[0].patterns.length, 2);
  assertEquals(m.arms[1].patterns[0], { kind: "PType", type: "int", binder: "n" });
  assertEquals(m.arms[3].patterns[0], { kind: "PRange", start: "3", end: "4", inclusive: true });
  assert(
    parseErr('match 5 { | 1 => "a"; _ => "b" }').msg.includes(
      "unexpected `|` at the start of a match arm",
    ),
  );
  assert(parseErr("match [1, 2, 3] { [...init, last] => last; _ => 0 }") instanceof ParseError);
});

Deno.test("patterns: literals, binders, types, records and lists", () => {
  const m = expr(
    'match v { null => 0; null n => 1; int => 2; "s" => 3; true => 4; -1 => 5; ' +
      "{a, b: [x, ...rest]} => 6; [] => 7; [_] => 8 }",
    { valueNames: ["v"] },
  );
  assert(m.kind === "Match");
  const pats = m.arms.map((a) => a.patterns[0]);
  assertEquals(pats[0], { kind: "PBind", name: "null" });
  assertEquals(pats[1], { kind: "PType", type: "null", binder: "n" });
  assertEquals(pats[2], { kind: "PBind", name: "int" });
  assertEquals(pats[3].kind, "PLit");
  assertEquals(pats[5], { kind: "PLit", value: { kind: "Int", value: "-1" } });
  assertEquals(pats[6], {
    kind: "PRecord",
    fields: [
      { key: "a" },
      {
        key: "b",
        pattern: { kind: "PList", items: [{ kind: "PBind", name: "x" }], rest: "rest" },
      },
    ],
  });
  // binders are values in the arm body
  const body = expr("match 1 { {ls} => ls }");
  assert(body.kind === "Match" && body.arms[0].body.kind === "Ident");
});

Deno.test("statements: let/var/export/fn/use/return/for/while", () => {
  const [a, b, c] = stmts("export let a: int = 1\nvar _ = 2\nexport fn f(x, y = 2, ...r) { x }");
  assertEquals(a, {
    kind: "Let",
    mutable: false,
    name: "a",
    type: { name: "int", args: [], optional: false },
    value: { kind: "Int", value: "1" },
    exported: true,
  });
  assert(b.kind === "Let" && b.mutable && b.name === "_");
  assert(c.kind === "FnDecl" && c.exported && c.rest?.name === "r" && c.params[1].default);
  const u = stmts("use ./lib/mod\nmod")[1];
  assert(u.kind === "ExprStmt" && u.expr.kind === "Ident");
  const f = stmts("fn f() { return }\nfn g() { return 1 }");
  assert(f[0].kind === "FnDecl" && f[0].body.body[0].kind === "Return");
  const l = stmts("for _ in 0..3 { break }\nwhile true { continue }");
  assert(l[0].kind === "For" && l[0].binder === "_" && l[1].kind === "While");
  const d = stmts("fn f(xs: list<int>= []) { xs }")[0];
  assert(d.kind === "FnDecl" && d.params[0].default?.kind === "List");
});

// ---------------------------------------------------------------------------------------------
// Commands

Deno.test("commands: words, paths, globs, strings, flags, redirects, background", () => {
  const e = expr('git log --oneline --dry-run -n 5 --x=1 --msg= "m" *.rs ./a ~ -- - > f.txt &');
  assert(e.kind === "Cmd" && e.background);
  assertEquals(e.args, [
    { kind: "Word", text: "log" },
    { kind: "FlagLong", name: "oneline", raw: "oneline" },
    { kind: "FlagLong", name: "dry_run", raw: "dry-run" },
    { kind: "FlagShort", chars: "n" },
    { kind: "Word", text: "5" },
    { kind: "FlagLong", name: "x", raw: "x", value: { kind: "Word", text: "1" } },
    {
      kind: "FlagLong",
      name: "msg",
      raw: "msg",
      value: { kind: "StrArg", value: { kind: "Str", value: "m" } },
    },
    { kind: "GlobWord", text: "*.rs" },
    { kind: "PathWord", text: "./a" },
    { kind: "PathWord", text: "~" },
    { kind: "DashDash" },
    { kind: "Dash" },
  ]);
  assertEquals(e.redirects, [{ op: ">", target: { kind: "Word", text: "f.txt" } }]);
  const r = expr("sort < in.txt >> out.txt");
  assert(r.kind === "Cmd");
  assertEquals(r.redirects.map((x) => x.op), ["<", ">>"]);
  const s = expr("echo 2 > f");
  assert(s.kind === "Cmd" && s.args.length === 1 && s.redirects.length === 1);
  const word = expr("echo ver#2 [ab].txt a=b ^x # comment");
  assert(word.kind === "Cmd");
  assertEquals(word.args, [
    { kind: "Word", text: "ver#2" },
    { kind: "GlobWord", text: "[ab].txt" },
    { kind: "Word", text: "a=b" },
    { kind: "Word", text: "^x" },
  ]);
});

Deno.test("commands: substitutions, chains and ends", () => {
  const e = expr("echo (1 + 2) (pwd) && ls || true");
  assert(e.kind === "Logical" && e.op === "||");
  assert(e.left.kind === "Logical" && e.left.left.kind === "Cmd");
  const sub = e.left.left.args;
  assert(sub[0].kind === "Sub" && sub[0].expr.kind === "Binary");
  assert(sub[1].kind === "Sub" && sub[1].expr.kind === "Cmd");
  assertEquals(stmts("echo a; echo b\necho c").length, 3);
  const cont = expr("echo a \\\n  b");
  assert(cont.kind === "Cmd" && cont.args.length === 2);
});

Deno.test("commands: teaching diagnostics", () => {
  const cases: [string, string][] = [
    ["cat << EOF", "no heredocs"],
    ['grep foo <<< "text"', "no here-strings"],
    ["ls 2> /dev/null", "no fd-numbered redirects"],
    ["ls 2>> log.txt", "no fd-numbered redirects"],
    ["ls &> out.txt", "no stream-merging redirect"],
    ["ls &>> out.txt", "no stream-merging redirect"],
    ["echo $HOME", "no sigil"],
    ["$HOME", "no sigil"],
    ["echo a`b", "backtick is not shoal syntax"],
    ["`pwd`", "backtick"],
    ["echo ]", "unexpected `]`"],
    ["zzz [a, b]", "cannot start a command argument"],
    ["true & false", "not an operator"],
    ["@", "unexpected character"],
    ["π", "unexpected character"],
    ["1 ~ 2", "unexpected character"],
  ];
  for (const [src, needle] of cases) assert(parseErr(src).msg.includes(needle), src);
});

Deno.test("commands: a glued dotted word's failing substitution gets a hint", () => {
  const e = parseErr("git log.len()");
  assertEquals(e.msg, "expected expression, found RParen");
  assertEquals(e.hint, "wrap it in parentheses — (git log).len()");
  const w = parseErr('git log.where(.author == "nobody")');
  assertEquals(w.msg, "a leading `.` has no receiver here");
  assertEquals(w.hint, 'wrap it in parentheses — (git log).where(.author == "nobody")');
  // the whole line, so the hint is source to resend as is
  const l = parseErr('let n = ls five.map(.name).join(",")\nn');
  assertEquals(l.hint, 'wrap it in parentheses — let n = (ls five).map(.name).join(",")');
  assertEquals(kindOf("echo a.b(1)"), "Cmd");
});

Deno.test("commands: alias stores the parsed command", () => {
  const [a] = stmts("alias greet = FOO=1 ^echo hey --loud");
  assert(a.kind === "Alias" && a.command.forced && a.command.env.length === 1);
  assertEquals(a.command.head, "echo");
});

// ---------------------------------------------------------------------------------------------
// Strings, numbers, spans

Deno.test("strings: escapes, holes, raw and tagged literals", () => {
  assertEquals(expr('"a\\tb\\u{1F600}\\{x\\}"'), { kind: "Str", value: "a\tb😀{x}" });
  const i = expr('"n={1 + 1} s={"{2}"}"');
  assert(i.kind === "StrInterp");
  assertEquals(i.parts.map((p) => p.kind), ["Text", "Binary", "Text", "StrInterp"]);
  assertEquals(expr("'raw {x} \\n'"), { kind: "Str", value: "raw {x} \\n" });
  assertEquals(expr('re"\\d+"'), { kind: "Regex", source: "\\d+" });
  assertEquals(expr('t"2026-07-09T14:00Z"'), { kind: "DateTime", source: "2026-07-09T14:00Z" });
  // malformed regex/datetime are evaluation errors, not parse errors
  assertEquals(kindOf('re"("'), "Regex");
  assertEquals(kindOf('t"nope"'), "DateTime");
  assert(parseErr('"bad \\q"').msg.includes("unknown escape"));
  assert(parseErr('"a{b"').msg.includes("unterminated `{expr}` in string"));
  assertEquals(parseErr('"line1\nline2"').msg, "unterminated string (newline)");
  assertEquals(parseErr("'line1\nline2'").msg, "unterminated string (newline)");
  assertEquals(parseErr('"abc').msg, "unterminated string");
  assertEquals(parseErr("'abc").msg, "unterminated raw string");
  assert(parseErr('"{}"').msg.includes("interpolation must contain one expression"));
  assert(parseErr('"{1; 2}"').msg.includes("interpolation must contain one expression"));
});

Deno.test("strings: triple-quoted dedent", () => {
  assertEquals(expr('"""\n    hello\n    world\n    """'), {
    kind: "Str",
    value: "hello\nworld",
  });
  assertEquals(expr("'''\n  a\n    b\n\n  c\n'''"), { kind: "Str", value: "a\n  b\n\nc" });
  assertEquals(expr('"""one line"""'), { kind: "Str", value: "one line" });
  assertEquals(expr('"""\n\\tx\n  y\n"""'), { kind: "Str", value: "\tx\n  y" });
  const h = expr('"""\n    a {1}\n      {2} b\n    """');
  assert(h.kind === "StrInterp");
  assertEquals(
    h.parts.map((p) => (p.kind === "Text" ? p.value : `<${p.kind}>`)),
    ["a ", "<Int>", "\n  ", "<Int>", " b"],
  );
});

Deno.test("numbers: radix, time, units, floats and range checks", () => {
  const lit = (src: string) => expr(src);
  assertEquals(lit("0xFF_FF"), { kind: "Int", value: "65535" });
  assertEquals(lit("0b1111_0000"), { kind: "Int", value: "240" });
  assertEquals(lit("0o17"), { kind: "Int", value: "15" });
  assertEquals(lit("0b"), { kind: "Size", bytes: "0" });
  assertEquals(lit("1_000"), { kind: "Int", value: "1000" });
  assertEquals(lit("9223372036854775807"), { kind: "Int", value: "9223372036854775807" });
  assertEquals(lit("1e9"), { kind: "Float", value: 1e9 });
  assertEquals(lit("2.5e-3"), { kind: "Float", value: 0.0025 });
  assertEquals(lit("1.5mb"), { kind: "Size", bytes: "1500000" });
  assertEquals(lit("4kib"), { kind: "Size", bytes: "4096" });
  assertEquals(lit("1.5h"), { kind: "Duration", ns: "5400000000000" });
  assertEquals(lit("250ms"), { kind: "Duration", ns: "250000000" });
  assertEquals(lit("10:00am"), { kind: "Time", h: 10, m: 0, s: 0 });
  assertEquals(lit("12:00am"), { kind: "Time", h: 0, m: 0, s: 0 });
  assertEquals(lit("12:30PM"), { kind: "Time", h: 12, m: 30, s: 0 });
  assertEquals(lit("1:15pm"), { kind: "Time", h: 13, m: 15, s: 0 });
  assertEquals(lit("23:15:45"), { kind: "Time", h: 23, m: 15, s: 45 });
  const r = lit("1..5");
  assert(r.kind === "Range" && !r.inclusive);
  const m = lit("5.len()");
  assert(m.kind === "MethodCall" && m.target.kind === "Int");
  const neg = lit("-5");
  assert(neg.kind === "Unary" && neg.operand.kind === "Int");
  const errs: [string, string][] = [
    ["-9223372036854775808", "integer literal out of range"],
    ["9223372036854775808", "integer literal out of range"],
    ["0xFFFFFFFFFFFFFFFF", "invalid numeric literal"],
    ["0x1G", "invalid numeric literal"],
    ["1KB", "unit `KB` must be lowercase"],
    ["5x", "unknown unit `x` on numeric literal"],
    ["13:00pm", "invalid time literal"],
    ["0:30am", "invalid time literal"],
    ["24:00", "invalid time literal"],
    ["10:60", "invalid time literal"],
    ["12am", "unknown unit `am`"],
  ];
  for (const [src, needle] of errs) assert(parseErr(src).msg.includes(needle), src);
});

Deno.test("spans: UTF-8 byte offsets in multi-byte sources", () => {
  const src = '"π" + "日本"\necho é x';
  const prog = parse(src, { valueNames: [] });
  const bytes = new TextEncoder().encode(src).length;
  assertEquals(prog.span, [0, bytes]);
  const [a, b] = prog.body;
  assert(a.kind === "ExprStmt" && a.expr.kind === "Binary");
  assertEquals(a.expr.left.span, [0, 4]); // " π(2) "
  assertEquals(a.expr.right.span, [7, 15]); // " 日(3) 本(3) "
  assert(b.kind === "ExprStmt" && b.expr.kind === "Cmd");
  assertEquals(b.expr.headSpan, [16, 20]);
  assertEquals(b.expr.args[0].span, [21, 23]);
  assertEquals(b.expr.args[1].span, [24, 25]);
  // error spans are bytes too
  const e = parseErr("let x = 1 ~ 2 # π");
  assertEquals(e.span, [10, 11]);
  const e2 = parseErr("'é' 😀");
  assertEquals(e2.span, [5, 9]);
  // ASCII fast path: spans equal string offsets
  const ascii = parse("let x = 1\nx + 2").body[1];
  assertEquals(ascii.span, [10, 15]);
});

Deno.test("spans: every node span lies within the source", () => {
  const src = 'fn f(a: int = 1) { "é{a}" }\nls -la *.rs > "ü"\n[1, 2].map(.x ?? 0)';
  const prog = parse(src);
  const len = new TextEncoder().encode(src).length;
  let count = 0;
  walk(prog, (n: Node) => {
    count++;
    const [s, e] = n.span;
    assert(0 <= s && s <= e && e <= len, `${n.kind} ${n.span}`);
  });
  assert(count > 20);
});

Deno.test("api: tryParse and walk", () => {
  const ok = tryParse("1 + 1");
  assert(ok.ok && ok.program.body.length === 1);
  const bad = tryParse("1 |");
  assert(!bad.ok && bad.error instanceof ParseError);
  const kinds: string[] = [];
  walk(parse("f(1, x => x)"), (n) => {
    kinds.push(n.kind);
  });
  assertEquals(kinds, ["Program", "ExprStmt", "Call", "Int", "Lambda", "Ident"]);
  const skipped: string[] = [];
  walk(parse("[1, [2]]"), (n) => {
    skipped.push(n.kind);
    return n.kind !== "List";
  });
  assertEquals(skipped, ["Program", "ExprStmt", "List"]);
  assertThrows(() => parse("let = 1"), ParseError);
});

Deno.test("diagnostics: an unparenthesized command condition teaches parentheses", () => {
  const e = parseErr("if grep -q x f { 1 }");
  assert(e.msg.startsWith("expected `{` after the `if` condition"));
  assert(e.hint?.includes("(grep …)"));
  assertEquals(parseErr("let ok = true\nif ok x { 1 }").hint, null);
  assert(parseErr("while pgrep x { 1 }").hint?.includes("(pgrep …)"));
});

Deno.test("trivia: comments, CRLF and backslash-newline continuation", () => {
  const body = stmts("# header\r\nlet x = 1 # trailing\r\necho a \\\r\n  b\r\nx");
  assertEquals(body.length, 3);
  const cmd = body[1];
  assert(cmd.kind === "ExprStmt" && cmd.expr.kind === "Cmd" && cmd.expr.args.length === 2);
  assertEquals(stmts("let s = '''\r\n  a\r\n  b\r\n  '''")[0], {
    kind: "Let",
    mutable: false,
    name: "s",
    value: { kind: "Str", value: "a\nb" },
    exported: false,
  });
});

Deno.test("commands: a pending --name= value may be empty", () => {
  const e = expr("echo --name=");
  assert(e.kind === "Cmd");
  assertEquals(e.args, [
    { kind: "FlagLong", name: "name", raw: "name", value: { kind: "Word", text: "" } },
  ]);
});

Deno.test("strings: an interpolation hole holds an expression, not a command statement", () => {
  const e = parseErr('"today is {now}"');
  assert(e.msg.includes("interpolation must contain one expression"));
  assert(e.hint?.includes("{(now).out}"));
  assert(parseErr('"{ls -la}"').msg.includes("not a command"));
  assertEquals(kindOf('let x = 1\n"{x}"'), "StrInterp");
  assertEquals(kindOf('"{(pwd)}"'), "StrInterp");
  assertEquals(kindOf('"{ls.len()}"'), "StrInterp");
  assertEquals(kindOf('fn f(name) { "hi {name}" }\nf'), "Cmd");
});
