import { deepStrictEqual as eq, ok } from "node:assert/strict";
import type { CmdExpr } from "../../lib/syntax/ast.ts";
import {
  type Cut,
  displayTop,
  formatDuration,
  formatFloat,
  formatSize,
  formatSizeExact,
  interpolate,
  moreLine,
  quoteStr,
  relPath,
  renderBlock,
  renderInline,
  renderInlineBounded,
  truncateText,
} from "../../lib/value/render.ts";
import {
  BytesV,
  ClosureV,
  CommandV,
  DateTimeV,
  DurationV,
  ErrorV,
  FloatV,
  GlobV,
  ListV,
  OutcomeV,
  PathV,
  RangeV,
  RecordV,
  RegexV,
  SecretV,
  SizeV,
  StreamV,
  TableV,
  TaskV,
  TimeV,
  type Value,
} from "../../lib/value/types.ts";
import { assertShoalError, list, rec } from "./_helpers.ts";

const S = 1_000_000_000n;
const outcome = (
  status: number | null,
  okv: boolean,
  signal: string | null = null,
  stdout = new Uint8Array(),
  parsed: Value | undefined = undefined,
) => new OutcomeV(status, okv, signal, stdout, new Uint8Array(), 0n, 0, "x", parsed);

Deno.test("formatFloat follows Rust Display (§19.2)", () => {
  eq(formatFloat(1), "1");
  eq(formatFloat(1e9), "1000000000");
  eq(formatFloat(0.1 + 0.2), "0.30000000000000004");
  eq(formatFloat(10 / 3), "3.3333333333333335");
  eq(formatFloat(1e21), "1000000000000000000000");
  eq(formatFloat(1e-7), "0.0000001");
  eq(formatFloat(1.5e-7), "0.00000015");
  eq(formatFloat(-1.5e-10), "-0.00000000015");
  eq(formatFloat(1.2345e25), "12345000000000000000000000");
  eq(formatFloat(-0), "-0");
  eq(formatFloat(0), "0");
  eq(formatFloat(NaN), "nan");
  eq(formatFloat(Infinity), "inf");
  eq(formatFloat(-Infinity), "-inf");
  eq(formatFloat(3.14), "3.14");
  eq(formatFloat(-8.5), "-8.5");
  eq(formatFloat(4.140000000000001), "4.140000000000001");
  eq(formatFloat(5e-324), "0." + "0".repeat(323) + "5");
  eq(formatFloat(Number.MAX_VALUE).length, 309);
});

Deno.test("formatSize: decimal units, two decimals with Rust rounding (§19.3)", () => {
  const cases: [bigint, string][] = [
    [0n, "0b"],
    [237n, "237b"],
    [500n, "500b"],
    [999n, "999b"],
    [1000n, "1kb"],
    [1020n, "1.02kb"],
    [1024n, "1.02kb"], // 1kib
    [4096n, "4.1kb"], // 4kib
    [1500n, "1.5kb"],
    [2000n, "2kb"],
    [3333n, "3.33kb"], // 10kb / 3
    [12000n, "12kb"],
    [1_500_000n, "1.5mb"],
    [1_000_000n, "1mb"], // 1_000kb
    [4_194_304n, "4.19mb"], // 4mib
    [1_073_741_824n, "1.07gb"], // 1gib
    [1_500_000_000n, "1.5gb"], // 1500mb
    [2_000_000_000_000n, "2tb"],
    [1_099_511_627_776n, "1.1tb"],
    [18446744073709551615n, "18446744.07tb"],
    // Exact binary ties round to even: 1.125 → 1.12, 1.375 → 1.38.
    [1125n, "1.12kb"],
    [1375n, "1.38kb"],
    [1005n, "1kb"], // 1.005 is below the tie in binary
    // Rounding up to 1000 of a unit promotes to the next unit.
    [999_999n, "1mb"],
    [999_995n, "1mb"],
    [999_994n, "999.99kb"],
    [999_999_999_999_999n, "1000tb"],
  ];
  for (const [b, want] of cases) eq(formatSize(b), want, `${b}`);
});

Deno.test("formatSizeExact: no rounding, in the largest decimal unit not above it", () => {
  const cases: [bigint, string][] = [
    [0n, "0b"],
    [999n, "999b"],
    [1000n, "1kb"],
    [48_213n, "48.213kb"],
    [48_199n, "48.199kb"],
    [999_999n, "999.999kb"],
    [1_000_001n, "1.000001mb"],
    [1_500_000_000n, "1.5gb"],
    [-5n, "-5b"],
  ];
  for (const [b, want] of cases) eq(formatSizeExact(b), want, `${b}`);
});

Deno.test("renderBlock forText: a text reader gets every size unrounded, a terminal 2 decimals", () => {
  const t = new TableV([
    rec({ name: "a.bin", size: new SizeV(48_213n) }),
    rec({ name: "b.bin", size: new SizeV(48_199n) }),
  ]);
  const exact = renderBlock(t, 80, { forText: true });
  ok(exact.includes("48.213kb") && exact.includes("48.199kb"), exact);
  const human = renderBlock(t, 80);
  ok(human.includes("48.21kb") && human.includes("48.2kb"), human);
  eq(renderBlock(new SizeV(48_213n), 80, { forText: true }), "48.213kb");
  eq(renderBlock(rec({ s: new SizeV(1_234_567n) }), 80, { forText: true }), "s: 1.234567mb");
});

Deno.test("renderBlock: a list too long for its line, among other results, is a block", () => {
  const lines = Array.from({ length: 60 }, (_, i) => `2026-01-02 ERROR upstream ${i} timed out`);
  const out = renderBlock(new ListV([5000, new ListV(lines), 3]), 200, { forText: true });
  const shown = out.split("\n");
  eq(shown[0], "[0] 5000");
  eq(shown[1], "[1]");
  eq(shown[2], '  "2026-01-02 ERROR upstream 0 timed out"');
  ok(shown.includes("  … 10 more items"), out);
  eq(shown.at(-1), "[2] 3");
  ok(!out.includes('…"'), `no item cut inside: ${out}`);
  // a short list stays inline beside the others
  eq(
    renderBlock(new ListV([1, new ListV(["a", "b"]), 3]), 200, { forText: true }),
    '[1, ["a", "b"], 3]',
  );
});

Deno.test("formatDuration: greedy non-zero units (§19.4)", () => {
  const cases: [bigint, string][] = [
    [0n, "0s"],
    [250_000_000n, "250ms"],
    [90n * S, "1m30s"],
    [-90n * S, "-1m30s"],
    [5400n * S, "1h30m"],
    [1_500_000_000n, "1s500ms"],
    [30n * 86400n * S, "4w2d"],
    [1_500_000n, "1ms500us"],
    [36n * 3600n * S, "1d12h"],
    [90000n * S, "1d1h"],
    [(2n * 86400n + 3n * 3600n + 4n * 60n + 5n) * S, "2d3h4m5s"],
    [9n * 86400n * S, "1w2d"],
    [28n * 86400n * S, "4w"],
    [1n, "1ns"],
    [-5n * S, "-5s"],
    [9223372036854775807n, "15250w1d23h47m16s854ms775us807ns"],
    [-9223372036854775808n, "-15250w1d23h47m16s854ms775us808ns"],
  ];
  for (const [ns, want] of cases) eq(formatDuration(ns), want, `${ns}`);
});

Deno.test('quoteStr escapes exactly " \\ LF TAB CR NUL (§19.1)', () => {
  eq(quoteStr("hi"), '"hi"');
  eq(quoteStr('say "x"'), '"say \\"x\\""');
  eq(quoteStr("a\\b"), '"a\\\\b"');
  eq(quoteStr("a\nb\tc\rd\0e"), '"a\\nb\\tc\\rd\\0e"');
  eq(quoteStr("héllo ✓ 🐚"), '"héllo ✓ 🐚"');
  eq(quoteStr("\x1b[0m"), '"\x1b[0m"');
});

Deno.test("renderInline of every type (§4 table)", () => {
  const cases: [Value, string][] = [
    [null, "null"],
    [true, "true"],
    [false, "false"],
    [42, "42"],
    [-7, "-7"],
    [9223372036854775807n, "9223372036854775807"],
    [-9223372036854775808n, "-9223372036854775808"],
    [new FloatV(1e9), "1000000000"],
    [new FloatV(0.5), "0.5"],
    ["hi", '"hi"'],
    [new PathV("a.txt"), "a.txt"],
    [new PathV("my file.txt"), '"my file.txt"'],
    [new GlobV("*.rs", "/tmp", true), "*.rs"],
    [new RegexV("\\d+", /\d+/u), 're"\\d+"'],
    [new SizeV(1024n), "1.02kb"],
    [new DurationV(90n * S), "1m30s"],
    [new DateTimeV(1783605600n * S), "2026-07-09T14:00:00Z"],
    [new DateTimeV(1783605600n * S + 500_000_000n, "Europe/Paris"), "2026-07-09T14:00:00.5Z"],
    [new TimeV(10, 0, 0), "10:00"],
    [new TimeV(9, 5, 0), "09:05"],
    [new TimeV(22, 30, 15), "22:30:15"],
    [new BytesV(new Uint8Array(2)), "bytes(2b)"],
    [new BytesV(new Uint8Array(1500)), "bytes(1.5kb)"],
    [new BytesV(new Uint8Array(3), "val:blake3:abcd"), "bytes(3b) val:blake3:abcd"],
    [list(), "[]"],
    [list(1, "a", null), '[1, "a", null]'],
    [list(list(1), list()), "[[1], []]"],
    [rec({}), "{}"],
    [rec({ a: 1, "k-2": 2, _x9: true }), '{a: 1, "k-2": 2, _x9: true}'],
    [rec({ 'q"k': 1, "": 2, "1a": 3 }), '{"q\\"k": 1, "": 2, "1a": 3}'],
    [new TableV([rec({ a: 1 }), rec({ a: 2 })]), "[{a: 1}, {a: 2}]"],
    [new RangeV(2, 7, false), "2..7"],
    [new RangeV(-2, 7, true), "-2..=7"],
    [new StreamV("value", true, null), "stream<value>"],
    [new ErrorV("div_zero", "division by zero"), "error(div_zero: division by zero)"],
    [outcome(0, true), "outcome(status: 0, ok: true)"],
    [outcome(3, false), "outcome(status: 3, ok: false)"],
    [outcome(null, false), "outcome(status: -1, ok: false)"],
    [outcome(null, false, "SIGSEGV"), "outcome(signal: SIGSEGV, ok: false)"],
    [new TaskV(3, "spawn", null), "task(3)"],
    [
      new ClosureV("f", [{ name: "a", hasDefault: false }, { name: "b", hasDefault: true }], {
        name: "rest",
        hasDefault: false,
      }, null),
      "fn f(a, b, ...rest)",
    ],
    [new ClosureV("g", [], null, null), "fn g()"],
    [new ClosureV(null, [{ name: "x", hasDefault: false }], null, null), "closure(x)"],
    [new ClosureV(null, [], null, null), "closure()"],
    [new CommandV({ head: "git" } as CmdExpr, "gs"), "command(git)"],
    [new SecretV("token", "hunter2"), "secret(token)"],
  ];
  for (const [v, want] of cases) eq(renderInline(v), want);
});

Deno.test("renderInlineBounded costs O(max) and marks the cut", () => {
  const big = new ListV(Array.from({ length: 100_000 }, (_, i) => i));
  const r = renderInlineBounded(big, 20);
  eq(r.length, 20);
  ok(r.endsWith("…"));
  ok(r.startsWith("[0, 1, 2, 3"));
  eq(renderInlineBounded(list(1, 2), 20), "[1, 2]");
  eq(renderInlineBounded("x".repeat(1_000_000), 10), '"xxxxxxxx…');
  eq(truncateText("ab🐚cd", 4), "ab…"); // never splits a surrogate pair
});

Deno.test("displayTop and interpolate (§19.7)", () => {
  eq(displayTop("hi"), "hi");
  eq(displayTop(new PathV("my file")), "my file");
  eq(displayTop(null), "");
  eq(displayTop(list(1, 2)), "[1, 2]");
  eq(displayTop(new SizeV(5000n)), "5kb");
  eq(interpolate("raw"), "raw");
  eq(interpolate(list(1, 2)), "[1, 2]");
  eq(interpolate(new PathV("a b.txt")), "a b.txt");
  eq(interpolate(new SizeV(5000n)), "5kb");
  eq(interpolate(null), "null");
  eq(interpolate(list("a")), '["a"]');
  assertShoalError(() => interpolate(new SecretV("t", "v")), "type_error", "interpolated");
});

Deno.test("renderBlock: scalars inline, records as key: value lines", () => {
  eq(renderBlock(42), "42");
  eq(renderBlock("hi"), '"hi"');
  eq(renderBlock(new SizeV(1024n)), "1.02kb");
  eq(renderBlock(rec({})), "{}");
  eq(renderBlock(rec({ name: "ada", "the age": 36 })), 'name     : "ada"\n"the age": 36');
  eq(renderBlock(list(1, 2, 3)), "[1, 2, 3]");
  eq(renderBlock(list()), "[]");
  eq(
    renderBlock(new ErrorV("arg_error", "bad", "try this")),
    "error(arg_error: bad)\nhint: try this",
  );
});

Deno.test("renderBlock: tables as aligned columns with a header", () => {
  const t = new TableV([
    rec({ name: "a.txt", size: new SizeV(1024n), kind: "file" }),
    rec({ name: "sub", size: new SizeV(0n), kind: "dir" }),
  ]);
  eq(
    renderBlock(t),
    [
      "name     size  kind",
      "───────────────────",
      "a.txt  1.02kb  file",
      "sub        0b  dir",
    ].join("\n"),
  );
  // A list of records renders as a table too; missing cells are empty; null is empty.
  eq(
    renderBlock(list(rec({ a: 1 }), rec({ b: "x\ny", a: null }))),
    ["a  b", "───────", "1", "   x\\ny"].join("\n"),
  );
  eq(renderBlock(new TableV([])), "(empty table)");
});

Deno.test("renderBlock: wide tables shrink columns with … to fit the width", () => {
  const t = new TableV([
    rec({ id: 1, text: "x".repeat(200), tag: "short" }),
    rec({ id: 2, text: "y", tag: "t" }),
  ]);
  const out = renderBlock(t, 40).split("\n");
  for (const line of out) ok([...line].length <= 40, `too wide: ${line}`);
  ok(out[2].includes("…"));
  ok(out[2].startsWith(" 1  xxx"));
  ok(out[2].endsWith("short"));
});

Deno.test("renderBlock: too many columns keeps whole leading columns and says how many are hidden", () => {
  const row = (i: number) =>
    new RecordV(new Map<string, Value>(Array.from({ length: 30 }, (_, c) => [`col${c}`, i * c])));
  const lines = renderBlock(new TableV([row(1), row(2)]), 80).split("\n");
  eq(lines[0], "col0  col1  col2  col3  col4  col5  col6  col7  col8  col9  col10  col11  col12");
  eq(lines[2].trim().split(/ +/), [
    "0",
    "1",
    "2",
    "3",
    "4",
    "5",
    "6",
    "7",
    "8",
    "9",
    "10",
    "11",
    "12",
  ]);
  eq(lines.at(-1), "… 17 more columns");
  for (const line of lines) ok([...line].length <= 80);
});

Deno.test("renderBlock is bounded: rows and items beyond maxRows are summarised", () => {
  const rows = Array.from({ length: 10_000 }, (_, i) => rec({ i }));
  const out = renderBlock(new TableV(rows)).split("\n");
  eq(out.length, 2 + 50 + 1);
  eq(out.at(-1), "… 9,950 more rows");
  const out5 = renderBlock(new TableV(rows), 80, { maxRows: 5 }).split("\n");
  eq(out5.at(-1), "… 9,995 more rows");
  const longList = new ListV(Array.from({ length: 1000 }, (_, i) => "item number " + i));
  const lines = renderBlock(longList, 80, { maxRows: 3 }).split("\n");
  eq(lines, ['"item number 0"', '"item number 1"', '"item number 2"', "… 997 more items"]);
  const wideRec = new RecordV(new Map(Array.from({ length: 100 }, (_, i) => [`k${i}`, i])));
  eq(renderBlock(wideRec, 80, { maxRows: 2 }), "k0: 0\nk1: 1\n… 98 more fields");
});

Deno.test("renderBlock of outcomes shows their output, and why a failed one failed", () => {
  const enc = new TextEncoder();
  eq(renderBlock(outcome(0, true, null, enc.encode("hello\nworld\n"))), "hello\nworld");
  eq(renderBlock(outcome(0, true)), "outcome(status: 0, ok: true)");
  eq(
    renderBlock(outcome(0, true, null, enc.encode("x\n"), rec({ a: 1 }))),
    "a: 1",
  );
  eq(renderBlock(outcome(2, false, null, enc.encode("oops\n"))), "oops\nfailed: exit status 2");
  const err = (status: number | null, ok: boolean, stderr: string, signal: string | null = null) =>
    new OutcomeV(status, ok, signal, new Uint8Array(), enc.encode(stderr), 0n, 1, "ls nope");
  eq(
    renderBlock(err(2, false, "ls: cannot access 'nope': No such file or directory\n")),
    "failed: exit status 2; stderr:\n  ls: cannot access 'nope': No such file or directory",
  );
  eq(renderBlock(err(null, false, "", "SIGKILL")), "failed: killed by SIGKILL");
  const long = Array.from({ length: 30 }, (_, i) => `e${i}`).join("\n");
  const lines = renderBlock(err(1, false, long), 80, { stderrLines: 3 }).split("\n");
  eq(lines, [
    "failed: exit status 1; stderr:",
    "  e0",
    "  e1",
    "  e2",
    "  … 27 more lines of stderr",
  ]);
  eq(renderBlock(err(1, false, "x"), 80, { stderrLines: 0 }), "failed: exit status 1");
  // A command that worked but printed only to stderr (git checkout) shows what it said.
  eq(
    renderBlock(err(0, true, "Switched to a new branch 'x'\n")),
    "outcome(status: 0, ok: true); stderr:\n  Switched to a new branch 'x'",
  );
  const many = enc.encode(Array.from({ length: 100 }, (_, i) => `line ${i}`).join("\n"));
  const out = renderBlock(outcome(0, true, null, many), 80, { maxRows: 3 });
  eq(out, "line 0\nline 1\nline 2\n… 97 more lines (789b in all)");
  const huge = outcome(0, true, null, enc.encode("x".repeat(100) + "\n"));
  eq(renderBlock(huge, 80, { maxChars: 10 }), "xxxxxxxxxx\n… output truncated (101b in all)");
});

Deno.test("renderBlock: where a cut value goes on, for a pager (opts.more)", () => {
  const enc = new TextEncoder();
  const cuts: Cut[] = [];
  const more = (c: Cut) => {
    cuts.push(c);
    return moreLine(c);
  };
  const text = Array.from({ length: 1000 }, (_, i) => `${i + 1}`).join("\n") + "\n";
  renderBlock(outcome(0, true, null, enc.encode(text)), 80, { more });
  // 50 lines "1".."50" are 9·1 + 41·2 = 91 digits and 50 newlines: the rest starts at 141.
  eq(cuts, [{ unit: "lines", path: "stdout", shown: 50, left: 950, next: 141, bytes: 3893 }]);
  eq(text.slice(141, 145), "51\n5");
  cuts.length = 0;
  renderBlock(new TableV(Array.from({ length: 70 }, (_, i) => rec({ i }))), 80, { more });
  eq(cuts, [{ unit: "rows", path: "", shown: 50, left: 20, next: 50 }]);
  cuts.length = 0;
  renderBlock(text, 80, { more, maxRows: 2 });
  eq(cuts, [{ unit: "lines", path: "", shown: 2, left: 998, next: 4, bytes: 3893 }]);
});

Deno.test("renderBlock: text reads as text — multi-line strings and UTF-8 bytes", () => {
  eq(renderBlock("one\ntwo\n"), "one\ntwo");
  eq(renderBlock("short"), '"short"');
  const json = new TextEncoder().encode('{\n  "name": "shoal"\n}\n');
  eq(renderBlock(new BytesV(json)), '{\n  "name": "shoal"\n}');
  eq(
    renderBlock(new BytesV(new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 0xff]))),
    "bytes(5b) (not UTF-8: 7f 45 4c 46 ff)",
  );
  eq(renderBlock(new BytesV(new Uint8Array())), "bytes(0b) (empty)");
  // A prefix cut inside a multi-byte character is still text.
  const e = new TextEncoder().encode("é".repeat(40));
  ok(!renderBlock(new BytesV(e), 80, { maxChars: 5 }).startsWith("bytes("));
});

Deno.test("renderBlock: paths under cwd are shown relative to it", () => {
  const t = new TableV([
    rec({ path: new PathV("/work/p/src/a.ts"), size: new SizeV(10n) }),
    rec({ path: new PathV("/etc/hosts"), size: new SizeV(5n) }),
  ]);
  eq(renderBlock(t, 80, { cwd: "/work/p" }).split("\n").slice(2), [
    "src/a.ts     10b",
    "/etc/hosts    5b",
  ]);
  eq(renderBlock(new PathV("/work/p"), 80, { cwd: "/work/p" }), "/work/p"); // pwd says where
  eq(renderBlock(list(new PathV("/work/p/a"), new PathV("/x")), 80, { cwd: "/work/p" }), "[a, /x]");
  eq(renderBlock(rec({ p: new PathV("/work/p/x") }), 80, { cwd: "/work/p/" }), "p: x");
  eq(relPath("/work/pp/x", "/work/p"), "/work/pp/x");
  // The cwd itself is never ".": `[pwd, n]` must say where, as `pwd` alone does.
  eq(relPath("/work/p", "/work/p"), "/work/p");
  eq(
    renderBlock(list(new PathV("/work/p"), new PathV("/work/p/a")), 80, { cwd: "/work/p" }),
    "[/work/p, a]",
  );
  eq(
    renderBlock(list(rec({ path: new PathV("/w/x"), trash: new PathV("/s/t/1-x") })), 80, {
      cwd: "/w",
    }).split("\n")[2],
    "x     /s/t/1-x",
  );
});

Deno.test("renderBlock: a list item on its own line is not cut at the width", () => {
  const long = "x".repeat(150);
  const out = renderBlock(new ListV([1, long, "short"]), 80);
  ok(out.split("\n").some((l) => l.includes(long)), out);
});

Deno.test("renderBlock forText: a whole list or table of 5+ items says how many", () => {
  const names = new ListV(Array.from({ length: 17 }, (_, i) => `package-number-${i}`));
  const text = renderBlock(names, 80, { forText: true });
  ok(text.endsWith("\n(17 items)"), text);
  ok(!renderBlock(names, 80).includes("items)"), "a terminal gets no count");
  const rows = new TableV(Array.from({ length: 6 }, (_, i) => rec({ n: i })));
  ok(renderBlock(rows, 80, { forText: true }).endsWith("\n(6 rows)"));
  // a cut one already says what is left; a short one is counted at a glance
  const many = new TableV(Array.from({ length: 60 }, (_, i) => rec({ n: i })));
  ok(!renderBlock(many, 80, { forText: true }).includes("(60 rows)"));
  ok(!renderBlock(new TableV([rec({ n: 1 })]), 80, { forText: true }).includes("rows)"));
});

Deno.test("renderBlock: forText keeps a table's last column whole past the width", () => {
  const subject = "Fix the off-by-one in the lexer that broke every other line of the corpus";
  const rows = new ListV([
    new RecordV(new Map<string, Value>([["hash", "c".repeat(40)], ["subject", subject]])),
  ]);
  ok(!renderBlock(rows, 80).includes(subject));
  ok(renderBlock(rows, 80, { forText: true }).includes(subject));
});

Deno.test("renderBlock: a list of mixed results shows each as its own numbered block", () => {
  const t = new TableV([new RecordV(new Map<string, Value>([["name", "a.txt"]]))]);
  const out = renderBlock(new ListV([1, t, "x\ny"]), 80);
  eq(out.split("\n"), ["[0] 1", "[1]", "  name", "  ─────", "  a.txt", "[2]", "  x", "  y"]);
});
