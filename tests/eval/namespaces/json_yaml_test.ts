import { deepStrictEqual as eq, ok } from "node:assert/strict";
import { renderInline } from "../../../lib/value/render.ts";
import { FloatV, ListV, type RecordV, TableV, type Value } from "../../../lib/value/types.ts";
import { call, callWith, field, NsInterp, raises } from "./_host.ts";
import { rec } from "../../value/_helpers.ts";

const r = (v: Value): string => renderInline(v);
const ip = new NsInterp();

Deno.test("json.parse: corpus shapes", () => {
  eq(r(call("json", "parse", '{"a": 1}')), "{a: 1}");
  eq(r(call("json", "parse", "[1, 2, 3]")), "[1, 2, 3]");
  eq(r(call("json", "parse", '"hi"')), '"hi"');
  eq(r(call("json", "parse", "[true, false, null]")), "[true, false, null]");
  eq(r(call("json", "parse", "3.5")), "3.5");
  eq(call("json", "parse", "null"), null);
  eq(r(call("json", "parse", "[[1,2],[3,4]]")), "[[1, 2], [3, 4]]");
  ok(call("json", "parse", '[{"a":1}]') instanceof TableV);
});

Deno.test("json.parse: errors are arg_error", () => {
  raises(() => call("json", "parse", "{not valid"), "arg_error", "json.parse: invalid JSON");
  raises(() => call("json", "parse"), "arg_error", "requires argument `text`");
  raises(() => call("json", "parse", 5), "arg_error", "got int");
  raises(() => call("json", "parse", "1", "2"), "arg_error", "at most 1 argument, got 2");
  raises(
    () => callWith(ip, "json", "parse", ["1"], { strict: true }),
    "arg_error",
    "unknown argument `strict`",
  );
});

Deno.test("json.stringify: compact, pretty (named or positional), errors", () => {
  eq(call("json", "stringify", rec({ a: 1 })), '{"a":1}');
  eq(call("json", "stringify", new ListV([1, 2])), "[1,2]");
  eq(call("json", "stringify", null), "null");
  eq(call("json", "stringify", new ListV([1, "a", true, null])), '[1,"a",true,null]');
  const pretty = callWith(ip, "json", "stringify", [rec({ a: new ListV([1, 2]) })], {
    pretty: true,
  });
  eq(pretty, '{\n  "a": [\n    1,\n    2\n  ]\n}');
  eq(call("json", "stringify", rec({ a: 1 }), true), '{\n  "a": 1\n}');
  eq(callWith(ip, "json", "stringify", [rec({ a: 1 })], { pretty: false }), '{"a":1}');
  raises(() => call("json", "stringify"), "arg_error", "requires argument `value`");
  raises(() => call("json", "stringify", 1, "yes"), "arg_error", "`pretty` to be a bool");
  raises(
    () => callWith(ip, "json", "stringify", [1, true], { pretty: true }),
    "arg_error",
    "given twice",
  );
  // round trip
  const v = rec({ a: 1, b: new ListV([1, 2]) });
  eq(r(call("json", "parse", call("json", "stringify", v))), "{a: 1, b: [1, 2]}");
});

Deno.test("yaml.parse: mappings, sequences, scalars, ints vs floats", () => {
  eq(r(call("yaml", "parse", "a: 1\nb: 2")), "{a: 1, b: 2}");
  eq(r(call("yaml", "parse", "- 1\n- 2\n- 3")), "[1, 2, 3]");
  eq(r(call("yaml", "parse", "a:\n  b: 2")), "{a: {b: 2}}");
  eq(
    r(call("yaml", "parse", "a: null\nb: true\nc: 1.0\nd: x")),
    '{a: null, b: true, c: 1, d: "x"}',
  );
  eq((call("yaml", "parse", "c: 1.0") as RecordV).fields.get("c"), new FloatV(1));
  eq(
    (call("yaml", "parse", "n: 12345678901234567890") as RecordV).fields.get("n"),
    new FloatV(12345678901234567890),
  );
  eq((call("yaml", "parse", "n: 9007199254740993") as RecordV).fields.get("n"), 9007199254740993n);
  eq(r(call("yaml", "parse", "- a: 1\n- a: 2")), "[{a: 1}, {a: 2}]");
  ok(call("yaml", "parse", "- a: 1\n- a: 2") instanceof TableV);
  eq([...(call("yaml", "parse", "z: 1\n10: 2\na: 3") as RecordV).fields.keys()], ["z", "10", "a"]);
  eq(call("yaml", "parse", ""), null);
});

Deno.test("yaml.parse: errors are arg_error", () => {
  raises(() => call("yaml", "parse", "a: [1, 2"), "arg_error", "yaml.parse:");
  raises(() => call("yaml", "parse", "a: 1\na: 2"), "arg_error", "unique");
  raises(() => call("yaml", "parse", "a: 1\n---\nb: 2"), "arg_error", "multiple documents");
  raises(() => call("yaml", "parse"), "arg_error", "requires argument `text`");
  raises(() => call("yaml", "parse", 1), "arg_error", "got int");
});

Deno.test("yaml.stringify: block style through the JSON model", () => {
  eq(call("yaml", "stringify", rec({ a: 1 })), "a: 1\n");
  eq(call("yaml", "stringify", new ListV([1, 2, 3])), "- 1\n- 2\n- 3\n");
  eq(call("yaml", "stringify", rec({ f: new FloatV(1), n: new FloatV(NaN) })), "f: 1.0\nn: null\n");
  eq(call("yaml", "stringify", new ListV([rec({ a: 1 }), rec({ a: 2 })])), "- a: 1\n- a: 2\n");
  eq(call("yaml", "stringify", rec({ l: new ListV([1]) })), "l:\n- 1\n");
  const long = "word ".repeat(40);
  ok(!(call("yaml", "stringify", rec({ s: long })) as string).includes("\n  "), "never folded");
  raises(() => call("yaml", "stringify"), "arg_error", "requires argument `value`");
  for (
    const v of [
      rec({ a: 1, b: 2 }),
      new TableV([rec({ a: 1 }), rec({ a: 2 })]),
      rec({ s: "true", t: "1", u: "multi\nline", big: 9223372036854775807n }),
    ]
  ) {
    eq(r(call("yaml", "parse", call("yaml", "stringify", v))), r(v));
  }
  eq(call("json", "stringify", call("yaml", "parse", "a: 1\nb: 2")), '{"a":1,"b":2}');
});

Deno.test("json/yaml members: misuse is field_missing", () => {
  raises(() => field("json", "parse"), "field_missing", "`json.parse` is a function — call it");
  raises(() => field("yaml", "stringify"), "field_missing", "is a function — call it");
  raises(() => call("json", "decode", "x"), "field_missing", "unknown method `json.decode`");
  raises(() => call("json", "prase", "x"), "field_missing", "did you mean json.parse()?");
  raises(() => field("json", "nope"), "field_missing", "unknown member `json.nope`");
  raises(() => field("json", "constructor"), "field_missing", "unknown member");
});
