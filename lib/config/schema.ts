/**
 * The `shoal.toml` schema (subsystems §9): every key, its type, default and constraint, in one
 * table. The loader checks each layer against it before merging; `config.get/all` and the
 * hosts read the resolved {@link ShoalConfig}.
 *
 * @module
 */

/** The resolved configuration every host reads. */
export interface ShoalConfig {
  version: number;
  prompt: { template: string };
  history: {
    enabled: boolean;
    max_entries: number;
    path: string | null;
    dedup: boolean;
    ignore: string[];
    ignore_space: boolean;
  };
  render: {
    width: number | null;
    color: boolean;
    paging: "never" | "auto";
    pager: string | null;
    echo: "quiet" | "commands" | "all" | null;
  };
  editor: {
    mode: "emacs" | "vi";
    bracketed_paste: boolean;
    keybindings: Record<string, string>;
  };
  kernel: { enabled: boolean; session: string };
  adapters: { dirs: string[] };
  journal: { enabled: boolean; state_dir: string | null };
  leash: { policy: string | null };
  init: { files: string[] };
  completion: {
    fuzzy: boolean;
    case_insensitive: boolean;
    max_results: number;
    menu: boolean;
  };
  reef: {
    tools: Record<string, unknown>;
    runners: Record<string, unknown>;
    options: { hermetic: boolean };
  };
  aliases: Record<string, string>;
  env: Record<string, string>;
}

/** The value kinds a key can hold. `path`s are strings resolved against their file. */
export type KeyKind =
  | "bool"
  | "uint"
  | "posint"
  | "string"
  | "path"
  | "paths"
  | "strings"
  | "string_map"
  | "table";

/** One schema entry. */
export interface KeySpec {
  kind: KeyKind;
  /** null for optional keys. */
  default: unknown;
  /** Allowed string values. */
  oneOf?: readonly string[];
  nullable?: boolean;
}

/** Every leaf key by dotted path (tables whose members are free, like `aliases`, are leaves). */
export const SCHEMA: Readonly<Record<string, KeySpec>> = {
  "version": { kind: "posint", default: 1 },
  "prompt.template": { kind: "string", default: "{session}{cwd}{git}{status}{jobs} > " },
  "history.enabled": { kind: "bool", default: true },
  "history.max_entries": { kind: "posint", default: 10000 },
  "history.path": { kind: "path", default: null, nullable: true },
  "history.dedup": { kind: "bool", default: true },
  "history.ignore": { kind: "strings", default: [] },
  "history.ignore_space": { kind: "bool", default: true },
  "render.width": { kind: "posint", default: null, nullable: true },
  "render.color": { kind: "bool", default: true },
  "render.paging": { kind: "string", default: "never", oneOf: ["never", "auto"] },
  "render.pager": { kind: "string", default: null, nullable: true },
  "render.echo": {
    kind: "string",
    default: null,
    nullable: true,
    oneOf: ["quiet", "commands", "all"],
  },
  "editor.mode": { kind: "string", default: "emacs", oneOf: ["emacs", "vi"] },
  "editor.bracketed_paste": { kind: "bool", default: true },
  "editor.keybindings": { kind: "string_map", default: {} },
  "kernel.enabled": { kind: "bool", default: true },
  "kernel.session": { kind: "string", default: "default" },
  // Owned by the adapters engineer (issue 18): the catalog directories, in order.
  "adapters.dirs": { kind: "paths", default: [] },
  "journal.enabled": { kind: "bool", default: true },
  "journal.state_dir": { kind: "path", default: null, nullable: true },
  "leash.policy": { kind: "path", default: null, nullable: true },
  "init.files": { kind: "paths", default: [] },
  "completion.fuzzy": { kind: "bool", default: true },
  "completion.case_insensitive": { kind: "bool", default: true },
  "completion.max_results": { kind: "posint", default: 100 },
  "completion.menu": { kind: "bool", default: true },
  // Reparsed by Reef (issue 18): opaque here.
  "reef.tools": { kind: "table", default: {} },
  "reef.runners": { kind: "table", default: {} },
  "reef.options.hermetic": { kind: "bool", default: false },
  "aliases": { kind: "string_map", default: {} },
  "env": { kind: "string_map", default: {} },
};

/** `SHOAL_*` variables and the key each one sets (subsystems §9), in precedence order. */
export const ENV_OVERRIDES: readonly [string, string][] = [
  ["SHOAL_PROMPT", "prompt.template"],
  ["SHOAL_PROMPT_TEMPLATE", "prompt.template"],
  ["SHOAL_HISTORY", "history.enabled"],
  ["SHOAL_HISTORY_ENABLED", "history.enabled"],
  ["SHOAL_HISTORY_MAX_ENTRIES", "history.max_entries"],
  ["SHOAL_HISTORY_FILE", "history.path"],
  ["SHOAL_HISTORY_DEDUP", "history.dedup"],
  ["SHOAL_RENDER_COLOR", "render.color"],
  ["SHOAL_RENDER_WIDTH", "render.width"],
  ["SHOAL_RENDER_PAGING", "render.paging"],
  ["SHOAL_RENDER_PAGER", "render.pager"],
  ["SHOAL_RENDER_ECHO", "render.echo"],
  ["SHOAL_EDITOR_MODE", "editor.mode"],
  ["SHOAL_EDITOR_BRACKETED_PASTE", "editor.bracketed_paste"],
  ["SHOAL_KERNEL", "kernel.enabled"],
  ["SHOAL_KERNEL_ENABLED", "kernel.enabled"],
  ["SHOAL_KERNEL_SESSION", "kernel.session"],
  ["SHOAL_JOURNAL_ENABLED", "journal.enabled"],
  ["SHOAL_JOURNAL_STATE_DIR", "journal.state_dir"],
  ["SHOAL_LEASH_POLICY", "leash.policy"],
  ["SHOAL_COMPLETION_FUZZY", "completion.fuzzy"],
  ["SHOAL_COMPLETION_CASE_INSENSITIVE", "completion.case_insensitive"],
  ["SHOAL_COMPLETION_MAX_RESULTS", "completion.max_results"],
  ["SHOAL_COMPLETION_MENU", "completion.menu"],
];

/** The defaults as a nested plain object (a fresh copy each call). */
export function defaultTree(): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const [path, spec] of Object.entries(SCHEMA)) {
    setPath(root, path, structuredClone(spec.default));
  }
  return root;
}

/** Set `path` (dotted) in a nested object, creating tables on the way. */
export function setPath(root: Record<string, unknown>, path: string, v: unknown): void {
  const parts = path.split(".");
  let t = root;
  for (const p of parts.slice(0, -1)) {
    if (typeof t[p] !== "object" || t[p] === null || Array.isArray(t[p])) t[p] = {};
    t = t[p] as Record<string, unknown>;
  }
  t[parts[parts.length - 1]] = v;
}

/** Every table path the schema knows (`history`, `reef`, `reef.options`, …). */
export const TABLE_PATHS: ReadonlySet<string> = new Set(
  Object.keys(SCHEMA).flatMap((k) => {
    const parts = k.split(".");
    return parts.slice(0, -1).map((_, i) => parts.slice(0, i + 1).join("."));
  }),
);
