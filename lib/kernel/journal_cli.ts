/**
 * Journal subcommands of `shoal` (issue 7):
 *
 * ```
 * shoal journal [--since T] [--until T] [--principal P] [--head H] [--session S]
 *               [--effects K,…] [--ok | --ok=false] [--limit N] [--json] [--state-dir DIR]
 * shoal journal show ID [--json] [--state-dir DIR]
 * shoal gc [--ttl DUR] [--budget SIZE] [--apply] [--json] [--state-dir DIR]
 * shoal undo ID [--state-dir DIR]
 * ```
 *
 * They open the state directory directly rather than going through a kernel: reads are safe
 * alongside a running kernel (SQLite WAL readers never block the writer), writes (`gc --apply`,
 * `undo`) take the journal's write lock for one short transaction each, and the store's GC
 * never deletes a blob a row or pin references or one younger than its grace period. This also
 * works when no kernel runs. `T` is a duration ago (`2h`), an RFC 3339 time or ns since the
 * epoch; `DUR` like `30m`, `7d`; `SIZE` like `500mb`, `1gib`.
 *
 * @module
 */

import { GC_GRACE_MS_DEFAULT, openStore, type Store } from "../store/mod.ts";
import { SIZE_UNITS } from "../value/units.ts";
import { join } from "node:path";
import { configuredStateDir, defaultStateDir, loadConfig } from "../config/mod.ts";
import { entryJson } from "./kernel_journal.ts";
import { applyUndo, UndoError } from "./undo_apply.ts";

/** Usage text of the journal subcommands. */
export const JOURNAL_USAGE = `usage:
  shoal journal [--since T] [--until T] [--principal P] [--head H] [--session S]
                [--effects K,...] [--ok|--ok=false] [--limit N] [--json] [--state-dir DIR]
  shoal journal show ID [--json] [--state-dir DIR]
  shoal gc [--ttl DUR] [--budget SIZE] [--apply] [--json] [--state-dir DIR]
  shoal undo ID [--state-dir DIR]`;

class UsageError extends Error {}

interface Parsed {
  flags: Map<string, string | true>;
  pos: string[];
}

const VALUED = new Set([
  "since",
  "until",
  "principal",
  "head",
  "session",
  "effects",
  "limit",
  "ttl",
  "budget",
  "state-dir",
]);

function parseArgs(args: string[], allowed: string[]): Parsed {
  const flags = new Map<string, string | true>();
  const pos: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (!a.startsWith("--")) {
      pos.push(a);
      continue;
    }
    const eq = a.indexOf("=");
    const name = eq < 0 ? a.slice(2) : a.slice(2, eq);
    if (!allowed.includes(name)) throw new UsageError(`unknown flag --${name}`);
    if (eq >= 0) flags.set(name, a.slice(eq + 1));
    else if (VALUED.has(name)) {
      const v = args[++i];
      if (v === undefined) throw new UsageError(`--${name} needs a value`);
      flags.set(name, v);
    } else flags.set(name, true);
  }
  return { flags, pos };
}

const UNITS_MS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/** `30m`, `7d`, `1.5h` → ms. */
export function parseDuration(text: string): number {
  const m = /^([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d|w)$/.exec(text.trim());
  if (!m) throw new UsageError(`not a duration: ${JSON.stringify(text)} (use e.g. 30m, 12h, 7d)`);
  return Math.round(Number(m[1]) * UNITS_MS[m[2]]);
}

/** `500mb`, `1gib`, `4096` → bytes. */
export function parseSize(text: string): number {
  const m = /^([0-9]+(?:\.[0-9]+)?)([a-z]*)$/i.exec(text.trim());
  const unit = m?.[2].toLowerCase() ?? "";
  const mult = unit === "" ? 1n : SIZE_UNITS.get(unit);
  if (!m || mult === undefined) {
    throw new UsageError(`not a size: ${JSON.stringify(text)} (use e.g. 500mb, 2gib, 1048576)`);
  }
  return Math.round(Number(m[1]) * Number(mult));
}

/** A time bound: a duration ago, an RFC 3339 time, or ns since the epoch → ms. */
function parseTime(text: string, now: number): number {
  if (/^[0-9]{12,}$/.test(text)) return Math.floor(Number(text) / 1e6);
  if (/^[0-9.]+(ms|s|m|h|d|w)$/.test(text)) return now - parseDuration(text);
  const t = Date.parse(text);
  if (Number.isNaN(t)) {
    throw new UsageError(
      `not a time: ${JSON.stringify(text)} (use a duration ago like 2h, an RFC 3339 time, or ns)`,
    );
  }
  return t;
}

function positiveInt(text: string, what: string): number {
  if (!/^[0-9]+$/.test(text) || Number(text) <= 0 || !Number.isSafeInteger(Number(text))) {
    throw new UsageError(`${what} must be a positive integer, got ${JSON.stringify(text)}`);
  }
  return Number(text);
}

/** A state directory the CLI only reads: it must already hold a journal (never created here). */
function existingStateDir(flag: string | true | undefined): string {
  const dir = typeof flag === "string" ? flag : cliStateDir();
  try {
    Deno.statSync(join(dir, "journal.db"));
  } catch {
    throw new NoJournal(
      `no journal in ${dir}: nothing has run with this state directory` +
        (typeof flag === "string" ? " (check --state-dir)" : ""),
    );
  }
  return dir;
}

/** `journal.state_dir` from shoal.toml, else the default state directory. */
function cliStateDir(): string {
  try {
    return configuredStateDir(loadConfig({ cwd: Deno.cwd(), env: Deno.env.toObject() }).config);
  } catch {
    return defaultStateDir();
  }
}

/** The state directory holds no journal (exit 1, nothing created). */
class NoJournal extends Error {
  readonly code = "no_journal";
}

async function withStore<T>(p: Parsed, fn: (s: Store) => Promise<T>): Promise<T> {
  const dir = existingStateDir(p.flags.get("state-dir"));
  const store = await openStore(dir, {
    journalMode: "inline",
  });
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

function print(text: string): void {
  console.log(text);
}

function oneLine(s: string, max: number): string {
  const t = s.replace(/\s+/g, " ").trim();
  return t.length > max ? t.slice(0, max - 1) + "…" : t;
}

async function journalList(p: Parsed): Promise<number> {
  const f = p.flags;
  const filter: Record<string, unknown> = { kind: "request" };
  const now = Date.now();
  const since = f.get("since");
  if (typeof since === "string") filter.since = parseTime(since, now);
  const until = f.get("until");
  if (typeof until === "string") filter.until = parseTime(until, now);
  for (const k of ["principal", "head", "session"]) {
    const v = f.get(k);
    if (v === true) throw new UsageError(`--${k} needs a value`);
    if (v !== undefined) filter[k] = v;
  }
  const ok = f.get("ok");
  if (ok !== undefined) {
    if (ok !== true && ok !== "true" && ok !== "false") {
      throw new UsageError("--ok takes no value, or =true / =false");
    }
    filter.ok = ok !== "false";
  }
  const fx = f.get("effects");
  if (typeof fx === "string") {
    filter.effects = fx.split(",").map((k) => k.trim().replaceAll(".", "_"));
  }
  const limit = f.get("limit");
  if (typeof limit === "string") filter.limit = positiveInt(limit, "--limit");
  const rows = await withStore(p, (s) => s.journal.query(filter));
  if (f.has("json")) {
    print(JSON.stringify(rows.map(entryJson)));
    return 0;
  }
  if (rows.length === 0) {
    print("no journal entries match");
    return 0;
  }
  print(["ID", "TIME (UTC)", "PRINCIPAL", "SESSION", "STATE", "OK", "SOURCE"].join("\t"));
  for (const r of rows) {
    print([
      r.id,
      new Date(r.startedAt).toISOString(),
      r.principal,
      r.session,
      r.status,
      r.ok === null ? "-" : String(r.ok),
      oneLine(r.source, 80),
    ].join("\t"));
  }
  return 0;
}

async function journalShow(p: Parsed): Promise<number> {
  if (p.pos.length !== 2) throw new UsageError("journal show takes one entry id");
  const id = positiveInt(p.pos[1], "the entry id");
  const e = await withStore(p, (s) => s.journal.get(id));
  if (e === null) {
    console.error(`shoal journal: no journal entry ${id}`);
    return 1;
  }
  if (p.flags.has("json")) {
    print(JSON.stringify({ ...entryJson(e), statements: e.statements.map(entryJson) }));
    return 0;
  }
  print(`entry ${e.id} (${e.kind}) — ${e.status}${e.ok === null ? "" : `, ok: ${e.ok}`}`);
  print(
    `  time:      ${new Date(e.startedAt).toISOString()}` +
      (e.durationNs === null ? "" : ` (${(e.durationNs / 1e6).toFixed(3)} ms)`),
  );
  print(`  session:   ${e.session}    principal: ${e.principal}`);
  print(`  cwd:       ${e.cwd}`);
  if (e.envHash) print(`  env hash:  ${e.envHash}`);
  if (e.exitStatus !== null || e.signal !== null) {
    print(`  exit:      ${e.exitStatus ?? "-"}${e.signal ? ` (${e.signal})` : ""}`);
  }
  if (e.error) print(`  error:     [${e.error.code}] ${e.error.message}`);
  print(`  effects:   ${e.effects.length ? JSON.stringify(e.effects) : "none recorded"}`);
  print(`  source:    ${e.source.includes("\n") ? "\n" + e.source : e.source}`);
  for (const o of e.outputs) {
    const where = o.ref ?? "inline";
    print(`  output ${o.kind}: ${o.len} bytes, ${where}${o.truncated ? " (truncated)" : ""}`);
    if (o.preview !== undefined) print("    " + oneLine(o.preview, 200));
  }
  for (const s of e.statements) {
    print(
      `  statement ${s.ordinal}: ${s.status}${s.ok === null ? "" : `, ok: ${s.ok}`} — ${
        oneLine(s.source, 100)
      }`,
    );
  }
  return 0;
}

async function gcMain(args: string[]): Promise<number> {
  const p = parseArgs(args, ["ttl", "budget", "apply", "json", "state-dir"]);
  if (p.pos.length) throw new UsageError(`gc takes no positional arguments`);
  const ttl = p.flags.get("ttl");
  const budget = p.flags.get("budget");
  if (ttl === true || budget === true) throw new UsageError("--ttl and --budget need values");
  const opts = {
    ttlMs: ttl === undefined ? undefined : parseDuration(ttl),
    budgetBytes: budget === undefined ? undefined : parseSize(budget),
    apply: p.flags.has("apply"),
  };
  const r = await withStore(p, (s) => s.gc(opts));
  if (p.flags.has("json")) {
    print(JSON.stringify(r));
    return 0;
  }
  const verb = r.applied ? "deleted" : "would delete (dry run; pass --apply to delete)";
  print(`gc ${verb}:`);
  print(
    `  grace period: ${formatGrace(GC_GRACE_MS_DEFAULT)} (blobs and temp files younger than ` +
      "this are kept)",
  );
  print(
    `  journal: ${r.journal.requests} requests, ${r.journal.statements} statements, ` +
      `${r.journal.undo} undo records, ${r.journal.events} events, ${r.journal.pins} expired pins`,
  );
  print(`  blobs:   ${r.blobs.length} (${r.bytesFreed} bytes on disk)`);
  for (const b of r.blobs.slice(0, 50)) print(`    ${b.hash}  ${b.storedSize} B  ${b.reason}`);
  if (r.blobs.length > 50) print(`    … and ${r.blobs.length - 50} more`);
  if (r.kept.length) print(`  kept (referenced or touched meanwhile): ${r.kept.length}`);
  print(`  content store: ${r.casBytesBefore} → ${r.casBytesAfter} bytes`);
  if (!r.budgetMet) {
    print("  budget NOT met: the rest is referenced by journal rows, pinned, or too young");
  }
  if (r.tempFiles) print(`  stale temp files: ${r.tempFiles}`);
  return 0;
}

function formatGrace(ms: number): string {
  return ms % 60_000 === 0 ? `${ms / 60_000} min` : `${ms / 1000} s`;
}

async function undoMain(args: string[]): Promise<number> {
  const p = parseArgs(args, ["state-dir", "json"]);
  if (p.pos.length !== 1) throw new UsageError("undo takes one journal entry id");
  const id = positiveInt(p.pos[0], "the entry id");
  try {
    const r = await withStore(p, (s) => applyUndo(s, id));
    if (p.flags.has("json")) print(JSON.stringify(r));
    else for (const u of r.undone) print(`undone ${u.kind}: ${u.path}`);
    return 0;
  } catch (e) {
    if (e instanceof UndoError) {
      console.error(`error[${e.code}]: ${e.message}`);
      return 1;
    }
    throw e;
  }
}

async function run(fn: () => Promise<number>, name: string): Promise<number> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof UsageError) {
      console.error(`shoal ${name}: ${e.message}\n${JOURNAL_USAGE}`);
      return 2;
    }
    const code = (e as { code?: string }).code;
    console.error(`shoal ${name}: ${code ? `[${code}] ` : ""}${(e as Error)?.message ?? e}`);
    return 1;
  }
}

/** `shoal journal …`. */
export function journalMain(args: string[]): Promise<number> {
  return run(() => {
    if (args[0] === "-h" || args[0] === "--help") {
      print(JOURNAL_USAGE);
      return Promise.resolve(0);
    }
    if (args[0] === "show") {
      return journalShow(parseArgs(args, ["json", "state-dir"]));
    }
    const p = parseArgs(args, [
      "since",
      "until",
      "principal",
      "head",
      "session",
      "effects",
      "ok",
      "limit",
      "json",
      "state-dir",
    ]);
    if (p.pos.length) throw new UsageError(`unexpected argument ${JSON.stringify(p.pos[0])}`);
    return journalList(p);
  }, "journal");
}

/** `shoal gc …`. */
export function gcCliMain(args: string[]): Promise<number> {
  if (args[0] === "-h" || args[0] === "--help") return usageOk();
  return run(() => gcMain(args), "gc");
}

/** `shoal undo ID`. */
export function undoCliMain(args: string[]): Promise<number> {
  if (args[0] === "-h" || args[0] === "--help") return usageOk();
  return run(() => undoMain(args), "undo");
}

function usageOk(): Promise<number> {
  print(JOURNAL_USAGE);
  return Promise.resolve(0);
}
