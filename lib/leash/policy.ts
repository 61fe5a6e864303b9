/**
 * Leash policy (protocol §11.4): one principal's grants, compiled for matching, and the
 * verdicts — per effect and per plan — exactly as §11.4 states them.
 *
 * A {@link PolicySpec} is plain JSON, so the kernel can hand each session its principal's
 * policy (and re-send it when the file reloads); the session compiles it once
 * ({@link CompiledPolicy}) and evaluates every exec locally — no kernel round trip per exec.
 *
 * @module
 */

import { basename, normalize } from "node:path";
import { globRegex } from "../eval/streams/fs_sources.ts";
import type { Effect } from "./effects.ts";
import { emptySandboxSpec, parseNetGrant, type SandboxSpec } from "../exec/sandbox_spec.ts";
import type { Reversibility } from "./reversibility.ts";

/** A verdict name. */
export type Verdict = "allow" | "deny" | "approval_required";
/** `auto_apply`: when an all-allowed plan runs without approval. */
export type AutoApply = "never" | "in-grant" | "reversible";
/** `opaque`: what an effect analysis could not make concrete gets. */
export type OpaqueRule = "deny" | "ask" | "allow";
/** `journal_read`: no rows, the principal's own rows, or every row. */
export type JournalRead = "none" | "own" | "all";

/**
 * One principal's policy section, as JSON. Its filesystem, network, spawn and `hermetic` keys
 * are the {@link SandboxSpec} the OS sandbox enforces (issue 16).
 */
export interface PolicySpec extends SandboxSpec {
  env_read: string[];
  env_write: string[];
  secret_use: string[];
  session_write: boolean;
  journal_read: JournalRead;
  time: boolean;
  auto_apply: AutoApply;
  opaque: OpaqueRule;
  /** Principals (besides the person) who may approve this principal's plans. */
  approvers: string[];
  /** This principal may approve its own plans. */
  self_approve: boolean;
}

/** A policy section with nothing granted (the defaults of a section that names no keys). */
export function emptySpec(): PolicySpec {
  return {
    ...emptySandboxSpec(),
    env_read: [],
    env_write: [],
    secret_use: [],
    session_write: false,
    journal_read: "none",
    time: false,
    auto_apply: "never",
    opaque: "deny",
    approvers: [],
    self_approve: false,
  };
}

/**
 * The built-in permissive policy of the person who runs the kernel: every effect allowed,
 * plans applied without approval (D-23 — unlike upstream it also grants network, secrets
 * and spawns).
 */
export function permissiveSpec(): PolicySpec {
  return {
    fs_read: ["/**"],
    fs_write: ["/**"],
    fs_delete: ["/**"],
    net_connect: ["*:*"],
    net_listen: ["*"],
    proc_spawn: [],
    env_read: ["*"],
    env_write: ["*"],
    secret_use: ["*"],
    session_write: true,
    journal_read: "all",
    time: true,
    auto_apply: "in-grant",
    opaque: "allow",
    hermetic: false,
    approvers: [],
    self_approve: true,
  };
}

/** Verdicts of one principal's policy, compiled once. */
export class CompiledPolicy {
  /** Every effect allowed and plans auto-applied: verdicts need no matching. */
  readonly allowAll: boolean;
  readonly #fs: Record<"fs_read" | "fs_write" | "fs_delete", RegExp[]>;
  readonly #net: { host: RegExp; port: number | "*" }[];
  readonly #spawn: Set<string>;

  /** `home` expands `~/` in grants: the kernel's HOME, never the session's (which may change). */
  constructor(readonly spec: PolicySpec, readonly home: string) {
    this.#fs = {
      fs_read: spec.fs_read.map((g) => pathGlob(g, home)),
      fs_write: spec.fs_write.map((g) => pathGlob(g, home)),
      fs_delete: spec.fs_delete.map((g) => pathGlob(g, home)),
    };
    this.#net = spec.net_connect.map(netGrant);
    this.#spawn = new Set(spec.proc_spawn);
    const all = (l: string[], w = "*") => l.includes(w);
    this.allowAll = all(spec.fs_read, "/**") && all(spec.fs_write, "/**") &&
      all(spec.fs_delete, "/**") && all(spec.net_connect, "*:*") &&
      spec.net_listen.includes("*") && spec.proc_spawn.length === 0 &&
      all(spec.env_read) && all(spec.env_write) && all(spec.secret_use) &&
      spec.session_write && spec.time && spec.journal_read !== "none" &&
      spec.opaque === "allow" && spec.auto_apply === "in-grant" && !spec.hermetic;
  }

  /** The verdict for one effect. */
  effectVerdict(e: Effect): Verdict {
    if (this.allowAll) return "allow";
    const yes = (b: boolean): Verdict => (b ? "allow" : "deny");
    switch (e.kind) {
      case "fs_read":
      case "fs_write":
      case "fs_delete": {
        const globs = this.#fs[e.kind];
        return yes(e.paths.every((p) => globs.some((g) => g.test(normalizePath(p, this.home)))));
      }
      case "proc_spawn":
        return yes(this.spawnAllowed(e.argv0, e.bin_hash));
      case "net_connect":
        return yes(
          this.#net.some((g) => g.host.test(e.host) && (g.port === "*" || g.port === e.port)),
        );
      case "net_listen":
        return yes(this.spec.net_listen.some((p) => p === "*" || p === e.port));
      case "env_read":
      case "env_write":
      case "secret_use": {
        const grants = this.spec[e.kind];
        return yes(e.names.every((n) => grants.includes("*") || grants.includes(n)));
      }
      case "session_write":
        return yes(this.spec.session_write);
      case "journal_read":
        return yes(this.spec.journal_read !== "none");
      case "time":
        return yes(this.spec.time);
      case "opaque":
        return this.spec.opaque === "allow"
          ? "allow"
          : this.spec.opaque === "ask"
          ? "approval_required"
          : "deny";
    }
  }

  /** The verdict for a plan: any deny → deny; any approval → approval; then `auto_apply`. */
  planVerdict(effects: readonly Effect[], reversibility: Reversibility): Verdict {
    if (this.allowAll) return "allow";
    let approval = false;
    for (const e of effects) {
      const v = this.effectVerdict(e);
      if (v === "deny") return "deny";
      if (v === "approval_required") approval = true;
    }
    if (approval) return "approval_required";
    switch (this.spec.auto_apply) {
      case "in-grant":
        return "allow";
      case "reversible":
        return reversibility === "reversible" ? "allow" : "approval_required";
      default:
        return "approval_required";
    }
  }

  /** True when spawns are pinned (a non-empty `proc_spawn` list). */
  get pinsSpawns(): boolean {
    return this.#spawn.size > 0;
  }

  /** True when a grant names the binary's hash, its argv0 or its basename (or `*`). */
  spawnAllowed(argv0: string, binHash = ""): boolean {
    if (this.#spawn.size === 0 || this.#spawn.has("*")) return true;
    return (binHash !== "" && this.#spawn.has(binHash)) || this.#spawn.has(argv0) ||
      this.#spawn.has(basename(argv0));
  }

  /** True when some spawn grant is a content hash (the binary must then be hashed). */
  get pinsHashes(): boolean {
    for (const g of this.#spawn) if (/^[0-9a-f]{64}$/.test(g)) return true;
    return false;
  }
}

/** What a normal absolute path never contains: `//`, `/./`, `/../`, a trailing `/` or `/.`. */
const CLEAN_NOT = /\/\/|\/\.\.?(?:\/|$)|.\/$/;

/** `~/x` → `<home>/x`, `..` popped, no trailing slash (lexical only: symlinks are not read). */
export function normalizePath(p: string, home: string): string {
  // Derived paths are already absolute and normal: skip the work for them.
  if (p.charCodeAt(0) === 47 && !CLEAN_NOT.test(p)) return p;
  let s = p === "~" ? home : p.startsWith("~/") ? home + p.slice(1) : p;
  s = normalize(s);
  return s.length > 1 && s.endsWith("/") ? s.slice(0, -1) : s;
}

/** A policy path glob as a RegExp; `dir/**` also matches `dir` itself. */
export function pathGlob(glob: string, home: string): RegExp {
  const g = normalizePath(glob, home);
  const re = globRegex(g);
  if (!g.endsWith("/**") || g === "/**") return re;
  const base = globRegex(g.slice(0, -3));
  return new RegExp(`(?:${re.source})|(?:${base.source})`, "u");
}

/** Is `glob` a usable fs grant (absolute, `~/…`, or `**`-anchored)? */
export function validPathGlob(glob: string): boolean {
  return glob.startsWith("/") || glob === "~" || glob.startsWith("~/") || glob.startsWith("**");
}

/** `host-glob:port` / `host-glob:*` → matcher; throws on a grant without a port. */
export function netGrant(g: string): { host: RegExp; port: number | "*" } {
  const { host, port } = parseNetGrant(g);
  const re = "^" + host.replace(/[.+^${}()|[\]\\]/g, "\\$&").replaceAll("*", ".*")
    .replaceAll("?", ".") +
    "$";
  return { host: new RegExp(re, "i"), port };
}
