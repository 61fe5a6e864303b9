/**
 * The REPL's line history (subsystems §11): `history.txt` under the state directory (or
 * `history.path`), one entry a line (a multi-line entry keeps its newlines as `\n`), appended as
 * each entry is accepted so two shells never lose each other's lines. An entry is skipped when it
 * equals the one before it (`dedup`, across restarts too), starts with a space (`ignore_space`)
 * or matches a whole-line `*`/`?` pattern (`ignore`). At most `max_entries` are kept: the file is
 * compacted (atomically) when it has grown well past that.
 *
 * This is the editor's recall list, separate from the journal of what ran.
 *
 * @module
 */

import { dirname, join } from "node:path";

/** The `[history]` settings. */
export interface HistoryOptions {
  enabled: boolean;
  /** The history file. */
  path: string;
  max_entries: number;
  dedup: boolean;
  ignore: string[];
  ignore_space: boolean;
}

/** The history file a configuration selects. */
export function historyPath(configured: string | null, stateDir: string): string {
  return configured ?? join(stateDir, "history.txt");
}

function encode(entry: string): string {
  return entry.replaceAll("\\", "\\\\").replaceAll("\n", "\\n").replaceAll("\r", "");
}

function decode(line: string): string {
  return line.replace(/\\(\\|n)/g, (_, c) => (c === "n" ? "\n" : "\\"));
}

/** A whole-line shell pattern (`*`, `?`) as a regular expression. */
function patternRe(p: string): RegExp {
  const body = p.replace(/[.+^${}()|[\]\\]/g, "\\$&").replaceAll("*", ".*").replaceAll("?", ".");
  return new RegExp(`^${body}$`, "s");
}

/** Persistent history (see the module comment). */
export class History {
  /** Entries, oldest first. */
  readonly entries: string[] = [];
  readonly #ignore: RegExp[];
  /** Why the file could not be used (reported once; history then lives in memory only). */
  problem: string | null = null;

  constructor(readonly opts: HistoryOptions) {
    this.#ignore = opts.ignore.map(patternRe);
    if (opts.enabled) this.#load();
  }

  #load(): void {
    let text: string;
    try {
      text = Deno.readTextFileSync(this.opts.path);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) {
        this.problem = `cannot read ${this.opts.path}: ${(e as Error).message}`;
      }
      return;
    }
    const lines = text.split("\n");
    if (lines[lines.length - 1] === "") lines.pop();
    const keep = lines.slice(-this.opts.max_entries).map(decode);
    this.entries.push(...keep);
    // Compact once the file holds a quarter more than it should.
    if (lines.length > this.opts.max_entries * 1.25 + 16) this.#rewrite();
  }

  #rewrite(): void {
    const tmp = `${this.opts.path}.tmp.${Deno.pid}`;
    try {
      Deno.writeTextFileSync(tmp, this.entries.map((e) => encode(e) + "\n").join(""), {
        mode: 0o600,
      });
      Deno.renameSync(tmp, this.opts.path);
    } catch (e) {
      this.problem = `cannot compact ${this.opts.path}: ${(e as Error).message}`;
      try {
        Deno.removeSync(tmp);
      } catch { /* never written */ }
    }
  }

  /** True when `entry` is to be kept under the rules. */
  accepts(entry: string): boolean {
    if (!this.opts.enabled || entry.trim() === "") return false;
    if (this.opts.ignore_space && /^\s/.test(entry)) return false;
    if (this.opts.dedup && this.entries[this.entries.length - 1] === entry) return false;
    return !this.#ignore.some((re) => re.test(entry));
  }

  /** Record `entry` (when the rules keep it); returns whether it was kept. */
  add(entry: string): boolean {
    if (!this.accepts(entry)) return false;
    this.entries.push(entry);
    if (this.entries.length > this.opts.max_entries) this.entries.shift();
    if (this.problem === null) {
      try {
        Deno.mkdirSync(dirname(this.opts.path), { recursive: true, mode: 0o700 });
        Deno.writeTextFileSync(this.opts.path, encode(entry) + "\n", { append: true, mode: 0o600 });
      } catch (e) {
        this.problem = `cannot write ${this.opts.path}: ${(e as Error).message}`;
      }
    }
    return true;
  }
}
