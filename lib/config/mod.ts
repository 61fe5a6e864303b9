/**
 * Shoal's layered configuration (subsystems §9): the schema, the loader and the views hosts
 * need (the `config` namespace's snapshot, the state directory).
 *
 * ```ts
 * import { loadConfig } from "./lib/config/mod.ts";
 * const { config, warnings } = loadConfig({ cwd: Deno.cwd(), env: Deno.env.toObject() });
 * ```
 *
 * @module
 */

import { join } from "node:path";
import { jsonToValue } from "../value/json.ts";
import { RecordV } from "../value/types.ts";
import type { ShoalConfig } from "./schema.ts";
import { loadConfig } from "./load.ts";

export {
  ConfigError,
  type ConfigSources,
  expandPath,
  loadConfig,
  type LoadedConfig,
  projectConfigFile,
  userConfigFile,
} from "./load.ts";
export { ENV_OVERRIDES, SCHEMA, type ShoalConfig } from "./schema.ts";

/** The resolved configuration as the language's `config` snapshot (`config.get/all`). */
export function configRecord(config: ShoalConfig): RecordV {
  const v = jsonToValue(config);
  return v instanceof RecordV ? v : new RecordV(new Map());
}

/**
 * The `config` snapshot for an evaluator started in `cwd` with `env` (kernel sessions): the
 * resolved configuration, or null when it does not load (the host reports that elsewhere).
 */
export function configSnapshotFor(cwd: string, env: Record<string, string>): RecordV | null {
  try {
    return configRecord(loadConfig({ cwd, env }).config);
  } catch {
    return null;
  }
}

/** The per-user state root: `$XDG_STATE_HOME/shoal`, else `~/.local/state/shoal` (§3). */
export function defaultStateDir(env: Record<string, string> = Deno.env.toObject()): string {
  if (env.XDG_STATE_HOME) return join(env.XDG_STATE_HOME, "shoal");
  return env.HOME ? join(env.HOME, ".local", "state", "shoal") : join(Deno.cwd(), "shoal");
}

/** The state directory a configuration selects (`journal.state_dir`, else the default). */
export function configuredStateDir(config: ShoalConfig, env?: Record<string, string>): string {
  return config.journal.state_dir ?? defaultStateDir(env);
}
