import { deepStrictEqual as eq, ok } from "node:assert/strict";
import { renderInline } from "../../../lib/value/render.ts";
import { DurationV, FloatV, RecordV, type Value } from "../../../lib/value/types.ts";
import {
  isNamespaceName,
  namespaceMember,
  namespaceNames,
  namespaceTable,
  registerNamespace,
} from "../../../lib/eval/namespaces/mod.ts";
import { platformName } from "../../../lib/eval/namespaces/os.ts";
import { args, call, callWith, field, NsInterp, raises } from "./_host.ts";

const r = (v: Value): string => renderInline(v);

Deno.test("math constants are float fields", () => {
  eq(r(field("math", "pi")), "3.141592653589793");
  eq(r(field("math", "e")), "2.718281828459045");
  eq(r(field("math", "tau")), "6.283185307179586");
  eq(r(field("math", "sqrt2")), "1.4142135623730951");
  eq(r(field("math", "inf")), "inf");
  eq(r(field("math", "nan")), "nan");
  ok(field("math", "pi") instanceof FloatV);
});

Deno.test("math functions: corpus identities render exactly, results are floats", () => {
  const cases: [string, Value[], string][] = [
    ["sqrt", [16], "4"],
    ["abs", [-5], "5"],
    ["floor", [new FloatV(3.7)], "3"],
    ["ceil", [new FloatV(3.2)], "4"],
    ["round", [new FloatV(3.5)], "4"],
    ["round", [new FloatV(-2.5)], "-3"],
    ["round", [new FloatV(2.5)], "3"],
    ["round", [new FloatV(-0.4)], "-0"],
    ["trunc", [new FloatV(-3.9)], "-3"],
    ["min", [3, 7], "3"],
    ["max", [3, 7], "7"],
    ["min", [-3, -7], "-7"],
    ["max", [-3, -7], "-3"],
    ["clamp", [15, 0, 10], "10"],
    ["clamp", [-5, 0, 10], "0"],
    ["clamp", [5, 0, 10], "5"],
    ["clamp", [5, 5, 5], "5"],
    ["hypot", [3, 4], "5"],
    ["hypot", [0, 0], "0"],
    ["pow", [5, 0], "1"],
    ["pow", [1, 999], "1"],
    ["pow", [2, 10], "1024"],
    ["ln", [1], "0"],
    ["log10", [1], "0"],
    ["log2", [1], "0"],
    ["log2", [8], "3"],
    ["log10", [100], "2"],
    ["log", [8, 2], "3"],
    ["exp", [0], "1"],
    ["sin", [0], "0"],
    ["cos", [0], "1"],
    ["tan", [0], "0"],
    ["asin", [0], "0"],
    ["acos", [1], "0"],
    ["atan", [0], "0"],
    ["atan2", [0, 1], "0"],
    ["atan2", [1, 0], "1.5707963267948966"],
    ["cbrt", [27], "3"],
    ["sign", [-5], "-1"],
    ["sign", [5], "1"],
    ["sign", [0], "1"],
    ["sign", [new FloatV(-0)], "-1"],
    ["sqrt", [-1], "nan"],
    ["sqrt", [9007199254740993n], "94906265.62425156"],
  ];
  for (const [fn, a, want] of cases) {
    const v = call("math", fn, ...a);
    ok(v instanceof FloatV, `math.${fn} returns a float`);
    eq(r(v), want, `math.${fn}(${a.map(r).join(", ")})`);
  }
  // Rust f64 semantics where JS Math differs.
  eq(r(call("math", "min", new FloatV(NaN), 2)), "2");
  eq(r(call("math", "max", 2, new FloatV(NaN))), "2");
  eq(r(call("math", "pow", 1, new FloatV(NaN))), "1");
  eq(r(call("math", "pow", -1, new FloatV(Infinity))), "1");
  eq(r(call("math", "clamp", new FloatV(NaN), 0, 1)), "nan");
});

Deno.test("math errors: arity, types, clamp bounds, misuse", () => {
  raises(() => call("math", "sqrt"), "arg_error", "math.sqrt requires argument `x`");
  raises(() => call("math", "pow", 2), "arg_error", "math.pow requires argument `exponent`");
  raises(() => call("math", "clamp", 1, 2), "arg_error", "requires argument `hi`");
  raises(() => call("math", "sqrt", 1, 2), "arg_error", "at most 1 argument, got 2");
  raises(() => call("math", "sqrt", "16"), "type_error", "math.sqrt expects a number");
  raises(() => call("math", "max", 1, null), "type_error", "got null");
  raises(() => call("math", "clamp", 5, 10, 0), "arg_error", "lo (10) is greater than hi (0)");
  raises(() => call("math", "clamp", 5, new FloatV(NaN), 0), "arg_error", "nan");
  raises(() => field("math", "bogus"), "field_missing", "`math.bogus` is not a constant");
  raises(() => field("math", "sqrt"), "field_missing", "`math.sqrt` is a function — call it");
  raises(() => call("math", "pi"), "field_missing", "unknown method `math.pi`");
  raises(() => call("math", "pi"), "field_missing", "is a constant — drop the parentheses");
  raises(() => call("math", "frobnicate", 1), "field_missing", "unknown method `math.frobnicate`");
  raises(() => call("math", "sqr", 1), "field_missing", "did you mean math.sqrt()?");
  raises(() => field("math", "pie"), "field_missing", "did you mean math.pi?");
});

Deno.test("os: host facts, nullary, session env", () => {
  ok(["linux", "macos", "windows", "freebsd"].includes(call("os", "platform") as string));
  eq(platformName("darwin"), "macos");
  eq(platformName("linux"), "linux");
  ok((call("os", "arch") as string).length > 0);
  eq(call("os", "pid"), Deno.pid);
  ok((call("os", "cpus") as number) >= 1);
  ok((call("os", "hostname") as string).length > 0);
  const up = call("os", "uptime");
  ok(up instanceof DurationV && up.ns >= 0n, "uptime is a non-negative duration");
  const ip = new NsInterp(new Map([["USER", "ada"], ["B", "2"], ["A", "1"]]));
  eq(callWith(ip, "os", "username", []), "ada");
  eq(callWith(new NsInterp(new Map([["LOGNAME", "grace"]])), "os", "username", []), "grace");
  ok(
    (callWith(new NsInterp(), "os", "username", []) as string).length > 0,
    "falls back to the user db",
  );
  eq(r(callWith(ip, "os", "env", [])), '{A: "1", B: "2", USER: "ada"}');
  eq(r(callWith(new NsInterp(), "os", "env", [])), "{}", "the session env, not the process env");
  for (const m of ["platform", "arch", "pid", "hostname", "username", "cpus", "uptime", "env"]) {
    raises(() => call("os", m, "x"), "arg_error", `os.${m} takes no arguments`);
    raises(() => callWith(ip, "os", m, [], { x: 1 }), "arg_error", `os.${m} takes no arguments`);
  }
  raises(() => call("os", "nope"), "field_missing", "unknown method `os.nope`");
  raises(() => field("os", "platform"), "field_missing", "`os.platform` is a function — call it");
});

Deno.test("config: empty without injection, snapshot when injected", () => {
  eq(r(call("config", "all")), "{}");
  eq(call("config", "get", "render"), null);
  eq(field("config", "render"), null);
  eq(field("config", "all"), null, "field form reads a key named `all`");
  const snap = new RecordV(
    new Map<string, Value>([["render", "table"], ["all", 1], [
      "history",
      new RecordV(new Map([["max", 10]])),
    ]]),
  );
  const ip = new NsInterp(new Map(), snap);
  eq(callWith(ip, "config", "all", []), snap);
  eq(callWith(ip, "config", "get", ["render"]), "table");
  eq(callWith(ip, "config", "get", ["history.max"]), null, "no dotted paths");
  eq(field("config", "all", ip), 1);
  eq(r(field("config", "history", ip)), "{max: 10}");
  raises(() => call("config", "get"), "arg_error", "requires argument `key`");
  raises(() => call("config", "get", 1), "arg_error", "got int");
  raises(() => call("config", "all", 1), "arg_error", "config.all takes no arguments");
  raises(() => call("config", "set", "a", 1), "field_missing", "unknown method `config.set`");
});

Deno.test("registry: names, tables, unknown namespace", () => {
  eq(namespaceNames().sort(), ["config", "csv", "json", "math", "os", "toml", "yaml"]);
  ok(isNamespaceName("json") && !isNamespaceName("env") && !isNamespaceName("constructor"));
  eq(namespaceTable("math")?.name, "math");
  raises(() => namespaceMember(new NsInterp(), "nope", "x", args([])), "undefined_var");
  registerNamespace({ name: "zz_test", functions: new Map([["one", () => 1]]) });
  ok(isNamespaceName("zz_test"));
  eq(namespaceMember(new NsInterp(), "zz_test", "one", args([])), 1);
});
