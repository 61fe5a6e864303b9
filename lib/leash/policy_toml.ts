/**
 * The policy file (protocol §11.4): TOML with one `[principal."NAME"]` section per principal.
 *
 * ```toml
 * approvers = ["agent:lead"]            # may approve every principal's plans
 *
 * [principal."agent:reviewer"]
 * fs.read = ["~/project/**", "/usr/**"] # or a nested [principal."agent:reviewer".fs] table
 * fs.write = ["~/project/**"]
 * fs.delete = []
 * net_connect = ["github.com:443"]      # alias: net
 * net_listen = [8080]
 * proc_spawn = ["git", "rg"]            # alias: spawn; empty = spawns are not pinned
 * env_read = ["HOME", "PATH"]           # also env.read / [….env] read
 * env_write = []
 * secret_use = []                       # alias: secrets; also secret.use
 * session_write = true
 * journal_read = true                   # true: own rows; "all": every row; false: none
 * time = true
 * auto_apply = "reversible"             # never (default) | in-grant | reversible
 * opaque = "ask"                        # deny (default) | ask | allow
 * hermetic = false
 * approvers = ["agent:lead"]            # who else may approve this principal's plans
 * self_approve = false                  # may it approve its own plans?
 * ```
 *
 * Namespaces `fs`, `env`, `secret` and `proc` are flattened (`fs.read` ≡ `fs_read`). Every
 * problem — bad TOML, an unknown key, a wrong type — is a {@link PolicyError} with the line
 * and column it is at.
 *
 * @module
 */

import { parse, TomlError } from "smol-toml";
import type { PolicyFile } from "./policy_set.ts";
import { emptySpec, type JournalRead, netGrant, type PolicySpec, validPathGlob } from "./policy.ts";

/** A policy file problem, with where it is (1-based line and column). */
export class PolicyError extends Error {
  constructor(
    message: string,
    readonly line: number,
    readonly column: number,
    readonly file = "policy",
  ) {
    super(`${file}:${line}:${column}: ${message}`);
    this.name = "PolicyError";
  }
}

/** Keys of a section, by their canonical name; aliases map onto them. */
const ALIASES: Record<string, string> = {
  net: "net_connect",
  spawn: "proc_spawn",
  secrets: "secret_use",
  "fs.read": "fs_read",
  "fs.write": "fs_write",
  "fs.delete": "fs_delete",
  "env.read": "env_read",
  "env.write": "env_write",
  "secret.use": "secret_use",
  "proc.spawn": "proc_spawn",
};
const LISTS = new Set([
  "fs_read",
  "fs_write",
  "fs_delete",
  "net_connect",
  "proc_spawn",
  "env_read",
  "env_write",
  "secret_use",
  "approvers",
]);
const BOOLS = new Set(["session_write", "time", "hermetic", "self_approve"]);
const ENUMS: Record<string, string[]> = {
  auto_apply: ["never", "in-grant", "reversible"],
  opaque: ["deny", "ask", "allow"],
};
const NAMESPACES = new Set(["fs", "env", "secret", "proc"]);
const KEYS = [...LISTS, ...BOOLS, ...Object.keys(ENUMS), "net_listen", "journal_read"];

/** Parse policy TOML; throws {@link PolicyError}. */
export function parsePolicy(text: string, file = "policy"): PolicyFile {
  let doc: Record<string, unknown>;
  try {
    doc = parse(text) as Record<string, unknown>;
  } catch (e) {
    if (e instanceof TomlError) {
      throw new PolicyError(e.message.split("\n")[0], e.line, e.column, file);
    }
    throw e;
  }
  const where = locator(text);
  const fail = (path: string[], msg: string): never => {
    const [line, col] = where(path);
    throw new PolicyError(msg, line, col, file);
  };
  const out: PolicyFile = { approvers: [], principals: {} };
  for (const [k, v] of Object.entries(doc)) {
    if (k === "approvers") out.approvers = strings(v, ["approvers"], fail);
    else if (k === "principal") {
      if (!isTable(v)) {
        fail(["principal"], '`principal` must be a table of [principal."NAME"] sections');
      }
      for (const [name, sec] of Object.entries(v as Record<string, unknown>)) {
        if (name === "") fail(["principal", name], "a principal name must not be empty");
        if (!isTable(sec)) {
          fail(["principal", name], `[principal.${JSON.stringify(name)}] must be a table`);
        }
        out.principals[name] = section(name, sec as Record<string, unknown>, fail);
      }
    } else {
      fail(
        [k],
        `unknown top-level key \`${k}\` (expected \`approvers\` or [principal."NAME"] sections)`,
      );
    }
  }
  return out;
}

type Fail = (path: string[], msg: string) => never;

function isTable(v: unknown): boolean {
  return v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof Date);
}

function strings(v: unknown, path: string[], fail: Fail): string[] {
  if (!Array.isArray(v) || !v.every((x) => typeof x === "string")) {
    fail(path, `\`${path.at(-1)}\` must be a list of strings`);
  }
  return v as string[];
}

/** Flatten `fs = {read = …}` tables into dotted keys, keeping each key's TOML path. */
function flatKeys(sec: Record<string, unknown>, base: string[], fail: Fail) {
  const out: { key: string; value: unknown; path: string[] }[] = [];
  for (const [k, v] of Object.entries(sec)) {
    if (NAMESPACES.has(k) && isTable(v)) {
      for (const [k2, v2] of Object.entries(v as Record<string, unknown>)) {
        out.push({ key: `${k}.${k2}`, value: v2, path: [...base, k, k2] });
      }
    } else if (NAMESPACES.has(k) && !KEYS.includes(k)) {
      fail([...base, k], `\`${k}\` must be a table (e.g. ${k}.read = […])`);
    } else out.push({ key: k, value: v, path: [...base, k] });
  }
  return out;
}

function section(name: string, sec: Record<string, unknown>, fail: Fail): PolicySpec {
  const spec = emptySpec();
  const seen = new Map<string, string>();
  for (const { key, value, path } of flatKeys(sec, ["principal", name], fail)) {
    const canon = ALIASES[key] ?? key;
    if (!KEYS.includes(canon)) {
      fail(
        path,
        `unknown key \`${key}\` in [principal.${JSON.stringify(name)}]; known keys: ` +
          `${[...KEYS, ...Object.keys(ALIASES)].join(", ")}`,
      );
    }
    const prior = seen.get(canon);
    if (prior !== undefined) fail(path, `\`${key}\` repeats \`${prior}\` (the same setting)`);
    seen.set(canon, key);
    if (LISTS.has(canon)) {
      const list = strings(value, path, fail);
      if (canon.startsWith("fs_")) {
        for (const g of list) {
          if (!validPathGlob(g)) {
            fail(path, `fs glob ${JSON.stringify(g)} must be absolute, start with ~/ or **`);
          }
        }
      }
      if (canon === "net_connect") {
        for (const g of list) {
          try {
            netGrant(g);
          } catch (e) {
            fail(path, (e as Error).message);
          }
        }
      }
      (spec as unknown as Record<string, string[]>)[canon] = list;
    } else if (BOOLS.has(canon)) {
      if (typeof value !== "boolean") fail(path, `\`${key}\` must be true or false`);
      (spec as unknown as Record<string, boolean>)[canon] = value as boolean;
    } else if (canon in ENUMS) {
      if (typeof value !== "string" || !ENUMS[canon].includes(value)) {
        fail(path, `\`${key}\` must be one of ${ENUMS[canon].map((s) => `"${s}"`).join(", ")}`);
      }
      (spec as unknown as Record<string, string>)[canon] = value as string;
    } else if (canon === "net_listen") {
      if (
        !Array.isArray(value) ||
        !value.every((p) =>
          p === "*" || (typeof p === "number" || typeof p === "bigint") && Number(p) >= 0 &&
            Number(p) <= 65535 && Number.isInteger(Number(p))
        )
      ) fail(path, '`net_listen` must be a list of ports (0–65535) or "*"');
      spec.net_listen = (value as unknown[]).map((p) => (p === "*" ? "*" : Number(p)));
    } else if (canon === "journal_read") {
      const j: JournalRead | null = value === true
        ? "own"
        : value === false
        ? "none"
        : value === "all" || value === "own" || value === "none"
        ? value
        : null;
      if (j === null) fail(path, '`journal_read` must be true (own rows), false, or "all"');
      spec.journal_read = j!;
    }
  }
  return spec;
}

// ---- positions ------------------------------------------------------------------------------

/** Split a TOML header or dotted key into segments (quoted segments keep their dots). */
function segments(s: string): string[] {
  const out: string[] = [];
  let cur = "";
  let quote: string | null = null;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (quote) {
      if (c === "\\" && quote === '"') {
        cur += s[++i] ?? "";
      } else if (c === quote) quote = null;
      else cur += c;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === ".") {
      out.push(cur.trim());
      cur = "";
    } else cur += c;
  }
  out.push(cur.trim());
  return out;
}

/** A function from a TOML path to the [line, column] of its key (best effort; 1,1 if absent). */
function locator(text: string): (path: string[]) => [number, number] {
  const lines = text.split("\n");
  const entries: { path: string[]; line: number; col: number }[] = [];
  let header: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i];
    const t = raw.trim();
    if (t.startsWith("[")) {
      const m = /^\[\[?\s*(.+?)\s*\]\]?/.exec(t);
      if (m) {
        header = segments(m[1]);
        entries.push({ path: header, line: i + 1, col: raw.indexOf("[") + 1 });
      }
      continue;
    }
    const m = /^(\s*)([^=#\s][^=#]*?)\s*=/.exec(raw);
    if (m) {
      entries.push({ path: [...header, ...segments(m[2])], line: i + 1, col: m[1].length + 1 });
    }
  }
  const eq = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i]);
  return (path) => {
    for (let n = path.length; n > 0; n--) {
      const hit = entries.find((e) => eq(e.path, path.slice(0, n)));
      if (hit) return [hit.line, hit.col];
    }
    return [1, 1];
  };
}
