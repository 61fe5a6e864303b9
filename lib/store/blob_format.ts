/**
 * On-disk format of one CAS blob file: a 16-byte header, then the payload.
 *
 * ```
 * 0..3   magic "SCAS"
 * 4      format version (1)
 * 5      codec: 0 none, 1 zstd, 2 deflate-raw
 * 6..7   reserved, zero
 * 8..15  logical (uncompressed) size, uint64 little-endian
 * 16..   payload
 * ```
 *
 * Payload of `none`: the bytes themselves. Payload of a compressing codec: a
 * sequence of independent frames, each compressing at most 1 MiB of logical
 * bytes:
 *
 * ```
 * 0..3   logical length of the frame, uint32 LE (1..1 MiB)
 * 4..7   compressed length, uint32 LE
 * 8..    compressed bytes (one zstd frame / one raw deflate stream)
 * ```
 *
 * Frames keep memory bounded on both sides, let a range read skip to the
 * frame it needs instead of decompressing from the start, and let
 * (de)compression use Node's synchronous zlib calls (fast; at most a few ms
 * of one thread per frame).
 *
 * The address is always BLAKE3 of the *logical* bytes, so the same content
 * stored raw or compressed has the same hash. The header lets a range read of
 * a raw blob seek straight to its bytes, and lets a reader bound decompression
 * (more output than the header promises = corrupt file).
 *
 * @module
 */

import * as zlib from "node:zlib";
import { StoreError } from "./errors.ts";

/** Bytes before the payload. */
export const HEADER_SIZE = 16;
const MAGIC = [0x53, 0x43, 0x41, 0x53]; // "SCAS"
const VERSION = 1;

/** Storage codecs. `none` keeps bytes as they are. */
export type Codec = "none" | "zstd" | "deflate-raw";
const CODEC_IDS: Record<Codec, number> = { "none": 0, "zstd": 1, "deflate-raw": 2 };
const CODEC_BY_ID: Codec[] = ["none", "zstd", "deflate-raw"];

/**
 * Compression policy of a put: `auto` compresses with zstd when a sample of the
 * first bytes shrinks by at least 10 %, `none` never compresses, a codec name
 * always uses that codec.
 */
export type CompressionPolicy = "auto" | Codec;

/** True when this Deno's `node:zlib` has zstd (2.9 does); otherwise deflate-raw is used. */
export const ZSTD_AVAILABLE: boolean = typeof zlib.createZstdCompress === "function";
// Same level as the reference implementation: fast, and a good ratio on text output.
const ZSTD_LEVEL = 3;

/** Parsed header of a blob file. */
export interface BlobHeader {
  /** Codec of the payload. */
  codec: Codec;
  /** Logical (uncompressed) size in bytes. */
  size: number;
}

/** Encode a header. */
export function encodeHeader(codec: Codec, size: number): Uint8Array {
  const b = new Uint8Array(HEADER_SIZE);
  b.set(MAGIC, 0);
  b[4] = VERSION;
  b[5] = CODEC_IDS[codec];
  new DataView(b.buffer).setBigUint64(8, BigInt(size), true);
  return b;
}

/**
 * Decode a header.
 * @throws {StoreError} `blob_corrupt` when the bytes are not a valid header.
 */
export function decodeHeader(b: Uint8Array, hash: string): BlobHeader {
  const bad = (why: string) =>
    new StoreError("blob_corrupt", `blob ${hash} is corrupt: ${why}`, { hash });
  if (b.length < HEADER_SIZE) throw bad("file shorter than its header");
  for (let i = 0; i < 4; i++) if (b[i] !== MAGIC[i]) throw bad("bad magic bytes");
  if (b[4] !== VERSION) throw bad(`unknown format version ${b[4]}`);
  const codec = CODEC_BY_ID[b[5]];
  if (codec === undefined) throw bad(`unknown codec id ${b[5]}`);
  if (b[6] !== 0 || b[7] !== 0) throw bad("reserved header bytes are not zero");
  const big = new DataView(b.buffer, b.byteOffset, b.byteLength).getBigUint64(8, true);
  if (big > BigInt(Number.MAX_SAFE_INTEGER)) throw bad("size field out of range");
  return { codec, size: Number(big) };
}

/** The codec `auto` compresses with. */
export const AUTO_CODEC: Codec = ZSTD_AVAILABLE ? "zstd" : "deflate-raw";

/** Smallest sample worth compressing: below this, header and frame overhead win. */
const MIN_COMPRESS = 512;

/**
 * Decide a codec for a blob from a bounded sample of its first bytes.
 * `auto` → compress when the sample shrinks to ≤ 90 %.
 */
export function chooseCodec(policy: CompressionPolicy, sample: Uint8Array): Codec {
  if (policy !== "auto") {
    if (policy === "zstd" && !ZSTD_AVAILABLE) return "deflate-raw";
    return policy;
  }
  if (sample.length < MIN_COMPRESS) return "none";
  const packed = ZSTD_AVAILABLE
    ? zlib.zstdCompressSync(sample, { params: { [zlib.constants.ZSTD_c_compressionLevel]: 1 } })
    : zlib.deflateRawSync(sample, { level: 1 });
  return packed.length <= sample.length * 0.9 ? AUTO_CODEC : "none";
}

/** Validate a user-supplied compression policy. */
export function isCompressionPolicy(v: unknown): v is CompressionPolicy {
  return v === "auto" || v === "none" || v === "zstd" || v === "deflate-raw";
}

/** Logical bytes per frame of a compressed payload. */
export const FRAME_RAW_MAX = 1024 * 1024;
/** Bytes of a frame header. */
export const FRAME_HEADER = 8;

/** Largest compressed length accepted for a frame of `rawLen` bytes (worst-case expansion + slack). */
export function frameCompBound(rawLen: number): number {
  return rawLen + (rawLen >> 6) + 1024;
}

/** Compress one frame (≤ {@link FRAME_RAW_MAX} bytes) and prefix its header. */
export function encodeFrame(codec: Exclude<Codec, "none">, raw: Uint8Array): Uint8Array {
  // Default output chunk size: a frame-sized one makes Deno's zlib 5-10x slower here.
  const packed = codec === "zstd"
    ? zlib.zstdCompressSync(raw, {
      params: { [zlib.constants.ZSTD_c_compressionLevel]: ZSTD_LEVEL },
    })
    : zlib.deflateRawSync(raw);
  const out = new Uint8Array(FRAME_HEADER + packed.length);
  const dv = new DataView(out.buffer);
  dv.setUint32(0, raw.length, true);
  dv.setUint32(4, packed.length, true);
  out.set(packed, FRAME_HEADER);
  return out;
}

/** Parse a frame header; throws `blob_corrupt` if the lengths are impossible. */
export function decodeFrameHeader(b: Uint8Array, hash: string): { raw: number; comp: number } {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const raw = dv.getUint32(0, true);
  const comp = dv.getUint32(4, true);
  if (raw === 0 || raw > FRAME_RAW_MAX || comp === 0 || comp > frameCompBound(raw)) {
    throw new StoreError("blob_corrupt", `blob ${hash} is corrupt: bad frame header`, { hash });
  }
  return { raw, comp };
}

/** Decompress one frame to exactly `rawLen` bytes; anything else is `blob_corrupt`. */
export function decodeFrame(
  codec: Exclude<Codec, "none">,
  packed: Uint8Array,
  rawLen: number,
  hash: string,
): Uint8Array {
  // chunkSize = whole frame: Deno's zlib is ~10x slower with its 16 KiB default.
  const opts = { chunkSize: Math.max(64 * 1024, rawLen), maxOutputLength: rawLen };
  let out: Uint8Array;
  try {
    out = codec === "zstd"
      ? zlib.zstdDecompressSync(packed, opts)
      : zlib.inflateRawSync(packed, opts);
  } catch (e) {
    throw new StoreError(
      "blob_corrupt",
      `blob ${hash} is corrupt: a ${codec} frame does not decode`,
      { hash },
      { cause: e },
    );
  }
  if (out.length !== rawLen) {
    throw new StoreError("blob_corrupt", `blob ${hash} is corrupt: frame length mismatch`, {
      hash,
    });
  }
  return out;
}
