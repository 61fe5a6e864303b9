/**
 * Versions and constraints (subsystems §6): lenient, not semver.
 *
 * * Constraint: `""`/`*` = any; `latest` = any, preferring the highest (probing unknown
 *   versions to compare them — upstream does not, a listed defect); dotted integers (`22`,
 *   `3.12`, `v22.3`) = numeric prefix; anything else = raw string prefix.
 * * Version order: unknown < opaque < numeric; missing components pad with 0; a prerelease
 *   sorts before its release.
 *
 * @module
 */

/** A tool constraint from a manifest or a `with reef:` block. */
export type Constraint =
  | { kind: "any" }
  | { kind: "latest" }
  | { kind: "numeric"; parts: number[] }
  | { kind: "raw"; text: string };

/** A candidate's version. */
export interface Version {
  /** As reported (`"unknown"` when nothing is known). */
  raw: string;
  kind: "unknown" | "opaque" | "numeric";
  /** Numeric components (numeric versions only). */
  parts: number[];
  /** Prerelease suffix after `-` (numeric versions only), or null. */
  pre: string | null;
}

/** The version of a candidate nobody probed. */
export const UNKNOWN: Version = { raw: "unknown", kind: "unknown", parts: [], pre: null };

/** Dotted integers, each short enough to stay exact as a JS number. */
const NUMERIC = /^v?(\d{1,15}(?:\.\d{1,15})*)$/;
const NUMERIC_VERSION = /^v?(\d{1,15}(?:\.\d{1,15})*)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]*)?$/;

/** Parse a constraint string. */
export function parseConstraint(text: string): Constraint {
  const s = text.trim();
  if (s === "" || s === "*") return { kind: "any" };
  if (s === "latest") return { kind: "latest" };
  const m = NUMERIC.exec(s);
  if (m !== null) return { kind: "numeric", parts: m[1].split(".").map(Number) };
  return { kind: "raw", text: s };
}

/** The canonical text of a constraint (`*`, `latest`, `22.3`, raw text). */
export function renderConstraint(c: Constraint): string {
  switch (c.kind) {
    case "any":
      return "*";
    case "latest":
      return "latest";
    case "numeric":
      return c.parts.join(".");
    case "raw":
      return c.text;
  }
}

/** True when choosing a candidate under `c` needs its concrete version (probe unknown ones). */
export function needsVersion(c: Constraint): boolean {
  return c.kind !== "any";
}

/** Parse a version string; `null`, `""` and `"unknown"` are unknown. */
export function parseVersion(text: string | null | undefined): Version {
  const s = (text ?? "").trim();
  if (s === "" || s === "unknown") return UNKNOWN;
  const m = NUMERIC_VERSION.exec(s);
  if (m === null) return { raw: s, kind: "opaque", parts: [], pre: null };
  return { raw: s, kind: "numeric", parts: m[1].split(".").map(Number), pre: m[2] ?? null };
}

/** The version in `--version` output: the first dotted token, else a bare integer. */
export function extractVersion(output: string): Version {
  const dotted = /(?<![\w.])v?(\d{1,15}(?:\.\d{1,15})+)(-[0-9A-Za-z.]+)?/.exec(output);
  if (dotted !== null) return parseVersion(dotted[1] + (dotted[2] ?? ""));
  const bare = /(?<![\w.-])(\d{1,15})(?![\w.])/.exec(output);
  return bare === null ? UNKNOWN : parseVersion(bare[1]);
}

const RANK = { unknown: 0, opaque: 1, numeric: 2 } as const;

/** Total order of versions (negative: `a` before `b`). */
export function compareVersions(a: Version, b: Version): number {
  if (a.kind !== b.kind) return RANK[a.kind] - RANK[b.kind];
  if (a.kind === "unknown") return 0;
  if (a.kind === "opaque") return a.raw < b.raw ? -1 : a.raw > b.raw ? 1 : 0;
  const n = Math.max(a.parts.length, b.parts.length);
  for (let i = 0; i < n; i++) {
    const d = (a.parts[i] ?? 0) - (b.parts[i] ?? 0);
    if (d !== 0) return d;
  }
  if (a.pre === b.pre) return 0;
  if (a.pre === null) return 1;
  if (b.pre === null) return -1;
  return a.pre < b.pre ? -1 : 1;
}

/** True when a candidate of version `v` satisfies `c`. */
export function satisfies(c: Constraint, v: Version): boolean {
  switch (c.kind) {
    case "any":
    case "latest":
      return true;
    case "numeric":
      if (v.kind !== "numeric") return false;
      return c.parts.every((p, i) => (v.parts[i] ?? 0) === p);
    case "raw":
      return v.kind !== "unknown" && v.raw.startsWith(c.text);
  }
}

/**
 * Combine the nearer constraint `near` with a farther one: the more specific of the two when
 * they are compatible (`22` + `22.3` → `22.3`, `*` + `20` → `20`), or null when they conflict.
 */
export function refine(near: Constraint, far: Constraint): Constraint | null {
  if (far.kind === "any") return near;
  if (near.kind === "any") return far;
  if (far.kind === "latest") return near;
  if (near.kind === "latest") return far;
  if (near.kind === "numeric" && far.kind === "numeric") {
    const n = Math.min(near.parts.length, far.parts.length);
    for (let i = 0; i < n; i++) if (near.parts[i] !== far.parts[i]) return null;
    return near.parts.length >= far.parts.length ? near : far;
  }
  if (near.kind === "raw" && far.kind === "raw") {
    if (near.text.startsWith(far.text)) return near;
    if (far.text.startsWith(near.text)) return far;
    return null;
  }
  return null;
}
