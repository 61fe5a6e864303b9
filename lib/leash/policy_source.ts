/**
 * Where a kernel's policies come from: the policy file (`--policy FILE`, else
 * `<state>/policy.toml` when it exists), re-read when it changes. A file that fails to parse
 * is refused with its line and column and the last good policy stays in force; the caller
 * reports that (stderr, the `approval` channel). At start, a missing explicit file or a
 * malformed one is fatal ({@link PolicyLoadError}).
 *
 * @module
 */

import { FileVersion } from "./file_watch.ts";
import { NO_POLICY_FILE, type PolicyFile, PolicySet } from "./policy_set.ts";
import { parsePolicy, type PolicyError } from "./policy_toml.ts";

/** The policy could not be loaded at start (the kernel must not start). */
export class PolicyLoadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PolicyLoadError";
  }
}

/** Options of a {@link PolicySource}. */
export interface PolicySourceOptions {
  /** The policy file, or null for the built-in rule only. */
  path: string | null;
  /** True for `--policy FILE`: the file must exist. */
  explicit: boolean;
  /** The kernel's own principal (`uid:<euid>`). */
  local: string;
  /** `~` in grants (the kernel's HOME). */
  home: string;
}

/** A reload outcome, for the caller to report. */
export type PolicyReload =
  | { ok: true; set: PolicySet }
  | { ok: false; error: PolicyError | Error; kept: PolicySet };

/** The current policy set, refreshed from its file on demand. */
export class PolicySource {
  #set: PolicySet;
  readonly #version: FileVersion | null;
  #generation = 0;

  private constructor(readonly opts: PolicySourceOptions, file: PolicyFile) {
    this.#set = new PolicySet(file, opts.local, opts.home, 0);
    this.#version = opts.path === null ? null : new FileVersion(opts.path);
  }

  /** Load at start; throws {@link PolicyLoadError} with an actionable message. */
  static open(opts: PolicySourceOptions): PolicySource {
    if (opts.path === null) return new PolicySource(opts, NO_POLICY_FILE);
    let text: string | null;
    try {
      text = Deno.readTextFileSync(opts.path);
    } catch (e) {
      // `<state>/policy.toml` may be absent; a state directory that is no directory is for the
      // state-directory check to report.
      const absent = e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotADirectory;
      if (!absent || opts.explicit) {
        throw new PolicyLoadError(
          `cannot read the policy file ${opts.path}: ${(e as Error).message}` +
            (e instanceof Deno.errors.NotFound ? " (create it or drop --policy)" : ""),
        );
      }
      text = null;
    }
    try {
      return new PolicySource(opts, text === null ? NO_POLICY_FILE : parsePolicy(text, opts.path));
    } catch (e) {
      throw new PolicyLoadError(`the policy file is invalid: ${(e as Error).message}`);
    }
  }

  /** The watched file and its signature as last read (null: none is watched). */
  get file(): { path: string; stamp: string } | null {
    return this.#version === null ? null : { path: this.#version.path, stamp: this.#version.stamp };
  }

  /** The policy set in force. */
  get current(): PolicySet {
    return this.#set;
  }

  /**
   * Re-read the file if it changed: the new set, a refusal (the last good set stays), or
   * null when nothing changed. A deleted file falls back to the built-in rule only.
   */
  refresh(): PolicyReload | null {
    if (this.#version === null || !this.#version.changed()) return null;
    const path = this.#version.path;
    let file: PolicyFile;
    try {
      let text: string | null = null;
      try {
        text = Deno.readTextFileSync(path);
      } catch (e) {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
      }
      file = text === null ? NO_POLICY_FILE : parsePolicy(text, path);
    } catch (e) {
      return { ok: false, error: e as Error, kept: this.#set };
    }
    this.#set = new PolicySet(file, this.opts.local, this.opts.home, ++this.#generation);
    return { ok: true, set: this.#set };
  }
}
