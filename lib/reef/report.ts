/**
 * What the Reef commands report (language §18), as plain rows: `which T`, `which --all T`,
 * bare `reef` (the binding table), `reef doctor`, and the kernel's `session.reef` snapshot.
 * `which` and `reef` resolve with the interactive policy (they are how a person locks), and
 * surface protection errors as `scope: "unresolved: <code>"` instead of an ambient guess.
 *
 * @module
 */

import { dirname } from "node:path";
import { which } from "../exec/mod.ts";
import { chainFor, type ChainRow, decide, mentionedTools } from "./decide.ts";
import { fileDigest } from "./digest.ts";
import { reason, ReefError } from "./errors.ts";
import { allCandidates } from "./providers.ts";
import { chainOf, eligible, lockEntries, type ReefContext, resolveTool } from "./resolve.ts";
import { viewsRoot } from "./view.ts";
import type { LockEntry } from "./lock.ts";
import { renderConstraint } from "./version.ts";

/** A report cell. */
export type Cell = string | number | boolean | null | ChainRow[];

/** One report row (field order is display order). */
export type Row = Record<string, Cell>;

/** The record of `which` for an ambient (unconstrained) PATH hit. */
export function ambientRow(name: string, path: string): Row {
  return {
    name,
    scope: "ambient",
    constraint: "*",
    version: "unknown",
    path,
    hash8: null,
    provider: "ambient",
    chain: [],
  };
}

/**
 * `which name` for an external head: the Reef binding, the ambient PATH hit, null when
 * nothing is found, or an `unresolved: <code>` record when a scope constrains the name but
 * Reef refuses it (conflict, drift, …).
 */
export async function whichRow(name: string, ctx: ReefContext): Promise<Row | null> {
  if (!name.includes("/")) {
    const chain = chainOf({ ...ctx, policy: "interactive" });
    try {
      const b = chain.scopes.length === 0
        ? null
        : await resolveTool(name, { ...ctx, policy: "interactive" }, chain);
      if (b !== null) {
        return {
          name,
          scope: b.scope,
          constraint: b.constraint,
          version: b.version,
          path: b.path,
          hash8: b.blake3.slice(0, 8),
          provider: b.provider,
          chain: b.decision.chain,
        };
      }
    } catch (e) {
      if (!(e instanceof ReefError)) throw e;
      let constraint: string | null = null;
      try {
        const d = decide(name, chain);
        if (d !== null) constraint = renderConstraint(d.constraint);
      } catch {
        // the conflict itself
      }
      return {
        name,
        scope: `unresolved: ${e.code}`,
        constraint,
        version: null,
        path: null,
        hash8: null,
        provider: null,
        chain: chainFor(name, chain),
        note: e.message,
        hint: e.hint,
      };
    }
  }
  const hit = which(name, ctx.env.PATH, ctx.cwd);
  return hit === null ? null : ambientRow(name, hit);
}

/** `which --all name`: every provider's candidates (no lock, no probe), then other PATH hits. */
export function whichAllRows(name: string, ctx: ReefContext): Row[] {
  if (name.includes("/")) {
    const hit = which(name, ctx.env.PATH, ctx.cwd);
    return hit === null
      ? []
      : [{ name, version: "unknown", path: hit, provider: "ambient", scope: "ambient" }];
  }
  const rows: Row[] = allCandidates(name, {
    cwd: ctx.cwd,
    env: ctx.env,
    viewsRoot: viewsRoot(ctx.env),
  }).map((c) => ({
    name,
    version: c.version.raw,
    path: c.path,
    provider: c.provider,
    scope: c.scope,
  }));
  // Relative PATH entries are no provider's, but a spawn would still find them.
  const hit = which(name, ctx.env.PATH, ctx.cwd);
  if (hit !== null && !rows.some((r) => r.path === hit)) {
    rows.push({ name, version: "unknown", path: hit, provider: "ambient", scope: "ambient" });
  }
  return rows;
}

/** Bare `reef`: one row per constrained tool (resolving and locking it interactively). */
export async function bindingRows(ctx: ReefContext): Promise<Row[]> {
  const ictx: ReefContext = { ...ctx, policy: "interactive" };
  const chain = chainOf(ictx);
  const rows: Row[] = [];
  for (const name of mentionedTools(chain)) {
    try {
      const b = await resolveTool(name, ictx, chain);
      if (b === null) continue;
      rows.push({
        name,
        constraint: b.constraint,
        version: b.version,
        hash8: b.blake3.slice(0, 8),
        provider: b.provider,
        scope: b.scope,
      });
    } catch (e) {
      if (!(e instanceof ReefError)) throw e;
      rows.push({
        name,
        constraint: null,
        version: null,
        hash8: null,
        provider: null,
        scope: `unresolved: ${e.code}`,
      });
    }
  }
  return rows;
}

function doctorRow(name: string, check: string, status: string, more: Row = {}): Row {
  return {
    name,
    check,
    status,
    path: null,
    locked_hash8: null,
    current_hash8: null,
    ambient_path: null,
    note: null,
    ...more,
  };
}

function realPath(p: string): string {
  try {
    return Deno.realPathSync(p);
  } catch {
    return p;
  }
}

/**
 * `reef doctor`: per constrained tool a `drift` check (`ok`, `drift`, `missing`, `unlocked`)
 * or a `conflict`; `shadowed_ambient` when the session PATH finds the name elsewhere;
 * `orphan` for lock entries no scope mentions; `lock` / `manifest` rows for files that do
 * not parse. Reads and hashes; never resolves, locks or probes.
 */
export async function doctorRows(ctx: ReefContext): Promise<Row[]> {
  const chain = chainOf(ctx);
  const drift: Row[] = [];
  const shadowed: Row[] = [];
  const rest: Row[] = [];
  let entries: ReadonlyMap<string, LockEntry> = new Map();
  try {
    entries = lockEntries(chain);
  } catch (e) {
    rest.push(doctorRow("reef.lock", "lock", "invalid", { path: chain.lockPath, note: reason(e) }));
  }
  const tools = mentionedTools(chain);
  for (const name of tools) {
    let d;
    try {
      d = decide(name, chain);
    } catch (e) {
      drift.push(doctorRow(name, "conflict", "conflict", { note: reason(e) }));
      continue;
    }
    if (d === null) continue;
    const e = entries.get(name);
    if (e === undefined || !eligible(e, d)) {
      drift.push(doctorRow(name, "drift", "unlocked", {
        path: e?.path ?? null,
        locked_hash8: e?.blake3.slice(0, 8) ?? null,
        note: e === undefined
          ? "not in reef.lock: run `reef lock`"
          : `the locked ${e.version} does not satisfy "${renderConstraint(d.constraint)}"`,
      }));
    } else {
      let current: string | null = null;
      let note: string | null = null;
      try {
        current = await fileDigest(e.path);
      } catch (err) {
        note = `cannot read ${e.path}: ${reason(err)}`;
      }
      const status = current === null ? "missing" : current === e.blake3 ? "ok" : "drift";
      drift.push(doctorRow(name, "drift", status, {
        path: e.path,
        locked_hash8: e.blake3.slice(0, 8),
        current_hash8: current?.slice(0, 8) ?? null,
        note: status === "drift" ? "changed since it was locked: `reef lock --refresh`" : note,
      }));
    }
    if (e !== undefined) {
      const ambient = which(name, ctx.env.PATH, ctx.cwd);
      if (ambient !== null && ambient !== e.path && realPath(ambient) !== realPath(e.path)) {
        shadowed.push(doctorRow(name, "shadowed_ambient", "shadowed", {
          path: e.path,
          ambient_path: ambient,
          note: "the session PATH finds another binary; Reef runs the locked one",
        }));
      }
    }
  }
  const mentioned = new Set(tools);
  for (const [name, e] of [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (mentioned.has(name)) continue;
    rest.push(doctorRow(name, "orphan", "orphan", {
      path: e.path,
      locked_hash8: e.blake3.slice(0, 8),
      note: "no manifest in scope mentions it",
    }));
  }
  for (const p of chain.problems) {
    rest.push(doctorRow(p.path.slice(p.path.lastIndexOf("/") + 1), "manifest", "invalid", {
      path: p.path,
      note: p.error,
    }));
  }
  return [...drift, ...shadowed, ...rest];
}

/** One binding of the kernel's `session.reef` view (protocol §4.2). */
export interface SnapshotBinding {
  tool: string;
  version: string | null;
  provider: string | null;
  scope: string;
  constrained: boolean;
}

/**
 * The `session.reef` snapshot: the active scope (directory of the nearest manifest) and one
 * binding per constrained tool (with its lock entry when one serves it) plus lock entries no
 * scope mentions. Reads files only: no probe, no hash, no subprocess.
 */
export function snapshot(ctx: ReefContext): {
  active_scope: string | null;
  bindings: SnapshotBinding[];
} {
  const chain = chainOf(ctx);
  const nearest = chain.scopes.find((s) => s.path !== null);
  let entries: ReadonlyMap<string, LockEntry> = new Map();
  try {
    entries = lockEntries(chain);
  } catch {
    // an invalid lock serves nothing; `reef doctor` says why
  }
  const bindings: SnapshotBinding[] = [];
  const tools = mentionedTools(chain);
  for (const tool of tools) {
    let d = null;
    try {
      d = decide(tool, chain);
    } catch {
      // conflicting: constrained, unbound
    }
    const e = entries.get(tool);
    const ok = d !== null && e !== undefined && eligible(e, d);
    const base = d?.base ?? chain.scopes.find((s) => s.tools.has(tool))!;
    bindings.push({
      tool,
      version: ok ? e!.version : null,
      provider: ok ? e!.provider : null,
      scope: base.path === null ? "<with reef:>" : dirname(base.path),
      constrained: true,
    });
  }
  const mentioned = new Set(tools);
  for (const [tool, e] of entries) {
    if (mentioned.has(tool)) continue;
    bindings.push({
      tool,
      version: e.version,
      provider: e.provider,
      scope: dirname(chain.lockPath!),
      constrained: false,
    });
  }
  return { active_scope: nearest?.path ? dirname(nearest.path) : null, bindings };
}
