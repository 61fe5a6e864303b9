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

import { defaultStateDir } from "../client/discovery.ts";
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

/** The state directory a configuration selects (`journal.state_dir`, else the default). */
export function configuredStateDir(config: ShoalConfig): string {
  return config.journal.state_dir ?? defaultStateDir();
}

/** The per-user state root (one definition, in lib/client/discovery.ts). */
export { defaultStateDir };
