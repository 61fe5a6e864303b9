/**
 * Command-head resolution: what executable a head names in a session, and what PATH its
 * child gets. The one function every spawn path uses (see lib/eval/resolve_head.ts for the
 * evaluator's entry point).
 *
 * * A head containing `/` is a path: resolved against the cwd, never by name.
 * * A head some scope constrains is Reef's: the locked, hash-verified binary (resolve.ts), and
 *   the child's PATH starts with a view of every locked tool (only the view when hermetic).
 * * Any other head is looked up on the spawn environment's PATH (ambient behaviour).
 *
 * @module
 */

import { which } from "../exec/mod.ts";
import type { ManifestProblem } from "./manifest.ts";
import { decide } from "./decide.ts";
import {
  type Binding,
  chainOf,
  eligible,
  lockEntries,
  type ReefContext,
  resolveTool,
  verifyEntry,
} from "./resolve.ts";
import type { ScopeChain } from "./scopes.ts";
import { childPath, ensureView, type ViewBinding, viewsRoot } from "./view.ts";

/** How a command head resolved. */
export interface CommandResolution {
  /** `explicit`: a path head; `reef`: a scope constrains it; `path`: ambient PATH lookup. */
  via: "explicit" | "reef" | "path";
  /** The absolute executable to start, or null when nothing matched (the spawn fails `not_found`). */
  path: string | null;
  /** The PATH the child should get, or undefined to keep the spawn environment's. */
  childPath: string | undefined;
  /** BLAKE3 hex of the binary, verified against the lock (`reef` only; else null). */
  blake3: string | null;
  /** What Reef decided (`reef` only). */
  binding: Binding | null;
  /** Manifests in scope that exist but could not be read (to be reported, once). */
  problems: readonly ManifestProblem[];
}

/** The other locked tools of the chain whose binaries still match their lock entries. */
async function viewBindings(b: Binding, chain: ScopeChain): Promise<ViewBinding[]> {
  const out: ViewBinding[] = [{ name: b.name, path: b.path, blake3: b.blake3 }];
  for (const [name, e] of lockEntries(chain)) {
    if (name === b.name) continue;
    let d;
    try {
      d = decide(name, chain);
    } catch {
      continue; // a conflicting tool is not bound for children either
    }
    if (d === null || !eligible(e, d)) continue;
    try {
      out.push({ name, path: e.path, blake3: await verifyEntry(name, e) });
    } catch {
      // drifted or gone: children must not find it through the view
    }
  }
  return out;
}

/**
 * Resolve a command head for a spawn. Throws `ReefError` for a constrained head Reef cannot
 * bind (`reef_unlocked`, `reef_drift`, `reef_conflict`, `reef_not_found`, `reef_provider`).
 */
export async function resolveCommand(
  head: string,
  ctx: ReefContext,
): Promise<CommandResolution> {
  const pathEnv = ctx.env.PATH;
  if (head.includes("/")) {
    return {
      via: "explicit",
      path: which(head, pathEnv, ctx.cwd),
      childPath: undefined,
      blake3: null,
      binding: null,
      problems: [],
    };
  }
  const chain = chainOf(ctx);
  const binding = chain.scopes.length === 0 ? null : await resolveTool(head, ctx, chain);
  if (binding === null) {
    return {
      via: "path",
      path: which(head, pathEnv, ctx.cwd),
      childPath: undefined,
      blake3: null,
      binding: null,
      problems: chain.problems,
    };
  }
  const view = ensureView(viewsRoot(ctx.env), await viewBindings(binding, chain));
  return {
    via: "reef",
    path: binding.path,
    childPath: childPath(view, pathEnv, chain.hermetic),
    blake3: binding.blake3,
    binding,
    problems: chain.problems,
  };
}
