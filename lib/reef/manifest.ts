/**
 * Reef manifests (subsystems §6): the native `.reef.toml`, the read-only foreign formats
 * `mise.toml` / `.mise.toml` (only `[tools]`) and `.tool-versions`, and the user scope (the
 * `[reef]` table of `shoal.toml`), all normalised to one {@link Manifest}.
 *
 * Unlike upstream, a manifest with an empty `[tools]` table still counts (its runners and
 * `hermetic` apply), and a malformed manifest is not silently dropped: it yields a
 * {@link ManifestProblem} that discovery reports (`which`, `reef doctor`, one diagnostic).
 *
 * @module
 */

import { parse as parseToml } from "smol-toml";
import { type Constraint, parseConstraint } from "./version.ts";
import type { FileRead } from "./watched.ts";

/** Where a scope came from (the `scope` label of `which` and `reef`). */
export type ScopeKind = "reef" | "mise" | "tool-versions" | "user" | "override";

/** The provider names a manifest may pin. */
export const PROVIDERS = ["npm-local", "venv", "mise", "cargo", "system"] as const;

/** A provider name. */
export type ProviderName = typeof PROVIDERS[number];

/** One tool requirement. */
export interface ToolReq {
  constraint: Constraint;
  /** The constraint as written. */
  text: string;
  /** Provider pin, or null. */
  provider: ProviderName | null;
}

/** A script runner: the tool to start and the words before the script path. */
export interface RunnerSpec {
  tool: string;
  args: string[];
}

/** A normalised manifest: one scope of the chain. */
export interface Manifest {
  kind: ScopeKind;
  /** The file (null for a `with reef:` layer). */
  path: string | null;
  tools: Map<string, ToolReq>;
  runners: Map<string, RunnerSpec>;
  hermetic: boolean;
}

/** A manifest that exists but cannot be used. */
export interface ManifestProblem {
  kind: ScopeKind;
  path: string;
  error: string;
}

/** What reading one manifest file gave. */
export type ManifestRead =
  | { ok: true; manifest: Manifest }
  | { ok: false; missing: true }
  | { ok: false; missing: false; problem: ManifestProblem };

class Bad extends Error {}

function isTable(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

function constraintText(tool: string, v: unknown): string {
  if (typeof v === "string") return v;
  // `node = 22` means "22"; a float would lose digits (3.10 → 3.1), so it must be quoted.
  if (typeof v === "number" && Number.isInteger(v)) return String(v);
  if (typeof v === "bigint") return String(v);
  throw new Bad(`[tools] ${tool}: write the version as a string (${tool} = "${v}")`);
}

function providerPin(tool: string, v: unknown): ProviderName | null {
  if (v === undefined) return null;
  if (typeof v === "string" && (PROVIDERS as readonly string[]).includes(v)) {
    return v as ProviderName;
  }
  throw new Bad(`[tools] ${tool}: unknown provider ${JSON.stringify(v)} (${PROVIDERS.join(", ")})`);
}

/** The native shape (`.reef.toml`, or the user `[reef]` table). */
function nativeShape(kind: ScopeKind, path: string, doc: Record<string, unknown>): Manifest {
  const m: Manifest = { kind, path, tools: new Map(), runners: new Map(), hermetic: false };
  const tools = doc.tools;
  if (tools !== undefined) {
    if (!isTable(tools)) throw new Bad("manifest [tools] is not a table");
    for (const [name, v] of Object.entries(tools)) {
      if (isTable(v)) {
        const text = v.version === undefined ? "*" : constraintText(name, v.version);
        m.tools.set(name, {
          constraint: parseConstraint(text),
          text,
          provider: providerPin(name, v.provider),
        });
      } else {
        const text = constraintText(name, v);
        m.tools.set(name, { constraint: parseConstraint(text), text, provider: null });
      }
    }
  }
  const runners = doc.runners;
  if (runners !== undefined) {
    if (!isTable(runners)) throw new Bad("manifest [runners] is not a table");
    for (const [ext, v] of Object.entries(runners)) {
      if (typeof v === "string" && v !== "") m.runners.set(ext, { tool: v, args: [] });
      else if (isTable(v) && typeof v.tool === "string" && v.tool !== "") {
        const args = v.args ?? [];
        if (!Array.isArray(args) || !args.every((a) => typeof a === "string")) {
          throw new Bad(`[runners] ${ext}: args must be a list of strings`);
        }
        m.runners.set(ext, { tool: v.tool, args: args as string[] });
      } else {
        throw new Bad(`[runners] ${ext}: expected a tool name or {tool, args}`);
      }
    }
  }
  const options = doc.options;
  if (options !== undefined) {
    if (!isTable(options)) throw new Bad("manifest [options] is not a table");
    if (options.hermetic !== undefined) {
      if (typeof options.hermetic !== "boolean") throw new Bad("[options] hermetic must be a bool");
      m.hermetic = options.hermetic;
    }
  }
  return m;
}

/** mise: only `[tools]`; a string, the first item of an array, or a table's `version`. */
function miseShape(path: string, doc: Record<string, unknown>): Manifest {
  const m: Manifest = { kind: "mise", path, tools: new Map(), runners: new Map(), hermetic: false };
  const tools = doc.tools;
  if (tools === undefined) return m;
  if (!isTable(tools)) throw new Bad("mise [tools] is not a table");
  for (const [name, v] of Object.entries(tools)) {
    let text: unknown = v;
    if (Array.isArray(v)) text = v[0];
    else if (isTable(v)) text = v.version;
    if (typeof text !== "string") continue; // a shape Reef does not read; mise's business
    m.tools.set(name, { constraint: parseConstraint(text), text, provider: null });
  }
  return m;
}

/** `.tool-versions`: `tool version [fallbacks…]` per line, `#` comments stripped. */
export function parseToolVersions(path: string, text: string): Manifest {
  const m: Manifest = {
    kind: "tool-versions",
    path,
    tools: new Map(),
    runners: new Map(),
    hermetic: false,
  };
  for (const line of text.split(/\r?\n/)) {
    const hash = line.indexOf("#");
    const words = (hash >= 0 ? line.slice(0, hash) : line).trim().split(/\s+/);
    if (words.length < 2 || words[0] === "") continue;
    m.tools.set(words[0], {
      constraint: parseConstraint(words[1]),
      text: words[1],
      provider: null,
    });
  }
  return m;
}

function tomlDoc(text: string): Record<string, unknown> {
  try {
    return parseToml(text) as Record<string, unknown>;
  } catch (e) {
    const msg = (e instanceof Error ? e.message : String(e)).split("\n")[0];
    throw new Bad(`invalid TOML: ${msg}`);
  }
}

/** Parse a manifest file of `kind` from its text (throws nothing). */
export function parseManifest(kind: ScopeKind, path: string, read: FileRead): ManifestRead {
  if (!read.ok) {
    if (read.missing) return { ok: false, missing: true };
    return { ok: false, missing: false, problem: { kind, path, error: read.error } };
  }
  try {
    let manifest: Manifest;
    if (kind === "tool-versions") manifest = parseToolVersions(path, read.text);
    else if (kind === "mise") manifest = miseShape(path, tomlDoc(read.text));
    else if (kind === "user") {
      const reef = tomlDoc(read.text).reef;
      if (reef === undefined) return { ok: false, missing: true };
      if (!isTable(reef)) throw new Bad("[reef] is not a table");
      manifest = nativeShape("user", path, reef);
    } else manifest = nativeShape("reef", path, tomlDoc(read.text));
    return { ok: true, manifest };
  } catch (e) {
    if (!(e instanceof Bad)) throw e;
    return { ok: false, missing: false, problem: { kind, path, error: e.message } };
  }
}

/** A `with reef: {tool: "constraint"}` layer as a manifest (constraints only). */
export function overrideManifest(tools: ReadonlyMap<string, string>): Manifest {
  const m: Manifest = {
    kind: "override",
    path: null,
    tools: new Map(),
    runners: new Map(),
    hermetic: false,
  };
  for (const [name, text] of tools) {
    m.tools.set(name, { constraint: parseConstraint(text), text, provider: null });
  }
  return m;
}
