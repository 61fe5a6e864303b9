/**
 * Loads the conformance corpus: every `*.toml` directly in a folder, sorted by file name,
 * with its `[[case]]` tables in file order (spec/conformance.md §2–§3).
 *
 * @module
 */
import { join } from "node:path";
import { parse } from "smol-toml";

/** One case as the corpus states it, with the checks the harness needs already done. */
export interface Case {
  /** File name without `.toml`. */
  suite: string;
  name: string;
  src: string;
  value?: string;
  error?: string;
  error_contains?: string;
  parse_error?: boolean;
  parse_error_contains?: string;
  fixture: string[];
  skip?: string;
  /** Why the case cannot be run as written (bad field types, an unsafe fixture path…). */
  invalid?: string;
  /** Set on the second and later cases that reuse a name: the suite of the first one. */
  duplicateOf?: string;
}

/** A problem with the corpus as a whole (missing folder, unreadable or malformed file). */
export class CorpusError extends Error {
  override name = "CorpusError";
}

const STRING_FIELDS = ["value", "error", "error_contains", "parse_error_contains", "skip"] as const;

/** Lists the `*.toml` suite files in `dir`, sorted by file name. */
export function suiteFiles(dir: string): string[] {
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(dir)];
  } catch (e) {
    const why = e instanceof Deno.errors.NotFound ? "does not exist" : String(e);
    throw new CorpusError(`conformance cases folder ${dir} ${why} (use --cases DIR)`);
  }
  return entries.filter((e) => e.isFile && e.name.endsWith(".toml")).map((e) => e.name).sort();
}

/** Loads every case of the corpus in `dir`, in corpus order, marking duplicates and bad cases. */
export function loadCorpus(dir: string): Case[] {
  const cases: Case[] = [];
  const firstSuite = new Map<string, string>();
  for (const file of suiteFiles(dir)) {
    for (const c of loadSuite(join(dir, file), file.slice(0, -".toml".length))) {
      const first = firstSuite.get(c.name);
      if (first !== undefined) c.duplicateOf = first;
      else firstSuite.set(c.name, c.suite);
      cases.push(c);
    }
  }
  return cases;
}

function loadSuite(path: string, suite: string): Case[] {
  let doc: Record<string, unknown>;
  try {
    doc = parse(Deno.readTextFileSync(path)) as Record<string, unknown>;
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    throw new CorpusError(`${path}: cannot load this suite: ${msg}`);
  }
  if (doc.case === undefined) return []; // A file without cases is ignored (§2).
  if (!Array.isArray(doc.case)) {
    throw new CorpusError(`${path}: \`case\` must be an array of tables ([[case]])`);
  }
  return doc.case.map((raw, i) => toCase(raw, suite, i));
}

function toCase(raw: unknown, suite: string, index: number): Case {
  const c: Case = { suite, name: `${suite}#${index + 1}`, src: "", fixture: [] };
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    c.invalid = "a case must be a table";
    return c;
  }
  const r = raw as Record<string, unknown>;
  const problems: string[] = [];
  if (typeof r.name === "string" && r.name !== "") c.name = r.name;
  else problems.push("`name` must be a non-empty string");
  if (typeof r.src === "string") c.src = r.src;
  else problems.push("`src` must be a string");
  for (const key of STRING_FIELDS) {
    const v = r[key];
    if (typeof v === "string") c[key] = v;
    else if (v !== undefined) problems.push(`\`${key}\` must be a string`);
  }
  if (r.parse_error !== undefined) {
    if (typeof r.parse_error === "boolean") c.parse_error = r.parse_error;
    else problems.push("`parse_error` must be true or false");
  }
  if (r.fixture !== undefined) {
    if (Array.isArray(r.fixture) && r.fixture.every((f) => typeof f === "string")) {
      c.fixture = r.fixture;
      const bad = c.fixture.find(unsafeFixture);
      if (bad !== undefined) {
        problems.push(`fixture ${JSON.stringify(bad)} must stay inside the case dir`);
      }
    } else problems.push("`fixture` must be an array of strings");
  }
  if (problems.length) c.invalid = problems.join("; ");
  return c;
}

function unsafeFixture(rel: string): boolean {
  return rel === "" || rel.startsWith("/") || rel.split("/").includes("..");
}
