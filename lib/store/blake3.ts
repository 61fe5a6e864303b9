/**
 * The one BLAKE3 interface of Shoal. Everything that hashes (CAS addresses,
 * undo fingerprints, env digests) goes through here, so a faster backend
 * (a native addon, a future WASM SIMD build) can replace `hash-wasm` in one
 * place with {@link setBlake3Backend}.
 *
 * @module
 */

import { createBLAKE3 } from "hash-wasm";

/** An incremental BLAKE3 (256-bit) hasher. */
export interface Blake3Hasher {
  /** Forget everything hashed so far. */
  reset(): void;
  /** Feed bytes. Any size; backends chunk internally. */
  update(data: Uint8Array): void;
  /** Finish and return 64 lowercase hex digits. The hasher must be `reset()` before reuse. */
  digestHex(): string;
}

/** A source of hashers. */
export interface Blake3Backend {
  /** Human-readable name, printed by benchmarks. */
  readonly name: string;
  /** Create an independent hasher. */
  createHasher(): Promise<Blake3Hasher>;
}

// hash-wasm copies each update into WASM memory; feeding at most 1 MiB at a time
// keeps that memory small whatever the caller passes.
const FEED = 1024 * 1024;

/** The default backend: `hash-wasm` (WASM, ~0.5–0.7 GB/s on the reference machine). */
export const hashWasmBackend: Blake3Backend = {
  name: "hash-wasm@4.13.0 (WASM)",
  async createHasher(): Promise<Blake3Hasher> {
    const h = await createBLAKE3();
    h.init();
    return {
      reset() {
        h.init();
      },
      update(data: Uint8Array) {
        for (let o = 0; o < data.length; o += FEED) h.update(data.subarray(o, o + FEED));
      },
      digestHex() {
        return h.digest("hex");
      },
    };
  },
};

let backend: Blake3Backend = hashWasmBackend;
// Idle hashers kept for reuse; creating one instantiates a WASM module.
const pool: Blake3Hasher[] = [];
const POOL_MAX = 8;

/** Replace the process-wide backend (drops pooled hashers of the old one). */
export function setBlake3Backend(b: Blake3Backend): void {
  backend = b;
  pool.length = 0;
}

/** The backend currently in use. */
export function getBlake3Backend(): Blake3Backend {
  return backend;
}

/** Take a fresh hasher (from the pool when possible). Give it back with {@link releaseHasher}. */
export async function acquireHasher(): Promise<Blake3Hasher> {
  const h = pool.pop();
  if (h) {
    h.reset();
    return h;
  }
  return await backend.createHasher();
}

/** Return a hasher to the pool. Never use it afterwards. */
export function releaseHasher(h: Blake3Hasher): void {
  if (pool.length < POOL_MAX) pool.push(h);
}

/** BLAKE3 hex digest of bytes or of a string's UTF-8 encoding. */
export async function blake3Hex(data: Uint8Array | string): Promise<string> {
  const h = await acquireHasher();
  try {
    h.update(typeof data === "string" ? new TextEncoder().encode(data) : data);
    return h.digestHex();
  } finally {
    releaseHasher(h);
  }
}

/** True if `s` is exactly 64 lowercase hex digits (the canonical hash form). */
export function isBlake3Hex(s: string): boolean {
  return /^[0-9a-f]{64}$/.test(s);
}

/**
 * Keyed BLAKE3 (`key`: 32 bytes) hex digest — bearer-token digests (protocol §3.4). Tiny
 * inputs, so it always uses `hash-wasm`'s keyed mode, whatever the bulk backend is.
 */
export async function keyedBlake3Hex(key: Uint8Array, data: Uint8Array | string): Promise<string> {
  if (key.length !== 32) throw new Error("a keyed BLAKE3 key is 32 bytes");
  const h = await createBLAKE3(256, key);
  h.init();
  h.update(typeof data === "string" ? new TextEncoder().encode(data) : data);
  return h.digest("hex");
}
