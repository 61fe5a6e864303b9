/**
 * Finding and merging adapter catalogs (subsystems §7). A catalog is built from directories in
 * order — the bundled `adapters/` of this repository (shipped inside a compiled binary with
 * `--include adapters/`), then each `adapters.dirs` entry of the configuration, then each
 * `SHOAL_ADAPTER_PATH` entry — and **merged** per command head: a later directory's definition
 * of a head replaces the earlier one, every other head stays (upstream replaced the whole
 * catalog with the last directory's). Within one directory files load in sorted order; a head
 * defined twice there keeps the later file's and warns. A malformed file or head is skipped
 * with a warning and its siblings survive.
 *
 * Parsed files are cached per process by path, size and mtime, so a kernel session or a REPL
 * that builds a catalog again pays only the `stat`s.
 *
 * @module
 */

import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse as parseToml, TomlError } from "smol-toml";
import { type AdapterSpec, adapterSpec, SchemaError } from "./schema.ts";

/** The repository's own adapter files. */
export const BUNDLED_DIR: string = fileURLToPath(new URL("../../../adapters/", import.meta.url));

/** A merged set of adapters. */
export class AdapterCatalog {
  private readonly lazyWarnings: string[] = [];

  constructor(
    private readonly specs: Map<string, AdapterSpec>,
    /** Problems found while loading (each names its file). */
    readonly warnings: readonly string[] = [],
    /** Heads of a lazily read directory → their file (parsed on first `get`). */
    private readonly lazy: Map<string, string> = new Map(),
    private readonly warn: (w: string) => void = () => {},
  ) {}

  /** The adapter of `head`, if any. */
  get(head: string): AdapterSpec | undefined {
    const s = this.specs.get(head);
    if (s !== undefined || !this.lazy.has(head)) return s;
    const path = this.lazy.get(head)!;
    this.lazy.delete(head);
    const r = loadPath(path);
    for (const w of r.warnings) this.warn(w);
    for (const spec of r.specs) {
      if (spec.head === head) this.specs.set(head, spec);
      else {this.warn(
          `${path}: defines \`${spec.head}\`; a bundled file defines only the head it is named after`,
        );}
    }
    return this.specs.get(head);
  }

  /** Every adapted head, sorted. */
  heads(): string[] {
    return [...new Set([...this.specs.keys(), ...this.lazy.keys()])].sort();
  }

  /** Number of heads. */
  get size(): number {
    return this.heads().length;
  }
}

/** An empty catalog (hosts without adapters, the conformance run). */
export const NO_ADAPTERS: AdapterCatalog = new AdapterCatalog(new Map());

interface FileResult {
  specs: AdapterSpec[];
  warnings: string[];
}

const fileCache = new Map<string, { size: number; mtime: number; result: FileResult }>();

/** Parse one adapter file (all its `[cmd.*]` heads). */
export function parseAdapterFile(text: string, file: string): FileResult {
  const warnings: string[] = [];
  const specs: AdapterSpec[] = [];
  let doc: Record<string, unknown>;
  try {
    doc = parseToml(text) as Record<string, unknown>;
  } catch (e) {
    const where = e instanceof TomlError ? ` at line ${e.line} column ${e.column}` : "";
    const why = (e as Error).message.split("\n")[0].replace(/^Invalid TOML document: /, "");
    return { specs, warnings: [`${file}: not valid TOML${where}: ${why} (file skipped)`] };
  }
  for (const k of Object.keys(doc)) {
    if (k !== "cmd") warnings.push(`${file}: unknown top-level key \`${k}\` (ignored)`);
  }
  const cmds = doc.cmd;
  if (cmds === undefined) {
    warnings.push(`${file}: no [cmd.<head>] table`);
    return { specs, warnings };
  }
  if (typeof cmds !== "object" || cmds === null || Array.isArray(cmds)) {
    return { specs, warnings: [`${file}: \`cmd\` must be a table (file skipped)`] };
  }
  for (const [head, t] of Object.entries(cmds)) {
    try {
      specs.push(adapterSpec(head, t, file, (w) => warnings.push(`${file}: ${w}`)));
    } catch (e) {
      if (!(e instanceof SchemaError)) throw e;
      warnings.push(`${file}: ${e.message} (\`${head}\` skipped)`);
    }
  }
  return { specs, warnings };
}

/** A file's heads, from the cache when its size and mtime are unchanged. */
function loadPath(path: string): FileResult {
  try {
    return loadFile(path, Deno.statSync(path));
  } catch (e) {
    return { specs: [], warnings: [`${path}: ${(e as Error).message}`] };
  }
}

function loadFile(path: string, info: Deno.FileInfo): FileResult {
  const mtime = info.mtime?.getTime() ?? 0;
  const hit = fileCache.get(path);
  if (hit !== undefined && hit.size === info.size && hit.mtime === mtime) return hit.result;
  let result: FileResult;
  try {
    result = parseAdapterFile(Deno.readTextFileSync(path), path);
  } catch (e) {
    result = { specs: [], warnings: [`${path}: cannot read: ${(e as Error).message}`] };
  }
  fileCache.set(path, { size: info.size, mtime, result });
  return result;
}

/** Most adapter files one directory may hold (a bound on the work a stray directory costs). */
export const MAX_FILES_PER_DIR = 1000;

/** The `*.toml` names of `dir`, sorted (bounded); null when it cannot be read. */
function tomlFiles(dir: string, warnings: string[]): string[] | null {
  const names: string[] = [];
  try {
    for (const e of Deno.readDirSync(dir)) {
      if (e.name.endsWith(".toml") && !e.name.startsWith(".")) names.push(e.name);
    }
  } catch (e) {
    warnings.push(`adapter directory ${dir}: ${(e as Error).message}`);
    return null;
  }
  names.sort();
  if (names.length > MAX_FILES_PER_DIR) {
    warnings.push(
      `adapter directory ${dir}: ${names.length} files, loading the first ${MAX_FILES_PER_DIR}`,
    );
    names.length = MAX_FILES_PER_DIR;
  }
  return names;
}

/** Load one directory's files in sorted order into `into` (later files win). */
function loadDir(dir: string, into: Map<string, AdapterSpec>, warnings: string[]): void {
  const here = new Map<string, string>();
  for (const name of tomlFiles(dir, warnings) ?? []) {
    const path = join(dir, name);
    let info: Deno.FileInfo;
    try {
      info = Deno.statSync(path);
    } catch (e) {
      warnings.push(`${path}: ${(e as Error).message}`);
      continue;
    }
    if (!info.isFile) continue;
    const r = loadFile(path, info);
    warnings.push(...r.warnings);
    for (const s of r.specs) {
      const prev = here.get(s.head);
      if (prev !== undefined) {
        warnings.push(`${path}: \`${s.head}\` is also defined in ${prev}; this one wins`);
      }
      here.set(s.head, path);
      into.set(s.head, s);
    }
  }
}

/** Options of {@link loadCatalog}. */
export interface CatalogOptions {
  /**
   * Read `dirs[0]` lazily: its `HEAD.toml` files are parsed when `HEAD` is first looked up
   * (the bundled directory keeps one head per file, named after it). Warnings of lazy files
   * go to `warn`. Default: every directory is read at once.
   */
  lazyFirst?: boolean;
  warn?: (w: string) => void;
}

/** A catalog from `dirs` in order, merged per head (later directories win). */
export function loadCatalog(dirs: readonly string[], opts: CatalogOptions = {}): AdapterCatalog {
  const specs = new Map<string, AdapterSpec>();
  const warnings: string[] = [];
  const lazy = new Map<string, string>();
  let rest = dirs;
  if (opts.lazyFirst && dirs.length > 0) {
    for (const name of tomlFiles(dirs[0], warnings) ?? []) {
      lazy.set(name.slice(0, -5), join(dirs[0], name));
    }
    rest = dirs.slice(1);
  }
  for (const d of rest) loadDir(d, specs, warnings);
  for (const head of specs.keys()) lazy.delete(head);
  return new AdapterCatalog(specs, warnings, lazy, opts.warn);
}

/**
 * The directories a host loads: the bundled one, the configuration's `adapters.dirs`, then
 * `SHOAL_ADAPTER_PATH` (colon-separated; empty entries ignored). `~/` expands to `home`;
 * other relative entries resolve against `cwd`.
 */
export function catalogDirs(
  configDirs: readonly string[],
  adapterPath: string | undefined,
  cwd: string,
  home: string,
): string[] {
  const fromEnv = (adapterPath ?? "").split(":").filter((d) => d !== "");
  return [BUNDLED_DIR, ...configDirs, ...fromEnv].map((d) =>
    d === "~"
      ? home
      : d.startsWith("~/")
      ? join(home, d.slice(2))
      : d.startsWith("/")
      ? d
      : join(cwd, d)
  );
}
