/**
 * Stable digest of a session environment (D-9): BLAKE3 hex of the JSON of its
 * `[name, value]` pairs sorted by name. Equal environments hash equally
 * whatever their insertion order; the JSON encoding keeps it unambiguous.
 *
 * @module
 */

import { blake3Hex } from "./blake3.ts";
import { invalid } from "./errors.ts";

/** Digest of an environment map. */
export async function envHash(env: Readonly<Record<string, string>>): Promise<string> {
  if (typeof env !== "object" || env === null) throw invalid("envHash expects a name → value map");
  const pairs = Object.keys(env).sort().map((k) => {
    const v = env[k];
    if (typeof v !== "string") throw invalid(`env value of ${k} must be a string`);
    return [k, v];
  });
  return await blake3Hex(JSON.stringify(pairs));
}
