/**
 * Providers (subsystems §6): where installed tools are found, in default precedence order —
 * `npm-local` (nearest `node_modules/.bin`), `venv` (nearest `.venv/bin`), `mise`
 * (`$MISE_DATA_DIR/installs/<tool>/<version>/bin/<tool>`, version = the directory name),
 * `cargo` (`$CARGO_HOME/bin`), `system` (`/usr/bin`, `/usr/local/bin`, `/bin`, labelled
 * `system`, then the session PATH's other absolute directories, labelled `ambient`).
 *
 * Discovery never runs a binary and never touches the network; versions not known from the
 * layout are probed later, only when a constraint needs them.
 *
 * @module
 */

import { join } from "node:path";
import { isExecutableFile } from "../exec/mod.ts";
import { type ProviderName, PROVIDERS } from "./manifest.ts";
import { parseVersion, UNKNOWN, type Version } from "./version.ts";

/** Default provider precedence (ties between equal versions go to the earlier one). */
export const PROVIDER_ORDER: readonly ProviderName[] = PROVIDERS;

/** The canonical system directories. */
export const SYSTEM_DIRS: readonly string[] = ["/usr/bin", "/usr/local/bin", "/bin"];

/** One installed executable that could serve a tool. */
export interface Candidate {
  tool: string;
  /** Absolute path (not canonicalised). */
  path: string;
  provider: ProviderName;
  /** `system` / `ambient` for the system provider, else the provider's name. */
  scope: string;
  /** Known from the layout (mise), else unknown until probed. */
  version: Version;
}

/** What providers read: the session cwd and environment, and directories to leave out. */
export interface ProviderContext {
  cwd: string;
  env: Readonly<Record<string, string>>;
  /** PATH directories under this prefix are Reef's own views, never candidates. */
  viewsRoot: string | null;
}

function ancestors(cwd: string): string[] {
  const out: string[] = [];
  let dir = cwd;
  for (;;) {
    out.push(dir);
    if (dir === "/" || dir === "") return out;
    const i = dir.lastIndexOf("/");
    dir = i <= 0 ? "/" : dir.slice(0, i);
  }
}

function nearest(tool: string, ctx: ProviderContext, sub: string, p: ProviderName): Candidate[] {
  for (const dir of ancestors(ctx.cwd)) {
    const path = join(dir, sub, tool);
    if (isExecutableFile(path)) return [{ tool, path, provider: p, scope: p, version: UNKNOWN }];
  }
  return [];
}

function home(env: Readonly<Record<string, string>>): string | null {
  const h = env.HOME;
  return h !== undefined && h.startsWith("/") ? h : null;
}

/** mise's data directory for a session environment, or null. */
export function miseDataDir(env: Readonly<Record<string, string>>): string | null {
  const d = env.MISE_DATA_DIR;
  if (d !== undefined && d.startsWith("/")) return d;
  const h = home(env);
  return h === null ? null : join(h, ".local", "share", "mise");
}

function mise(tool: string, ctx: ProviderContext): Candidate[] {
  const root = miseDataDir(ctx.env);
  if (root === null || tool.includes("/") || tool.startsWith(".")) return [];
  const dir = join(root, "installs", tool);
  const out: Candidate[] = [];
  let names: string[];
  try {
    // Alias links (`22 -> 22.3.0`, `latest`) would duplicate real installs: directories only.
    names = [...Deno.readDirSync(dir)].filter((e) => e.isDirectory).map((e) => e.name).sort();
  } catch {
    return out;
  }
  for (const v of names) {
    const path = join(dir, v, "bin", tool);
    if (isExecutableFile(path)) {
      out.push({ tool, path, provider: "mise", scope: "mise", version: parseVersion(v) });
    }
  }
  return out;
}

function cargo(tool: string, ctx: ProviderContext): Candidate[] {
  const c = ctx.env.CARGO_HOME;
  const h = home(ctx.env);
  const root = c !== undefined && c.startsWith("/") ? c : h === null ? null : join(h, ".cargo");
  if (root === null) return [];
  const path = join(root, "bin", tool);
  return isExecutableFile(path)
    ? [{ tool, path, provider: "cargo", scope: "cargo", version: UNKNOWN }]
    : [];
}

/** The system provider's directories: canonical ones, then the PATH's other absolute ones. */
export function systemDirs(ctx: ProviderContext): { dir: string; scope: string }[] {
  const out = SYSTEM_DIRS.map((dir) => ({ dir, scope: "system" }));
  const seen = new Set(SYSTEM_DIRS);
  for (let d of (ctx.env.PATH ?? "").split(":")) {
    if (!d.startsWith("/")) continue; // relative entries depend on the cwd: never a tool source
    if (d.length > 1 && d.endsWith("/")) d = d.slice(0, -1);
    if (seen.has(d)) continue;
    seen.add(d);
    if (ctx.viewsRoot !== null && (d + "/").startsWith(ctx.viewsRoot + "/")) continue;
    out.push({ dir: d, scope: "ambient" });
  }
  return out;
}

function system(tool: string, ctx: ProviderContext): Candidate[] {
  const out: Candidate[] = [];
  for (const { dir, scope } of systemDirs(ctx)) {
    const path = join(dir, tool);
    if (isExecutableFile(path)) {
      out.push({ tool, path, provider: "system", scope, version: UNKNOWN });
    }
  }
  return out;
}

/** The candidates one provider offers for `tool` (a plain name: no `/`). */
export function providerCandidates(
  tool: string,
  provider: ProviderName,
  ctx: ProviderContext,
): Candidate[] {
  if (tool === "" || tool.includes("/") || tool.includes("\0")) return [];
  switch (provider) {
    case "npm-local":
      return nearest(tool, ctx, "node_modules/.bin", "npm-local");
    case "venv":
      return nearest(tool, ctx, ".venv/bin", "venv");
    case "mise":
      return mise(tool, ctx);
    case "cargo":
      return cargo(tool, ctx);
    case "system":
      return system(tool, ctx);
  }
}

/**
 * Every candidate for `tool` from `providers` (default: all, in precedence order); a path
 * offered by an earlier provider is not repeated by a later one.
 */
export function allCandidates(
  tool: string,
  ctx: ProviderContext,
  providers: readonly ProviderName[] = PROVIDER_ORDER,
): Candidate[] {
  const out: Candidate[] = [];
  const seen = new Set<string>();
  for (const p of providers) {
    for (const c of providerCandidates(tool, p, ctx)) {
      if (seen.has(c.path)) continue;
      seen.add(c.path);
      out.push(c);
    }
  }
  return out;
}
