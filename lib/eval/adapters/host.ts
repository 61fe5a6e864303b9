/**
 * The catalog an evaluator uses (subsystems §7, §9): hosts say whether they load adapters
 * (`EvaluatorOptions.adapters`); a loading evaluator builds its catalog on first use from the
 * bundled directory, its configuration snapshot's `adapters.dirs` and its session
 * environment's `SHOAL_ADAPTER_PATH`, and reports the loader's warnings once on its
 * diagnostics port.
 *
 * @module
 */

import { ListV, PathV, RecordV, type Value } from "../../value/types.ts";
import { AdapterCatalog, catalogDirs, loadCatalog, NO_ADAPTERS } from "./catalog.ts";

/** What a host passes: load (true), none (false), a catalog, or a way to get one. */
export type AdapterSource = boolean | AdapterCatalog | (() => AdapterCatalog);

/** What the catalog of a session depends on. */
export interface CatalogContext {
  config(): RecordV | null;
  env(): Map<string, string>;
  cwd(): string;
}

/** `adapters.dirs` of a configuration snapshot; problems become warnings. */
export function configDirs(config: RecordV | null, warnings: string[]): string[] {
  const section = config?.fields.get("adapters");
  if (section === undefined || section === null) return [];
  const dirs: Value | undefined = section instanceof RecordV
    ? section.fields.get("dirs")
    : undefined;
  if (dirs === undefined || dirs === null) return [];
  if (!(dirs instanceof ListV)) {
    warnings.push("config adapters.dirs must be a list of directories (ignored)");
    return [];
  }
  const out: string[] = [];
  for (const d of dirs.items) {
    if (typeof d === "string") out.push(d);
    else if (d instanceof PathV) out.push(d.path);
    else warnings.push("config adapters.dirs: an entry is not a directory name (ignored)");
  }
  return out;
}

/** Build the catalog for `source`; warnings go to `report`. */
export function resolveCatalog(
  source: AdapterSource,
  ctx: CatalogContext,
  report: (text: string) => void,
): AdapterCatalog {
  if (source === false) return NO_ADAPTERS;
  if (source instanceof AdapterCatalog) return source;
  if (typeof source === "function") return source();
  const warnings: string[] = [];
  const env = ctx.env();
  const home = env.get("HOME") ?? "/";
  const dirs = catalogDirs(
    configDirs(ctx.config(), warnings),
    env.get("SHOAL_ADAPTER_PATH"),
    ctx.cwd(),
    home,
  );
  const say = (w: string) => report(`shoal: adapters: ${w}\n`);
  const catalog = loadCatalog(dirs, { lazyFirst: true, warn: say });
  for (const w of [...warnings, ...catalog.warnings]) say(w);
  return catalog;
}
