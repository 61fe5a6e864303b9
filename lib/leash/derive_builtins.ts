/**
 * The effects of every builtin head (language §14), from its statically known arguments. Paths
 * are absolute (resolved against the cwd the program will be in); an argument that cannot be
 * known makes the builtin `opaque`. `cd` moves the derivation's cwd like it moves the session's.
 *
 * @module
 */

import { basename, join } from "node:path";
import type { Effect } from "./effects.ts";
import type { StaticScope, SV, Walk } from "./derive.ts";

/** A builtin's arguments as derivation knows them. */
export interface BuiltinArgs {
  /** Positional values (globs expanded). */
  pos: SV[];
  /** Flag names (`-r` → `r`, `--permanent` → `permanent`). */
  flags: Set<string>;
  walk: Walk;
  scope: StaticScope;
}

type BuiltinEffects = (a: BuiltinArgs) => SV;

const NONE: SV = { k: "?", maybePath: false };
const PATHISH: SV = { k: "?", maybePath: true };

/** Absolute paths of `vals`, or null (then the builtin is opaque) when one is unknown. */
function paths(a: BuiltinArgs, vals: SV[]): string[] | null {
  const out: string[] = [];
  for (const v of vals) {
    const p = a.walk.pathOf(v);
    if (p === null) return null;
    out.push(p);
  }
  return out;
}

/** Record `kind` over the paths of `vals` (opaque when one is unknown). */
function fs(a: BuiltinArgs, kind: "fs_read" | "fs_write" | "fs_delete", vals: SV[]): string[] {
  const ps = paths(a, vals);
  if (ps === null) {
    a.walk.add({ kind: "opaque" });
    return [];
  }
  if (ps.length) a.walk.add({ kind, paths: ps });
  return ps;
}

/** A directory and everything under it (a recursive copy/move/delete). */
function tree(a: BuiltinArgs, p: string): string[] {
  return a.walk.host.isDir(p) ? [p, join(p, "**")] : [p];
}

function effect(e: Effect): BuiltinEffects {
  return (a) => {
    a.walk.add(e);
    return NONE;
  };
}

const none: BuiltinEffects = () => NONE;

/** `cp`/`mv`: where each source lands. */
function targets(a: BuiltinArgs, srcs: string[], dest: string): string[] {
  const intoDir = srcs.length > 1 || a.walk.host.isDir(dest);
  return srcs.map((s) => (intoDir ? join(dest, basename(s)) : dest));
}

/** Builtin heads → their effects. A registered builtin missing here plans as opaque. */
export const BUILTIN_EFFECTS: Map<string, BuiltinEffects> = new Map([
  ["echo", none],
  ["pwd", () => PATHISH],
  ["dirs", none],
  ["jobs", none],
  ["assert", none],
  ["exit", none],
  ["quit", none],
  ["ls", (a) => {
    const cwd = a.walk.cwd;
    if (a.pos.length) fs(a, "fs_read", a.pos);
    else if (cwd === null) a.walk.add({ kind: "opaque" });
    else a.walk.add({ kind: "fs_read", paths: [cwd] });
    return NONE;
  }],
  ["cat", (a) => (fs(a, "fs_read", a.pos), NONE)],
  ["stat", (a) => (fs(a, "fs_read", a.pos), NONE)],
  ["head", (a) => (fs(a, "fs_read", a.pos.slice(0, 1)), NONE)],
  ["mkdir", (a) => (fs(a, "fs_write", a.pos), NONE)],
  ["touch", (a) => (fs(a, "fs_write", a.pos), NONE)],
  ["cp", (a) => {
    const ps = paths(a, a.pos);
    if (ps === null) return a.walk.add({ kind: "opaque" }), NONE;
    if (ps.length < 2) return NONE; // arg_error: nothing happens
    const srcs = ps.slice(0, -1);
    const recursive = a.flags.has("r") || a.flags.has("R") || a.flags.has("recursive");
    a.walk.add({ kind: "fs_read", paths: srcs.flatMap((s) => (recursive ? tree(a, s) : [s])) });
    const dest = targets(a, srcs, ps[ps.length - 1]);
    const written = dest.flatMap((t, i) =>
      recursive && a.walk.host.isDir(srcs[i]) ? [t, join(t, "**")] : [t]
    );
    a.walk.add({ kind: "fs_write", paths: written });
    return NONE;
  }],
  ["mv", (a) => {
    const ps = paths(a, a.pos);
    if (ps === null) return a.walk.add({ kind: "opaque" }), NONE;
    if (ps.length < 2) return NONE;
    const srcs = ps.slice(0, -1);
    a.walk.add({ kind: "fs_delete", paths: srcs.flatMap((s) => tree(a, s)) });
    const dest = targets(a, srcs, ps[ps.length - 1]);
    a.walk.add({
      kind: "fs_write",
      paths: dest.flatMap((t, i) => (a.walk.host.isDir(srcs[i]) ? [t, join(t, "**")] : [t])),
    });
    return NONE;
  }],
  ["rm", (a) => {
    const ps = paths(a, a.pos);
    if (ps === null) return a.walk.add({ kind: "opaque" }), NONE;
    const recursive = a.flags.has("r") || a.flags.has("R") || a.flags.has("recursive");
    if (ps.length) {
      a.walk.add({ kind: "fs_delete", paths: ps.flatMap((p) => (recursive ? tree(a, p) : [p])) });
    }
    // Into the trash by default (undo can bring it back); --permanent cannot be undone.
    a.walk.rev(a.flags.has("permanent") ? "irreversible" : "conditional");
    return NONE;
  }],
  ["ln", (a) => {
    const ps = paths(a, a.pos);
    if (ps === null) return a.walk.add({ kind: "opaque" }), NONE;
    if (ps.length === 2) a.walk.add({ kind: "fs_write", paths: [ps[1]] });
    return NONE;
  }],
  ["env", (a) => {
    const n = a.pos[0];
    const name = n?.k === "v" && typeof n.v === "string" ? n.v : n === undefined ? "*" : null;
    a.walk.add({ kind: "env_read", names: [name ?? "*"] });
    return NONE;
  }],
  ["sleep", effect({ kind: "time" })],
  ["which", effect({ kind: "env_read", names: ["PATH"] })],
  ["cd", (a) => {
    a.walk.add({ kind: "session_write" });
    const t = a.pos[0];
    if (t === undefined) a.walk.cwd = a.walk.host.env("HOME") ?? null;
    else if (t.k === "v" && t.v === "-") a.walk.cwd = a.walk.host.oldPwd();
    else a.walk.cwd = a.walk.pathOf(t);
    return PATHISH;
  }],
  ...["pushd", "popd", "j", "jump"].map((h): [string, BuiltinEffects] => [h, (a) => {
    a.walk.add({ kind: "session_write" });
    const t = a.pos[0];
    a.walk.cwd = h === "pushd" && t !== undefined ? a.walk.pathOf(t) : null;
    return NONE;
  }]),
  ["run", (a) => a.walk.runTarget(a.pos[0], a.scope)],
  ["source", (a) => a.walk.script(a.pos[0] ? a.walk.pathOf(a.pos[0]) : null, "source", a.scope)],
  ["save", (a) => (fs(a, "fs_write", a.pos.slice(0, 1)), a.pos[1] ?? NONE)],
  ["open", (a) => {
    fs(a, "fs_read", a.pos.slice(0, 1));
    a.walk.add({ kind: "opaque" }); // the host's opener does whatever it does
    return NONE;
  }],
  ["interact", (a) => {
    const argv0 = a.pos[0] ? a.walk.textOf(a.pos[0]) : null;
    a.walk.add({ kind: "proc_spawn", bin_hash: "", argv0: argv0 ?? "" });
    a.walk.add({ kind: "opaque" });
    return NONE;
  }],
  // `undo` restores earlier states of paths the journal knows: which ones is not static.
  ["undo", (a) => {
    a.walk.add({ kind: "journal_read" });
    a.walk.add({ kind: "opaque" });
    return NONE;
  }],
  ["journal", effect({ kind: "journal_read" })],
  ["history", effect({ kind: "journal_read" })],
]);
