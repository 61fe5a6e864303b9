/**
 * The method tables through the real evaluator: dispatch, implicit lambdas (`.sort(.k)`), the
 * field→method fallback and closures defined in Shoal source.
 */

import assert from "node:assert/strict";
import { Evaluator } from "../../../lib/eval/mod.ts";
import { renderInline } from "../../../lib/value/render.ts";
import { assertFails } from "./host.ts";

const dir = Deno.makeTempDirSync({ prefix: "shoal-methods-eval-" });
const ev = () => new Evaluator({ cwd: dir, env: {} });

Deno.test("methods via the evaluator: values", async () => {
  const cases: [string, string][] = [
    ["[3, 1, 2].sort_by(x => -x)", "[3, 2, 1]"],
    ["[{k: 2}, {k: 1}].sort(.k)", "[{k: 1}, {k: 2}]"],
    ['["a", "b", "c"].map(.upper)', '["A", "B", "C"]'],
    ['["aa", "b", "ccc"].map(.len)', "[2, 1, 3]"],
    ["[1, 2, 3].sum", "6"],
    ["[[], [1], [], [2, 3]].where(.is_empty).len()", "2"],
    ["var s = 0\n[1, 2, 3].each(x => { s += x })\ns", "6"],
    ["[1, 2, 3, 4].reduce(0, (a, x) => a + x)", "10"],
    ['[["a", 1], ["b", 2]].reduce({}, (acc, kv) => acc.set(kv[0], kv[1]))', "{a: 1, b: 2}"],
    [
      "[1, 2, 3, 4].group(x => x % 2 == 0)",
      "[{key: false, values: [1, 3]}, {key: true, values: [2, 4]}]",
    ],
    ["(1..=5).sum()", "15"],
    ["(1..10).contains(5)", "true"],
    ['"2026-07-11".replace(re"(\\d+)-(\\d+)-(\\d+)", "$3/$2/$1")', '"11/07/2026"'],
    ['"héllo".take(2)', '"hé"'],
    ['let s = "hello world"\ns.split(" ").map(w => w.upper()).join("-")', '"HELLO-WORLD"'],
    ["{a: [1, 2], b: [3, 4]}.values().flatten()", "[1, 2, 3, 4]"],
    ["{a: 1, b: 2}.merge({b: 20, c: 30})", "{a: 1, b: 20, c: 30}"],
    ["(22.0 / 7.0).round(3)", "3.143"],
    ["(-2.5).round()", "-3"],
    ["42.str()", '"42"'],
    ["[1, 2, 3].tap(x => x.len()).map(y => y * 10)", "[10, 20, 30]"],
    ['"payload".tap(s => s.save("tapped.txt"))', '"payload"'],
    ["[3s, 1s, 2s].min()", "1s"],
    [
      '[t"2026-07-09T14:00Z", t"2026-01-01T00:00Z"].sort()',
      "[2026-01-01T00:00:00Z, 2026-07-09T14:00:00Z]",
    ],
  ];
  for (const [src, want] of cases) {
    assert.equal(renderInline(await ev().evalSource(src)), want, src);
  }
  assert.equal(Deno.readTextFileSync(`${dir}/tapped.txt`), "payload");
});

Deno.test("methods via the evaluator: errors", async () => {
  const cases: [string, string, string?][] = [
    ["[1, 2, 3].sum(x => x)", "arg_error", "sum takes no arguments"],
    ["[3, 1, 2].max(.value)", "arg_error", "max takes no arguments"],
    ['[{k: 1}, {k: "a"}, {k: 2}].sort(.k)', "type_error", "cannot compare"],
    ["[1, 2, 3].chunks(0)", "arg_error", "chunk size must be positive"],
    ["[1, 2, 3].take(-1)", "type_error"],
    ['[1, 2].get("a", 0)', "type_error"],
    ["{a: 1}.first()", "type_error"],
    ["{a: 1}.map(x => x)", "type_error"],
    ['"hello".starts_with()', "arg_error", "requires a prefix"],
    ['"foo".replace("o")', "arg_error", "requires a replacement"],
    ["{a: 1}.set()", "arg_error", "requires a key"],
    ['"3.5".parse_int()', "arg_error"],
    ["(-9223372036854775807 - 1).abs()", "overflow"],
    ["5kb.abs()", "type_error"],
    ["5.len()", "type_error"],
    ['t"2026-07-09T14:00Z".str()', "type_error", "interpolation"],
    ['[1, "a", true, null].str()', "type_error"],
    ["[1].where(x => 1)", "type_error", "no truthiness"],
  ];
  for (const [src, code, needle] of cases) {
    await assertFails(() => ev().evalSource(src), code, needle);
  }
});

Deno.test("methods via the evaluator: pure chains stay synchronous", () => {
  const r = ev().evalSource(
    "(1..1000).map(x => x * 2).where(x => x % 3 == 0).sort_by(x => -x).first()",
  );
  assert.ok(!(r instanceof Promise));
  assert.equal(renderInline(r as never), "1998");
});

Deno.test({ name: "eval: cleanup", fn: () => Deno.removeSync(dir, { recursive: true }) });
