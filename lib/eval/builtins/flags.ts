/**
 * GNU spellings for the builtins that shadow coreutils (`head`, `ls`, `cat`, `rm`, …): each
 * declares the flags it implements (short and long, valued or not) and the GNU flags it does
 * not, which hand the whole call to the external program. An unknown flag is an `arg_error`
 * with a hint — never silently dropped (issue 13).
 *
 * Flags are read in order from the command's words, so `-n 3`, `-n3`, `--lines=3`,
 * `--lines 3` and `-3` all give `lines = "3"`, and `-rf` is `-r -f`.
 *
 * @module
 */

import type { Span } from "../../syntax/ast.ts";
import { fail } from "../../value/errors.ts";
import type { Value } from "../../value/types.ts";

/** One flag a builtin implements. */
export interface FlagSpec {
  /** The key the builtin reads from `CmdArgs.flags`. */
  key: string;
  /** Single-letter spellings (`"rR"` for `-r` and `-R`). */
  short?: string;
  /** Long spellings as the lexer gives them (`almost_all` for `--almost-all`). */
  long?: string[];
  /** Takes a value: `-n 3`, `-n3`, `--lines=3`, `--lines 3`. */
  value?: string;
  /** What it does (for `help` and `--help`). */
  about: string;
}

/** A builtin's flag table. */
export interface FlagTable {
  /** The flags it implements. */
  own: FlagSpec[];
  /** `-NUM` sets this key to NUM (`head -3`). */
  numeric?: string;
  /** GNU flags it does not implement: with one, the external program runs instead. */
  gnu?: { short: string; long: string[] };
  /** Unknown flags are ordinary words, as GNU `echo` prints `-x`. */
  literalUnknown?: boolean;
  /** Why a GNU flag is refused rather than handed over (`rm -i`: nothing prompts here). */
  refused?: Record<string, string>;
}

/** One command word after evaluation, in order: a flag (as written) or a value. */
export type ArgItem =
  | { k: "short"; chars: string }
  | { k: "long"; name: string; raw: string; value?: Value }
  | { k: "pos"; v: Value };

/** The outcome of reading a command's flags. */
export type FlagResult =
  | { k: "ok"; pos: Value[]; flags: Map<string, Value> }
  | { k: "external"; flag: string }
  | { k: "help" };

const dash = (s: string) => s.replaceAll("_", "-");

/** The flag names of `table` as a reader sees them: `-n N, --lines=N`. */
export function flagUsage(f: FlagSpec): string {
  const v = f.value ? ` ${f.value}` : "";
  const names = [
    ...[...(f.short ?? "")].map((c) => `-${c}${v}`),
    ...(f.long ?? []).map((l) => `--${dash(l)}${f.value ? `=${f.value}` : ""}`),
  ];
  return names.join(", ");
}

/** A flag's first spelling (`-n N`, `--permanent`). */
function firstSpelling(f: FlagSpec): string {
  const v = f.value ? ` ${f.value}` : "";
  return f.short ? `-${f.short[0]}${v}` : `--${dash(f.long![0])}${f.value ? `=${f.value}` : ""}`;
}

/**
 * Read `items` against `table`: the positional values left over and the flags by key, or
 * the GNU flag that sends the call to the external program, or `--help`.
 */
export function readFlags(
  head: string,
  table: FlagTable,
  items: ArgItem[],
  span: Span,
): FlagResult {
  const pos: Value[] = [];
  const flags = new Map<string, Value>();
  const byShort = new Map<string, FlagSpec>();
  const byLong = new Map<string, FlagSpec>();
  for (const f of table.own) {
    for (const c of f.short ?? "") byShort.set(c, f);
    for (const l of f.long ?? []) byLong.set(l, f);
  }
  const gnuShort = table.gnu?.short ?? "";
  const gnuLong = table.gnu?.long ?? [];
  const unknown = (written: string): FlagResult | null => {
    const refused = table.refused?.[written];
    if (refused !== undefined) {
      throw fail("arg_error", `${head}: ${written} is not supported: ${refused}`, null, span);
    }
    throw fail(
      "arg_error",
      `${head}: unknown flag ${written}`,
      `${head} takes ${table.own.map(firstSpelling).join(" ") || "no flags"} ` +
        `(help ${head} lists them); for the system's ${head}: sh { ${head} ${written} … }`,
      span,
    );
  };
  let i = 0;
  /** The next positional word as a flag's value. */
  const next = (written: string): Value => {
    const it = items[i + 1];
    if (it === undefined || it.k !== "pos") {
      throw fail("arg_error", `${head}: ${written} needs a value`, null, span);
    }
    i++;
    return it.v;
  };
  for (; i < items.length; i++) {
    const it = items[i];
    if (it.k === "pos") {
      pos.push(it.v);
      continue;
    }
    if (it.k === "long") {
      const written = `--${it.raw}`;
      if (it.name === "help" && it.value === undefined) return { k: "help" };
      const f = byLong.get(it.name);
      if (f === undefined) {
        if (gnuLong.includes(it.name)) return { k: "external", flag: written };
        if (table.literalUnknown) {
          pos.push(it.value === undefined ? written : `${written}=${it.value}`);
          continue;
        }
        return unknown(written)!;
      }
      if (f.value) flags.set(f.key, it.value ?? next(written));
      else if (it.value !== undefined) {
        throw fail("arg_error", `${head}: ${written} takes no value`, null, span);
      } else flags.set(f.key, true);
      continue;
    }
    // short flags: `-la`, `-n3`, `-3`
    const chars = it.chars;
    if (table.numeric !== undefined && /^[0-9]+$/.test(chars)) {
      flags.set(table.numeric, chars);
      continue;
    }
    for (let j = 0; j < chars.length; j++) {
      const c = chars[j];
      const f = byShort.get(c);
      if (f === undefined) {
        if (gnuShort.includes(c)) return { k: "external", flag: `-${c}` };
        if (table.literalUnknown) {
          pos.push(`-${chars}`);
          break;
        }
        return unknown(`-${c}`)!;
      }
      if (f.value) {
        const rest = chars.slice(j + 1);
        flags.set(f.key, rest !== "" ? rest : next(`-${c}`));
        break;
      }
      flags.set(f.key, true);
    }
  }
  return { k: "ok", pos, flags };
}
