/**
 * Streams over in-memory sources through the real evaluator: every combinator, the sinks, the
 * collect-and-dispatch fallthrough, single consumption, boundedness and argument errors.
 */

import assert from "node:assert/strict";
import { isPromise } from "../../../lib/eval/mod.ts";
import { dir, fails, newEv, run, table } from "./_host.ts";

Deno.test("stream sources: collections, ranges, tables, str and bytes lines", async () => {
  await table([
    ["[1, 2, 3].stream().collect()", "[1, 2, 3]"],
    ["(1..=4).stream().collect()", "[1, 2, 3, 4]"],
    ["[{a: 1}, {a: 2}].stream().map(.a).collect()", "[1, 2]"],
    ['"a\\nb\\r\\nc\\n".stream().collect()', '["a", "b", "c"]'],
    ['"".stream().collect()', "[]"],
    ["[1].stream()", "stream<value>"],
    ["[1, 2].stream().stream().collect()", "[1, 2]"],
    ["(0..1000000000000).stream().take(3).collect()", "[0, 1, 2]"], // ranges stay lazy
  ]);
  assert.equal(await run('"é\\nz".stream().collect()'), '["é", "z"]');
});

Deno.test("stream combinators", async () => {
  await table([
    [
      "[1, 2, 3, 4, 5, 6].stream().where(x => x % 2 == 0).map(x => x * 10).collect()",
      "[20, 40, 60]",
    ],
    ["[1, 2, 3].stream().filter(x => x != 2).collect()", "[1, 3]"],
    ["[1, 2, 3, 4].stream().scan(0, (a, x) => a + x).collect()", "[1, 3, 6, 10]"],
    ["[1, 2].stream().flat_map(x => [x, x]).collect()", "[1, 1, 2, 2]"],
    ["[1, 2].stream().flat_map(x => (0..x)).collect()", "[0, 0, 1]"],
    ["[1, 2].stream().flat_map(x => [x].stream()).collect()", "[1, 2]"],
    ["[1, 2, 3].stream().take(0).collect()", "[]"],
    ["[1, 2, 3].stream().take(10).collect()", "[1, 2, 3]"],
    ["[1, 2, 3, 4].stream().skip(1).take(2).collect()", "[2, 3]"],
    ["[1, 2, 3, 4, 5].stream().take_until(x => x == 4).collect()", "[1, 2, 3]"],
    ["[1, 2].stream().take_until([].stream()).collect()", "[1, 2]"],
    ["[1, 2].stream().take_until([0].stream()).collect()", "[]"],
    ["[1, 1, 2, 2, 2, 3, 1].stream().dedupe().collect()", "[1, 2, 3, 1]"],
    ["[1, 1.0, 2, 1].stream().distinct().collect()", "[1, 2]"],
    ['["a", "b"].stream().enumerate().collect()', '[[0, "a"], [1, "b"]]'],
    ["[1, 2, 3, 4].stream().window(2).collect()", "[[1, 2], [2, 3], [3, 4]]"],
    ["[1, 2].stream().window(3).collect()", "[]"],
    ["[1, 2, 3].stream().window(1s).collect()", "[[1, 2, 3]]"],
    ["[1, 2, 3].stream().buffer(2).collect()", "[1, 2, 3]"],
    ["[1, 2, 3].stream().zip([10, 20].stream()).collect()", "[[1, 10], [2, 20]]"],
    ["[1, 2].stream().merge([3, 4].stream()).collect().sort()", "[1, 2, 3, 4]"],
    ["[1, 2, 3].stream().throttle(1s).collect()", "[1]"],
    ["[1, 2, 3].stream().throttle(0s).collect()", "[1, 2, 3]"],
    ["[1, 2, 3].stream().debounce(1ms).collect()", "[3]"],
    ["[1, 2, 3].stream().debounce(0s).collect()", "[1, 2, 3]"],
    ["[].stream().debounce(1s).collect()", "[]"],
  ]);
});

Deno.test("stream sinks and the collect-and-dispatch fallthrough", async () => {
  await table([
    ["[1, 2, 3].stream().sum()", "6"],
    ["[1, 2, 3].stream().len()", "3"],
    ["[1, 2, 3].stream().count()", "3"],
    ["[5, 6].stream().first()", "5"],
    ["[5, 6, 7].stream().first(2)", "[5, 6]"],
    ["[].stream().first()", "null"],
    ["[1, 2, 3].stream().find(x => x > 1)", "2"],
    ["[1, 2, 3].stream().any(x => x > 2)", "true"],
    ["[1, 2, 3].stream().all(x => x > 2)", "false"],
    ["[3, 1, 2].stream().sort()", "[1, 2, 3]"],
    ['["a", "b"].stream().join("-")', '"a-b"'],
    ["[1, 2].stream().json()", '"[1,2]"'],
    ["var s = 0\n[1, 2, 3].stream().each(x => { s += x })\ns", "6"],
    ["[1, 2].stream().each(x => x)", "null"],
    ["for x in [1, 2].stream() { }", "null"],
    ["var n = 0\nfor x in [4, 5].stream().map(x => x * 2) { n += x }\nn", "18"],
    ["[1, 2].stream().tap(s => 0).collect()", "[1, 2]"],
  ]);
});

Deno.test("short-circuit sinks stop pulling early", async () => {
  // Only the items up to the answer pass through map.
  const src = "var seen = 0\n" +
    "[1, 2, 3, 4, 5].stream().map(x => { seen += 1\nx }).find(x => x == 2)\nseen";
  assert.equal(await run(src), "2");
  assert.equal(
    await run("var seen = 0\n(1..100).stream().map(x => { seen += 1\nx }).take(3).collect()\nseen"),
    "3",
  );
});

Deno.test("stream render sends every item to the statement sink", async () => {
  const seen: string[] = [];
  const ev = newEv({ ports: { sink: (v) => void seen.push(String(v)) } });
  assert.equal(await run('"x\\ny".stream().render', ev), "null"); // field-style call drives it
  assert.deepEqual(seen, ["x", "y"]);
});

Deno.test("stream save/append: one line per item, both append, path returned", async () => {
  const ev = newEv();
  const p = await run('[1, "two", {a: 1}].stream().save("s.txt")', ev);
  assert.equal(p, `${dir}/s.txt`);
  await run('["x"].stream().append("s.txt")', ev);
  assert.equal(Deno.readTextFileSync(`${dir}/s.txt`), '1\ntwo\n{"a":1}\nx\n');
  await fails('[1].stream().save("no/such/dir/f.txt")', "custom", "save");
});

Deno.test("stream tee: bounded replay", async () => {
  await table([
    [
      "let t = [1, 2, 3].stream().tee(2)\n[t[0].collect(), t[1].collect()]",
      "[[1, 2, 3], [1, 2, 3]]",
    ],
    ["[10, 20].stream().tee().len()", "2"],
    ['["a"].stream().tee(3).map(s => s.collect())', '[["a"], ["a"], ["a"]]'],
    ["[1, 2].tee(2).map(s => s.sum())", "[3, 3]"],
    ["(1..4).tee(2)[1].collect()", "[1, 2, 3]"],
    ["every(1ms).take(3).tee(2).map(s => s.len())", "[3, 3]"],
  ]);
  await fails("[1].stream().tee(0)", "arg_error");
  await fails("[1].tee(0)", "arg_error");
  await fails("[1].stream().tee(-1)", "type_error");
});

Deno.test("single consumption and boundedness", async () => {
  await fails("let s = [1, 2].stream()\ns.collect()\ns.collect()", "stream_consumed", ".tee(2)");
  await fails("let s = [1, 2].stream()\nlet m = s.map(x => x)\ns.collect()", "stream_consumed");
  await fails("let s = [1].stream()\ns.sum()\ns.each(x => x)", "stream_consumed");
  await fails(
    "let s = [1].stream()\n[2].stream().zip(s).collect()\ns.collect()",
    "stream_consumed",
  );
  await fails("every(1s).collect()", "stream_unbounded", "no natural end");
  await fails("every(1s).sum()", "stream_unbounded");
  await fails("for x in every(1s) { }", "stream_unbounded");
  await fails("every(1s).map(x => x).collect()", "stream_unbounded");
  await fails("every(1s).merge([1].stream()).collect()", "stream_unbounded");
  // An unbounded check leaves the handle usable.
  assert.equal(
    await run("let s = every(1ms)\ntry { s.collect() } catch e { e.code }\ns.take(1).len()"),
    "1",
  );
  // take bounds, zip with a bounded side bounds.
  assert.equal(await run("every(1ms).zip([1, 2].stream()).collect().len()"), "2");
  await fails(
    "[1].stream().flat_map(x => every(1s)).collect()",
    "stream_unbounded",
  );
});

Deno.test("argument errors leave the stream usable", async () => {
  const cases: [string, string, string?][] = [
    ["[1].stream().map()", "arg_error", "function"],
    ["[1].stream().map(5)", "type_error"],
    ["[1].stream().take(-1)", "type_error"],
    ['[1].stream().take("a")', "type_error"],
    ["[1].stream().take()", "arg_error"],
    ["[1].stream().window(0)", "arg_error", "positive"],
    ["[1].stream().window(0s)", "arg_error", "positive"],
    ['[1].stream().window("a")', "type_error"],
    ["[1].stream().debounce(-1s)", "arg_error", "non-negative"],
    ["[1].stream().throttle(5)", "type_error"],
    ["[1].stream().zip([1])", "type_error", ".stream()"],
    ["[1].stream().merge()", "arg_error"],
    ["[1].stream().take_until(5)", "type_error"],
    ["[1].stream().into(5)", "arg_error", "channel"],
    ["[1].stream().into({channel: 1})", "arg_error"],
    ["[1].stream().flat_map(x => x).collect()", "type_error", "list, table, range or stream"],
    ["[1].stream().where(x => 1).collect()", "type_error"],
    ["[1].stream().sum(1)", "arg_error"],
    ["[1].stream().nope()", "field_missing", "unknown method `.nope` on stream"],
    ["[1].stream().mapp(x => x)", "field_missing", "did you mean .map()?"],
    ["[1].stream().feed(cat)", "type_error", "collect"],
    ["[1].stream() == [1]", "type_error"],
    ["[1].stream().str()", "type_error", "cannot convert stream to str"],
  ];
  for (const [src, code, needle] of cases) await fails(src, code, needle);
  assert.equal(
    await run("let s = [1, 2].stream()\ntry { s.take(-1) } catch e { 0 }\ns.collect()"),
    "[1, 2]",
  );
});

Deno.test("in-memory pipelines run synchronously (no promise per item)", () => {
  const ev = newEv();
  const r = ev.evalSource(
    "(0..100000).stream().map(x => x * 3).where(x => x % 2 == 0).take(1000).collect().len()",
  );
  assert.ok(!isPromise(r), "a pure stream pipeline must not go async");
  assert.equal(r, 1000);
  const r2 = ev.evalSource("[3, 1].stream().tee(2).map(s => s.sort())");
  assert.ok(!isPromise(r2));
});
