/**
 * Shared helpers of the store tests: real temp directories, real SQLite files.
 *
 * @module
 */

import assert from "node:assert/strict";
import { openStore, type OpenStoreOptions, type Store, StoreError } from "../../lib/store/mod.ts";

/** Run `fn` with a fresh temp directory, removed afterwards. */
export async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix: "shoal-store-test-" });
  try {
    return await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** Run `fn` with a store opened in a fresh temp state dir; closes it afterwards. */
export async function withStore<T>(
  fn: (store: Store, dir: string) => Promise<T>,
  opts: OpenStoreOptions = {},
): Promise<T> {
  return await withTempDir(async (dir) => {
    const store = await openStore(dir, opts);
    try {
      return await fn(store, dir);
    } finally {
      await store.close();
    }
  });
}

/** Assert that `p` rejects with a StoreError of `code`; returns it. */
export async function rejectsCode(p: Promise<unknown>, code: string): Promise<StoreError> {
  try {
    await p;
  } catch (e) {
    assert(e instanceof StoreError, `expected a StoreError, got ${e}`);
    assert.strictEqual(e.code, code, `expected code ${code}, got ${e.code}: ${e.message}`);
    return e;
  }
  throw new Error(`expected rejection with ${code}, but it resolved`);
}

/** Assert that `fn` throws a StoreError of `code` synchronously. */
export function throwsCode(fn: () => unknown, code: string): StoreError {
  try {
    fn();
  } catch (e) {
    assert(e instanceof StoreError, `expected a StoreError, got ${e}`);
    assert.strictEqual(e.code, code, `expected code ${code}, got ${e.code}: ${e.message}`);
    return e;
  }
  throw new Error(`expected a throw with ${code}`);
}

/** UTF-8 bytes. */
export function utf8(s: string): Uint8Array {
  return new TextEncoder().encode(s);
}

/** `n` random bytes (filled in 64 KiB steps, the getRandomValues limit). */
export function randomBytes(n: number): Uint8Array {
  const b = new Uint8Array(n);
  for (let o = 0; o < n; o += 65536) crypto.getRandomValues(b.subarray(o, Math.min(n, o + 65536)));
  return b;
}

/** A stream that yields `data` in `chunk`-sized pieces. */
export function chunked(data: Uint8Array, chunk: number): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    pull(ctl) {
      if (at >= data.length) return ctl.close();
      ctl.enqueue(data.slice(at, at + chunk));
      at += chunk;
    },
  });
}

/** Both journal modes, for tests that must hold in each. */
export const MODES = ["worker", "inline"] as const;

/** Split a byte stream into text lines (without the newline). */
export function lineStream(bytes: ReadableStream<Uint8Array>): ReadableStream<string> {
  let rest = "";
  return bytes.pipeThrough(new TextDecoderStream()).pipeThrough(
    new TransformStream<string, string>({
      transform(chunk, ctl) {
        const parts = (rest + chunk).split("\n");
        rest = parts.pop() ?? "";
        for (const p of parts) ctl.enqueue(p);
      },
      flush(ctl) {
        if (rest) ctl.enqueue(rest);
      },
    }),
  );
}
