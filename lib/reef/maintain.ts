/**
 * The Reef commands that change files or install tools: `reef add TOOL@VERSION` (edit the
 * manifest, then lock the tool), `reef lock [--refresh]` (lock every constrained tool) and
 * `reef fetch TOOL` (install through a provider that can: mise).
 *
 * @module
 */

import { join } from "node:path";
import { parse as parseToml, stringify as stringifyToml } from "smol-toml";
import { fileIdentity, which } from "../exec/mod.ts";
import { decide, mentionedTools } from "./decide.ts";
import { reason, ReefError } from "./errors.ts";
import { type LockEntry, writeAtomic } from "./lock.ts";
import { providerCandidates } from "./providers.ts";
import type { Row } from "./report.ts";
import {
  chainOf,
  eligible,
  entryFor,
  lockEntries,
  persist,
  type ReefContext,
  selectCandidate,
  verifyEntry,
} from "./resolve.ts";
import { forgetManifest } from "./scopes.ts";
import { viewsRoot } from "./view.ts";
import {
  compareVersions,
  type Constraint,
  parseConstraint,
  renderConstraint,
  satisfies,
} from "./version.ts";

/** Tool names `reef add` accepts (what a command head can be). */
const TOOL_NAME = /^[A-Za-z0-9_+][A-Za-z0-9._+-]*$/;

/** A bad `reef add` spec: the evaluator reports it as `arg_error`. */
export class SpecError extends Error {}

/** Split `tool@version` (both sides non-empty). Throws {@link SpecError}. */
export function parseSpec(spec: string): { tool: string; version: string } {
  const at = spec.indexOf("@");
  if (at < 0) throw new SpecError(`reef add expects TOOL@VERSION, got \`${spec}\` (no @)`);
  const tool = spec.slice(0, at);
  const version = spec.slice(at + 1);
  if (tool === "") {
    throw new SpecError(`reef add expects TOOL@VERSION: no tool before @ in \`${spec}\``);
  }
  if (version === "") {
    throw new SpecError(`reef add expects TOOL@VERSION: no version after @ in \`${spec}\``);
  }
  if (!TOOL_NAME.test(tool)) throw new SpecError(`\`${tool}\` is not a tool name`);
  if (/[\n\r\0]/.test(version)) {
    throw new SpecError(`the version of ${tool} contains a control character`);
  }
  return { tool, version };
}

/** The manifest `reef add` edits: cwd's `.reef.toml`, else the nearest ancestor's, else a new one in cwd. */
export function addTarget(cwd: string): string {
  let dir = cwd;
  for (;;) {
    const p = join(dir, ".reef.toml");
    if (fileIdentity(p) !== null) return p;
    if (dir === "/") return join(cwd, ".reef.toml");
    const i = dir.lastIndexOf("/");
    dir = i <= 0 ? "/" : dir.slice(0, i);
  }
}

function tomlKey(k: string): string {
  return /^[A-Za-z0-9_-]+$/.test(k) ? k : JSON.stringify(k);
}

function isTable(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

/**
 * `text` with `[tools] tool = "version"` set. Edits the lines in place (comments and layout
 * survive); falls back to re-writing the document only for shapes a line edit cannot reach
 * (an inline `tools = {…}` table or dotted keys).
 */
export function setTool(path: string, text: string, tool: string, version: string): string {
  let doc: Record<string, unknown>;
  try {
    doc = parseToml(text) as Record<string, unknown>;
  } catch (e) {
    throw new ReefError(
      "reef_provider",
      `parsing manifest ${path}: ${reason(e).split("\n")[0]}`,
      "fix the TOML (or move the file away) and run `reef add` again",
    );
  }
  if (doc.tools !== undefined && !isTable(doc.tools)) {
    throw new ReefError(
      "reef_provider",
      `manifest [tools] is not a table in ${path}`,
      'make it a table: [tools] then one `name = "version"` per line',
    );
  }
  const line = `${tomlKey(tool)} = ${JSON.stringify(version)}`;
  const lines = text.split("\n");
  const header = lines.findIndex((l) => /^\s*\[\s*tools\s*\]\s*(#.*)?$/.test(l));
  let edited: string;
  if (header >= 0) {
    let end = lines.length;
    for (let i = header + 1; i < lines.length; i++) {
      if (/^\s*\[/.test(lines[i])) {
        end = i;
        break;
      }
    }
    const keyRe = new RegExp(`^\\s*(${escapeRe(tool)}|"${escapeRe(tool)}")\\s*=`);
    const at = lines.slice(header + 1, end).findIndex((l) => keyRe.test(l));
    if (at >= 0) lines[header + 1 + at] = line;
    else lines.splice(header + 1, 0, line);
    edited = lines.join("\n");
  } else if (doc.tools === undefined) {
    edited = text + (text === "" || text.endsWith("\n") ? "" : "\n") + (text === "" ? "" : "\n") +
      `[tools]\n${line}\n`;
  } else {
    edited = "";
  }
  if (edited !== "") {
    try {
      const check = parseToml(edited) as Record<string, unknown>;
      if (isTable(check.tools) && check.tools[tool] === version) return edited;
    } catch {
      // fall through to a full rewrite
    }
  }
  const tools = isTable(doc.tools) ? { ...doc.tools } : {};
  tools[tool] = version;
  return stringifyToml({ ...doc, tools }) + "\n";
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function rowOf(e: LockEntry, locked: boolean): Row {
  return {
    name: e.name,
    version: e.version,
    hash8: e.blake3.slice(0, 8),
    locked,
    error: null,
    note: null,
  };
}

/** `reef add tool@version`: edit the manifest, then lock the tool afresh. */
export async function addTool(spec: string, ctx: ReefContext): Promise<Row> {
  const { tool, version } = parseSpec(spec);
  const path = addTarget(ctx.cwd);
  let text = "";
  if (fileIdentity(path) !== null) {
    try {
      text = Deno.readTextFileSync(path);
    } catch (e) {
      throw new ReefError("reef_provider", `reading manifest ${path}: ${reason(e)}`);
    }
  }
  (ctx.writeFile ?? writeAtomic)(path, setTool(path, text, tool, version));
  forgetManifest(path);
  const out: Row = {
    added: `${tool}@${version}`,
    manifest: path,
    locked: false,
    version: null,
    path: null,
    note: null,
  };
  const ictx: ReefContext = { ...ctx, policy: "interactive" };
  try {
    const chain = chainOf(ictx);
    const d = decide(tool, chain);
    if (d === null) throw new ReefError("reef_provider", `${tool} is not in scope after the edit`);
    const fresh = await entryFor(await selectCandidate(d, ictx));
    persist(chain, [fresh], ctx.writeFile);
    return { ...out, locked: true, version: fresh.version, path: fresh.path };
  } catch (e) {
    if (!(e instanceof ReefError)) throw e;
    return { ...out, note: `${e.code}: ${e.message}` };
  }
}

/**
 * `reef lock [--refresh]`: lock every tool a scope mentions (reusing valid entries unless
 * refreshing), then write the lock once. One row per tool; a tool that cannot be locked has
 * `locked: false` and its error code. No manifest in scope → `reef_not_found`.
 */
export async function lockAll(ctx: ReefContext, refresh: boolean): Promise<Row[]> {
  const ictx: ReefContext = { ...ctx, policy: "interactive" };
  const chain = chainOf(ictx);
  if (chain.lockPath === null) {
    throw new ReefError(
      "reef_not_found",
      "reef lock: no manifest in scope",
      "create one with `reef add TOOL@VERSION` (or write a .reef.toml)",
    );
  }
  let entries: ReadonlyMap<string, LockEntry> = new Map();
  try {
    entries = lockEntries(chain);
  } catch (e) {
    if (!refresh) throw e;
  }
  const rows: Row[] = [];
  const updates: LockEntry[] = [];
  for (const name of mentionedTools(chain)) {
    try {
      const d = decide(name, chain)!;
      const e = entries.get(name);
      if (!refresh && e !== undefined && eligible(e, d)) {
        await verifyEntry(name, e);
        rows.push(rowOf(e, true));
        continue;
      }
      const fresh = await entryFor(await selectCandidate(d, ictx));
      updates.push(fresh);
      rows.push(rowOf(fresh, true));
    } catch (e) {
      if (!(e instanceof ReefError)) throw e;
      rows.push({
        name,
        version: null,
        hash8: null,
        locked: false,
        error: e.code,
        note: e.message,
      });
    }
  }
  persist(chain, updates, ctx.writeFile, refresh);
  return rows;
}

/** The constraint `reef fetch` installs: the tool's decision, else `latest`. */
function fetchConstraint(tool: string, ctx: ReefContext): { c: Constraint; pin: string | null } {
  const d = decide(tool, chainOf(ctx));
  return { c: d?.constraint ?? parseConstraint("latest"), pin: d?.provider ?? null };
}

/**
 * `reef fetch tool`: install it with a provider that can (mise: `mise install tool@C`, with
 * C the constraint in scope, else `latest`), honouring a provider pin. It does not lock:
 * run `reef lock --refresh` afterwards.
 */
export async function fetchTool(tool: string, ctx: ReefContext): Promise<Row> {
  if (!TOOL_NAME.test(tool)) throw new SpecError(`\`${tool}\` is not a tool name`);
  const { c, pin } = fetchConstraint(tool, ctx);
  const base: Row = {
    name: tool,
    fetched: false,
    provider: pin,
    version: null,
    path: null,
    note: null,
  };
  if (pin !== null && pin !== "mise") {
    return {
      ...base,
      note: `${tool} is pinned to provider ${pin}, which cannot install tools (only mise can)`,
    };
  }
  const mise = which("mise", ctx.env.PATH, ctx.cwd);
  if (mise === null) {
    return {
      ...base,
      provider: "mise",
      note: "mise is not on the session PATH: install mise, or install the tool yourself",
    };
  }
  const want = c.kind === "any" ? "latest" : renderConstraint(c);
  if (ctx.spawn === undefined) throw new ReefError("reef_provider", "this host cannot run mise");
  const r = await ctx.spawn({
    argv: [mise, "install", `${tool}@${want}`],
    cwd: ctx.cwd,
    env: ctx.env,
    stdin: "none",
    spill: false,
    stdoutCap: 65536,
    stderrCap: 65536,
  });
  if (r.status !== 0) {
    const err = new TextDecoder().decode(r.stderr).trim().split("\n").slice(-3).join(" / ");
    throw new ReefError(
      "reef_provider",
      `reef fetch: \`mise install ${tool}@${want}\` ${
        r.status === null ? `died from ${r.signal}` : `exited with status ${r.status}`
      }${err ? `: ${err}` : ""}`,
    );
  }
  const found = providerCandidates(tool, "mise", {
    cwd: ctx.cwd,
    env: ctx.env,
    viewsRoot: viewsRoot(ctx.env),
  })
    .filter((x) => satisfies(c, x.version))
    .sort((a, b) => compareVersions(b.version, a.version));
  if (found.length === 0) {
    throw new ReefError(
      "reef_not_found",
      `reef fetch: mise installed ${tool}@${want}, but no install satisfying "${
        renderConstraint(c)
      }" is in its data directory`,
      "check MISE_DATA_DIR in the session environment",
    );
  }
  return {
    ...base,
    fetched: true,
    provider: "mise",
    version: found[0].version.raw,
    path: found[0].path,
    note: "installed; run `reef lock --refresh` to lock it",
  };
}
