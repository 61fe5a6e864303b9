/**
 * Resolution (subsystems §6): a constrained tool name → one locked, hash-verified binary.
 *
 * 1. The decision across scopes (decide.ts; `reef_conflict`).
 * 2. A lock entry whose provider matches the pin and whose version satisfies the constraint
 *    is re-hashed: a different digest is `reef_drift`, an unreadable binary `reef_not_found`
 *    (before any provider is asked).
 * 3. Otherwise: script policy → `reef_unlocked`; interactive policy → every allowed provider's
 *    candidates (versions probed only when the constraint needs them), the highest version,
 *    then provider precedence, then the lexically lower path; the winner is hashed and
 *    written to the lock *before* it is used (a failed write is `reef_provider`, not a
 *    silent in-memory lock), and one notice line says so.
 *
 * @module
 */

import { reason, ReefError } from "./errors.ts";
import type { Manifest, ManifestProblem } from "./manifest.ts";
import { decide, type Decision, sourceOf } from "./decide.ts";
import { type FileWriter, type LockEntry, readLock, writeLock } from "./lock.ts";
import { fileDigest } from "./digest.ts";
import { probeVersion, type Spawner } from "./probe.ts";
import { allCandidates, type Candidate, PROVIDER_ORDER } from "./providers.ts";
import { discoverScopes, type ScopeChain, withLayers } from "./scopes.ts";
import { viewsRoot } from "./view.ts";
import {
  compareVersions,
  needsVersion,
  parseVersion,
  renderConstraint,
  satisfies,
} from "./version.ts";

/** Interactive hosts resolve and lock a constrained miss; scripts refuse (`reef_unlocked`). */
export type Policy = "interactive" | "script";

/** What a resolution reads from its session. */
export interface ReefContext {
  /** Session cwd (absolute). */
  cwd: string;
  /** The environment the child would get (PATH, HOME, XDG_*, MISE_DATA_DIR, CARGO_HOME). */
  env: Readonly<Record<string, string>>;
  /** `with reef:` layers as manifests, innermost first. */
  layers?: readonly Manifest[];
  policy: Policy;
  /** How version probes are started (a host's process port); default lib/exec. */
  spawn?: Spawner;
  /** Receives the one-line notice of an interactive auto-lock. */
  notice?: (line: string) => void;
  /** How manifests and locks are written (a journaling host records it); default atomic. */
  writeFile?: FileWriter;
  /** Told about manifests in scope that exist but cannot be used (to report them). */
  problems?: (p: readonly ManifestProblem[]) => void;
}

/** A tool Reef resolved. */
export interface Binding {
  name: string;
  /** The effective constraint (`*`, `22.3`, …). */
  constraint: string;
  /** The locked version, or `unknown`. */
  version: string;
  provider: string;
  /** Absolute path of the executable. */
  path: string;
  /** Its BLAKE3 hex digest (verified now). */
  blake3: string;
  /** The label of the nearest scope mentioning the tool. */
  scope: Manifest["kind"];
  decision: Decision;
  /** The lock entry it came from, or that this resolution wrote. */
  entry: LockEntry;
}

/** The scope chain for a context (discovered scopes behind the `with reef:` layers). */
export function chainOf(ctx: ReefContext): ScopeChain {
  const chain = withLayers(discoverScopes(ctx.cwd, ctx.env), ctx.layers ?? []);
  if (chain.problems.length > 0) ctx.problems?.(chain.problems);
  return chain;
}

/** The lock entries of a chain (empty when it has no lock yet). Invalid → `reef_provider`. */
export function lockEntries(chain: ScopeChain): ReadonlyMap<string, LockEntry> {
  if (chain.lockPath === null) return new Map();
  const r = readLock(chain.lockPath);
  if (r.ok) return r.entries;
  if (r.missing) return new Map();
  throw new ReefError(
    "reef_provider",
    `${chain.lockPath} is not a valid lock: ${r.error}`,
    "fix it, or rewrite it with `reef lock --refresh`",
  );
}

/** True when a lock entry can serve a decision (provider pin, constraint). */
export function eligible(e: LockEntry, d: Decision): boolean {
  if (d.provider !== null && e.provider !== d.provider) return false;
  return d.constraint.kind === "any" || satisfies(d.constraint, parseVersion(e.version));
}

function bindingOf(d: Decision, e: LockEntry, blake3: string): Binding {
  return {
    name: d.tool,
    constraint: renderConstraint(d.constraint),
    version: e.version,
    provider: e.provider,
    path: e.path,
    blake3,
    scope: d.base.kind,
    decision: d,
    entry: e,
  };
}

/** Re-hash a lock entry's binary: its digest, or `reef_drift` / `reef_not_found`. */
export async function verifyEntry(name: string, e: LockEntry): Promise<string> {
  let digest: string;
  try {
    digest = await fileDigest(e.path);
  } catch (err) {
    throw new ReefError(
      "reef_not_found",
      `${name}: the locked binary ${e.path} cannot be read (${reason(err)})`,
      "run `reef lock --refresh` to lock what is installed now",
    );
  }
  if (digest !== e.blake3) {
    throw new ReefError(
      "reef_drift",
      `${name}: ${e.path} changed since it was locked (blake3 ${digest.slice(0, 8)} ≠ locked ${
        e.blake3.slice(0, 8)
      })`,
      "if the new binary is intended, run `reef lock --refresh`",
    );
  }
  return digest;
}

function unlocked(d: Decision, chain: ScopeChain, e: LockEntry | undefined): ReefError {
  const c = renderConstraint(d.constraint);
  const src = sourceOf(d.base);
  if (e !== undefined) {
    return new ReefError(
      "reef_unlocked",
      `${d.tool}: the locked ${e.version} (${e.provider}) does not satisfy "${c}" from ${src}`,
      `run \`reef lock\` to lock an installed ${d.tool} that satisfies it, and commit reef.lock`,
    );
  }
  if (chain.lockPath === null) {
    return new ReefError(
      "reef_unlocked",
      `${d.tool} is constrained to "${c}" by ${src}, and no manifest in scope has a reef.lock`,
      "add a .reef.toml for the tool and run `reef lock`",
    );
  }
  return new ReefError(
    "reef_unlocked",
    `${d.tool} is constrained to "${c}" by ${src} but ${chain.lockPath} has no entry for it`,
    `run \`reef lock\` (or \`which ${d.tool}\`) to lock it, and commit reef.lock`,
  );
}

/** Rank: highest version, then provider precedence, then the lexically lower path. */
function better(a: Candidate, b: Candidate): number {
  const v = compareVersions(b.version, a.version);
  if (v !== 0) return v;
  const p = PROVIDER_ORDER.indexOf(a.provider) - PROVIDER_ORDER.indexOf(b.provider);
  if (p !== 0) return p;
  return a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
}

/** The candidates for a decision, versions filled in when the constraint needs them. */
export async function candidatesFor(d: Decision, ctx: ReefContext): Promise<Candidate[]> {
  const providers = d.provider === null ? PROVIDER_ORDER : [d.provider];
  const found = allCandidates(
    d.tool,
    { cwd: ctx.cwd, env: ctx.env, viewsRoot: viewsRoot(ctx.env) },
    providers,
  );
  if (!needsVersion(d.constraint)) return found;
  return await Promise.all(
    found.map(async (c) =>
      c.version.kind !== "unknown"
        ? c
        : { ...c, version: await probeVersion(c.path, ctx.cwd, ctx.env, ctx.spawn) }
    ),
  );
}

/** Choose the best installed candidate for a decision; none → `reef_not_found`. */
export async function selectCandidate(d: Decision, ctx: ReefContext): Promise<Candidate> {
  const found = await candidatesFor(d, ctx);
  const ok = found.filter((c) => satisfies(d.constraint, c.version)).sort(better);
  if (ok.length > 0) return ok[0];
  const c = renderConstraint(d.constraint);
  const where = d.provider === null ? PROVIDER_ORDER.join(", ") : `provider ${d.provider}`;
  const seen = found.slice(0, 3).map((f) => `${f.path} ${f.version.raw}`).join(", ");
  throw new ReefError(
    "reef_not_found",
    `${d.tool}: nothing installed satisfies "${c}" from ${sourceOf(d.base)} (searched ${where}${
      seen ? `; found ${seen}` : "; found nothing"
    })`,
    `install ${d.tool} ${c}, or \`reef fetch ${d.tool}\` to install it with mise`,
  );
}

/** A fresh lock entry for a chosen candidate (hashes it). */
export async function entryFor(c: Candidate): Promise<LockEntry> {
  let blake3: string;
  try {
    blake3 = await fileDigest(c.path);
  } catch (e) {
    throw new ReefError("reef_provider", `${c.tool}: cannot hash ${c.path}: ${reason(e)}`);
  }
  return {
    name: c.tool,
    version: c.version.raw,
    provider: c.provider,
    path: c.path,
    blake3,
    resolved_at: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
  };
}

/**
 * Merge `updates` into the chain's lock on disk and write it (read and write without an await
 * in between, so concurrent tasks of this process do not lose each other's entries).
 * `overwriteInvalid` lets `reef lock --refresh` replace a lock that does not parse.
 */
export function persist(
  chain: ScopeChain,
  updates: readonly LockEntry[],
  write: FileWriter | undefined,
  overwriteInvalid = false,
): void {
  if (chain.lockPath === null || updates.length === 0) return;
  let current: ReadonlyMap<string, LockEntry>;
  try {
    current = lockEntries(chain);
  } catch (e) {
    if (!overwriteInvalid) throw e;
    current = new Map();
  }
  const next = new Map(current);
  for (const u of updates) next.set(u.name, u);
  writeLock(chain.lockPath, next, write);
}

/**
 * Resolve a tool name. Null when no scope mentions it (not Reef's business). Throws
 * `ReefError` (`reef_conflict`, `reef_drift`, `reef_not_found`, `reef_unlocked`,
 * `reef_provider`). `entries`: the chain's lock as the caller just read it.
 */
export async function resolveTool(
  name: string,
  ctx: ReefContext,
  chain: ScopeChain = chainOf(ctx),
  entries?: ReadonlyMap<string, LockEntry>,
): Promise<Binding | null> {
  const d = decide(name, chain);
  if (d === null) return null;
  entries ??= lockEntries(chain);
  const e = entries.get(name);
  if (e !== undefined && eligible(e, d)) return bindingOf(d, e, await verifyEntry(name, e));
  if (ctx.policy === "script") throw unlocked(d, chain, e);
  const chosen = await selectCandidate(d, ctx);
  const fresh = await entryFor(chosen);
  persist(chain, [fresh], ctx.writeFile);
  ctx.notice?.(
    `reef: locked ${name}@${fresh.version} via ${fresh.provider} (${fresh.path})` +
      (chain.lockPath === null ? " — not saved: no manifest in scope has a reef.lock" : ""),
  );
  return bindingOf(d, fresh, fresh.blake3);
}
