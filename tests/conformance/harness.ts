/**
 * The conformance harness as a library: loads the corpus, runs each selected case in a fresh
 * temp dir on an engine (in killable child processes), judges it and reports in corpus order.
 * `run.ts` is its command line; the ratchet test calls {@link runConformance} directly.
 *
 * @module
 */
import { resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { makeCaseDir, removeCaseDir, removeLiveCaseDirsSync } from "./case_dir.ts";
import { type Case, CorpusError, loadCorpus } from "./corpus.ts";
import { EngineSlot, killEngineProcesses } from "./engine_pool.ts";
import { describeExpected, judge } from "./judge.ts";

/** The shared corpus beside the repository (`../shared/conformance/cases`). */
export const DEFAULT_CASES_DIR = fileURLToPath(
  new URL("../../../shared/conformance/cases", import.meta.url),
);
/** The language team's engine module (`lib/eval/conformance_engine.ts`). */
export const DEFAULT_ENGINE = new URL("../../lib/eval/conformance_engine.ts", import.meta.url);

/** What the harness can be asked to do. */
export interface ConformanceOptions {
  /** Folder of `*.toml` suites; default {@link DEFAULT_CASES_DIR}. */
  casesDir?: string;
  /** Engine module: a URL, or a file path resolved against the process cwd. */
  engine?: string | URL;
  /** Only these suites (file names without `.toml`). */
  suites?: string[];
  /** Only these cases, by name. */
  cases?: string[];
  /** Engine processes running cases side by side; default 2. */
  jobs?: number;
  /** Per-case time limit; default 10 000 ms. A case over it is failed and its engine killed. */
  timeoutMs?: number;
  /** Time allowed for an engine process to start and import the engine; default 30 000 ms. */
  loadTimeoutMs?: number;
  /** Called with each record as soon as it and every case before it are done. */
  onResult?: (record: CaseRecord) => void;
}

/** The outcome of one case. */
export interface CaseRecord {
  suite: string;
  name: string;
  status: "pass" | "fail" | "skip";
  expected: string;
  /** What the engine produced, or why the case failed; empty for a skip. */
  got: string;
  ms: number;
  src: string;
}

/** All records of a run, in corpus order, with their counts. */
export interface ConformanceReport {
  results: CaseRecord[];
  passed: number;
  failed: number;
  skipped: number;
  total: number;
}

/** The line every run ends with. */
export function summaryLine(r: ConformanceReport): string {
  return `conformance: ${r.passed} passed, ${r.failed} failed, ${r.skipped} skipped ` +
    `(of ${r.total} total cases)`;
}

/** Turns an `--engine` argument into a module URL: URLs stay, paths resolve against the cwd. */
export function engineUrl(engine: string | URL): URL {
  if (engine instanceof URL) return engine;
  if (/^[a-z][a-z0-9+.-]+:/i.test(engine)) return new URL(engine);
  return pathToFileURL(resolve(engine));
}

/** Keeps the cases the filters name; a filter that names nothing is an error. */
export function selectCases(all: Case[], suites: string[] = [], names: string[] = []): Case[] {
  const known = (have: Set<string>, want: string[], what: string) => {
    const missing = want.filter((w) => !have.has(w));
    if (missing.length) {
      throw new CorpusError(`no ${what} named ${missing.join(", ")} in the corpus`);
    }
  };
  known(new Set(all.map((c) => c.suite)), suites, "suite");
  known(new Set(all.map((c) => c.name)), names, "case");
  return all.filter((c) =>
    (!suites.length || suites.includes(c.suite)) && (!names.length || names.includes(c.name))
  );
}

const liveSocketDirs = new Set<string>();

/**
 * Stops what running harnesses leave behind (engine processes, temp dirs) without waiting;
 * for a command line stopped by SIGINT or SIGTERM just before it exits.
 */
export function stopAllSync(): void {
  killEngineProcesses();
  removeLiveCaseDirsSync();
  for (const dir of liveSocketDirs) {
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch {
      // Best effort while exiting.
    }
  }
}

/** Runs the selected cases and returns every record in corpus order. */
export async function runConformance(opts: ConformanceOptions = {}): Promise<ConformanceReport> {
  const jobs = opts.jobs ?? 2;
  const timeoutMs = opts.timeoutMs ?? 10_000;
  if (!(jobs >= 1 && timeoutMs >= 1)) {
    throw new CorpusError("jobs and timeoutMs must be at least 1");
  }
  const selected = selectCases(
    loadCorpus(opts.casesDir ?? DEFAULT_CASES_DIR),
    opts.suites,
    opts.cases,
  );

  const socketDir = await Deno.makeTempDir({ prefix: "shoal-conformance-" });
  liveSocketDirs.add(socketDir);
  const spec = {
    url: engineUrl(opts.engine ?? DEFAULT_ENGINE).href,
    loadTimeoutMs: opts.loadTimeoutMs ?? 30_000,
    socketDir,
  };
  const shared: { loadFailure?: string } = {};
  const slots = Array.from({ length: jobs }, () => new EngineSlot(spec, shared));
  const results: CaseRecord[] = [];
  let next = 0;
  let emitted = 0;
  const lane = async (slot: EngineSlot) => {
    while (next < selected.length) {
      const i = next++;
      results[i] = await runOne(selected[i], slot, timeoutMs);
      for (; results[emitted]; emitted++) opts.onResult?.(results[emitted]);
    }
  };
  try {
    await Promise.all(slots.map(lane));
  } finally {
    await Promise.all(slots.map((s) => s.close()));
    await Deno.remove(socketDir, { recursive: true }).catch(() => {});
    liveSocketDirs.delete(socketDir);
  }
  const count = (s: CaseRecord["status"]) => results.filter((r) => r.status === s).length;
  return {
    results,
    passed: count("pass"),
    failed: count("fail"),
    skipped: count("skip"),
    total: results.length,
  };
}

async function runOne(c: Case, slot: EngineSlot, timeoutMs: number): Promise<CaseRecord> {
  const base = { suite: c.suite, name: c.name, expected: describeExpected(c), src: c.src, ms: 0 };
  const fail = (got: string): CaseRecord => ({ ...base, status: "fail", got });
  if (c.duplicateOf !== undefined) {
    return fail(`duplicate case name (first defined in suite ${c.duplicateOf})`);
  }
  if (c.invalid !== undefined) return fail(`invalid case: ${c.invalid}`);
  if (c.skip !== undefined) return { ...base, status: "skip", got: "" };

  let dir: string;
  try {
    dir = await makeCaseDir(c.fixture);
  } catch (e) {
    return fail(`cannot lay out the fixtures: ${e instanceof Error ? e.message : e}`);
  }
  try {
    const outcome = await slot.run(c.src, dir, timeoutMs);
    const verdict = outcome.ok ? judge(c, outcome.result) : { pass: false, got: outcome.got };
    return { ...base, ms: outcome.ms, status: verdict.pass ? "pass" : "fail", got: verdict.got };
  } finally {
    await removeCaseDir(dir);
  }
}
