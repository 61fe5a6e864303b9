/**
 * The bearer-token store, `tokens.json` (protocol §3.4):
 *
 * ```json
 * {"version": 1, "key": "<base64 of 32 random bytes>",
 *  "tokens": [{"id": "<16 hex>", "principal": "agent:ci", "profile": "ci", "caps": ["fs.read"],
 *              "created_ns": 0, "expires_ns": null, "revoked_ns": null, "digest": "<64 hex>"}]}
 * ```
 *
 * A bearer is 32 random bytes, base64url without padding (43 characters), shown once and never
 * stored: the store keeps its keyed BLAKE3 digest, and the id is the digest's first 8 bytes.
 * Validation compares digests in constant time and rejects revoked or expired tokens.
 *
 * Every change (create, revoke) holds an exclusive lock on `<store>.lock` across a fresh read,
 * the mutation and an atomic replace (`tokens.tmp.<pid>` created exclusively with mode 0600,
 * fsync, rename), so concurrent writers never lose each other's updates (D-16). Readers take
 * the shared lock and re-read the file whenever its stat signature changed, so a kernel sees a
 * new or revoked token without a restart. A store that does not parse fails closed: nothing
 * validates and nothing is written until it is fixed.
 *
 * @module
 */

import { basename, dirname, join } from "node:path";
import { keyedBlake3Hex } from "../store/blake3.ts";
import { FileVersion } from "./file_watch.ts";

/** One token's metadata (the bearer itself is never stored). */
export interface TokenRecord {
  id: string;
  principal: string;
  profile: string;
  caps: string[];
  created_ns: number;
  expires_ns: number | null;
  revoked_ns: number | null;
  digest: string;
}

interface StoreFile {
  version: 1;
  key: string;
  tokens: TokenRecord[];
}

/** Bounds of a store (a file past them is refused whole). */
export const TOKEN_LIMITS = {
  fileBytes: 4 * 1024 * 1024,
  tokens: 4096,
  principalBytes: 256,
  profileBytes: 128,
  caps: 128,
  capBytes: 128,
} as const;

/** A store problem: unreadable/invalid file, bad input, unknown id. */
export class TokenStoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TokenStoreError";
  }
}

/** Why a bearer did not validate. */
export type InvalidReason = "unknown" | "revoked" | "expired" | "malformed";

const te = new TextEncoder();
const BEARER = /^[A-Za-z0-9_-]{43}$/;

const nowNs = () => Date.now() * 1_000_000;

/** A token store file. */
export class TokenStore {
  #file: StoreFile | null = null;
  #key: Uint8Array | null = null;
  /** Why the file is unusable (fail closed), or null. */
  #broken: string | null = null;
  readonly #version: FileVersion;
  #loaded = false;

  constructor(readonly path: string) {
    this.#version = new FileVersion(path);
  }

  get #lockPath(): string {
    return `${this.path}.lock`;
  }

  /** Run `f` under the store lock (exclusive for writers). */
  async #locked<T>(exclusive: boolean, f: () => Promise<T>): Promise<T> {
    await Deno.mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    const lock = await Deno.open(this.#lockPath, {
      read: true,
      write: true,
      create: true,
      mode: 0o600,
    });
    try {
      await lock.lock(exclusive);
      return await f();
    } finally {
      try {
        await lock.unlock();
      } catch { /* closing releases it too */ }
      lock.close();
    }
  }

  /** Read and check the file (null when absent). Throws TokenStoreError when invalid. */
  async #read(): Promise<StoreFile | null> {
    let bytes: Uint8Array;
    try {
      const st = await Deno.stat(this.path);
      if (st.size > TOKEN_LIMITS.fileBytes) {
        throw new TokenStoreError(
          `${this.path} is ${st.size} bytes, over the ${TOKEN_LIMITS.fileBytes}-byte limit`,
        );
      }
      if (st.mode !== null && (st.mode & 0o077) !== 0) await Deno.chmod(this.path, 0o600);
      bytes = await Deno.readFile(this.path);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return null;
      if (e instanceof TokenStoreError) throw e;
      throw new TokenStoreError(`cannot read ${this.path}: ${(e as Error).message}`);
    }
    let doc: unknown;
    try {
      doc = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
    } catch (e) {
      throw new TokenStoreError(`${this.path} is not valid JSON: ${(e as Error).message}`);
    }
    return checkFile(doc, this.path);
  }

  /** Re-read the file if it changed since the last look (shared lock). */
  async refresh(): Promise<void> {
    if (this.#loaded && !this.#version.changed() && !this.#stale) return;
    if (!this.#loaded) this.#version.changed();
    this.#loaded = true;
    this.#stale = false;
    try {
      const f = await this.#locked(false, () => this.#read());
      this.#file = f;
      this.#key = f ? Uint8Array.fromBase64(f.key) : null;
      this.#broken = null;
    } catch (e) {
      this.#file = null;
      this.#key = null;
      this.#broken = (e as Error).message;
    }
  }

  /** Why the store is unusable, or null. */
  get problem(): string | null {
    return this.#broken;
  }

  /** The record a bearer belongs to, or why it does not validate. */
  async validate(bearer: string): Promise<TokenRecord | InvalidReason> {
    await this.refresh();
    if (this.#broken !== null) throw new TokenStoreError(this.#broken);
    if (!BEARER.test(bearer)) return "malformed";
    if (!this.#file || !this.#key) return "unknown";
    const digest = await keyedBlake3Hex(this.#key, bearer);
    let hit: TokenRecord | null = null;
    for (const t of this.#file.tokens) if (constantTimeEqual(t.digest, digest)) hit = t;
    if (!hit) return "unknown";
    if (hit.revoked_ns !== null) return "revoked";
    if (hit.expires_ns !== null && !(hit.expires_ns > nowNs())) return "expired";
    return hit;
  }

  /** Is the token `id` still valid (not revoked, not expired, still in the store)? */
  async stillValid(id: string): Promise<boolean> {
    await this.refresh();
    return this.#valid(id);
  }

  /**
   * {@link stillValid} without waiting when the file did not change since the last look (the
   * per-request check of a token attachment); null when it changed and must be re-read.
   */
  stillValidNow(id: string): boolean | null {
    if (!this.#loaded || this.#version.changed()) {
      this.#stale = true;
      return null;
    }
    if (this.#stale) return null;
    return this.#valid(id);
  }

  /** Set when a change was seen but not yet re-read (the next `refresh` re-reads). */
  #stale = false;

  #valid(id: string): boolean {
    if (this.#broken !== null || !this.#file) return false;
    const t = this.#file.tokens.find((x) => x.id === id);
    return !!t && t.revoked_ns === null && (t.expires_ns === null || t.expires_ns > nowNs());
  }

  /** Every record (fresh read). */
  async list(): Promise<TokenRecord[]> {
    const f = await this.#locked(false, () => this.#read());
    return f?.tokens ?? [];
  }

  /**
   * Create a token; the bearer is returned once. `ttlSeconds` ≤ 0 makes it born expired;
   * undefined means it never expires.
   */
  async create(
    principal: string,
    profile = "default",
    caps: string[] = [],
    ttlSeconds?: number,
  ): Promise<{ bearer: string; record: TokenRecord }> {
    checkInput(principal, profile, caps);
    return await this.#locked(true, async () => {
      const f = (await this.#read()) ?? {
        version: 1 as const,
        key: crypto.getRandomValues(new Uint8Array(32)).toBase64(),
        tokens: [],
      };
      if (f.tokens.length >= TOKEN_LIMITS.tokens) {
        throw new TokenStoreError(
          `the store already holds ${TOKEN_LIMITS.tokens} tokens (the limit); revoke and prune some`,
        );
      }
      const key = Uint8Array.fromBase64(f.key);
      let bearer: string;
      let digest: string;
      do {
        bearer = crypto.getRandomValues(new Uint8Array(32)).toBase64({
          alphabet: "base64url",
          omitPadding: true,
        });
        digest = await keyedBlake3Hex(key, bearer);
      } while (f.tokens.some((t) => t.digest === digest || t.id === digest.slice(0, 16)));
      const created = nowNs();
      const record: TokenRecord = {
        id: digest.slice(0, 16),
        principal,
        profile,
        caps: [...caps],
        created_ns: created,
        expires_ns: ttlSeconds === undefined
          ? null
          : Math.min(Number.MAX_SAFE_INTEGER * 1024, created + Math.floor(ttlSeconds * 1e9)),
        revoked_ns: null,
        digest,
      };
      f.tokens.push(record);
      await this.#write(f);
      return { bearer, record };
    });
  }

  /** Revoke token `id` (idempotent). Throws TokenStoreError for an unknown id. */
  async revoke(id: string): Promise<TokenRecord> {
    return await this.#locked(true, async () => {
      const f = await this.#read();
      const t = f?.tokens.find((x) => x.id === id);
      if (!f || !t) throw new TokenStoreError(`no token with id ${id} in ${this.path}`);
      t.revoked_ns ??= nowNs();
      await this.#write(f);
      return t;
    });
  }

  /** Replace the file atomically: exclusive 0600 temp file, fsync, rename (lock held). */
  async #write(f: StoreFile): Promise<void> {
    const name = basename(this.path).replace(/\.json$/, "") || "tokens";
    const tmp = join(dirname(this.path), `${name}.tmp.${Deno.pid}`);
    const data = te.encode(JSON.stringify(f, null, 2) + "\n");
    for (let attempt = 0;; attempt++) {
      try {
        const h = await Deno.open(tmp, { write: true, createNew: true, mode: 0o600 });
        try {
          for (let off = 0; off < data.length;) off += await h.write(data.subarray(off));
          await h.sync();
        } finally {
          h.close();
        }
        break;
      } catch (e) {
        // A temp file of this pid can only be a leftover of an earlier crash (we hold the lock).
        if (e instanceof Deno.errors.AlreadyExists && attempt === 0) {
          await Deno.remove(tmp).catch(() => {});
          continue;
        }
        throw new TokenStoreError(`cannot write ${tmp}: ${(e as Error).message}`);
      }
    }
    try {
      await Deno.rename(tmp, this.path);
    } catch (e) {
      await Deno.remove(tmp).catch(() => {});
      throw new TokenStoreError(`cannot replace ${this.path}: ${(e as Error).message}`);
    }
  }
}

function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let d = 0;
  for (let i = 0; i < a.length; i++) d |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return d === 0;
}

function checkInput(principal: string, profile: string, caps: string[]): void {
  const len = (s: string) => te.encode(s).length;
  if (principal === "" || len(principal) > TOKEN_LIMITS.principalBytes || /\s/.test(principal)) {
    throw new TokenStoreError(
      `principal must be 1–${TOKEN_LIMITS.principalBytes} bytes without spaces (e.g. agent:ci)`,
    );
  }
  if (profile === "" || len(profile) > TOKEN_LIMITS.profileBytes) {
    throw new TokenStoreError(`profile must be 1–${TOKEN_LIMITS.profileBytes} bytes`);
  }
  if (
    caps.length > TOKEN_LIMITS.caps || caps.some((c) => c === "" || len(c) > TOKEN_LIMITS.capBytes)
  ) {
    throw new TokenStoreError(
      `at most ${TOKEN_LIMITS.caps} caps of 1–${TOKEN_LIMITS.capBytes} bytes each`,
    );
  }
}

/** Validate a parsed store; throws TokenStoreError naming the first problem. */
function checkFile(doc: unknown, path: string): StoreFile {
  const bad = (why: string): never => {
    throw new TokenStoreError(`${path} is not a valid token store: ${why}`);
  };
  if (doc === null || typeof doc !== "object" || Array.isArray(doc)) bad("expected an object");
  const d = doc as Record<string, unknown>;
  if (d.version !== 1) bad(`unsupported version ${JSON.stringify(d.version)} (expected 1)`);
  if (typeof d.key !== "string") bad("`key` must be a base64 string");
  let key: Uint8Array;
  try {
    key = Uint8Array.fromBase64(d.key as string);
  } catch {
    return bad("`key` is not base64");
  }
  if (key.length !== 32) bad("`key` must encode 32 bytes");
  if (!Array.isArray(d.tokens)) bad("`tokens` must be a list");
  const tokens = d.tokens as unknown[];
  if (tokens.length > TOKEN_LIMITS.tokens) bad(`more than ${TOKEN_LIMITS.tokens} tokens`);
  const ids = new Set<string>();
  for (const [i, x] of tokens.entries()) {
    const t = x as Record<string, unknown>;
    const at = `tokens[${i}]`;
    if (t === null || typeof t !== "object") bad(`${at} must be an object`);
    if (typeof t.id !== "string" || !/^[0-9a-f]{16}$/.test(t.id)) bad(`${at}.id must be 16 hex`);
    if (typeof t.digest !== "string" || !/^[0-9a-f]{64}$/.test(t.digest)) {
      bad(`${at}.digest must be 64 hex`);
    }
    if ((t.digest as string).slice(0, 16) !== t.id) bad(`${at}.id does not match its digest`);
    if (ids.has(t.id as string)) bad(`${at}.id repeats another token's id`);
    ids.add(t.id as string);
    if (typeof t.principal !== "string" || t.principal === "") bad(`${at}.principal`);
    if (typeof t.profile !== "string") bad(`${at}.profile`);
    if (!Array.isArray(t.caps) || !t.caps.every((c) => typeof c === "string")) bad(`${at}.caps`);
    if (typeof t.created_ns !== "number") bad(`${at}.created_ns`);
    for (const k of ["expires_ns", "revoked_ns"]) {
      if (t[k] !== null && typeof t[k] !== "number") bad(`${at}.${k} must be a number or null`);
    }
  }
  return d as unknown as StoreFile;
}
