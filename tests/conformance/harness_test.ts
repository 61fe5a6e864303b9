// Self-tests of the conformance harness, driven by the fake engines in fixtures/ over small
// corpora written to temp dirs (they do not need the shared corpus).
import assert from "node:assert/strict";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type CaseRecord,
  type ConformanceOptions,
  runConformance,
  summaryLine,
} from "./harness.ts";

const TABLE = new URL("./fixtures/table_engine.ts", import.meta.url);
const RUN = fileURLToPath(new URL("./run.ts", import.meta.url));

/** Writes suites (file name → TOML text) to a fresh temp dir. */
async function corpus(files: Record<string, string>): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "shoal-corpus-test-" });
  for (const [name, text] of Object.entries(files)) await Deno.writeTextFile(join(dir, name), text);
  return dir;
}

type Fields = Record<string, string | boolean | string[] | undefined>;

/** One `[[case]]` table from a record of fields. */
function tomlCase(fields: Fields): string {
  const lines = Object.entries(fields).filter(([, v]) => v !== undefined).map(([k, v]) =>
    `${k} = ${JSON.stringify(v)}`
  );
  return `[[case]]\n${lines.join("\n")}\n`;
}

async function run(
  files: Record<string, string>,
  opts: ConformanceOptions = {},
): Promise<Map<string, CaseRecord> & { summary: string; order: string[] }> {
  const dir = await corpus(files);
  try {
    const report = await runConformance({ casesDir: dir, engine: TABLE, ...opts });
    const byName = new Map(report.results.map((r) => [r.name, r]));
    return Object.assign(byName, {
      summary: summaryLine(report),
      order: report.results.map((r) => r.name),
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** A path for a fake engine's pid file, in a temp dir removed by `cleanup`. */
async function pidPath(): Promise<{ pidFile: string; cleanup: () => Promise<void> }> {
  const dir = await Deno.makeTempDir({ prefix: "shoal-pid-test-" });
  return { pidFile: join(dir, "pid"), cleanup: () => Deno.remove(dir, { recursive: true }) };
}

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), { args: ["run", "-A", RUN, ...args] })
    .output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

function status(r: CaseRecord | undefined): string {
  return r ? `${r.status}: ${r.got}` : "missing";
}

Deno.test("value, error and parse_error expectations are judged as the spec says", async () => {
  const cases: (Fields & { name: string })[] = [
    { name: "value-match", src: "value [1, 2]", value: "[1, 2]" },
    { name: "value-mismatch", src: "value [1, 3]", value: "[1, 2]" },
    { name: "value-trimmed", src: "value 7 ", value: "7" },
    { name: "value-but-error-expected", src: "value 7", error: "type_error" },
    { name: "error-code", src: "error div_zero division by zero", error: "div_zero" },
    { name: "error-wrong-code", src: "error type_error bad", error: "div_zero" },
    { name: "error-but-value-expected", src: "error custom boom", value: "1" },
    {
      name: "error-contains-msg",
      src: "error arg_error expected int, found abc",
      error: "arg_error",
      error_contains: "found abc",
    },
    {
      name: "error-contains-hint",
      src: "error type_error no truthiness|did you mean .len()?",
      error: "type_error",
      error_contains: ".len()",
    },
    {
      name: "error-contains-missing",
      src: "error type_error no truthiness|try a comparison",
      error: "type_error",
      error_contains: "negative",
    },
    { name: "parse", src: "parse unterminated string", parse_error: true },
    {
      name: "parse-contains-msg",
      src: "parse no pipe operator here",
      parse_error: true,
      parse_error_contains: "no pipe operator",
    },
    {
      name: "parse-contains-hint",
      src: "parse bad input|use a here-string instead",
      parse_error: true,
      parse_error_contains: "here-string",
    },
    {
      name: "parse-contains-missing",
      src: "parse bad input",
      parse_error: true,
      parse_error_contains: "backtick",
    },
    { name: "parse-unexpected", src: "parse oops", value: "1" },
    { name: "parse-expected-got-value", src: "value 1", parse_error: true },
    { name: "no-expectation", src: "value 1" },
    { name: "invalid-result", src: "invalid", value: "1" },
  ];
  const r = await run({ "judge.toml": cases.map(tomlCase).join("\n") });
  const passing = [
    "value-match",
    "value-trimmed",
    "error-code",
    "error-contains-msg",
    "error-contains-hint",
    "parse",
    "parse-contains-msg",
    "parse-contains-hint",
  ];
  for (const c of cases) {
    assert.equal(r.get(c.name)?.status, passing.includes(c.name) ? "pass" : "fail", c.name);
  }
  assert.equal(r.get("value-mismatch")?.got, "value [1, 3]");
  assert.equal(r.get("value-mismatch")?.expected, "value [1, 2]");
  assert.equal(r.get("error-wrong-code")?.got, "error type_error: bad");
  assert.equal(r.get("error-contains-missing")?.expected, 'error type_error containing "negative"');
  assert.match(r.get("parse-unexpected")?.got ?? "", /^unexpected parse error: oops/);
  assert.match(r.get("parse-expected-got-value")?.got ?? "", /expected a parse error/);
  assert.match(
    r.get("invalid-result")?.got ?? "",
    /^engine returned an invalid result: unknown kind/,
  );
  assert.equal(r.summary, `conformance: 8 passed, 10 failed, 0 skipped (of 18 total cases)`);
});

Deno.test("skipped cases are counted but never run", async () => {
  const { pidFile, cleanup } = await pidPath();
  const r = await run({
    "s.toml": tomlCase({ name: "skipped", src: `hang ${pidFile}`, value: "1", skip: "why not" }) +
      tomlCase({ name: "runs", src: "value 1", value: "1" }),
  });
  assert.equal(status(r.get("skipped")), "skip: ");
  assert.equal(r.get("skipped")?.expected, "skip: why not");
  assert.equal(status(r.get("runs")), "pass: value 1");
  await assert.rejects(Deno.stat(pidFile), Deno.errors.NotFound);
  assert.equal(r.summary, "conformance: 1 passed, 0 failed, 1 skipped (of 2 total cases)");
  await cleanup();
});

Deno.test("fixtures are laid out in a fresh cwd that is deleted afterwards", async () => {
  const r = await run({
    "f.toml": tomlCase({
      name: "fixtures",
      src: "exists a.txt sub/ d/e/b.log d/e missing",
      fixture: ["a.txt", "sub/", "d/e/b.log"],
      value: "empty-file dir empty-file dir missing",
    }) + tomlCase({ name: "cwd-1", src: "cwd", value: "?" }) +
      tomlCase({ name: "cwd-2", src: "cwd", value: "?" }) +
      tomlCase({ name: "no-fixture-leak", src: "exists a.txt", value: "missing" }),
  });
  assert.equal(status(r.get("fixtures")), "pass: value empty-file dir empty-file dir missing");
  assert.equal(status(r.get("no-fixture-leak")), "pass: value missing");
  const cwd1 = r.get("cwd-1")!.got.slice("value ".length);
  const cwd2 = r.get("cwd-2")!.got.slice("value ".length);
  assert.notEqual(cwd1, cwd2);
  // A canonical path straight under the system temp dir.
  const probe = await Deno.makeTempDir();
  const tempRoot = dirname(await Deno.realPath(probe));
  await Deno.remove(probe);
  assert.equal(dirname(cwd1), tempRoot);
  assert.match(basename(cwd1), /^shoal-case-/);
  await assert.rejects(Deno.stat(cwd1), Deno.errors.NotFound);
  await assert.rejects(Deno.stat(cwd2), Deno.errors.NotFound);
});

Deno.test("cases load in file-name order, then file order; duplicates and bad cases fail", async () => {
  const r = await run({
    "b.toml": tomlCase({ name: "b1", src: "value 1", value: "1" }) +
      tomlCase({ name: "dup", src: "value 1", value: "1" }),
    "a.toml": tomlCase({ name: "a2", src: "value 1", value: "1" }) +
      tomlCase({ name: "a1", src: "value 1", value: "1" }),
    "c.toml": tomlCase({ name: "dup", src: "value 1", value: "1" }) +
      tomlCase({ name: "escapes", src: "value 1", value: "1", fixture: ["../x"] }) +
      `[[case]]\nname = "bad-type"\nsrc = "value 1"\nvalue = 1\n`,
    "notes.txt": "not a suite",
    "empty.toml": "# no cases here\n",
  });
  assert.deepEqual(r.order, ["a2", "a1", "b1", "dup", "dup", "escapes", "bad-type"]);
  assert.equal(status(r.get("b1")), "pass: value 1");
  assert.equal(r.get("dup")?.suite, "c");
  assert.equal(status(r.get("dup")), "fail: duplicate case name (first defined in suite b)");
  assert.match(status(r.get("escapes")), /^fail: invalid case: fixture "\.\.\/x" must stay inside/);
  assert.equal(status(r.get("bad-type")), "fail: invalid case: `value` must be a string");
  assert.equal(r.summary, "conformance: 4 passed, 3 failed, 0 skipped (of 7 total cases)");
});

Deno.test("a hung engine is killed at the time limit and later cases still run", async () => {
  const { pidFile, cleanup } = await pidPath();
  const started = performance.now();
  const r = await run({
    "h.toml": tomlCase({ name: "before", src: "value 1", value: "1" }) +
      tomlCase({ name: "hang", src: `hang ${pidFile}`, value: "1" }) +
      tomlCase({ name: "after", src: "value 2", value: "2" }) +
      tomlCase({ name: "after-2", src: "value 3", value: "3" }),
  }, { jobs: 1, timeoutMs: 2_000 });
  assert.equal(status(r.get("hang")), "fail: timed out after 2000 ms");
  assert.equal(status(r.get("after")), "pass: value 2");
  assert.equal(status(r.get("after-2")), "pass: value 3");
  assert.ok(performance.now() - started < 20_000, "the run waited for the hung case");
  // The engine process that spun is really gone, not left burning a core.
  const pid = Number(await Deno.readTextFile(pidFile));
  await assert.rejects(Deno.stat(`/proc/${pid}`), Deno.errors.NotFound);
  await cleanup();
});

Deno.test("an engine that throws, crashes or exits fails only its own case", async () => {
  const r = await run({
    "x.toml": tomlCase({ name: "throws", src: "throw no luck", value: "1" }) +
      tomlCase({ name: "after-throw", src: "value 1", value: "1" }) +
      tomlCase({ name: "crashes", src: "crash", value: "1" }) +
      tomlCase({ name: "after-crash", src: "value 1", value: "1" }) +
      tomlCase({ name: "exits", src: "exit 3", value: "1" }) +
      tomlCase({ name: "after-exit", src: "value 1", value: "1" }),
  }, { jobs: 1 });
  assert.match(status(r.get("throws")), /^fail: engine threw: Error: no luck/);
  assert.match(
    status(r.get("crashes")),
    /^fail: engine process exited with code 70 during the case: Error: crashed on purpose/,
  );
  assert.equal(status(r.get("exits")), "fail: engine process exited with code 3 during the case");
  for (const name of ["after-throw", "after-crash", "after-exit"]) {
    assert.equal(status(r.get(name)), "pass: value 1", name);
  }
});

Deno.test("the engine sees no stdin, and its stdout stays out of --json", async () => {
  const dir = await corpus({
    "io.toml": tomlCase({ name: "stdin", src: "stdin", value: "null" }) +
      tomlCase({
        name: "print",
        src: "print noise from the engine",
        value: "noise from the engine",
      }),
  });
  try {
    const out = await cli(["--cases", dir, "--engine", TABLE.href, "--json"]);
    assert.equal(out.code, 0, out.stderr);
    const lines = out.stdout.trimEnd().split("\n");
    assert.equal(lines.at(-1), "conformance: 2 passed, 0 failed, 0 skipped (of 2 total cases)");
    const records = lines.slice(0, -1).map((l) => JSON.parse(l));
    assert.deepEqual(records.map((j) => [j.suite, j.name, j.status, j.got]), [
      ["io", "stdin", "pass", "value null"],
      ["io", "print", "pass", "value noise from the engine"],
    ]);
    for (const j of records) {
      assert.deepEqual(Object.keys(j), ["suite", "name", "status", "expected", "got", "ms"]);
      assert.equal(typeof j.ms, "number");
    }
    assert.match(out.stderr, /noise from the engine/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an engine that cannot load fails every runnable case with the reason", async (t) => {
  const suite = tomlCase({ name: "one", src: "value 1", value: "1" }) +
    tomlCase({ name: "two", src: "value 2", value: "2" }) +
    tomlCase({ name: "skipped", src: "value 3", value: "3", skip: "later" });
  const engines: [string, URL, RegExp][] = [
    ["import throws", new URL("./fixtures/broken_engine.ts", import.meta.url), /broken on purpose/],
    ["missing module", new URL("./fixtures/no_such_engine.ts", import.meta.url), /not found/i],
    [
      "no runCase export",
      new URL("./fixtures/no_run_case_engine.ts", import.meta.url),
      /does not export a function runCase/,
    ],
    [
      "import never ends",
      new URL("./fixtures/slow_load_engine.ts", import.meta.url),
      /no answer within 1000 ms while loading/,
    ],
  ];
  for (const [label, engine, reason] of engines) {
    await t.step(label, async () => {
      // Only the engine that never loads should meet the short load limit, even on a busy machine.
      const loadTimeoutMs = label === "import never ends" ? 1_000 : 30_000;
      const r = await run({ "l.toml": suite }, { engine, loadTimeoutMs });
      for (const name of ["one", "two"]) {
        assert.match(r.get(name)?.got ?? "", /^engine failed to load: /, name);
        assert.match(r.get(name)?.got ?? "", reason, `${name}: ${r.get(name)?.got}`);
      }
      assert.equal(r.summary, "conformance: 0 passed, 2 failed, 1 skipped (of 3 total cases)");
    });
  }
});

Deno.test("results arrive in corpus order even when later cases finish first", async () => {
  const { pidFile, cleanup } = await pidPath();
  const seen: string[] = [];
  const r = await run({
    "o.toml": tomlCase({ name: "slow", src: `hang ${pidFile}`, value: "1" }) +
      ["q1", "q2", "q3", "q4"].map((n) => tomlCase({ name: n, src: "value 1", value: "1" }))
        .join(""),
  }, { jobs: 3, timeoutMs: 2_000, onResult: (rec) => seen.push(rec.name) });
  assert.deepEqual(seen, ["slow", "q1", "q2", "q3", "q4"]);
  assert.deepEqual(r.order, seen);
  await cleanup();
});

Deno.test("the command line filters, lists and reports", async (t) => {
  const dir = await corpus({
    "one.toml": tomlCase({ name: "one-a", src: "value 1", value: "1" }) +
      tomlCase({ name: "one-b", src: "value 2", value: "3" }),
    "two.toml": tomlCase({ name: "two-a", src: "value 1", value: "1" }) +
      tomlCase({ name: "two-skip", src: "value 1", value: "1", skip: "no" }),
  });
  const base = ["--cases", dir, "--engine", TABLE.href];
  try {
    await t.step("default: a table per suite, then the summary", async () => {
      const out = await cli(base);
      assert.equal(out.code, 0, out.stderr);
      const lines = out.stdout.trimEnd().split("\n");
      assert.deepEqual(lines, [
        "one  1/2 passed",
        "two  1/1 passed, 1 skipped",
        "conformance: 2 passed, 1 failed, 1 skipped (of 4 total cases)",
      ]);
    });
    await t.step("--suite and --case select, and combine", async () => {
      let out = await cli([...base, "--suite", "two", "--json"]);
      assert.deepEqual(
        out.stdout.trimEnd().split("\n").slice(0, -1).map((l) => JSON.parse(l).name),
        ["two-a", "two-skip"],
      );
      out = await cli([...base, "--case", "one-b", "--case", "two-a", "--list-passing"]);
      assert.equal(
        out.stdout,
        "two-a\nconformance: 1 passed, 1 failed, 0 skipped (of 2 total cases)\n",
      );
      out = await cli([...base, "--suite", "one", "--case", "two-a"]);
      assert.match(out.stdout, /\(of 0 total cases\)\n$/);
    });
    await t.step("--failures shows expected, got and source", async () => {
      const out = await cli([...base, "--failures"]);
      assert.equal(
        out.stdout,
        "FAIL one/one-b\n  expected: value 3\n  got:      value 2\n  src:      value 2\n" +
          "conformance: 2 passed, 1 failed, 1 skipped (of 4 total cases)\n",
      );
    });
    await t.step("bad options exit 2 with usage", async () => {
      for (
        const args of [
          ["--bogus"],
          ["--jobs", "0"],
          ["--timeout-ms", "soon"],
          ["--json", "--failures"],
          ["stray"],
        ]
      ) {
        const out = await cli([...base, ...args]);
        assert.equal(out.code, 2, args.join(" "));
        assert.match(out.stderr, /^conformance: .+\nusage: deno task conformance/, args.join(" "));
        assert.equal(out.stdout, "");
      }
    });
    await t.step("unknown suite or case names exit 2", async () => {
      const out = await cli([...base, "--suite", "three", "--case", "nope"]);
      assert.equal(out.code, 2);
      assert.match(out.stderr, /no suite named three in the corpus/);
    });
    await t.step("a missing cases folder exits 2 with a clear error", async () => {
      const out = await cli(["--cases", join(dir, "nowhere"), "--engine", TABLE.href]);
      assert.equal(out.code, 2);
      assert.match(
        out.stderr,
        /conformance cases folder .*nowhere does not exist \(use --cases DIR\)/,
      );
    });
    await t.step("malformed TOML exits 2 naming the file", async () => {
      await Deno.writeTextFile(join(dir, "three.toml"), '[[case]]\nname = "x\nsrc = 1\n');
      const out = await cli(base);
      assert.equal(out.code, 2);
      assert.match(out.stderr, /three\.toml: cannot load this suite: /);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
