/**
 * Param decoding shared by the method families: each helper throws `-32602` with a message
 * that names the field.
 *
 * @module
 */

import { RPC, RpcError } from "../../client/errors.ts";
import type { ElideSpec } from "../../value/elide.ts";
import type { Conn, P } from "./types.ts";

/** A `-32602` error. */
export const invalid = (msg: string, data?: unknown): RpcError =>
  new RpcError(RPC.INVALID_PARAMS, msg, data);

/** An optional string field. */
export function optString(p: P, key: string): string | undefined {
  const v = p[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") throw invalid(`\`${key}\` must be a string`);
  return v;
}

/** A required string field. */
export function reqString(p: P, key: string, method: string): string {
  const v = optString(p, key);
  if (v === undefined) throw invalid(`${method} requires \`${key}\` (a string)`);
  return v;
}

/** An optional non-negative safe integer. */
export function optUint(p: P, key: string): number | undefined {
  const v = p[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0) {
    throw invalid(`\`${key}\` must be a non-negative integer`);
  }
  return v;
}

/** An optional boolean. */
export function optBool(p: P, key: string): boolean | undefined {
  const v = p[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "boolean") throw invalid(`\`${key}\` must be a boolean`);
  return v;
}

/** An optional `elide` budget object. */
export function optElide(p: P): ElideSpec | null {
  const v = p.elide;
  if (v === undefined || v === null) return null;
  if (typeof v !== "object" || Array.isArray(v)) {
    throw invalid("`elide` must be an object {max_bytes?, max_rows?, max_items?}");
  }
  const e = v as P;
  const out: ElideSpec = {};
  for (const k of ["max_bytes", "max_rows", "max_items"] as const) {
    const n = optUint(e, k);
    if (n !== undefined) out[k] = n;
  }
  return out;
}

/** Resolves "timeout" after `ms` without keeping the process alive. */
export const sleep = (ms: number): Promise<"timeout"> =>
  new Promise<"timeout">((r) => {
    const id = setTimeout(() => r("timeout"), ms);
    Deno.unrefTimer(id);
  });

/**
 * Wait for `p`, or until the connection closes. The wait is one entry in the connection's
 * cleanups, removed when `p` settles (no abort listener per call: every exec waits here).
 */
export function untilClosed(conn: Conn, p: Promise<unknown>): Promise<void> {
  if (conn.closed.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      conn.cleanups.delete(done);
      resolve();
    };
    conn.cleanups.add(done);
    p.then(done, done);
  });
}

/** An optional array of strings. */
export function optStringArray(p: P, key: string): string[] | undefined {
  const v = p[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== "string")) {
    throw invalid(`\`${key}\` must be an array of strings`);
  }
  return v as string[];
}

/** An optional object whose values are all strings. */
export function optStringRecord(p: P, key: string): Record<string, string> | undefined {
  const v = p[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "object" || Array.isArray(v)) {
    throw invalid(`\`${key}\` must be an object of strings`);
  }
  for (const [k, x] of Object.entries(v)) {
    if (typeof x !== "string") throw invalid(`\`${key}.${k}\` must be a string`);
  }
  return v as Record<string, string>;
}
