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

import { fileIdentity, which } from "../exec/mod.ts";
import { cachedDigest } from "./digest.ts";
import type { LockEntry } from "./lock.ts";
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
}

/** The other locked tools of the chain whose binaries still match their lock entries. */
async function viewBindings(
  b: Binding,
  chain: ScopeChain,
  entries: ReadonlyMap<string, LockEntry>,
): Promise<ViewBinding[]> {
  const out: ViewBinding[] = [{ name: b.name, path: b.path, blake3: b.blake3 }];
  for (const [name, e] of entries) {
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

interface ViewMemo {
  root: string;
  bindings: ViewBinding[];
  bin: string;
  /** When the view directory was last seen to exist (ms). */
  seen: number;
}

/**
 * Views by lock entry (entries are shared while the lock file is unchanged). A view's
 * existence is re-checked at most every {@link RECHECK_MS}: it only matters to a child's
 * nested lookups, and only if something deleted the view meanwhile.
 */
const views = new WeakMap<LockEntry, ViewMemo>();
const RECHECK_MS = 1000;

/**
 * The view for a binding: remembered per lock entry, and reused while every other bound binary
 * still has its digest (one stat each) and the view directory exists.
 */
async function viewFor(
  b: Binding,
  chain: ScopeChain,
  ctx: ReefContext,
  entries: ReadonlyMap<string, LockEntry>,
): Promise<string> {
  const root = viewsRoot(ctx.env);
  const hit = entries.get(b.name) === b.entry ? views.get(b.entry) : undefined;
  const now = Date.now();
  if (
    hit !== undefined && hit.root === root && // [0] is `b`, verified just now.
    hit.bindings.every((v, i) => i === 0 || cachedDigest(v.path) === v.blake3) &&
    (now - hit.seen < RECHECK_MS || fileIdentity(hit.bin)?.kind === "dir")
  ) {
    if (now - hit.seen >= RECHECK_MS) hit.seen = now;
    return hit.bin;
  }
  const bindings = await viewBindings(b, chain, entries);
  const bin = ensureView(root, bindings);
  views.set(b.entry, { root, bindings, bin, seen: now });
  return bin;
}

/**
 * A head Reef leaves alone: its `path` is looked up when first read. A spawn never reads it —
 * the process layer resolves the same name on the same PATH itself — so a spawn walks PATH
 * once, not twice (each walk a stat per entry).
 */
function ambient(
  via: "explicit" | "path",
  head: string,
  pathEnv: string | undefined,
  cwd: string,
): CommandResolution {
  let path: string | null | undefined;
  return {
    via,
    get path() {
      return path === undefined ? (path = which(head, pathEnv, cwd)) : path;
    },
    childPath: undefined,
    blake3: null,
    binding: null,
  };
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
  if (head.includes("/")) return ambient("explicit", head, pathEnv, ctx.cwd);
  const chain = chainOf(ctx);
  const entries = chain.scopes.length === 0 ? null : lockEntries(chain);
  const binding = entries === null ? null : await resolveTool(head, ctx, chain, entries);
  if (binding === null) return ambient("path", head, pathEnv, ctx.cwd);
  // A fresh interactive lock rewrote the file: the view binds what it holds now.
  const now = entries!.get(head) === binding.entry ? entries! : lockEntries(chain);
  const view = await viewFor(binding, chain, ctx, now);
  return {
    via: "reef",
    path: binding.path,
    childPath: childPath(view, pathEnv, chain.hermetic),
    blake3: binding.blake3,
    binding,
  };
}
