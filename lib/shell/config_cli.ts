/**
 * `shoal config [--json] [KEY]`: the resolved configuration (every key, defaults included),
 * the layers it came from and any warnings — what `config.all()` shows inside the language.
 *
 * @module
 */

import { ConfigError, loadConfig, SCHEMA } from "../config/mod.ts";

const USAGE = "usage: shoal config [--json] [KEY]   (KEY like history.max_entries)";

function lookup(tree: unknown, key: string): unknown {
  return key.split(".").reduce<unknown>(
    (t, p) => (t !== null && typeof t === "object" ? (t as Record<string, unknown>)[p] : undefined),
    tree,
  );
}

/** `shoal config`. */
export function configMain(args: string[]): Promise<number> {
  if (args.includes("-h") || args.includes("--help")) {
    console.log(
      `${USAGE}\n\nLayers, lowest first: /etc/shoal/shoal.toml, ~/.config/shoal/shoal.toml, ` +
        "the nearest .shoal.toml, SHOAL_* variables, NO_COLOR.",
    );
    return Promise.resolve(0);
  }
  const json = args.includes("--json");
  const keys = args.filter((a) => a !== "--json");
  if (keys.some((k) => k.startsWith("-")) || keys.length > 1) {
    console.error(`shoal config: bad arguments\n${USAGE}`);
    return Promise.resolve(2);
  }
  let loaded;
  try {
    loaded = loadConfig({ cwd: Deno.cwd(), env: Deno.env.toObject() });
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    console.error(`shoal config: error[${e.code}]: ${e.message}`);
    return Promise.resolve(2);
  }
  for (const w of loaded.warnings) console.error(`shoal config: warning: ${w}`);
  if (keys.length === 1) {
    const v = lookup(loaded.config, keys[0]);
    if (v === undefined) {
      console.error(`shoal config: unknown key ${JSON.stringify(keys[0])}`);
      return Promise.resolve(1);
    }
    console.log(json ? JSON.stringify(v) : typeof v === "string" ? v : JSON.stringify(v));
    return Promise.resolve(0);
  }
  if (json) {
    console.log(JSON.stringify({ config: loaded.config, layers: loaded.layers }));
    return Promise.resolve(0);
  }
  console.log(`# layers: ${loaded.layers.length ? loaded.layers.join(", ") : "defaults only"}`);
  for (const k of Object.keys(SCHEMA)) {
    console.log(`${k} = ${JSON.stringify(lookup(loaded.config, k) ?? null)}`);
  }
  return Promise.resolve(0);
}
