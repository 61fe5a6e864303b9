/**
 * The decision for one tool across the scope chain (subsystems §6): the nearest scope that
 * mentions it gives the base constraint and provider pin; every farther mention must be
 * compatible and may refine it (`22` + `22.3` → `22.3`); an incompatible constraint or a
 * different provider pin is `reef_conflict`, naming both files. A tool no scope mentions is
 * not Reef's (ambient PATH behaviour).
 *
 * @module
 */

import { ReefError } from "./errors.ts";
import type { Manifest, ProviderName, ScopeKind } from "./manifest.ts";
import type { ScopeChain } from "./scopes.ts";
import { type Constraint, refine, renderConstraint } from "./version.ts";

/** How one scope took part in a decision (the `chain` of `which`). */
export interface ChainRow {
  scope: ScopeKind;
  /** The manifest file, or `<with reef:>`. */
  source: string;
  /** The constraint as written there, or null when the scope does not mention the tool. */
  constraint: string | null;
  /** `selected` (the nearest mention), `shadowed` (a farther mention), `absent`. */
  outcome: "selected" | "shadowed" | "absent";
}

/** The effective requirement for a tool. */
export interface Decision {
  tool: string;
  constraint: Constraint;
  provider: ProviderName | null;
  /** The nearest scope mentioning the tool. */
  base: Manifest;
  chain: ChainRow[];
}

/** The source label of a scope. */
export function sourceOf(m: Manifest): string {
  return m.path ?? "<with reef:>";
}

function chainRows(tool: string, chain: ScopeChain): ChainRow[] {
  let seen = false;
  return chain.scopes.map((m) => {
    const req = m.tools.get(tool);
    if (req === undefined) {
      return { scope: m.kind, source: sourceOf(m), constraint: null, outcome: "absent" };
    }
    const outcome = seen ? "shadowed" : "selected";
    seen = true;
    return { scope: m.kind, source: sourceOf(m), constraint: req.text, outcome };
  });
}

function compute(tool: string, chain: ScopeChain): Decision | null {
  let base: Manifest | null = null;
  let constraint: Constraint = { kind: "any" };
  let provider: ProviderName | null = null;
  let pinFrom: Manifest | null = null;
  for (const m of chain.scopes) {
    const req = m.tools.get(tool);
    if (req === undefined) continue;
    if (base === null) {
      base = m;
      constraint = req.constraint;
    } else {
      const r = refine(constraint, req.constraint);
      if (r === null) {
        throw new ReefError(
          "reef_conflict",
          `${tool}: ${sourceOf(base)} wants "${renderConstraint(constraint)}" but ${
            sourceOf(m)
          } wants "${req.text}"`,
          'make the manifests agree: a nearer scope may only narrow a farther one ("22" → "22.3")',
        );
      }
      constraint = r;
    }
    if (req.provider !== null) {
      if (provider === null) {
        provider = req.provider;
        pinFrom = m;
      } else if (provider !== req.provider) {
        throw new ReefError(
          "reef_conflict",
          `${tool}: ${sourceOf(pinFrom!)} pins provider ${provider} but ${
            sourceOf(m)
          } pins ${req.provider}`,
          "pin one provider, or drop the pin from one of the manifests",
        );
      }
    }
  }
  if (base === null) return null;
  return { tool, constraint, provider, base, chain: chainRows(tool, chain) };
}

const PER_CHAIN_MAX = 512;
const memo = new WeakMap<ScopeChain, Map<string, Decision | null | ReefError>>();

/**
 * The decision for `tool` in `chain`, or null when no scope mentions it. Throws
 * `reef_conflict`. Memoised per chain (chains are shared while their files are unchanged).
 */
export function decide(tool: string, chain: ScopeChain): Decision | null {
  let m = memo.get(chain);
  if (m === undefined) memo.set(chain, m = new Map());
  let d = m.get(tool);
  if (d === undefined) {
    try {
      d = compute(tool, chain);
    } catch (e) {
      if (!(e instanceof ReefError)) throw e;
      d = e;
    }
    if (m.size >= PER_CHAIN_MAX) m.clear();
    m.set(tool, d);
  }
  if (d instanceof ReefError) throw d;
  return d;
}

/** The chain rows for a tool whether or not the decision succeeds (for error reports). */
export function chainFor(tool: string, chain: ScopeChain): ChainRow[] {
  return chainRows(tool, chain);
}

/** Every tool some scope of `chain` mentions, sorted. */
export function mentionedTools(chain: ScopeChain): string[] {
  const s = new Set<string>();
  for (const m of chain.scopes) for (const t of m.tools.keys()) s.add(t);
  return [...s].sort();
}
