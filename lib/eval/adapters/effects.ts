/**
 * Declared effects of adapters (subsystems §7, protocol §11.1): the `effects` templates of an
 * adapter file and their instances for one call. A template is `kind(term, …)` or a bare
 * `kind`:
 *
 * | template | effect |
 * |---|---|
 * | `fs.read(…)`, `fs.write(…)`, `fs.delete(…)` | `{kind: "fs_read", paths}` — terms are paths: `cwd`, `cwd/x`, `~/x`, `/abs`, `rel` (against the session cwd) |
 * | `net.connect(…)` | `{kind: "net_connect", host, port}` per term — `host:port`, a URL (`https://h/…` → 443), `user@host:path` (ssh → 22), `*` (any host); port 0 = not known |
 * | `net.listen(port)` | `{kind: "net_listen", port}` |
 * | `proc.spawn(name)` | `{kind: "proc_spawn", bin_hash: "", argv0}` |
 * | `env.read(N)`, `env.write(N)`, `secret.use(N)` | `{kind: "env_read", names}` … |
 * | `session.write`, `journal.read`, `time`, `opaque` | `{kind}` |
 *
 * A term `$name` takes the value(s) bound to parameter `name` (a list parameter gives one per
 * element); `$name|term` falls back to `term` when nothing is bound (or when `name` is a switch
 * that is on: `fs.write($remote_name|cwd)`). A term with neither is
 * dropped, and an effect left with no terms is dropped too (`fs.write($output)` without
 * `--output` writes no file). A value not known before running (a `(expr)` argument while a
 * plan is derived) turns its effect into `opaque`.
 *
 * @module
 */

import { isAbsolute, resolve } from "node:path";
import { GlobV, PathV, type Value } from "../../value/types.ts";
import type { EffectInfo } from "../journal_port.ts";

/** A value a plan cannot know before the command runs. */
export const UNKNOWN: unique symbol = Symbol("unknown value");
/** A bound value, or {@link UNKNOWN}. */
export type BoundValue = Value | typeof UNKNOWN;

/** One term of a template. */
interface Term {
  param: string | null;
  literal: string | null;
}

/** A parsed effect template. */
export interface EffectTemplate {
  kind: string;
  terms: Term[];
  text: string;
}

const PATH_KINDS = new Set(["fs_read", "fs_write", "fs_delete"]);
const NAME_KINDS = new Set(["env_read", "env_write", "secret_use"]);
const ARG_KINDS = new Set([
  ...PATH_KINDS,
  ...NAME_KINDS,
  "net_connect",
  "net_listen",
  "proc_spawn",
]);
const BARE_KINDS = new Set(["session_write", "journal_read", "time", "opaque"]);

/** Every effect kind a template may name (dotted spelling). */
export const EFFECT_KINDS: readonly string[] = [...ARG_KINDS, ...BARE_KINDS].map((k) =>
  k.replace("_", ".")
);

/**
 * Parse a template; `params` are the names `$name` may use. Throws an Error whose message is
 * the loader's warning.
 */
export function parseEffect(text: string, params: ReadonlySet<string>): EffectTemplate {
  const m = /^\s*([a-z]+[._][a-z]+|time|opaque)\s*(?:\((.*)\))?\s*$/.exec(text);
  if (!m) throw new Error(`effect \`${text}\` is not \`kind(term, …)\``);
  const kind = m[1].replace(".", "_");
  const body = m[2];
  if (!ARG_KINDS.has(kind) && !BARE_KINDS.has(kind)) {
    throw new Error(`unknown effect kind \`${m[1]}\` (known: ${EFFECT_KINDS.join(", ")})`);
  }
  if (BARE_KINDS.has(kind)) {
    if (body !== undefined && body.trim() !== "") {
      throw new Error(`effect \`${m[1]}\` takes no terms`);
    }
    return { kind, terms: [], text };
  }
  if (body === undefined || body.trim() === "") throw new Error(`effect \`${m[1]}\` needs a term`);
  const terms: Term[] = [];
  for (const raw of body.split(",")) {
    const t = raw.trim();
    const pm = /^\$([A-Za-z_][A-Za-z0-9_]*)(?:\|(.+))?$/.exec(t);
    if (pm) {
      if (!params.has(pm[1])) throw new Error(`effect \`${text}\` uses undeclared \`$${pm[1]}\``);
      terms.push({ param: pm[1], literal: pm[2]?.trim() ?? null });
    } else if (t === "" || t.includes("$")) {
      throw new Error(`effect \`${text}\` has a malformed term \`${t}\``);
    } else terms.push({ param: null, literal: t });
  }
  return { kind, terms, text };
}

/** Where a call runs (path terms resolve against it). `switches`: the call's bool parameters. */
export interface EffectContext {
  cwd: string;
  home: string;
}

function pathTerm(text: string, ctx: EffectContext): string {
  if (text === "cwd") return ctx.cwd;
  if (text.startsWith("cwd/")) return resolve(ctx.cwd, text.slice(4));
  if (text === "~") return ctx.home;
  if (text.startsWith("~/")) return resolve(ctx.home, text.slice(2));
  return isAbsolute(text) ? resolve(text) : resolve(ctx.cwd, text);
}

const DEFAULT_PORTS: Record<string, number> = { https: 443, http: 80, ssh: 22, git: 9418 };

/** `host:port`, a URL, `user@host:path`, a bare host or `*` → host and port (0: unknown). */
export function hostPort(text: string): { host: string; port: number } {
  const url = /^([a-z][a-z0-9+.-]*):\/\/(?:[^@/]*@)?(\[[^\]]+\]|[^:/?#]+)(?::(\d+))?/i.exec(text);
  if (url) {
    const port = url[3] !== undefined ? Number(url[3]) : DEFAULT_PORTS[url[1].toLowerCase()] ?? 0;
    return { host: url[2].toLowerCase(), port };
  }
  const scp = /^(?:[^@/\s]+@)?([^:/\s]+):(?!\d+$)/.exec(text);
  if (scp && text.includes("@")) return { host: scp[1].toLowerCase(), port: 22 };
  const hp = /^(\[[^\]]+\]|[^:\s]+):(\d{1,5})$/.exec(text);
  if (hp && Number(hp[2]) <= 65535) return { host: hp[1].toLowerCase(), port: Number(hp[2]) };
  return { host: text.toLowerCase(), port: 0 };
}

function valueText(v: Value): string {
  if (v instanceof PathV) return v.path;
  if (v instanceof GlobV) return v.pattern;
  return typeof v === "string" ? v : String(v);
}

/** The texts a template's terms stand for in this call (null: one of them is unknown). */
function termTexts(
  t: EffectTemplate,
  bound: ReadonlyMap<string, readonly BoundValue[]>,
  switches: ReadonlySet<string>,
): string[] | null {
  const out: string[] = [];
  for (const term of t.terms) {
    const vals = term.param === null ? [] : bound.get(term.param) ?? [];
    if (vals.length === 0) {
      // An absent switch is off: its fallback stands for it being on.
      if (term.literal !== null && !(term.param !== null && switches.has(term.param))) {
        out.push(term.literal);
      }
      continue;
    }
    for (const v of vals) {
      if (v === UNKNOWN) return null;
      // A switch that is on stands for its fallback (`fs.write($remote_name|cwd)`).
      if (v === true && term.literal !== null) out.push(term.literal);
      if (v === true || v === false || v === null) continue;
      out.push(valueText(v));
    }
  }
  return out;
}

/** The effects of one call: each template with the call's bound values substituted. */
export function instantiateEffects(
  templates: readonly EffectTemplate[],
  bound: ReadonlyMap<string, readonly BoundValue[]>,
  ctx: EffectContext,
  switches: ReadonlySet<string> = new Set(),
): EffectInfo[] {
  const out: EffectInfo[] = [];
  for (const t of templates) {
    if (BARE_KINDS.has(t.kind)) {
      out.push({ kind: t.kind });
      continue;
    }
    const texts = termTexts(t, bound, switches);
    if (texts === null) {
      out.push({ kind: "opaque" });
      continue;
    }
    if (texts.length === 0) continue;
    if (PATH_KINDS.has(t.kind)) {
      out.push({
        kind: t.kind,
        paths: texts.map((x) => pathTerm(x, ctx)),
      });
    } else if (NAME_KINDS.has(t.kind)) out.push({ kind: t.kind, names: texts });
    else if (t.kind === "net_connect") {
      for (const x of texts) out.push({ kind: t.kind, ...hostPort(x) });
    } else if (t.kind === "net_listen") {
      for (const x of texts) out.push({ kind: t.kind, port: /^\d{1,5}$/.test(x) ? Number(x) : 0 });
    } else for (const x of texts) out.push({ kind: "proc_spawn", bin_hash: "", argv0: x });
  }
  return out;
}
