/**
 * Content-addressed blob store: `<dir>/<hh>/<rest-of-hex>`, BLAKE3 of the
 * logical bytes as the address, one header + payload file per blob
 * (see `blob_format.ts`).
 *
 * Guarantees:
 * - writes are atomic (temp file on the same filesystem, then rename) and
 *   idempotent (a second put of the same bytes touches the existing file);
 * - a put that resolved survives the process being killed; with `fsync: true`
 *   it also survives a power loss (file and directory are fsynced before it
 *   resolves). fsync costs ~10 ms per put on the reference disk, so it is off
 *   by default and meant for bytes that exist nowhere else (undo snapshots);
 *   an unsynced blob torn by a power loss reads as `blob_corrupt`, never as
 *   wrong data, and the next put of its content replaces it;
 * - every read is verified against the address, so a damaged file is a
 *   `blob_corrupt` error, never wrong data; `getRange` verifies the whole blob
 *   once per (inode, size, mtime, ctime) and caches that for the process;
 * - memory is bounded: streams are hashed and written chunk by chunk, reads
 *   are capped at {@link BLOB_READ_CAP}.
 *
 * @module
 */

import { join } from "node:path";
import { acquireHasher, type Blake3Hasher, releaseHasher } from "./blake3.ts";
import {
  type BlobHeader,
  chooseCodec,
  type Codec,
  type CompressionPolicy,
  decodeFrame,
  decodeFrameHeader,
  decodeHeader,
  encodeFrame,
  encodeHeader,
  FRAME_HEADER,
  FRAME_RAW_MAX,
  HEADER_SIZE,
  isCompressionPolicy,
} from "./blob_format.ts";
import { invalid, ioError, StoreError } from "./errors.ts";
import { BLOB_READ_CAP, IO_CHUNK } from "./limits.ts";
import { parseRef, toRef } from "./refs.ts";

/** Options of a put. */
export interface PutOptions {
  /** Compression policy; default: the store's (normally `auto`). */
  compression?: CompressionPolicy;
  /** fsync the file and its directory before the put resolves (power-loss durable); default: the store's. */
  fsync?: boolean;
  /** Refuse (with `blob_too_large`) a stream longer than this many bytes. Default: no limit. */
  maxBytes?: number;
}

/** Result of a put. */
export interface PutResult {
  /** Lowercase hex BLAKE3 of the logical bytes. */
  hash: string;
  /** `val:blake3:<hash>`. */
  ref: string;
  /** Logical size in bytes. */
  size: number;
  /** Size of the file on disk (header included). */
  storedSize: number;
  /** Codec the stored file uses. */
  codec: Codec;
  /** False when the blob was already stored (the put only refreshed its age). */
  created: boolean;
}

/** Metadata of a stored blob (read from its header and `stat`, not verified). */
export interface BlobStat {
  /** Lowercase hex hash. */
  hash: string;
  /** `val:blake3:<hash>`. */
  ref: string;
  /** Logical size in bytes. */
  size: number;
  /** Size of the file on disk. */
  storedSize: number;
  /** Codec of the stored file. */
  codec: Codec;
  /** Last put (or creation) time, ms since the epoch. GC ages blobs by this. */
  mtimeMs: number;
}

/** One byte range of a blob. */
export interface BlobRange {
  /** Lowercase hex hash. */
  hash: string;
  /** Offset of `data` in the blob. */
  offset: number;
  /** The bytes (shorter than asked when the range runs past the end). */
  data: Uint8Array;
  /** Logical size of the whole blob. */
  size: number;
}

/** A blob file as seen by a directory scan (for GC). */
export interface BlobFileInfo {
  /** Lowercase hex hash. */
  hash: string;
  /** File size on disk. */
  storedSize: number;
  /** mtime in ms since the epoch. */
  mtimeMs: number;
}

/** Store-wide defaults. */
export interface ContentStoreOptions {
  /** Default compression policy (default `auto`). */
  compression?: CompressionPolicy;
  /** Default fsync behaviour (default false: durable against process death, not power loss). */
  fsync?: boolean;
}

// Bytes looked at to decide whether a blob is worth compressing.
const SAMPLE_BYTES = 64 * 1024;
// Verified-ness cache entries kept per process (oldest dropped first).
const VERIFIED_MAX = 4096;
const FANOUT_RE = /^[0-9a-f]{2}$/;
const REST_RE = /^[0-9a-f]{62}$/;

/** Name prefix of in-flight temp files (GC removes stale ones). */
export const TEMP_PREFIX = ".tmp-";

/** The content store. Create with {@link ContentStore.open}. */
export class ContentStore {
  /** Root directory (`<state>/cas`). */
  readonly dir: string;
  /** Directory for stream temp files and GC tombstones (same filesystem as the blobs). */
  readonly tmpDir: string;
  readonly #compression: CompressionPolicy;
  readonly #fsync: boolean;
  // hash → file identity that was verified end to end.
  readonly #verified = new Map<string, string>();
  // temp files this process is writing right now (GC must not touch them).
  readonly #active = new Set<string>();
  // blobs that failed verification here: the next put rewrites them instead of reusing.
  readonly #corrupt = new Set<string>();

  private constructor(dir: string, opts: ContentStoreOptions) {
    this.dir = dir;
    this.tmpDir = join(dir, "tmp");
    this.#compression = opts.compression ?? "auto";
    this.#fsync = opts.fsync ?? false;
  }

  /** Open (creating, mode 0700) a content store rooted at `dir`. */
  static async open(dir: string, opts: ContentStoreOptions = {}): Promise<ContentStore> {
    if (opts.compression !== undefined && !isCompressionPolicy(opts.compression)) {
      throw invalid(`unknown compression policy ${JSON.stringify(opts.compression)}`);
    }
    const cas = new ContentStore(dir, opts);
    try {
      await Deno.mkdir(cas.tmpDir, { recursive: true, mode: 0o700 });
    } catch (e) {
      throw ioError(e, "creating the content store directory", dir);
    }
    return cas;
  }

  /** Path of the file that holds `hash` (whether or not it exists). */
  pathOf(hash: string): string {
    const h = parseRef(hash);
    return join(this.dir, h.slice(0, 2), h.slice(2));
  }

  /** Temp files this process is writing (GC skips them). */
  isActiveTemp(path: string): boolean {
    return this.#active.has(path);
  }

  /** Forget cached verified-ness of `hash` (after GC removed or replaced it). */
  forget(hash: string): void {
    this.#verified.delete(hash);
  }

  /** Store `bytes`. Idempotent. */
  async put(bytes: Uint8Array, opts: PutOptions = {}): Promise<PutResult> {
    if (!(bytes instanceof Uint8Array)) throw invalid("put expects a Uint8Array");
    checkPutOptions(opts);
    if (opts.maxBytes !== undefined && bytes.length > opts.maxBytes) {
      throw tooLargeToStore(bytes.length, opts.maxBytes);
    }
    const h = await acquireHasher();
    let hash: string;
    try {
      h.update(bytes);
      hash = h.digestHex();
    } finally {
      releaseHasher(h);
    }
    const hit = await this.#reuse(hash);
    if (hit) return hit;
    const fanout = join(this.dir, hash.slice(0, 2));
    await mkdirp(fanout);
    // Hash known up front: the temp file goes straight into the target directory.
    const tmp = await this.#writeTemp(fanout, single(bytes), opts, hash);
    return await this.#commit(tmp, opts);
  }

  /**
   * Store everything a stream yields, hashing and writing chunk by chunk (memory
   * stays bounded whatever the stream's length). Idempotent.
   */
  async putStream(stream: ReadableStream<Uint8Array>, opts: PutOptions = {}): Promise<PutResult> {
    if (!(stream instanceof ReadableStream)) throw invalid("putStream expects a ReadableStream");
    checkPutOptions(opts);
    const tmp = await this.#writeTemp(this.tmpDir, stream, opts, undefined);
    return await this.#commit(tmp, opts);
  }

  /** Store the contents of a file (streamed). Idempotent. */
  async putFile(path: string, opts: PutOptions = {}): Promise<PutResult> {
    if (typeof path !== "string" || path === "") throw invalid("putFile expects a file path");
    checkPutOptions(opts);
    let file: Deno.FsFile;
    try {
      file = await Deno.open(path, { read: true });
      const st = await file.stat();
      if (!st.isFile) {
        file.close();
        throw invalid(`putFile: ${path} is not a regular file`, { path });
      }
    } catch (e) {
      throw ioError(e, `reading ${path}`, path);
    }
    try {
      const tmp = await this.#writeTemp(this.tmpDir, readChunks(file, path), opts, undefined);
      return await this.#commit(tmp, opts);
    } finally {
      tryClose(file);
    }
  }

  /**
   * Mark a stored blob as just used (its mtime, as a second put of the same bytes would), so a
   * GC run that scanned it before keeps it; false if it is not there.
   */
  async refresh(refOrHash: string): Promise<boolean> {
    try {
      const now = new Date();
      await Deno.utime(this.pathOf(refOrHash), now, now);
      return true;
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return false;
      throw ioError(e, "refreshing a blob");
    }
  }

  /** True if a blob file exists for `hash` (not verified). */
  async has(refOrHash: string): Promise<boolean> {
    try {
      return (await Deno.lstat(this.pathOf(refOrHash))).isFile;
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return false;
      throw ioError(e, "checking a blob");
    }
  }

  /** Header + file metadata of a blob, or null if absent. */
  async stat(refOrHash: string): Promise<BlobStat | null> {
    const hash = parseRef(refOrHash);
    const path = this.pathOf(hash);
    let file: Deno.FsFile;
    try {
      file = await Deno.open(path, { read: true });
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return null;
      throw ioError(e, "opening a blob", path);
    }
    try {
      const header = decodeHeader(await readExact(file, HEADER_SIZE, hash), hash);
      const st = await file.stat();
      return {
        hash,
        ref: toRef(hash),
        size: header.size,
        storedSize: st.size,
        codec: header.codec,
        mtimeMs: st.mtime?.getTime() ?? 0,
      };
    } finally {
      file.close();
    }
  }

  /**
   * Read a whole blob, verifying its hash.
   * @throws {StoreError} `blob_not_found`, `blob_corrupt`, `blob_too_large` (over `maxBytes`,
   *   default and at most {@link BLOB_READ_CAP}: use {@link getRange} for bigger blobs).
   */
  async get(refOrHash: string, opts: { maxBytes?: number } = {}): Promise<Uint8Array> {
    const hash = parseRef(refOrHash);
    const cap = opts.maxBytes ?? BLOB_READ_CAP;
    if (!Number.isSafeInteger(cap) || cap < 0 || cap > BLOB_READ_CAP) {
      throw invalid(`maxBytes must be an integer in 0..${BLOB_READ_CAP}`);
    }
    const { file, header } = await this.#openBlob(hash);
    try {
      if (header.size > cap) {
        throw new StoreError(
          "blob_too_large",
          `blob ${hash} is ${header.size} bytes, over the ${cap}-byte read cap; read it in ranges (getRange, at most ${BLOB_READ_CAP} bytes each)`,
          { hash, size: header.size, cap },
        );
      }
      await checkRawLength(file, header, hash);
      const out = new Uint8Array(header.size);
      let at = 0;
      const h = await acquireHasher();
      try {
        for await (const chunk of this.#logical(file, header, hash)) {
          h.update(chunk);
          out.set(chunk, at);
          at += chunk.length;
        }
        this.#check(h, hash);
      } finally {
        releaseHasher(h);
      }
      return out;
    } finally {
      tryClose(file);
    }
  }

  /**
   * Read `length` bytes at `offset` (clamped at the end of the blob). The whole
   * blob is verified (streaming) the first time a given file is range-read in
   * this process; later ranges of the same unchanged file skip that.
   * @throws {StoreError} `bad_range` when `offset` is past the end, `blob_too_large` when
   *   `length` exceeds {@link BLOB_READ_CAP}, plus the errors of {@link get}.
   */
  async getRange(refOrHash: string, offset: number, length: number): Promise<BlobRange> {
    const hash = parseRef(refOrHash);
    if (!Number.isSafeInteger(offset) || offset < 0) {
      throw invalid("offset must be a non-negative integer", { offset });
    }
    if (!Number.isSafeInteger(length) || length < 0) {
      throw invalid("length must be a non-negative integer", { length });
    }
    if (length > BLOB_READ_CAP) {
      throw new StoreError(
        "blob_too_large",
        `a range may be at most ${BLOB_READ_CAP} bytes (asked for ${length}); split the read`,
        { hash, length, cap: BLOB_READ_CAP },
      );
    }
    const { file, header } = await this.#openBlob(hash);
    try {
      if (offset > header.size) {
        throw new StoreError(
          "bad_range",
          `offset ${offset} is past the end of blob ${hash} (${header.size} bytes)`,
          { hash, offset, size: header.size },
        );
      }
      const end = Math.min(header.size, offset + length);
      const out = new Uint8Array(end - offset);
      await checkRawLength(file, header, hash);
      const identity = fileIdentity(await file.stat());
      if (this.#verified.get(hash) === identity) {
        // Verified earlier: serve the range alone.
        if (header.codec === "none") {
          await file.seek(HEADER_SIZE + offset, Deno.SeekMode.Start);
          out.set(await readExact(file, out.length, hash));
        } else if (out.length > 0) {
          await this.#frameRange(file, header, hash, offset, out);
        }
      } else {
        // One streaming pass: hash everything, keep the range.
        const h = await acquireHasher();
        try {
          let pos = 0;
          for await (const chunk of this.#logical(file, header, hash)) {
            h.update(chunk);
            copyOverlap(chunk, pos, offset, out);
            pos += chunk.length;
          }
          this.#check(h, hash);
        } finally {
          releaseHasher(h);
        }
        this.#remember(hash, identity);
      }
      return { hash, offset, data: out, size: header.size };
    } finally {
      tryClose(file);
    }
  }

  /** Verify a blob end to end (streaming, any size). */
  async verify(refOrHash: string): Promise<void> {
    const hash = parseRef(refOrHash);
    const { file, header } = await this.#openBlob(hash);
    try {
      await checkRawLength(file, header, hash);
      const identity = fileIdentity(await file.stat());
      const h = await acquireHasher();
      try {
        for await (const chunk of this.#logical(file, header, hash)) h.update(chunk);
        this.#check(h, hash);
      } finally {
        releaseHasher(h);
      }
      this.#remember(hash, identity);
    } finally {
      tryClose(file);
    }
  }

  /** Every blob file (for GC). Unreadable or foreign names are skipped. */
  async *listBlobs(): AsyncGenerator<BlobFileInfo> {
    for await (const d of readDirSafe(this.dir)) {
      if (!d.isDirectory || !FANOUT_RE.test(d.name)) continue;
      const sub = join(this.dir, d.name);
      for await (const f of readDirSafe(sub)) {
        if (!f.isFile || !REST_RE.test(f.name)) continue;
        const st = await lstatOrNull(join(sub, f.name));
        if (!st) continue;
        yield { hash: d.name + f.name, storedSize: st.size, mtimeMs: st.mtime?.getTime() ?? 0 };
      }
    }
  }

  /** Every temp file or GC tombstone on disk, with its age (for GC). */
  async *listTemps(): AsyncGenerator<{ path: string; mtimeMs: number; size: number }> {
    const dirs = [this.tmpDir];
    for await (const d of readDirSafe(this.dir)) {
      if (d.isDirectory && FANOUT_RE.test(d.name)) dirs.push(join(this.dir, d.name));
    }
    for (const dir of dirs) {
      for await (const f of readDirSafe(dir)) {
        if (dir !== this.tmpDir && !f.name.startsWith(TEMP_PREFIX)) continue;
        const path = join(dir, f.name);
        const st = await lstatOrNull(path);
        if (st) yield { path, mtimeMs: st.mtime?.getTime() ?? 0, size: st.size };
      }
    }
  }

  // --- internals -------------------------------------------------------------

  async #openBlob(hash: string): Promise<{ file: Deno.FsFile; header: BlobHeader }> {
    const path = this.pathOf(hash);
    let file: Deno.FsFile;
    try {
      file = await Deno.open(path, { read: true });
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) {
        throw new StoreError("blob_not_found", `no blob ${hash} in the content store`, {
          hash,
        });
      }
      throw ioError(e, "opening a blob", path);
    }
    try {
      return { file, header: decodeHeader(await readExact(file, HEADER_SIZE, hash), hash) };
    } catch (e) {
      file.close();
      throw e;
    }
  }

  /** Decoded (logical) bytes of an open blob positioned after its header, bounded by its size. */
  async *#logical(file: Deno.FsFile, header: BlobHeader, hash: string): AsyncGenerator<Uint8Array> {
    const corrupt = (why: string, cause?: unknown) =>
      new StoreError("blob_corrupt", `blob ${hash} is corrupt: ${why}`, { hash }, { cause });
    let produced = 0;
    if (header.codec === "none") {
      const buf = new Uint8Array(1024 * 1024);
      while (produced < header.size) {
        const n = await file.read(buf.subarray(0, Math.min(buf.length, header.size - produced)));
        if (n === null) throw corrupt("file shorter than its recorded size");
        produced += n;
        yield buf.subarray(0, n);
      }
      return;
    }
    // Framed payload: decode frame by frame, refusing more output than recorded.
    const codec = header.codec;
    while (produced < header.size) {
      const { raw, comp } = await this.#frameHeader(file, hash);
      if (produced + raw > header.size) throw corrupt("frames decode to more bytes than recorded");
      const packed = await readExact(file, comp, hash);
      produced += raw;
      yield decodeFrame(codec, packed, raw, hash);
    }
    if ((await file.read(new Uint8Array(1))) !== null) {
      throw corrupt("trailing bytes after the last frame");
    }
  }

  async #frameHeader(file: Deno.FsFile, hash: string): Promise<{ raw: number; comp: number }> {
    return decodeFrameHeader(await readExact(file, FRAME_HEADER, hash), hash);
  }

  /** Copy the logical range [offset, offset+out.length) of a verified framed blob, skipping frames. */
  async #frameRange(
    file: Deno.FsFile,
    header: BlobHeader,
    hash: string,
    offset: number,
    out: Uint8Array,
  ) {
    const codec = header.codec as Exclude<Codec, "none">;
    let pos = 0;
    while (pos < offset + out.length) {
      const { raw, comp } = await this.#frameHeader(file, hash);
      if (pos + raw <= offset) {
        await file.seek(comp, Deno.SeekMode.Current); // not needed: skip without decoding
      } else {
        copyOverlap(
          decodeFrame(codec, await readExact(file, comp, hash), raw, hash),
          pos,
          offset,
          out,
        );
      }
      pos += raw;
    }
  }

  #check(h: Blake3Hasher, hash: string): void {
    const got = h.digestHex();
    if (got !== hash) {
      this.#verified.delete(hash);
      this.#corrupt.add(hash);
      throw new StoreError(
        "blob_corrupt",
        `blob ${hash} is corrupt: its bytes hash to ${got}; the file was damaged on disk (remove it and store the content again)`,
        { hash, actual: got },
      );
    }
  }

  #remember(hash: string, identity: string): void {
    this.#verified.delete(hash);
    this.#verified.set(hash, identity);
    if (this.#verified.size > VERIFIED_MAX) {
      this.#verified.delete(this.#verified.keys().next().value as string);
    }
  }

  /**
   * If a well-formed file for `hash` exists, refresh its mtime (so GC sees a
   * recent use) and return it. A malformed one is treated as absent and will
   * be replaced by the caller's rename.
   */
  async #reuse(hash: string): Promise<PutResult | null> {
    const path = this.pathOf(hash);
    if (this.#corrupt.has(hash)) return null;
    let st: BlobStat | null;
    try {
      st = await this.stat(hash);
    } catch (e) {
      if (e instanceof StoreError && e.code === "blob_corrupt") return null;
      throw e;
    }
    if (!st) return null;
    if (st.codec === "none" && st.storedSize !== HEADER_SIZE + st.size) return null;
    try {
      const now = new Date();
      await Deno.utime(path, now, now);
    } catch (e) {
      // GC moved it away between stat and utime: write a fresh copy.
      if (e instanceof Deno.errors.NotFound) return null;
      throw ioError(e, "refreshing a blob", path);
    }
    return {
      hash,
      ref: st.ref,
      size: st.size,
      storedSize: st.storedSize,
      codec: st.codec,
      created: false,
    };
  }

  /** Write a temp blob file in `dir` from `source`; returns what is needed to commit it. */
  async #writeTemp(
    dir: string,
    source: AsyncIterable<unknown>,
    opts: PutOptions,
    knownHash: string | undefined,
  ): Promise<TempBlob> {
    const path = join(dir, `${TEMP_PREFIX}${Deno.pid}-${crypto.randomUUID()}`);
    let file: Deno.FsFile;
    try {
      file = await Deno.open(path, { write: true, createNew: true, mode: 0o600 });
    } catch (e) {
      throw ioError(e, "creating a temp file in the content store", path);
    }
    this.#active.add(path);
    const fsync = opts.fsync ?? this.#fsync;
    const maxBytes = opts.maxBytes ?? Infinity;
    const h = knownHash === undefined ? await acquireHasher() : undefined;
    const it = source[Symbol.asyncIterator]();
    let out: BufferedWriter | null = null;
    try {
      await writeAll(file, new Uint8Array(HEADER_SIZE), path); // placeholder until size is known
      // Bounded sample for the compression decision.
      const head: Uint8Array[] = [];
      let headBytes = 0;
      let ended = false;
      while (headBytes < SAMPLE_BYTES) {
        const r = await it.next();
        if (r.done) {
          ended = true;
          break;
        }
        const c = asChunk(r.value);
        head.push(c);
        headBytes += c.length;
      }
      const sample = head.length === 1
        ? head[0].subarray(0, SAMPLE_BYTES)
        : concat(head, Math.min(headBytes, SAMPLE_BYTES));
      const codec = chooseCodec(opts.compression ?? this.#compression, sample);
      let size = 0;
      const logical = async function* (): AsyncGenerator<Uint8Array> {
        const feed = (c: Uint8Array) => {
          size += c.length;
          if (size > maxBytes) throw tooLargeToStore(size, maxBytes);
          h?.update(c);
          return c;
        };
        for (const c of head) yield feed(c);
        if (ended) return;
        while (true) {
          const r = await it.next();
          if (r.done) return;
          yield feed(asChunk(r.value));
        }
      };
      out = new BufferedWriter(file, path);
      if (codec === "none") {
        for await (const c of logical()) await out.write(c);
      } else {
        // Fill 1 MiB frames (one copy), compress each as it completes.
        const frame = new Uint8Array(FRAME_RAW_MAX);
        let used = 0;
        for await (const c of logical()) {
          for (let at = 0; at < c.length;) {
            const take = Math.min(c.length - at, frame.length - used);
            frame.set(c.subarray(at, at + take), used);
            used += take;
            at += take;
            if (used === frame.length) {
              await out.write(encodeFrame(codec, frame));
              used = 0;
            }
          }
        }
        if (used > 0) await out.write(encodeFrame(codec, frame.subarray(0, used)));
      }
      await out.flush();
      const stored = HEADER_SIZE + out.written;
      await file.seek(0, Deno.SeekMode.Start);
      await writeAll(file, encodeHeader(codec, size), path);
      if (fsync) await file.syncData();
      file.close();
      const hash = knownHash ?? h!.digestHex();
      return { path, hash, size, storedSize: stored, codec };
    } catch (e) {
      await it.return?.(undefined)?.catch(() => {}); // cancels a source stream we stop reading
      await out?.settle();
      tryClose(file);
      this.#active.delete(path);
      await Deno.remove(path).catch(() => {});
      if (e instanceof StoreError) throw e;
      throw ioError(e, "writing a blob");
    } finally {
      if (h) releaseHasher(h);
    }
  }

  /** Move a finished temp file to its address (or drop it if the blob is already there). */
  async #commit(tmp: TempBlob, opts: PutOptions): Promise<PutResult> {
    try {
      const hit = await this.#reuse(tmp.hash);
      if (hit) {
        await Deno.remove(tmp.path).catch(() => {});
        return hit;
      }
      const fanout = join(this.dir, tmp.hash.slice(0, 2));
      await mkdirp(fanout);
      const dest = this.pathOf(tmp.hash);
      try {
        await Deno.rename(tmp.path, dest);
      } catch (e) {
        throw ioError(e, "moving a blob into place", dest);
      }
      this.#verified.delete(tmp.hash);
      this.#corrupt.delete(tmp.hash);
      if (opts.fsync ?? this.#fsync) await syncDir(fanout);
      return {
        hash: tmp.hash,
        ref: toRef(tmp.hash),
        size: tmp.size,
        storedSize: tmp.storedSize,
        codec: tmp.codec,
        created: true,
      };
    } catch (e) {
      await Deno.remove(tmp.path).catch(() => {});
      throw e;
    } finally {
      this.#active.delete(tmp.path);
    }
  }
}

interface TempBlob {
  path: string;
  hash: string;
  size: number;
  storedSize: number;
  codec: Codec;
}

function checkPutOptions(opts: PutOptions): void {
  if (opts.compression !== undefined && !isCompressionPolicy(opts.compression)) {
    throw invalid(
      `unknown compression ${
        JSON.stringify(opts.compression)
      } (use auto, none, zstd or deflate-raw)`,
    );
  }
  if (opts.maxBytes !== undefined && (!Number.isSafeInteger(opts.maxBytes) || opts.maxBytes < 0)) {
    throw invalid("maxBytes must be a non-negative integer");
  }
}

function tooLargeToStore(size: number, max: number): StoreError {
  return new StoreError(
    "blob_too_large",
    `content exceeds the ${max}-byte limit of this put (at least ${size} bytes)`,
    { size, max },
  );
}

function asChunk(v: unknown): Uint8Array {
  if (v instanceof Uint8Array) return v;
  throw invalid(`a stream put must yield Uint8Array chunks, got ${typeof v}`);
}

async function* single(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  yield bytes;
}

function concat(parts: Uint8Array[], max: number): Uint8Array {
  const out = new Uint8Array(max);
  let at = 0;
  for (const p of parts) {
    if (at >= max) break;
    const take = p.subarray(0, max - at);
    out.set(take, at);
    at += take.length;
  }
  return out;
}

/** Copy the part of `chunk` (which starts at blob position `pos`) that falls in `out`'s range. */
function copyOverlap(chunk: Uint8Array, pos: number, offset: number, out: Uint8Array): void {
  const from = Math.max(offset, pos);
  const to = Math.min(offset + out.length, pos + chunk.length);
  if (from < to) out.set(chunk.subarray(from - pos, to - pos), from - offset);
}

async function checkRawLength(file: Deno.FsFile, header: BlobHeader, hash: string): Promise<void> {
  if (header.codec !== "none") return;
  const st = await file.stat();
  if (st.size !== HEADER_SIZE + header.size) {
    throw new StoreError(
      "blob_corrupt",
      `blob ${hash} is corrupt: file is ${st.size} bytes, expected ${HEADER_SIZE + header.size}`,
      { hash },
    );
  }
}

function fileIdentity(st: Deno.FileInfo): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtime?.getTime()}:${st.ctime?.getTime()}`;
}

async function readExact(file: Deno.FsFile, n: number, hash: string): Promise<Uint8Array> {
  const out = new Uint8Array(n);
  let at = 0;
  while (at < n) {
    const got = await file.read(out.subarray(at));
    if (got === null) {
      throw new StoreError("blob_corrupt", `blob ${hash} is corrupt: file is truncated`, { hash });
    }
    at += got;
  }
  return out;
}

/**
 * Coalesces small chunks into 1 MiB writes (a stream may yield tiny chunks) and
 * keeps one write in flight, so hashing the next chunk overlaps the disk write.
 */
class BufferedWriter {
  readonly #file: Deno.FsFile;
  readonly #path: string;
  #buf = new Uint8Array(IO_CHUNK);
  #spare = new Uint8Array(IO_CHUNK);
  #used = 0;
  #inflight: Promise<void> = Promise.resolve();
  /** Bytes handed to write() so far. */
  written = 0;

  constructor(file: Deno.FsFile, path: string) {
    this.#file = file;
    this.#path = path;
  }

  /** Queue `c`. `c` must not be modified before {@link flush} resolves. */
  async write(c: Uint8Array): Promise<void> {
    this.written += c.length;
    if (this.#used > 0 && this.#used + c.length > this.#buf.length) await this.#swap();
    if (c.length >= this.#buf.length) {
      // Big chunk: written as it is (no copy), in flight while the caller goes on.
      await this.#swap();
      this.#inflight = writeAll(this.#file, c, this.#path);
      this.#inflight.catch(() => {});
      return;
    }
    this.#buf.set(c, this.#used);
    this.#used += c.length;
    if (this.#used === this.#buf.length) await this.#swap();
  }

  /** Write everything queued and wait for it. */
  async flush(): Promise<void> {
    await this.#swap();
    await this.#inflight;
  }

  /** Wait for the write in flight, ignoring its outcome (before closing on an error path). */
  async settle(): Promise<void> {
    await this.#inflight.catch(() => {});
  }

  /** Start writing the current buffer; continue filling the other one. */
  async #swap(): Promise<void> {
    await this.#inflight;
    if (this.#used === 0) return;
    const full = this.#buf.subarray(0, this.#used);
    this.#inflight = writeAll(this.#file, full, this.#path);
    this.#inflight.catch(() => {}); // observed by the next await
    [this.#buf, this.#spare] = [this.#spare, this.#buf];
    this.#used = 0;
  }
}

/**
 * Read a file in fresh 1 MiB chunks (fresh: downstream may keep them), with
 * the next read already in flight while the caller hashes the current one.
 */
async function* readChunks(file: Deno.FsFile, path: string): AsyncGenerator<Uint8Array> {
  const read = async (): Promise<Uint8Array | null> => {
    const buf = new Uint8Array(IO_CHUNK);
    let n: number | null;
    try {
      n = await file.read(buf);
    } catch (e) {
      throw ioError(e, `reading ${path}`, path);
    }
    return n === null ? null : buf.subarray(0, n);
  };
  let next = read();
  try {
    for (;;) {
      const chunk = await next;
      if (chunk === null) return;
      next = read();
      yield chunk;
    }
  } finally {
    await next.catch(() => null); // never close the file under a pending read
  }
}

async function writeAll(file: Deno.FsFile, data: Uint8Array, path: string): Promise<void> {
  let at = 0;
  try {
    while (at < data.length) at += await file.write(data.subarray(at));
  } catch (e) {
    throw ioError(e, "writing a blob file", path);
  }
}

async function mkdirp(dir: string): Promise<void> {
  try {
    await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (e) {
    throw ioError(e, "creating a content store directory", dir);
  }
}

/** fsync a directory so a rename in it survives a power loss (best effort). */
export async function syncDir(dir: string): Promise<void> {
  try {
    const d = await Deno.open(dir, { read: true });
    try {
      await d.sync();
    } finally {
      d.close();
    }
  } catch {
    // Some filesystems refuse fsync on directories; the data itself is already synced.
  }
}

function tryClose(f: Deno.FsFile): void {
  try {
    f.close();
  } catch {
    // already closed
  }
}

async function* readDirSafe(dir: string): AsyncGenerator<Deno.DirEntry> {
  try {
    for await (const e of Deno.readDir(dir)) yield e;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return;
    throw ioError(e, "listing the content store", dir);
  }
}

async function lstatOrNull(path: string): Promise<Deno.FileInfo | null> {
  try {
    return await Deno.lstat(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw ioError(e, "inspecting a content store file", path);
  }
}
