/**
 * Content references: `val:blake3:<hex>` (the protocol's short ref, §9),
 * `blake3:<hex>` (the URI form's tail) and bare hex are all accepted on input;
 * the canonical forms are lowercase hex and `val:blake3:<hex>`.
 *
 * @module
 */

import { StoreError } from "./errors.ts";

/** Prefix of a content reference. */
export const REF_PREFIX = "val:blake3:";

/**
 * Parse a hash or content reference into canonical lowercase hex.
 * @throws {StoreError} `bad_ref` if it is not 64 hex digits after an optional prefix.
 */
export function parseRef(refOrHash: string): string {
  if (typeof refOrHash !== "string") {
    throw new StoreError("bad_ref", "a blob hash must be a string");
  }
  let s = refOrHash.trim();
  if (s.startsWith(REF_PREFIX)) s = s.slice(REF_PREFIX.length);
  else if (s.startsWith("blake3:")) s = s.slice("blake3:".length);
  if (!/^[0-9a-fA-F]{64}$/.test(s)) {
    const shown = refOrHash.length > 80 ? refOrHash.slice(0, 77) + "..." : refOrHash;
    throw new StoreError(
      "bad_ref",
      `not a blob hash: ${JSON.stringify(shown)} (expected 64 hex digits, optionally prefixed by ${
        JSON.stringify(REF_PREFIX)
      })`,
      { ref: shown },
    );
  }
  return s.toLowerCase();
}

/** Format a hash as `val:blake3:<hex>` (validating it). */
export function toRef(hash: string): string {
  return REF_PREFIX + parseRef(hash);
}
