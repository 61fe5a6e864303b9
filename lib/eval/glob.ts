/**
 * Glob expansion (language §9.6): the pattern is joined to the glob's origin cwd; matches are
 * absolute paths sorted by their text; `**` recurses; dotfiles are excluded unless the
 * component's pattern starts with `.` or the glob was built with `hidden: true`.
 *
 * @module
 */

import { isAbsolute, join } from "node:path";
import { type GlobV, PathV } from "../value/types.ts";
import { comparePaths } from "../value/compare.ts";
import type { FsPort } from "./fs_port.ts";

/** Translate one path component pattern to a RegExp (`*`, `?`, `[…]`, `[!…]`). */
function componentRegex(pat: string): RegExp {
  let re = "^";
  for (let i = 0; i < pat.length; i++) {
    const c = pat[i];
    if (c === "*") re += "[^/]*";
    else if (c === "?") re += "[^/]";
    else if (c === "[") {
      const end = pat.indexOf("]", i + 2);
      if (end < 0) re += "\\[";
      else {
        let body = pat.slice(i + 1, end);
        if (body.startsWith("!")) body = "^" + body.slice(1);
        re += "[" + body.replace(/\\/g, "\\\\") + "]";
        i = end;
      }
    } else re += c.replace(/[.+^${}()|\\\]]/g, "\\$&");
  }
  return new RegExp(re + "$", "u");
}

const MAGIC = /[*?[]/;

function listDir(fs: FsPort, dir: string): { name: string; isDir: boolean }[] {
  try {
    const out: { name: string; isDir: boolean }[] = [];
    for (const e of fs.readDir(dir)) {
      let isDir = e.isDirectory;
      if (e.isSymlink) {
        try {
          isDir = fs.stat(join(dir, e.name)).isDirectory;
        } catch {
          isDir = false;
        }
      }
      out.push({ name: e.name, isDir });
    }
    return out;
  } catch {
    return [];
  }
}

function exists(fs: FsPort, p: string): boolean {
  try {
    fs.lstat(p);
    return true;
  } catch {
    return false;
  }
}

/** What an expansion left out (filled in when passed to {@link expandGlob}). */
export interface GlobSkips {
  /**
   * Dot-entries skipped (not `hidden`): matches of a pattern component, and directories `**`
   * did not enter (with a trailing `/`), relative to the pattern's base; the first few named.
   */
  names: string[];
  /** How many in all. */
  count: number;
}

/** Dot-entries a {@link GlobSkips} names; the rest are counted. */
const SKIPS_NAMED = 3;

function skipped(skips: GlobSkips | undefined, path: string, dir: boolean): void {
  if (skips === undefined) return;
  if (skips.count++ < SKIPS_NAMED) skips.names.push(dir ? `${path}/` : path);
}

/**
 * Expand a glob to sorted absolute paths (no matches → empty), reading through `fs`; counts
 * in `skips` what the dot-file rule left out (from the entries it read anyway: no extra I/O).
 */
export function expandGlob(g: GlobV, fs: FsPort, skips?: GlobSkips): PathV[] {
  const full = isAbsolute(g.pattern) ? g.pattern : join(g.origin, g.pattern);
  const parts = full.split("/").filter((p, i) => p !== "" || i === 0);
  const results = new Set<string>();
  const walk = (base: string, i: number): void => {
    if (i === parts.length) {
      results.add(base === "" ? "/" : base);
      return;
    }
    const part = parts[i];
    if (part === "") {
      walk("", i + 1);
      return;
    }
    const dir = base === "" ? "/" : base;
    if (part === "**") {
      walk(base, i + 1);
      for (const e of listDir(fs, dir)) {
        if (!e.isDir) continue;
        if (e.name.startsWith(".") && !g.hidden) {
          skipped(skips, join(dir, e.name), true);
          continue;
        }
        walkDeep(join(dir, e.name), i);
      }
      return;
    }
    if (!MAGIC.test(part)) {
      const next = join(dir, part);
      if (i === parts.length - 1 ? exists(fs, next) : true) walk(next, i + 1);
      return;
    }
    const re = componentRegex(part);
    const showHidden = g.hidden || part.startsWith(".");
    for (const e of listDir(fs, dir)) {
      if (e.name.startsWith(".") && !showHidden) {
        if (re.test(e.name) && (i === parts.length - 1 || e.isDir)) {
          skipped(skips, join(dir, e.name), e.isDir);
        }
        continue;
      }
      if (!re.test(e.name)) continue;
      if (i < parts.length - 1 && !e.isDir) continue;
      walk(join(dir, e.name), i + 1);
    }
  };
  /** `**` matched `dir`: try the rest of the pattern here, then recurse. */
  const walkDeep = (dir: string, i: number): void => {
    walk(dir, i + 1);
    for (const e of listDir(fs, dir)) {
      if (!e.isDir) continue;
      if (e.name.startsWith(".") && !g.hidden) {
        skipped(skips, join(dir, e.name), true);
        continue;
      }
      walkDeep(join(dir, e.name), i);
    }
  };
  walk("", 0);
  return [...results].filter((p) => exists(fs, p)).sort(comparePaths).map((p) => new PathV(p));
}
