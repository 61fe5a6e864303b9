/**
 * The effect vocabulary (protocol §11.1): what a plan says a program will do. Effects are
 * plain JSON (`{kind, …fields}`, snake_case kinds, no `$` tags) so they travel between the
 * session host, the kernel, the journal and clients unchanged.
 *
 * A derived effect list is kept *canonical*: one effect per kind (per host:port, per binary),
 * sorted paths and names, a fixed kind order. Two derivations of the same program in the same
 * state therefore give byte-identical JSON, which is what approved-mode execution compares
 * (D-22).
 *
 * @module
 */

/** Every effect kind, in canonical order. */
export const EFFECT_KINDS = [
  "fs_read",
  "fs_write",
  "fs_delete",
  "proc_spawn",
  "net_connect",
  "net_listen",
  "env_read",
  "env_write",
  "secret_use",
  "session_write",
  "journal_read",
  "time",
  "opaque",
] as const;

/** An effect kind. */
export type EffectKind = typeof EFFECT_KINDS[number];

/** One effect. */
export type Effect =
  | { kind: "fs_read" | "fs_write" | "fs_delete"; paths: string[] }
  | { kind: "proc_spawn"; bin_hash: string; argv0: string }
  | { kind: "net_connect"; host: string; port: number }
  | { kind: "net_listen"; port: number }
  | { kind: "env_read" | "env_write" | "secret_use"; names: string[] }
  | { kind: "session_write" | "journal_read" | "time" | "opaque" };

const ORDER = new Map<string, number>(EFFECT_KINDS.map((k, i) => [k, i]));

/** `fs.write` → `fs_write`; unknown kinds stay as given (lower-cased). */
export function normalizeKind(kind: string): string {
  return kind.trim().toLowerCase().replaceAll(".", "_");
}

/** True for a known kind. */
export function isEffectKind(kind: string): kind is EffectKind {
  return ORDER.has(kind);
}

/**
 * Kinds a client named: strings (`"fs.write"`) or `{kind}` objects, normalised. Returns null
 * when an entry is neither (the caller answers -32602).
 */
export function requestedKinds(list: unknown[]): string[] | null {
  const out: string[] = [];
  for (const e of list) {
    if (typeof e === "string" && e !== "") out.push(normalizeKind(e));
    else if (
      e !== null && typeof e === "object" && !Array.isArray(e) &&
      typeof (e as { kind?: unknown }).kind === "string"
    ) out.push(normalizeKind((e as { kind: string }).kind));
    else return null;
  }
  return out;
}

/**
 * Merge effects into canonical form: fs kinds and name kinds become one effect each with
 * sorted unique members; spawns dedupe by (argv0, bin_hash); connects by host:port; listens by
 * port; flag kinds appear once. Order follows {@link EFFECT_KINDS}.
 */
export function canonicalEffects(effects: Iterable<Effect>): Effect[] {
  // The common case — one builtin, one effect — needs no merging.
  if (Array.isArray(effects) && effects.length <= 1) {
    if (effects.length === 0) return [];
    const e = effects[0] as Effect;
    if ("paths" in e) return [{ kind: e.kind, paths: [...new Set(e.paths)].sort() }];
    if ("names" in e) return [{ kind: e.kind, names: [...new Set(e.names)].sort() }];
    return [e];
  }
  const paths = new Map<string, Set<string>>();
  const names = new Map<string, Set<string>>();
  const spawns = new Map<string, Effect>();
  const connects = new Map<string, Effect>();
  const listens = new Map<number, Effect>();
  const flags = new Set<string>();
  for (const e of effects) {
    switch (e.kind) {
      case "fs_read":
      case "fs_write":
      case "fs_delete": {
        let s = paths.get(e.kind);
        if (!s) paths.set(e.kind, s = new Set());
        for (const p of e.paths) s.add(p);
        break;
      }
      case "env_read":
      case "env_write":
      case "secret_use": {
        let s = names.get(e.kind);
        if (!s) names.set(e.kind, s = new Set());
        for (const n of e.names) s.add(n);
        break;
      }
      case "proc_spawn":
        spawns.set(`${e.argv0}\u0000${e.bin_hash}`, e);
        break;
      case "net_connect":
        connects.set(`${e.host}:${e.port}`, e);
        break;
      case "net_listen":
        listens.set(e.port, e);
        break;
      default:
        flags.add(e.kind);
    }
  }
  const out: Effect[] = [];
  for (const kind of EFFECT_KINDS) {
    switch (kind) {
      case "fs_read":
      case "fs_write":
      case "fs_delete": {
        const s = paths.get(kind);
        if (s && s.size) out.push({ kind, paths: [...s].sort() });
        break;
      }
      case "env_read":
      case "env_write":
      case "secret_use": {
        const s = names.get(kind);
        if (s && s.size) out.push({ kind, names: [...s].sort() });
        break;
      }
      case "proc_spawn":
        out.push(...[...spawns.entries()].sort(([a], [b]) => cmp(a, b)).map(([, e]) => e));
        break;
      case "net_connect":
        out.push(...[...connects.entries()].sort(([a], [b]) => cmp(a, b)).map(([, e]) => e));
        break;
      case "net_listen":
        out.push(...[...listens.entries()].sort(([a], [b]) => a - b).map(([, e]) => e));
        break;
      default:
        if (flags.has(kind)) out.push({ kind } as Effect);
    }
  }
  return out;
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The canonical JSON text of an effect list (equal programs in equal states → equal text). */
export function effectsKey(effects: readonly Effect[]): string {
  return JSON.stringify(canonicalEffects(effects));
}

/** The distinct kinds of an effect list, in canonical order. */
export function effectKinds(effects: readonly Effect[]): string[] {
  return [...new Set(effects.map((e) => e.kind))];
}

/**
 * True when every effect of `inner` is included in some effect of `outer` (same kind, paths /
 * names a subset, same spawn / connect / listen). An `opaque` in `outer` covers nothing but
 * itself: it means "something unknown", not "anything".
 */
export function covers(outer: readonly Effect[], inner: readonly Effect[]): boolean {
  const o = canonicalEffects(outer);
  for (const e of canonicalEffects(inner)) {
    const ok = o.some((x) => {
      if (x.kind !== e.kind) return false;
      if ("paths" in e) return e.paths.every((p) => (x as { paths: string[] }).paths.includes(p));
      if ("names" in e) return e.names.every((n) => (x as { names: string[] }).names.includes(n));
      return JSON.stringify(x) === JSON.stringify(e);
    });
    if (!ok) return false;
  }
  return true;
}

/**
 * Parse effect JSON from an untrusted source (a stored plan, a journal row): well-formed
 * effects only, or null.
 */
export function parseEffects(v: unknown): Effect[] | null {
  if (!Array.isArray(v)) return null;
  const out: Effect[] = [];
  for (const x of v) {
    if (x === null || typeof x !== "object") return null;
    const e = x as Record<string, unknown>;
    const kind = typeof e.kind === "string" ? normalizeKind(e.kind) : "";
    const strs = (k: string) =>
      Array.isArray(e[k]) && (e[k] as unknown[]).every((s) => typeof s === "string")
        ? e[k] as string[]
        : null;
    const port = (k: string) =>
      typeof e[k] === "number" && Number.isInteger(e[k]) && (e[k] as number) >= 0 &&
        (e[k] as number) <= 65535
        ? e[k] as number
        : null;
    switch (kind) {
      case "fs_read":
      case "fs_write":
      case "fs_delete": {
        const paths = strs("paths") ?? (typeof e.path === "string" ? [e.path] : null);
        if (!paths) return null;
        out.push({ kind, paths });
        break;
      }
      case "env_read":
      case "env_write":
      case "secret_use": {
        const names = strs("names");
        if (!names) return null;
        out.push({ kind, names });
        break;
      }
      case "proc_spawn":
        if (typeof e.argv0 !== "string") return null;
        out.push({
          kind,
          argv0: e.argv0,
          bin_hash: typeof e.bin_hash === "string" ? e.bin_hash : "",
        });
        break;
      case "net_connect": {
        const p = port("port");
        if (typeof e.host !== "string" || p === null) return null;
        out.push({ kind, host: e.host, port: p });
        break;
      }
      case "net_listen": {
        const p = port("port");
        if (p === null) return null;
        out.push({ kind, port: p });
        break;
      }
      case "session_write":
      case "journal_read":
      case "time":
      case "opaque":
        out.push({ kind });
        break;
      default:
        return null;
    }
  }
  return out;
}
