import assert from "node:assert/strict";
import { BytesV, ListV, RegexV, type Value } from "../../../lib/value/types.ts";
import { expandTemplate, splitLines } from "../../../lib/eval/methods/str.ts";
import { assertFails, call, show, TestInterp } from "./host.ts";

const ip = new TestInterp();
const re = (src: string, flags = "u") => new RegexV(src, new RegExp(src, flags));

Deno.test("str: corpus values", async () => {
  const cases: [string, string, Value[], string][] = [
    ["hello", "len", [], "5"],
    ["", "len", [], "0"],
    ["café", "len", [], "4"],
    ["🦀x", "count", [], "2"],
    ["", "is_empty", [], "true"],
    ["x", "is_empty", [], "false"],
    ["a\r\nb", "lines", [], '["a", "b"]'],
    ["onlyline", "lines", [], '["onlyline"]'],
    ["", "lines", [], "[]"],
    ["a\nb\n", "lines", [], '["a", "b"]'],
    ["a\n\nb", "lines", [], '["a", "", "b"]'],
    ["the quick fox", "words", [], '["the", "quick", "fox"]'],
    ["a b  c", "words", [], '["a", "b", "c"]'],
    ["  one two\t three \n", "words", [], '["one", "two", "three"]'],
    ["", "words", [], "[]"],
    ["ab", "chars", [], '["a", "b"]'],
    ["", "chars", [], "[]"],
    ["a🦀", "chars", [], '["a", "🦀"]'],
    ["a,b,c", "split", [","], '["a", "b", "c"]'],
    ["a,,b", "split", [","], '["a", "", "b"]'],
    ["abc", "split", [","], '["abc"]'],
    ["a::b::c", "split", ["::"], '["a", "b", "c"]'],
    ["a,b,,c", "split", [","], '["a", "b", "", "c"]'],
    ["ab", "split", [""], '["", "a", "b", ""]'],
    ["", "split", [""], '["", ""]'],
    ["hello", "starts_with", ["he"], "true"],
    ["abc", "starts_with", [""], "true"],
    ["hello", "ends_with", ["lo"], "true"],
    ["abc", "ends_with", ["abc"], "true"],
    ["abc", "contains", ["z"], "false"],
    ["abcdef", "contains", ["cd"], "true"],
    ["abc", "contains", [""], "true"],
    ["   ", "trim", [], '""'],
    ["  ab  ", "trim", [], '"ab"'],
    ["\u0085x\u00a0", "trim", [], '"x"'],
    ["AbC", "lower", [], '"abc"'],
    ["SHOAL", "upper", [], '"SHOAL"'],
    ["straße", "upper", [], '"STRASSE"'],
    ["foo bar foo", "replace", ["foo", "baz"], '"baz bar baz"'],
    ["abc", "replace", ["z", "q"], '"abc"'],
    ["", "replace", ["x", "y"], '""'],
    ["a.b.c", "replace", [".", "_"], '"a_b_c"'],
    ["a-b", "replace", ["-", "$1$$"], '"a$1$$b"'],
    ["a🦀", "replace", ["", "-"], '"-a-🦀-"'],
    ["hello world", "replace", [re("o"), "0"], '"hell0 w0rld"'],
    ["foo123bar456", "replace", [re("[0-9]+"), "#"], '"foo#bar#"'],
    ["2026-07-11", "replace", [re("(\\d+)-(\\d+)-(\\d+)"), "$3/$2/$1"], '"11/07/2026"'],
    ["abc", "replace", [re("[0-9]+"), "#"], '"abc"'],
    ["k=v", "replace", [re("(?<key>\\w)=(?<val>\\w)"), "$val=${key}"], '"v=k"'],
    ["a1b22c333", "matches", [re("[0-9]+")], '["1", "22", "333"]'],
    ["hello", "matches", [re("[0-9]+")], "[]"],
    ["a1b22c333", "match", [re("[0-9]+")], '"1"'],
    ["hello", "match", [re("z")], "null"],
    ["42", "parse_int", [], "42"],
    ["-7", "parse_int", [], "-7"],
    ["+7", "parse_int", [], "7"],
    ["9223372036854775807", "parse_int", [], "9223372036854775807"],
    ["3.5", "parse_float", [], "3.5"],
    ["3.14", "parse_float", [], "3.14"],
    ["XY foo/bar.rs", "take", [2], '"XY"'],
    ["XY foo/bar.rs", "skip", [3], '"foo/bar.rs"'],
    ["héllo", "take", [2], '"hé"'],
    ["hi", "take", [99], '"hi"'],
    ["hi", "skip", [99], '""'],
    ["🦀🦀x", "skip", [1], '"🦀x"'],
    ["ab", "reverse", [], '"ba"'],
    ["a🦀", "reverse", [], '"🦀a"'],
    ["x", "str", [], '"x"'],
    ["x", "display", [], '"x"'],
  ];
  for (const [recv, m, args, want] of cases) {
    assert.equal(await show(ip, recv, m, args), want, `${JSON.stringify(recv)}.${m}`);
  }
  // chained: "abcdefg".skip(2).take(3)
  assert.equal(await show(ip, await call(ip, "abcdefg", "skip", [2]), "take", [3]), '"cde"');
});

Deno.test("str: error paths (corpus codes and needles)", async () => {
  const cases: [Value, string, Value[], string, string?][] = [
    ["hello", "starts_with", [], "arg_error", "requires a prefix"],
    ["hello", "ends_with", [], "arg_error", "requires a suffix"],
    ["a,b", "split", [], "arg_error", "requires a separator"],
    ["foo", "replace", ["o"], "arg_error", "requires a replacement"],
    ["abc", "contains", [1], "type_error"],
    ["abc", "starts_with", [1], "type_error"],
    ["abc", "split", [re(",")], "type_error"],
    ["abc", "matches", ["a"], "type_error"],
    ["abc", "match", [1], "type_error"],
    ["abc", "replace", [1, "x"], "type_error"],
    ["notanumber", "parse_int", [], "arg_error", 'cannot parse "notanumber" as int'],
    ["notafloat", "parse_float", [], "arg_error", 'cannot parse "notafloat" as float'],
    ["3.5", "parse_int", [], "arg_error"],
    ["9223372036854775808", "parse_int", [], "arg_error"],
    ["abc", "take", [-1], "type_error"],
    [new BytesV(new Uint8Array([104])), "upper", [], "type_error", "expects str"],
    [5, "lower", [], "type_error"],
    [new ListV([]), "trim", [], "type_error"],
  ];
  for (const [recv, m, args, code, needle] of cases) {
    await assertFails(() => call(ip, recv, m, args), code, needle);
  }
});

Deno.test("str: lines keep a bare \\r that ends no line", () => {
  assert.deepEqual(splitLines("a\rb\r\n"), ["a\rb"]);
  assert.deepEqual(splitLines("a\r"), ["a\r"]);
  assert.deepEqual(splitLines("\n"), [""]);
});

Deno.test("str: Rust replacement templates", () => {
  const m = /(?<y>\d+)-(\d+)/.exec("2026-07")!;
  assert.equal(expandTemplate("$2/$1", m), "07/2026");
  assert.equal(expandTemplate("$y!", m), "2026!");
  assert.equal(expandTemplate("${y}x", m), "2026x");
  assert.equal(expandTemplate("$1x", m), ""); // group `1x` does not exist
  assert.equal(expandTemplate("$$1", m), "$1");
  assert.equal(expandTemplate("cost: $", m), "cost: $");
  assert.equal(expandTemplate("$9", m), "");
});

Deno.test({ name: "str: cleanup", fn: () => ip.cleanup() });
