/**
 * One resolution rule for Leash's files, shared by the kernel and the `shoal token` CLI (D-17):
 *
 * * state directory: `--state-dir`, else `defaultStateDir()` (lib/client/discovery.ts, §2.3);
 * * token store: `--token-store`, else a non-empty `$SHOAL_TOKEN_STORE`, else
 *   `<state dir>/tokens.json` — an ephemeral kernel (no state dir) has a token store only
 *   when one of the first two names it;
 * * policy: `--policy FILE`, else `<state dir>/policy.toml` when it exists.
 *
 * Relative paths resolve against the process's start directory.
 *
 * @module
 */

import { join, resolve } from "node:path";

type Env = (name: string) => string | undefined;
const processEnv: Env = (n) => Deno.env.get(n);
const nonEmpty = (v: string | undefined) => (v !== undefined && v !== "" ? v : undefined);

/**
 * The token store path, or null when there is none (an ephemeral kernel without an explicit
 * store). `stateDir` null means ephemeral.
 */
export function tokenStorePath(
  opts: { explicit?: string | null; stateDir: string | null },
  env: Env = processEnv,
): string | null {
  const p = nonEmpty(opts.explicit ?? undefined) ?? nonEmpty(env("SHOAL_TOKEN_STORE"));
  if (p) return resolve(p);
  return opts.stateDir === null ? null : join(resolve(opts.stateDir), "tokens.json");
}

/** The policy file: explicit, else `<state dir>/policy.toml` (used only if it exists). */
export function policyPath(
  opts: { explicit?: string | null; stateDir: string | null },
): { path: string | null; explicit: boolean } {
  if (opts.explicit) return { path: resolve(opts.explicit), explicit: true };
  if (opts.stateDir === null) return { path: null, explicit: false };
  return { path: join(resolve(opts.stateDir), "policy.toml"), explicit: false };
}

/** The kernel's own principal: the person who runs it (`uid:<euid>`). */
export function localPrincipal(): string {
  return `uid:${Deno.uid() ?? 0}`;
}
