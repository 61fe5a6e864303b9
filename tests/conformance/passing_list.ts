/**
 * The ratchet list `passing.txt` (one case name per line; blank lines and `#` comments are
 * ignored) and the check of a run against it.
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import type { CaseRecord } from "./harness.ts";

/** The ratchet list beside this module. */
export const PASSING_LIST = fileURLToPath(new URL("./passing.txt", import.meta.url));

/** Parses the text of a ratchet list into case names, in order. */
export function parsePassingList(text: string): string[] {
  return text.split("\n").map((l) => l.trim()).filter((l) => l !== "" && !l.startsWith("#"));
}

/** What a run says about a ratchet list. */
export interface RatchetCheck {
  /** One line per listed case that is unknown or does not pass. */
  problems: string[];
  /** Passing cases the list does not name yet. */
  unlisted: string[];
}

/** Compares a run's records with the listed names. */
export function checkRatchet(listed: string[], results: CaseRecord[]): RatchetCheck {
  const byName = new Map(results.map((r) => [r.name, r]));
  const problems: string[] = [];
  for (const name of listed) {
    const r = byName.get(name);
    if (!r) problems.push(`${name}: not in the corpus (remove it from passing.txt)`);
    else if (r.status !== "pass") {
      problems.push(`${r.suite}/${name}: ${r.status}: expected ${r.expected}, got ${r.got}`);
    }
  }
  const known = new Set(listed);
  const unlisted = results.filter((r) => r.status === "pass" && !known.has(r.name));
  return { problems, unlisted: unlisted.map((r) => r.name) };
}
