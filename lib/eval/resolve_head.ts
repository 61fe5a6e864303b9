/**
 * How a session resolves a command head to an executable — the one function every spawn
 * path calls (commands, interpreter blocks, `run`, `.feed`; PTYs and Leash's hash pins
 * should call it too, so they all agree with `which`):
 *
 * ```ts
 * const r = await resolveHead(ev, "node", env, span);
 * // r.via: "explicit" (a path head) | "reef" (a scope constrains it) | "path" (ambient)
 * // r.path: absolute executable or null (→ the spawn reports not_found)
 * // r.childPath: the PATH the child gets (a Reef view), or undefined (keep env.PATH)
 * // r.blake3: the verified digest of a Reef-resolved binary (Leash can pin it), else null
 * ```
 *
 * The session supplies the cwd, the `with reef:` layers, the policy (a REPL resolves and
 * locks a constrained miss; scripts and kernel sessions get `reef_unlocked`), the process
 * port for version probes, and stderr for the auto-lock notice and the one report of each
 * unreadable manifest. Reef failures become language errors with the same code and hint.
 *
 * Adapters decide what happens *after* a head resolved (and `^head` bypasses them, not Reef).
 *
 * @module
 */

import type { Span } from "../syntax/ast.ts";
import { fail, ShoalError } from "../value/errors.ts";
import { type RecordV, typeName } from "../value/types.ts";
import {
  chainOf,
  type CommandResolution,
  decide,
  type Manifest,
  type ManifestProblem,
  overrideManifest,
  type Policy,
  type ReefContext,
  ReefError,
  resolveCommand,
  writeAtomic,
} from "../reef/mod.ts";
import { journaledWrite } from "./journal_port.ts";
import type { Evaluator } from "./evaluator.ts";

export type { CommandResolution } from "../reef/mod.ts";

const layerCache = new WeakMap<RecordV, Manifest>();

/** A `with reef:` record as a scope layer (values must be constraint strings). */
export function reefLayer(rec: RecordV, span: Span | null): Manifest {
  let m = layerCache.get(rec);
  if (m !== undefined) return m;
  const tools = new Map<string, string>();
  for (const [k, v] of rec.fields) {
    if (typeof v !== "string") {
      throw fail(
        "type_error",
        `with reef: ${k} must be a constraint string (like "22"), found ${typeName(v)}`,
        null,
        span,
      );
    }
    tools.set(k, v);
  }
  m = overrideManifest(tools);
  layerCache.set(rec, m);
  return m;
}

/** The Reef policy of a session: a REPL is interactive; scripts and kernel sessions are not. */
export function policyOf(ev: Evaluator): Policy {
  return ev.repl ? "interactive" : "script";
}

/** What Reef reads from this session (`env`: the child's environment). */
export function reefContext(
  ev: Evaluator,
  env: Readonly<Record<string, string>>,
  policy: Policy = policyOf(ev),
): ReefContext {
  const layers: Manifest[] = [];
  for (let i = ev.reefOverrides.length - 1; i >= 0; i--) {
    layers.push(reefLayer(ev.reefOverrides[i], null));
  }
  return {
    cwd: ev.cwd(),
    env,
    layers,
    policy,
    // Probes and `mise install` go through the session's process port, cancellable.
    spawn: (o) =>
      ev.withCancelSignal((signal) =>
        ev.ports.process.capture({ ...o, signal: o.signal ?? signal })
      ),
    notice: (line) => ev.ports.stderr(line + "\n"),
    // Lock and manifest writes are journaled like any builtin write (undo restores them).
    writeFile: (path, text) => journaledWrite(ev, path, () => writeAtomic(path, text)),
    problems: (p) => reportProblems(ev, p),
  };
}

/** The session environment as a plain record (what a child would get). */
export function sessionEnv(ev: Evaluator): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of ev.env()) env[k] = v;
  return env;
}

const reported = new WeakMap<Evaluator, WeakSet<ManifestProblem>>();

/** Print each unusable manifest once per session (never a silent skip, never a flood). */
export function reportProblems(ev: Evaluator, problems: readonly ManifestProblem[]): void {
  if (problems.length === 0) return;
  let seen = reported.get(ev);
  if (seen === undefined) reported.set(ev, seen = new WeakSet());
  for (const p of problems) {
    if (seen.has(p)) continue;
    seen.add(p);
    ev.ports.stderr(`reef: ignoring ${p.path}: ${p.error}\n`);
  }
}

/** A Reef failure as the language error of the same code. */
export function reefFailure(e: unknown, span: Span | null): unknown {
  if (e instanceof ReefError) return fail(e.code, e.message, e.hint, span);
  return e;
}

/**
 * Resolve `head` as this session would spawn it with environment `env`. Throws the language
 * error of a Reef failure (`reef_unlocked`, `reef_drift`, `reef_conflict`, `reef_not_found`,
 * `reef_provider`).
 */
export async function resolveHead(
  ev: Evaluator,
  head: string,
  env: Readonly<Record<string, string>>,
  span: Span | null,
  policy?: Policy,
): Promise<CommandResolution> {
  try {
    return await resolveCommand(head, reefContext(ev, env, policy));
  } catch (e) {
    if (e instanceof ShoalError) throw e;
    throw reefFailure(e, span);
  }
}

/** True when a Reef scope in force mentions `name` (a conflict counts: spawning reports it). */
export function constrains(ev: Evaluator, name: string): boolean {
  const ctx = reefContext(ev, sessionEnv(ev));
  try {
    return decide(name, chainOf(ctx)) !== null;
  } catch {
    return true;
  }
}
