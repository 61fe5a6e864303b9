/**
 * Method names that matter to derivation: the path methods that read the filesystem, and the
 * set of every method name some receiver has (a name outside it, called on an unknown value,
 * can only be a function stored in a record field — a dynamic call).
 *
 * @module
 */

import { knownMethods } from "../eval/dispatch.ts";
import type { TypeName } from "../value/types.ts";
import { TYPE_NAMES } from "../syntax/parse_pattern.ts";

/** Path methods that read the filesystem (language §15 step 5). */
export const FS_METHODS: ReadonlySet<string> = new Set([
  "read",
  "read_bytes",
  "lines",
  "exists",
  "is_dir",
  "is_file",
  "size",
  "modified",
]);

/** Methods dispatched outside the per-type tables (language §15 steps 1–11). */
const EXTRA = [
  "pick",
  "emit",
  "events",
  "latest",
  "take",
  "into",
  "render",
  "pattern",
  "expand",
  "tap",
  "also",
  "await",
  "cancel",
  "suspend",
  "resume",
  "is_suspended",
  "done",
  "stdout",
  "stderr",
  "name",
  "stem",
  "ext",
  "parent",
  "join",
  "abs",
  ...FS_METHODS,
];

let all: Set<string> | null = null;

/** Is `name` a method of some receiver type? */
export function isKnownMethod(name: string): boolean {
  if (all === null) {
    all = new Set(EXTRA);
    for (const t of TYPE_NAMES) for (const m of knownMethods(t as TypeName)) all.add(m);
  }
  return all.has(name);
}
