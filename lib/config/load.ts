/**
 * Layered configuration (subsystems §9): defaults → `/etc/shoal/shoal.toml` → the user's
 * `shoal.toml` → the single nearest ancestor `.shoal.toml` → `SHOAL_*` variables → `NO_COLOR`.
 * Tables merge key by key; scalars and arrays replace. Each layer is checked against the schema
 * before it is merged: an unknown key is a warning with a did-you-mean, a wrong type, a bad value,
 * malformed TOML or an unreadable file is a {@link ConfigError}. Paths in a file are resolved
 * against that file's directory (`~` against HOME), so a project's `.shoal.toml` means the same
 * thing from every subdirectory.
 *
 * @module
 */

import { dirname, isAbsolute, join, resolve } from "node:path";
import { parse as parseToml } from "smol-toml";
import { nearest } from "../eval/errors.ts";
import {
  defaultTree,
  ENV_OVERRIDES,
  type KeySpec,
  SCHEMA,
  setPath,
  type ShoalConfig,
  TABLE_PATHS,
} from "./schema.ts";

/** A configuration problem that stops start-up (code `config_invalid`). */
export class ConfigError extends Error {
  readonly code = "config_invalid";
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

/** Where the layers come from (tests and `shoal doctor` pass their own). */
export interface ConfigSources {
  /** Directory the project layer is searched from (the session cwd). */
  cwd: string;
  /** The environment (HOME, XDG_CONFIG_HOME, SHOAL_*, NO_COLOR). */
  env: Record<string, string>;
  /** The system layer; default `/etc/shoal/shoal.toml`. */
  systemFile?: string;
}

/** The resolved configuration and how it was made. */
export interface LoadedConfig {
  config: ShoalConfig;
  /** Unknown keys and other non-fatal notes, each naming its file. */
  warnings: string[];
  /** The layers that were read, lowest first (files, then `env`). */
  layers: string[];
}

/** The user configuration file for an environment. */
export function userConfigFile(env: Record<string, string>): string | null {
  if (env.XDG_CONFIG_HOME) return join(env.XDG_CONFIG_HOME, "shoal", "shoal.toml");
  return env.HOME ? join(env.HOME, ".config", "shoal", "shoal.toml") : null;
}

/** The nearest `.shoal.toml` in `cwd` or an ancestor (no chain: only the first one found). */
export function projectConfigFile(cwd: string): string | null {
  for (let dir = resolve(cwd);; dir = dirname(dir)) {
    const f = join(dir, ".shoal.toml");
    try {
      if (Deno.statSync(f).isFile) return f;
    } catch { /* not here */ }
    if (dirname(dir) === dir) return null;
  }
}

/** Read and parse one file; null when it does not exist. */
function readLayer(file: string): Record<string, unknown> | null {
  let text: string;
  try {
    text = Deno.readTextFileSync(file);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw new ConfigError(`${file}: cannot read: ${(e as Error).message}`);
  }
  try {
    return parseToml(text) as Record<string, unknown>;
  } catch (e) {
    const msg = (e as Error).message.split("\n")[0];
    throw new ConfigError(`${file}: malformed TOML: ${msg}`);
  }
}

function kindOf(v: unknown): string {
  if (Array.isArray(v)) return "array";
  if (v === null) return "null";
  if (v instanceof Date) return "datetime";
  if (typeof v === "object") return "table";
  if (typeof v === "number" || typeof v === "bigint") {
    return Number.isInteger(Number(v)) ? "integer" : "float";
  }
  return typeof v;
}

const EXPECT: Record<KeySpec["kind"], string> = {
  bool: "a boolean",
  uint: "a non-negative integer",
  posint: "a positive integer",
  string: "a string",
  path: "a path string",
  paths: "an array of path strings",
  strings: "an array of strings",
  string_map: "a table of strings",
  table: "a table",
};

/** `~` and `~/…` against HOME; relative paths against `base`. */
export function expandPath(p: string, base: string, env: Record<string, string>): string {
  if (p === "~" || p.startsWith("~/")) p = (env.HOME ?? "/") + p.slice(1);
  return isAbsolute(p) ? p : resolve(base, p);
}

/** Check one key's value; returns it normalised (numbers as numbers, paths resolved). */
function checkValue(
  where: string,
  key: string,
  spec: KeySpec,
  v: unknown,
  base: string,
  env: Record<string, string>,
): unknown {
  const bad = () =>
    new ConfigError(`${where}: ${key}: expected ${EXPECT[spec.kind]}, found ${kindOf(v)}`);
  switch (spec.kind) {
    case "bool":
      if (typeof v !== "boolean") throw bad();
      return v;
    case "uint":
    case "posint": {
      if (kindOf(v) !== "integer") throw bad();
      const n = Number(v);
      if (n < 0) throw bad();
      if (spec.kind === "posint" && n === 0) {
        throw new ConfigError(`${where}: ${key}: must be greater than 0`);
      }
      if (key === "version" && n !== 1) {
        throw new ConfigError(`${where}: version: unsupported config version ${n} (expected 1)`);
      }
      return n;
    }
    case "string":
    case "path": {
      if (typeof v !== "string") throw bad();
      if (spec.oneOf && !spec.oneOf.includes(v)) {
        throw new ConfigError(
          `${where}: ${key}: must be ${spec.oneOf.map((o) => `\`${o}\``).join(" or ")}, found ${
            JSON.stringify(v)
          }`,
        );
      }
      if (spec.kind === "path") {
        if (v === "") throw new ConfigError(`${where}: ${key}: must not be empty`);
        return expandPath(v, base, env);
      }
      if (key === "kernel.session" && !/^[A-Za-z0-9._-]{1,128}$/.test(v)) {
        throw new ConfigError(
          `${where}: kernel.session: invalid session name ${
            JSON.stringify(v)
          } (use letters, digits, '.', '_' or '-')`,
        );
      }
      return v;
    }
    case "paths":
    case "strings": {
      if (!Array.isArray(v)) throw bad();
      return v.map((x, i) => {
        if (typeof x !== "string") {
          throw new ConfigError(
            `${where}: ${key}[${i}]: expected a string, found ${kindOf(x)}`,
          );
        }
        if (x === "") throw new ConfigError(`${where}: ${key}[${i}]: must not be empty`);
        return spec.kind === "paths" ? expandPath(x, base, env) : x;
      });
    }
    case "string_map": {
      if (kindOf(v) !== "table") throw bad();
      const out: Record<string, string> = {};
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
        if (typeof x !== "string") {
          throw new ConfigError(`${where}: ${key}.${k}: expected a string, found ${kindOf(x)}`);
        }
        if (key === "aliases" && (k === "" || /\s/.test(k))) {
          throw new ConfigError(
            `${where}: aliases: alias name ${JSON.stringify(k)} must not contain whitespace`,
          );
        }
        if (key === "env" && (k === "" || k.includes("=") || k.includes("\0"))) {
          throw new ConfigError(`${where}: env: invalid variable name ${JSON.stringify(k)}`);
        }
        out[k] = x;
      }
      return out;
    }
    case "table":
      if (kindOf(v) !== "table") throw bad();
      return v;
  }
}

/**
 * Check a parsed layer against the schema: returns its leaves (dotted path → normalised value)
 * and pushes a warning for every unknown key.
 */
export function checkLayer(
  where: string,
  tree: Record<string, unknown>,
  base: string,
  env: Record<string, string>,
  warnings: string[],
): Map<string, unknown> {
  const leaves = new Map<string, unknown>();
  const walk = (t: Record<string, unknown>, prefix: string) => {
    for (const [k, v] of Object.entries(t)) {
      const path = prefix ? `${prefix}.${k}` : k;
      const spec = SCHEMA[path];
      if (spec !== undefined) {
        leaves.set(path, checkValue(where, path, spec, v, base, env));
      } else if (TABLE_PATHS.has(path)) {
        if (kindOf(v) !== "table") {
          throw new ConfigError(`${where}: ${path}: expected a table, found ${kindOf(v)}`);
        }
        walk(v as Record<string, unknown>, path);
      } else {
        const near = nearest(path, [...Object.keys(SCHEMA), ...TABLE_PATHS]);
        warnings.push(
          `${where}: unknown config key \`${path}\`` +
            (near === null ? "" : ` (did you mean \`${near}\`?)`),
        );
      }
    }
  };
  walk(tree, "");
  return leaves;
}

/** Parse a boolean override: 1/true/yes/on, 0/false/no/off (any case). */
function envBool(name: string, text: string): boolean {
  const t = text.trim().toLowerCase();
  if (["1", "true", "yes", "on"].includes(t)) return true;
  if (["0", "false", "no", "off"].includes(t)) return false;
  throw new ConfigError(`${name}: expected a boolean (1/true/yes/on or 0/false/no/off)`);
}

/** The `SHOAL_*` layer as leaves. */
function envLayer(sources: ConfigSources): Map<string, unknown> {
  const leaves = new Map<string, unknown>();
  for (const [name, key] of ENV_OVERRIDES) {
    const text = sources.env[name];
    if (text === undefined) continue;
    const spec = SCHEMA[key];
    let v: unknown = text;
    if (spec.kind === "bool") v = envBool(name, text);
    else if (spec.kind === "posint" || spec.kind === "uint") {
      if (!/^\s*\d+\s*$/.test(text)) throw new ConfigError(`${name}: expected an integer`);
      v = Number(text);
    }
    leaves.set(key, checkValue(name, key, spec, v, sources.cwd, sources.env));
  }
  return leaves;
}

/** Resolve the configuration from its layers. Throws {@link ConfigError}. */
export function loadConfig(sources: ConfigSources): LoadedConfig {
  const tree = defaultTree();
  const warnings: string[] = [];
  const layers: string[] = [];
  const files = [
    sources.systemFile ?? "/etc/shoal/shoal.toml",
    userConfigFile(sources.env),
    projectConfigFile(sources.cwd),
  ];
  const apply = (leaves: Map<string, unknown>) => {
    for (const [k, v] of leaves) {
      const spec = SCHEMA[k];
      // Free tables (aliases, env, keybindings, reef.*) merge key by key like any table.
      if (spec.kind === "string_map" || spec.kind === "table") {
        const cur = (k.split(".").reduce<unknown>(
          (t, p) => (t as Record<string, unknown>)[p],
          tree,
        ) ?? {}) as Record<string, unknown>;
        setPath(tree, k, { ...cur, ...(v as Record<string, unknown>) });
      } else setPath(tree, k, v);
    }
  };
  for (const f of files) {
    if (f === null) continue;
    const parsed = readLayer(f);
    if (parsed === null) continue;
    apply(checkLayer(f, parsed, dirname(f), sources.env, warnings));
    layers.push(f);
  }
  const env = envLayer(sources);
  if (env.size > 0) {
    apply(env);
    layers.push("env");
  }
  // no-color.org: a set, non-empty NO_COLOR turns colour off whatever the files say.
  if (sources.env.NO_COLOR) setPath(tree, "render.color", false);
  return { config: tree as unknown as ShoalConfig, warnings, layers };
}
