/**
 * Evaluator semantics the conformance corpus does not pin: statement vs value position, the
 * sink, closures by reference, control flow, the synchronous fast path, ports, cancellation
 * and the recursion limit.
 */

import assert from "node:assert/strict";
import { Evaluator } from "../../lib/eval/mod.ts";
import { ShoalError } from "../../lib/value/errors.ts";
import { renderInline } from "../../lib/value/render.ts";
import { DateTimeV, OutcomeV, type Value } from "../../lib/value/types.ts";

function tmp(): string {
  return Deno.makeTempDirSync({ prefix: "shoal-eval-test-" });
}

async function run(src: string, ev = new Evaluator({ cwd: tmp() })): Promise<string> {
  return renderInline(await ev.evalSource(src));
}

async function code(src: string, ev = new Evaluator({ cwd: tmp() })): Promise<ShoalError> {
  try {
    await ev.evalSource(src);
  } catch (e) {
    if (e instanceof ShoalError) return e;
    throw e;
  }
  throw new Error(`expected an error from ${JSON.stringify(src)}`);
}

Deno.test("pure programs evaluate synchronously (no promise)", () => {
  const ev = new Evaluator({ cwd: tmp() });
  const srcs = [
    "fn fib(n) { if n < 2 { n } else { fib(n - 1) + fib(n - 2) } }\nfib(15)",
    "var i = 0\nwhile i < 10000 { i += 1 }\ni",
    "var s = 0\nfor x in 0..100 { if x % 2 == 0 { continue }\n s = s + x }\ns",
    "[1, 2, 3].map(x => x * 2).where(x => x > 2).sum()",
    "match {a: [1, 2]} { {a: [x, ...r]} => x + r.len(); _ => 0 }",
    "try { 1 / 0 } catch e { e.code }",
  ];
  for (const src of srcs) {
    const v = ev.evalSource(src);
    assert.ok(!(v instanceof Promise), `promise for ${src}`);
  }
  assert.equal(renderInline(ev.evalSource("fib(20)") as Value), "6765");
});

Deno.test("closures capture variables by reference", async () => {
  assert.equal(await run("var n = 0\nlet inc = () => { n = n + 1 }\ninc()\ninc()\nn"), "2");
  assert.equal(
    await run(
      "fn counter() { var c = 0\n () => { c += 1\n c } }\nlet a = counter()\nlet b = counter()\na()\na()\nb()\n[a(), b()]",
    ),
    "[3, 2]",
  );
});

Deno.test("control flow: break/continue/return and their misuse", async () => {
  assert.equal(
    await run("fn f() { for x in [1, 2, 3] { if x == 2 { return x * 10 } }\n 0 }\nf()"),
    "20",
  );
  assert.equal(await run("var s = 0\nwhile true { s += 1\n if s == 5 { break } }\ns"), "5");
  const r = await code("return 1");
  assert.equal(r.err.code, "custom");
  assert.match(r.err.msg, /return outside function/);
  const b = await code("fn f() { break }\nf()");
  assert.match(b.err.msg, /loop control outside loop/);
});

Deno.test("statement vs value position of a failing command", async () => {
  const e = await code('sh -c "exit 3"');
  assert.equal(e.err.code, "cmd_failed");
  assert.match(e.err.msg, /exited with status 3/);
  assert.equal(e.err.status, 3);
  assert.equal(await run('let o = (sh -c "exit 3")\no.status'), "3");
  assert.equal(await run('(sh -c "exit 3").status'), "3");
  // The final command of a block runs in value position; a non-final one raises.
  assert.equal(await run('fn f() { sh -c "exit 4" }\nf().status'), "4");
  const mid = await code('fn g() { sh -c "exit 5"\n 1 }\ng()');
  assert.equal(mid.err.code, "cmd_failed");
  // &&/|| return operands.
  assert.equal(await run('(sh -c "exit 2") || 7'), "7");
});

Deno.test("non-final top-level values go to the sink, nulls skipped", async () => {
  const seen: Value[] = [];
  const ev = new Evaluator({ cwd: tmp(), ports: { sink: (v) => void seen.push(v) } });
  assert.equal(renderInline(await ev.evalSource('1\nlet x = 2\nnull\n"s"\nx')), "2");
  assert.deepEqual(seen.map(renderInline), ["1", '"s"']);
  seen.length = 0;
  await ev.evalSource("echo hi\n3");
  assert.equal(seen.length, 1);
  assert.ok(seen[0] instanceof OutcomeV);
});

Deno.test("exit stops the statement loop and records the code", async () => {
  const seen: Value[] = [];
  const ev = new Evaluator({ cwd: tmp(), ports: { sink: (v) => void seen.push(v) } });
  await ev.evalSource("1\nexit 3\n2");
  assert.equal(ev.pendingExit, 3);
  assert.deepEqual(seen.map(renderInline), ["1"]);
});

Deno.test("session-only verbs are refused inside fn bodies", async () => {
  const e = await code('fn f() { env.SHOAL_T = "1" }\nf()');
  assert.equal(e.err.code, "custom");
  assert.match(e.err.msg, /with env:/);
  const ev = new Evaluator({ cwd: tmp() });
  await ev.evalSource('env.SHOAL_T = "x"');
  assert.equal(ev.env().get("SHOAL_T"), "x");
  assert.equal(Deno.env.get("SHOAL_T"), undefined);
  // A task suspended inside a fn body does not make the top level look like a fn body.
  const dir = tmp();
  const ev2 = new Evaluator({ cwd: dir });
  const v = await ev2.evalSource(
    "fn f() { sh { sleep 0.2 }\n 1 }\nlet t = spawn { f() }\nsleep 20ms\ncd /\nt.await()",
  );
  assert.equal(v, 1);
  assert.equal(ev2.cwd(), "/");
  // An alias or lambda running a session verb inside a fn body is refused.
  assert.equal((await code("alias go = cd /\nfn g() { go }\ng()")).err.code, "custom");
});

Deno.test("with cwd/env restores on every exit path", async () => {
  const dir = tmp();
  Deno.mkdirSync(`${dir}/sub`);
  const ev = new Evaluator({ cwd: dir });
  assert.equal(await run('with cwd: "sub" { pwd }', ev), `${dir}/sub`);
  const e = await code('with cwd: "sub", env: {ZZ_T: "1"} { 1 / 0 }', ev);
  assert.equal(e.err.code, "div_zero");
  assert.equal(ev.cwd(), dir);
  assert.equal(ev.env().has("ZZ_T"), false);
});

Deno.test("the clock port pins now and today", async () => {
  const ns = 1_783_605_600_000_000_000n; // 2026-07-09T14:00:00Z
  const ev = new Evaluator({
    cwd: tmp(),
    ports: { clock: { nowNs: () => ns, zone: () => "UTC", sleep: () => Promise.resolve() } },
  });
  const v = await ev.evalSource("let n = now\nn");
  assert.ok(v instanceof DateTimeV);
  assert.equal(renderInline(v), "2026-07-09T14:00:00Z");
  assert.equal(await run("let d = today\nd", ev), "2026-07-09T00:00:00Z");
});

Deno.test("command-form calls bind and coerce words", async () => {
  assert.equal(await run("fn f(n: int) { n + 1 }\nf 5"), "6");
  assert.equal(await run("fn f(d: duration) { d }\nf 90"), "1m30s");
  assert.equal(await run("fn f(n: int = 1, v: bool = false) { [n, v] }\nf --n 3 --v"), "[3, true]");
  const e = await code("fn f(n: int) { n }\nf abc");
  assert.equal(e.err.code, "arg_error");
});

Deno.test("deep recursion raises recursion_limit, never a JS RangeError", async () => {
  const e = await code("fn f(n) { f(n + 1) }\nf(0)");
  assert.equal(e.err.code, "recursion_limit");
  assert.match(e.err.msg, /recursion limit exceeded \(10000 nested calls\)/);
  assert.equal(
    await run("fn f(n) { f(n + 1) }\ntry { f(0) } catch e { e.code }"),
    '"recursion_limit"',
  );
  // Deep but legal recursion works: the stack is unwound every segment of calls.
  assert.equal(
    await run("fn g(n) { if n == 0 { 0 } else { 1 + g(n - 1) } }\ng(9990)"),
    "9990",
  );
  // The evaluator is still usable afterwards.
  const ev = new Evaluator({ cwd: tmp() });
  await code("fn f(n) { f(n + 1) }\nf(0)", ev);
  assert.equal(await run("fn g(n) { if n == 0 { 0 } else { 1 + g(n - 1) } }\ng(200)", ev), "200");
});

Deno.test("the cancel flag stops `while true {}` from another thread", async () => {
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(new URL("./cancel_worker.ts", import.meta.url).href, {
    type: "module",
  });
  let started!: () => void;
  const running = new Promise<void>((r) => (started = r));
  const result = new Promise<string>((resolve) => {
    worker.onmessage = (e) => (e.data === "started" ? started() : resolve(e.data as string));
  });
  worker.postMessage({ flag, src: "var i = 0\nwhile true { i += 1 }" });
  await running;
  await new Promise((r) => setTimeout(r, 100));
  Atomics.store(flag, 0, 1);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const got = await Promise.race([
    result,
    new Promise<string>((r) => (timer = setTimeout(() => r("timeout"), 10000))),
  ]);
  clearTimeout(timer);
  worker.terminate();
  assert.equal(got, "cancelled");
});

Deno.test("deep recursion also works inside a Worker (small thread stack)", async () => {
  const worker = new Worker(new URL("./cancel_worker.ts", import.meta.url).href, {
    type: "module",
  });
  const result = new Promise<string>((resolve) => {
    worker.onmessage = (e) => {
      if (e.data !== "started") resolve(e.data as string);
    };
  });
  worker.postMessage({
    flag: new Int32Array(new SharedArrayBuffer(4)),
    src: "fn g(n) { if n == 0 { 0 } else { 1 + g(n - 1) } }\ng(9990)",
  });
  const got = await result;
  worker.terminate();
  assert.equal(got, "finished");
});

Deno.test("loops and calls switch to async mid-way and carry on", async () => {
  const ev = new Evaluator({ cwd: tmp() });
  const src = [
    "var s = 0",
    "for x in 0..5 { if x == 2 { s = s + (sh { echo 10 }).out.len() } else { s = s + x } }",
    "var i = 0",
    "while (if i == 1 { (sh { echo hi }).ok } else { true }) && i < 3 { i += 1 }",
    "fn f(n) { if n == 3 { (sh { echo 7 }).out } else { f(n + 1) } }",
    "[s, i, f(0), [1, 2].map(x => if x == 2 { (sh { echo 5 }).out } else { x })]",
  ].join("\n");
  const v = ev.evalSource(src);
  assert.ok(v instanceof Promise);
  assert.equal(renderInline(await v), '[10, 3, "7", [1, "5"]]');
});

Deno.test("&& / || in statement position sink the operand they do not return", async () => {
  const seen: Value[] = [];
  const ev = new Evaluator({ cwd: tmp(), ports: { sink: (v) => void seen.push(v) } });
  const v = await ev.evalSource("echo a && echo b");
  assert.ok(v instanceof OutcomeV);
  assert.equal(new TextDecoder().decode(v.stdout), "b\n");
  assert.equal(seen.length, 1);
  assert.equal(new TextDecoder().decode((seen[0] as OutcomeV).stdout), "a\n");
});

Deno.test("assigning an undeclared or let-bound name says how to declare it", async () => {
  // `x=3` and `FOO=bar` are what shell habits type: the target is checked before the value.
  for (
    const [src, msg, hint] of [
      ["x=3", /no variable `x` is declared here/, /`var x = …`.*`env\.x = "…"`/],
      ["FOO=bar", /no variable `FOO` is declared here/, /`var FOO = …`/],
      ["let y = 1; y = 2", /`y`: it was bound with `let`/, /`var y = …` to reassign/],
    ] as const
  ) {
    const e = await code(src);
    assert.equal(e.err.code, "type_error");
    assert.match(e.err.msg, msg);
    assert.match(e.err.hint ?? "", hint);
  }
  assert.equal(await run("var n = 1; n = n + 1; n"), "2");
});

Deno.test("agent-shaped code: composed item lambdas, synonyms, env as a record", async () => {
  // Every leading `.` of an implicit item lambda is the same item.
  assert.equal(
    await run('["xa", "ya b", "za"].where(.contains("a") && !.contains("b"))'),
    '["xa", "za"]',
  );
  assert.equal(await run('[{n: "a", ok: true}, {n: "b", ok: false}].where(!.ok).map(.n)'), '["b"]');
  // …but a `.` outside one (inside a record literal argument) still has no receiver.
  await assert.rejects(() => run("[{a: 1}].map({x: .a})"), /leading `\.` has no receiver/);
  // A method name from another language points at Shoal's.
  const e = await code("[1, 2, 3].drop(1)");
  assert.match(e.err.hint ?? "", /did you mean \.skip\(\)\?/);
  // `env.METHOD()` is the record method on the environment.
  const ev = new Evaluator({ cwd: tmp(), env: { SHOAL_T_A: "1", SHOAL_T_B: "2", OTHER: "3" } });
  assert.equal(await run('env.keys().where(.starts_with("SHOAL_T_")).len()', ev), "2");
});

Deno.test("tables: .rows and .COLUMN; indexing the table itself says how", async () => {
  const t = 'let t = csv.parse("a,b\\n1,2\\n3,4")\n';
  assert.equal(await run(t + "[t.rows[1].a, t.a, t.rows.len()]"), '["3", ["1", "3"], 2]');
  const e = await code(t + "t[1]"); // corpus-pinned type_error, now with the way out
  assert.equal(e.err.code, "type_error");
  assert.match(e.err.hint ?? "", /t\.rows\[1\]/);
});

Deno.test("glob values: paths with .type, spread into path-taking builtins", async () => {
  const d = tmp();
  for (const f of ["a.tmp", "b.tmp", "c.txt"]) Deno.writeTextFileSync(`${d}/${f}`, "x");
  Deno.mkdirSync(`${d}/sub`);
  const ev = new Evaluator({ cwd: d });
  assert.equal(
    await run('glob("*").where(.type == "file").map(.name).sort()', ev),
    '["a.tmp", "b.tmp", "c.txt"]',
  );
  assert.equal(await run('glob("*").where(.type == "dir").map(.name)', ev), '["sub"]');
  // `rm (g)` expands the glob value as the same word would; a list of paths is spread too.
  await run('let g = glob("*.tmp"); rm --permanent (g)', ev);
  assert.equal(await run('glob("*").map(.name).sort()', ev), '["c.txt", "sub"]');
  // A missing field names what the type does have.
  const e = await code('path("c.txt").typ', ev);
  assert.match(e.err.hint ?? "", /path has .*\.type/);
});

Deno.test("the cancel flag stops a command after back-to-back commands shared one poll", async () => {
  // The flag poll outlives the command that started it (a cleared Deno timer still wakes the
  // event loop, so each command no longer starts and clears its own); it must still notice.
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const ev = new Evaluator({ cwd: tmp(), env: { PATH: Deno.env.get("PATH") ?? "" }, cancel: flag });
  for (let i = 0; i < 3; i++) {
    assert.equal((await ev.evalProgram(ev.parse("^true")) as OutcomeV).ok, true);
  }
  const long = Promise.resolve(ev.evalProgram(ev.parse("^sleep 30")));
  setTimeout(() => Atomics.store(flag, 0, 1), 100);
  await assert.rejects(long, (e: unknown) => e instanceof ShoalError && e.err.code === "cancelled");
  Atomics.store(flag, 0, 0);
  assert.equal((await ev.evalProgram(ev.parse("^true")) as OutcomeV).ok, true);
});
