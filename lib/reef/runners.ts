/**
 * Script runners (subsystems §6, language §9.8): how `run(path)` starts a script — by
 * extension first (defaults `.py → python3`, `.js → node`, `.ts → deno run`, `.sh → sh`,
 * `.shl → Shoal itself`, `.rb → ruby`, `.lua → lua`, overlaid by the `[runners]` tables in
 * scope, farthest first so the nearest wins), then by the `#!` line. The runner tool is a
 * normal command head, so Reef resolves it like any other.
 *
 * `.py` starts `python3` rather than upstream's `python`: Debian and most current systems
 * ship no `python`. `.rs` has no table entry: scripts.ts runs it with rust-script or rustc.
 *
 * @module
 */

import type { RunnerSpec } from "./manifest.ts";
import type { ScopeChain } from "./scopes.ts";

/** The runner tool that means "run it as a Shoal script". */
export const SELF = "self";

/** The default extension table. */
export const DEFAULT_RUNNERS: ReadonlyMap<string, RunnerSpec> = new Map([
  ["py", { tool: "python3", args: [] }],
  ["js", { tool: "node", args: [] }],
  ["ts", { tool: "deno", args: ["run"] }],
  ["sh", { tool: "sh", args: [] }],
  ["shl", { tool: SELF, args: [] }],
  ["rb", { tool: "ruby", args: [] }],
  ["lua", { tool: "lua", args: [] }],
]);

const tables = new WeakMap<ScopeChain, ReadonlyMap<string, RunnerSpec>>();

/** The effective extension table for a scope chain (defaults, farthest scope, …, nearest). */
export function runnerTable(chain: ScopeChain | null): ReadonlyMap<string, RunnerSpec> {
  if (chain === null) return DEFAULT_RUNNERS;
  let t = tables.get(chain);
  if (t !== undefined) return t;
  if (chain.scopes.every((s) => s.runners.size === 0)) t = DEFAULT_RUNNERS;
  else {
    const m = new Map(DEFAULT_RUNNERS);
    for (let i = chain.scopes.length - 1; i >= 0; i--) {
      for (const [ext, r] of chain.scopes[i].runners) m.set(ext, r);
    }
    t = m;
  }
  tables.set(chain, t);
  return t;
}

/**
 * The interpreter words of a `#!` line (`#!/usr/bin/env [-S] prog args` → `prog args`,
 * `#!/bin/bash -e` → `/bin/bash -e`), or null when `head` (the file's first bytes) has none.
 */
export function parseShebang(head: Uint8Array): string[] | null {
  if (head[0] !== 0x23 || head[1] !== 0x21) return null;
  let end = head.indexOf(10);
  if (end < 0) end = head.length;
  const line = new TextDecoder().decode(head.subarray(2, end)).trim();
  const words = line.split(/\s+/).filter((w) => w !== "");
  if (words.length === 0) return null;
  const base = words[0].slice(words[0].lastIndexOf("/") + 1);
  if (base === "env") {
    const rest = words.slice(1).filter((w) => w !== "-S");
    return rest.length ? rest : null;
  }
  return words;
}
