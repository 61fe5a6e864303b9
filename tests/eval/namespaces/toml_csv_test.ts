import { deepStrictEqual as eq, ok } from "node:assert/strict";
import { renderInline } from "../../../lib/value/render.ts";
import {
  DurationV,
  FloatV,
  ListV,
  OutcomeV,
  PathV,
  type RecordV,
  TableV,
  type Value,
} from "../../../lib/value/types.ts";
import { call, raises } from "./_host.ts";
import { rec } from "../../value/_helpers.ts";

const r = (v: Value): string => renderInline(v);

Deno.test("toml.parse: keys, tables, arrays, array-of-tables, ints vs floats", () => {
  eq(r(call("toml", "parse", "a = 1")), "{a: 1}");
  eq(r(call("toml", "parse", "[a]\nb = 1")), "{a: {b: 1}}");
  eq(r(call("toml", "parse", 'name = "shoal"')), '{name: "shoal"}');
  eq(r(call("toml", "parse", "a = [1, 2, 3]")), "{a: [1, 2, 3]}");
  const items = (call("toml", "parse", '[[items]]\nname = "x"\n[[items]]\nname = "y"') as RecordV)
    .fields.get("items") as Value;
  ok(items instanceof TableV);
  eq(r(items), '[{name: "x"}, {name: "y"}]');
  eq((call("toml", "parse", "f = 1.0") as RecordV).fields.get("f"), new FloatV(1));
  eq(
    (call("toml", "parse", "i = 9223372036854775807") as RecordV).fields.get("i"),
    9223372036854775807n,
  );
  eq(
    r(call("toml", "parse", "d = 1979-05-27T07:32:00Z\nl = 1979-05-27")),
    '{d: "1979-05-27T07:32:00.000Z", l: "1979-05-27"}',
  );
});

Deno.test("toml.parse: errors are arg_error with position", () => {
  raises(() => call("toml", "parse", "not = = valid"), "arg_error", "toml.parse:");
  raises(() => call("toml", "parse", "a = 1\na = 2"), "arg_error", "line 2");
  raises(() => call("toml", "parse"), "arg_error", "requires argument `text`");
  raises(() => call("toml", "parse", new ListV([])), "arg_error", "got list");
});

Deno.test("toml.stringify: layout of the Rust toml crate", () => {
  eq(call("toml", "stringify", rec({ a: 1 })), "a = 1\n");
  eq(call("toml", "stringify", rec({ a: new ListV([1, 2]), b: "x" })), 'a = [1, 2]\nb = "x"\n');
  eq(
    call(
      "toml",
      "stringify",
      rec({ top: true, sub: rec({ b: 1, deep: rec({ c: new FloatV(2) }) }), z: "q" }),
    ),
    'top = true\nz = "q"\n\n[sub]\nb = 1\n\n[sub.deep]\nc = 2.0\n',
  );
  eq(
    call("toml", "stringify", rec({ items: new TableV([rec({ name: "x" }), rec({ name: "y" })]) })),
    '[[items]]\nname = "x"\n\n[[items]]\nname = "y"\n',
  );
  eq(call("toml", "stringify", rec({ a: rec({ b: rec({ c: 1 }) }) })), "[a.b]\nc = 1\n");
  eq(call("toml", "stringify", rec({ e: rec({}) })), "[e]\n");
  eq(
    call("toml", "stringify", rec({ "a b": 'q"\n', m: new ListV([rec({ x: 1 }), 2]) })),
    '"a b" = "q\\"\\n"\nm = [{ x = 1 }, 2]\n',
  );
  eq(
    call(
      "toml",
      "stringify",
      rec({
        n: new FloatV(NaN),
        i: new FloatV(-Infinity),
        z: new FloatV(-0),
        big: new FloatV(1e21),
      }),
    ),
    "n = nan\ni = -inf\nz = -0.0\nbig = 1000000000000000000000.0\n",
  );
  eq(
    call("toml", "stringify", rec({ p: new PathV("/x"), d: new DurationV(5n) })),
    'p = "/x"\nd = 5\n',
  );
  eq(call("toml", "stringify", rec({})), "");
});

Deno.test("toml.stringify: round trips and errors", () => {
  for (
    const v of [
      rec({ a: 1, b: "x" }),
      rec({ a: rec({ b: 1 }) }),
      rec({
        t: new TableV([rec({ a: 1, s: rec({ k: "v" }) }), rec({ a: 2, s: rec({ k: "w" }) })]),
      }),
      rec({ l: new ListV([new ListV([1, 2]), new ListV([])]), f: new FloatV(0.5) }),
    ]
  ) {
    eq(r(call("toml", "parse", call("toml", "stringify", v))), r(v));
  }
  raises(
    () => call("toml", "stringify", new ListV([1, 2])),
    "arg_error",
    "(toml needs a record/table at the top level)",
  );
  raises(() => call("toml", "stringify", 5), "arg_error", "toml.stringify: got int");
  raises(
    () => call("toml", "stringify", new TableV([rec({ a: 1 })])),
    "arg_error",
    "wrap it in a record",
  );
  raises(
    () => call("toml", "stringify", rec({ a: rec({ b: null }) })),
    "arg_error",
    "toml has no null (at `a.b`)",
  );
  raises(() => call("toml", "stringify", rec({ l: new ListV([1, null]) })), "arg_error", "`l.1`");
  raises(() => call("toml", "stringify"), "arg_error", "requires argument `value`");
  // A top-level outcome lowers to a record through the JSON model.
  const o = new OutcomeV(0, true, null, new Uint8Array(), new Uint8Array(), 0n, 0, "x");
  eq(call("toml", "stringify", o), 'status = 0\nok = true\nout = ""\nerr = ""\n');
});

Deno.test("csv.parse: headers, strings only, quoting, line ends", () => {
  eq(r(call("csv", "parse", "a,b\n1,2\n3,4")), '[{a: "1", b: "2"}, {a: "3", b: "4"}]');
  eq(r(call("csv", "parse", "a,b")), "[]");
  ok(call("csv", "parse", "a,b") instanceof TableV);
  eq(r(call("csv", "parse", "")), "[]");
  eq(r(call("csv", "parse", "name\nada\ngrace")), '[{name: "ada"}, {name: "grace"}]');
  eq(r(call("csv", "parse", 'a,b\n"x,y",2')), '[{a: "x,y", b: "2"}]');
  eq(
    r(call("csv", "parse", 'a\n"say ""hi"""\n"multi\nline"')),
    '[{a: "say \\"hi\\""}, {a: "multi\\nline"}]',
  );
  eq(
    r(call("csv", "parse", "\uFEFFa,b\r\n1,2\r\n\r\n3,4\r\n")),
    '[{a: "1", b: "2"}, {a: "3", b: "4"}]',
  );
  eq(r(call("csv", "parse", "a,b\n,\n")), '[{a: "", b: ""}]');
  eq(r(call("csv", "parse", 'a\nx"y')), '[{a: "x\\"y"}]');
  eq(r(call("csv", "parse", "n\n5")), '[{n: "5"}]');
});

Deno.test("csv.parse: errors", () => {
  raises(
    () => call("csv", "parse", "a,b\n1"),
    "arg_error",
    "record 2 (line 2) has 1 field, but the header has 2",
  );
  raises(() => call("csv", "parse", 'a,b\n"x\ny",2\n1,2,3'), "arg_error", "line 4");
  raises(() => call("csv", "parse"), "arg_error", "requires argument `text`");
  raises(() => call("csv", "parse", 5), "arg_error", "got int");
});

Deno.test("csv.stringify: shapes, header, quoting, inline cells", () => {
  eq(call("csv", "stringify", new ListV([rec({ a: "1", b: "2" })])), "a,b\n1,2\n");
  eq(call("csv", "stringify", rec({ a: "x" })), "a\nx\n");
  eq(
    call(
      "csv",
      "stringify",
      new TableV([rec({ a: "1", b: "x,y" }), rec({ b: 'q"', c: "dropped" })]),
    ),
    'a,b\n1,"x,y"\n,"q"""\n',
  );
  eq(
    call(
      "csv",
      "stringify",
      new ListV([rec({ n: 3, f: new FloatV(1.5), l: new ListV([1]), z: null, s: "a\nb" })]),
    ),
    'n,f,l,z,s\n3,1.5,[1],null,"a\nb"\n',
  );
  eq(call("csv", "stringify", new ListV([rec({ a: "" })])), 'a\n""\n');
  eq(call("csv", "stringify", new ListV([])), "");
  eq(call("csv", "stringify", new TableV([])), "");
  for (const bad of [5, "a,b", new ListV([rec({ a: 1 }), 2]), null]) {
    raises(
      () => call("csv", "stringify", bad),
      "type_error",
      "csv.stringify expects a table, a list of records or a record",
    );
  }
  raises(() => call("csv", "stringify"), "arg_error", "requires argument `rows`");
  const t = call("csv", "parse", 'a,b\n"x,y",2\n"q""",\n');
  eq(r(call("csv", "parse", call("csv", "stringify", t))), r(t));
});
