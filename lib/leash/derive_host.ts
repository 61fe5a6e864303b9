/**
 * What effect derivation needs from a session (protocol §11.1: "derives the plan under the
 * session evaluator"): its cwd, environment and root bindings, which names are commands, and
 * read-only filesystem facts (glob matches, directory tests, script text). `evaluatorHost`
 * builds one over a live evaluator; derivation never changes the session.
 *
 * @module
 */

import { GlobV, PathV, type Value } from "../value/types.ts";
import type { Evaluator } from "../eval/evaluator.ts";
import { getBuiltin } from "../eval/builtins/registry.ts";
import type { Effect } from "./effects.ts";
import type { CmdExpr } from "../syntax/ast.ts";
import { declaredEffects } from "../eval/adapters/mod.ts";

/** Glob matches kept per glob; a glob matching more is planned as its pattern. */
export const MAX_GLOB_MATCHES = 4096;
/** Largest script a derivation reads (bigger: `opaque`). */
export const MAX_SCRIPT_BYTES = 1024 * 1024;

/** A session as derivation sees it (read-only). */
export interface DeriveHost {
  /** The session cwd (absolute). */
  cwd(): string;
  /** One session environment variable. */
  env(name: string): string | undefined;
  /** A root-scope binding's value, or undefined. */
  lookup(name: string): Value | undefined;
  /** A builtin head or an executable on the session PATH (language §7.4). */
  isCommand(name: string): boolean;
  /** A registered builtin head. */
  isBuiltin(name: string): boolean;
  /** Absolute matches of `pattern` (joined to `cwd`), or null when there are too many. */
  expandGlob(pattern: string, cwd: string): string[] | null;
  /** Is `path` an existing directory? */
  isDir(path: string): boolean;
  /** A script's text, or null when unreadable or too big. */
  readScript(path: string): string | null;
  /** `cd -` target. */
  oldPwd(): string | null;
  /**
   * The declared effects of an adapted command (issue 18) — its binary's spawn first — with
   * paths resolved against `cwd` (where the program will be; null: unknown), or null when the
   * command does not run through an adapter: then it is an unknown external (`opaque`).
   */
  adapterEffects?(cmd: CmdExpr, cwd: string | null): Effect[] | null;
}

/** A {@link DeriveHost} over a live evaluator. */
export function evaluatorHost(ev: Evaluator): DeriveHost {
  const fs = ev.ports.fs;
  return {
    cwd: () => ev.cwd(),
    env: (n) => ev.env().get(n),
    lookup: (n) => ev.root.lookup(n)?.v,
    isCommand: (n) => ev.isCommandName(n),
    isBuiltin: (n) => getBuiltin(n) !== undefined,
    expandGlob(pattern, cwd) {
      let hits: readonly Value[];
      try {
        hits = ev.expandGlob(new GlobV(pattern, cwd), null);
      } catch {
        return [];
      }
      if (hits.length > MAX_GLOB_MATCHES) return null;
      return hits.map((h) => (h instanceof PathV ? h.path : String(h)));
    },
    isDir(path) {
      try {
        return fs.stat(path).isDirectory;
      } catch {
        return false;
      }
    },
    readScript(path) {
      try {
        if (fs.stat(path).size > MAX_SCRIPT_BYTES) return null;
        return new TextDecoder("utf-8", { ignoreBOM: true }).decode(fs.readFile(path));
      } catch {
        return null;
      }
    },
    oldPwd: () => ev.oldPwd,
    adapterEffects(cmd, cwd) {
      if (cwd === null) return null;
      try {
        return declaredEffects(ev, cmd, cwd) as Effect[] | null;
      } catch {
        return null; // a call its adapter refuses never spawns: nothing more to plan
      }
    },
  };
}

/**
 * `host` with a record of whether a derivation asked it anything beyond the session's cwd,
 * environment and root bindings — the filesystem (globs, directories, scripts, PATH), the
 * directory stack, adapters. A derivation that did not is a function of (source, cwd,
 * bindings and environment) alone, so it may be remembered under those (see SessionLeash).
 */
export function trackingHost(host: DeriveHost): { host: DeriveHost; volatile: () => boolean } {
  let volatile = false;
  const mark = <A extends unknown[], R>(f: (...a: A) => R) => (...a: A): R => {
    volatile = true;
    return f(...a);
  };
  return {
    host: {
      cwd: () => host.cwd(),
      env: (n) => host.env(n),
      lookup: (n) => host.lookup(n),
      isBuiltin: (n) => host.isBuiltin(n),
      isCommand: mark((n: string) => host.isCommand(n)),
      expandGlob: mark((p: string, c: string) => host.expandGlob(p, c)),
      isDir: mark((p: string) => host.isDir(p)),
      readScript: mark((p: string) => host.readScript(p)),
      oldPwd: mark(() => host.oldPwd()),
      ...(host.adapterEffects
        ? {
          adapterEffects: mark((c: CmdExpr, cwd: string | null) => host.adapterEffects!(c, cwd)),
        }
        : {}),
    },
    volatile: () => volatile,
  };
}
