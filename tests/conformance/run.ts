/**
 * `deno task conformance`: runs the conformance corpus against an engine and prints a report.
 * The last line is always the summary; the exit status is 0 unless the harness itself fails
 * (2 for a bad option or an unusable corpus).
 *
 * @module
 */
import { parseArgs } from "node:util";
import { CorpusError } from "./corpus.ts";
import {
  type CaseRecord,
  type ConformanceReport,
  DEFAULT_CASES_DIR,
  runConformance,
  stopAllSync,
  summaryLine,
} from "./harness.ts";

const USAGE = `usage: deno task conformance [options]
  --cases DIR       folder of *.toml suites (default: ${DEFAULT_CASES_DIR})
  --engine PATH     engine module exporting runCase (default: lib/eval/conformance_engine.ts)
  --suite NAME      run only this suite (file name without .toml); repeatable
  --case NAME       run only this case; repeatable
  --jobs N          engine processes side by side (default 2)
  --timeout-ms N    per-case time limit; a case over it fails (default 10000)
  --json            one JSON record per case: suite, name, status, expected, got, ms
  --list-passing    print the names of passing cases (for tests/conformance/passing.txt)
  --failures        print each failure with its expectation, result and source
  -h, --help        show this help`;

class UsageError extends Error {}

interface Cli {
  casesDir?: string;
  engine?: string;
  suites: string[];
  cases: string[];
  jobs?: number;
  timeoutMs?: number;
  mode: "table" | "json" | "list-passing" | "failures";
}

function positiveInt(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^[1-9][0-9]*$/.test(text)) {
    throw new UsageError(`${flag} needs a positive integer, got "${text}"`);
  }
  return Number(text);
}

function parseCli(args: string[]): Cli | "help" {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: {
        cases: { type: "string" },
        engine: { type: "string" },
        suite: { type: "string", multiple: true },
        case: { type: "string", multiple: true },
        jobs: { type: "string" },
        "timeout-ms": { type: "string" },
        json: { type: "boolean" },
        "list-passing": { type: "boolean" },
        failures: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    }).values;
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message : String(e));
  }
  if (parsed.help) return "help";
  const modes = (["json", "list-passing", "failures"] as const).filter((m) => parsed[m]);
  if (modes.length > 1) throw new UsageError(`choose one of --${modes.join(", --")}`);
  return {
    casesDir: parsed.cases,
    engine: parsed.engine,
    suites: parsed.suite ?? [],
    cases: parsed.case ?? [],
    jobs: positiveInt("--jobs", parsed.jobs),
    timeoutMs: positiveInt("--timeout-ms", parsed["timeout-ms"]),
    mode: modes[0] ?? "table",
  };
}

function indent(text: string): string {
  return text.replaceAll("\n", "\n            ");
}

function printFailures(report: ConformanceReport): void {
  for (const r of report.results.filter((r) => r.status === "fail")) {
    console.log(`FAIL ${r.suite}/${r.name}`);
    console.log(`  expected: ${indent(r.expected)}`);
    console.log(`  got:      ${indent(r.got)}`);
    console.log(`  src:      ${indent(r.src.replace(/\n$/, ""))}`);
  }
}

function printTable(report: ConformanceReport): void {
  const suites = new Map<string, { pass: number; fail: number; skip: number }>();
  for (const r of report.results) {
    const s = suites.get(r.suite) ?? { pass: 0, fail: 0, skip: 0 };
    s[r.status]++;
    suites.set(r.suite, s);
  }
  const width = Math.max(0, ...[...suites.keys()].map((k) => k.length));
  for (const [suite, s] of suites) {
    const skipped = s.skip ? `, ${s.skip} skipped` : "";
    console.log(`${suite.padEnd(width)}  ${s.pass}/${s.pass + s.fail} passed${skipped}`);
  }
}

async function main(): Promise<number> {
  let cli;
  try {
    cli = parseCli(Deno.args);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    console.error(`conformance: ${e.message}\n${USAGE}`);
    return 2;
  }
  if (cli === "help") {
    console.log(USAGE);
    return 0;
  }
  const onResult = cli.mode === "json"
    ? (r: CaseRecord) => {
      const { suite, name, status, expected, got, ms } = r;
      console.log(JSON.stringify({ suite, name, status, expected, got, ms }));
    }
    : undefined;
  let report;
  try {
    report = await runConformance({ ...cli, onResult });
  } catch (e) {
    if (!(e instanceof CorpusError)) throw e;
    console.error(`conformance: ${e.message}`);
    return 2;
  }
  if (cli.mode === "list-passing") {
    for (const r of report.results) if (r.status === "pass") console.log(r.name);
  } else if (cli.mode === "failures") printFailures(report);
  else if (cli.mode === "table") printTable(report);
  console.log(summaryLine(report));
  return 0;
}

// Stopped from outside (Ctrl-C, `timeout`): leave no engine process or temp dir behind.
for (const [signal, status] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
  Deno.addSignalListener(signal, () => {
    stopAllSync();
    Deno.exit(status);
  });
}

Deno.exit(await main());
