/**
 * Memory-mapped intake segments (issue 7). Appending an exec line with `write` cost ~7–9 µs on
 * this VM, on the path of every result; copying it into a shared file mapping costs ~1 µs and is
 * just as crash-safe: the bytes are in the page cache the moment they are stored, and the page
 * cache outlives a killed process (not a power loss — the same class as a `write`).
 *
 * Layout of a mapped segment (the reader tells it from a plain segment by its magic):
 *
 *   bytes 0–7     "SHOALMM1"
 *   bytes 8–11    committed end (u32 LE): every line before it is complete
 *   bytes 12–4095 zero
 *   bytes 4096–   lines, exactly as in a plain segment (JSON + "\n")
 *
 * A line is copied first and the committed end stored after it (an atomic store, ordered after
 * the copy), so a reader — the journal thread live, or the next kernel after a crash — never
 * sees part of a line as committed. Blocks are reserved up front (`posix_fallocate`): touching
 * a page of a sparse mapping on a full disk would kill the process with SIGBUS, where a failed
 * reservation just means this segment is written with `write` instead.
 *
 * @module
 */

import { FileMap } from "./file_map.ts";

/** First bytes of a mapped segment. */
export const MAPPED_MAGIC = "SHOALMM1";
/** Where lines start in a mapped segment. */
export const MAPPED_DATA_START = 4096;
/** Byte offset of the committed end (u32 LE). */
const COMMITTED_AT = 8;

const enc = new TextEncoder();

/** One mapped segment, owned by the writer that created it. */
export class MappedSegment {
  #map: FileMap | null;
  #bytes: Uint8Array;
  #committed: Uint32Array;
  #end = MAPPED_DATA_START;

  private constructor(map: FileMap) {
    this.#map = map;
    this.#bytes = new Uint8Array(map.buffer);
    this.#committed = new Uint32Array(map.buffer, COMMITTED_AT, 1);
  }

  /**
   * Create `path` (it must not exist) as a mapped segment of `size` bytes, or null when this
   * host cannot: no FFI, not Linux, no space to reserve, a file system that cannot map.
   */
  static create(path: string, size: number): MappedSegment | null {
    const map = FileMap.create(path, Math.max(size, 2 * MAPPED_DATA_START));
    if (map === null) return null;
    const seg = new MappedSegment(map);
    enc.encodeInto(MAPPED_MAGIC, seg.#bytes);
    Atomics.store(seg.#committed, 0, MAPPED_DATA_START);
    return seg;
  }

  /** Bytes of lines written (the committed end, from the file's start). */
  get end(): number {
    return this.#end;
  }

  /**
   * Append one line (`text` ends with "\n"), growing the segment when it does not fit;
   * committed — visible to readers as complete — when this returns.
   * @throws when the segment cannot grow (no space) or is closed; nothing is committed then.
   */
  append(text: string): void {
    const map = this.#map;
    if (map === null) throw new Error("the intake segment is closed");
    // UTF-8 takes at most 3 bytes per UTF-16 unit: a line that surely fits is encoded in place.
    if (text.length * 3 > map.size - this.#end) {
      const bytes = enc.encode(text);
      let size = map.size;
      while (size - this.#end < bytes.length) size *= 2;
      if (size !== map.size) {
        if (!map.resize(size)) {
          throw new Error(`the intake segment could not grow to ${size} bytes (disk full?)`);
        }
        this.#bytes = new Uint8Array(map.buffer);
        this.#committed = new Uint32Array(map.buffer, COMMITTED_AT, 1);
      }
      this.#bytes.set(bytes, this.#end);
      this.#end += bytes.length;
    } else {
      this.#end += enc.encodeInto(text, this.#bytes.subarray(this.#end)).written;
    }
    Atomics.store(this.#committed, 0, this.#end);
  }

  /** Unmap and close (the file stays; its lines are committed). Idempotent. */
  close(): void {
    this.#map?.close();
    this.#map = null;
  }
}

/** What part of an intake file holds lines, as its reader should see it. */
export interface IntakeExtent {
  /** First byte of the first line. */
  start: number;
  /** End of the complete lines written so far (exclusive). */
  end: number;
  /** A mapped segment (bytes past `end` are reserved space, or a line never committed). */
  mapped: boolean;
}

/**
 * The extent of an open intake file: a plain segment holds lines from 0 to its size; a mapped
 * one from {@link MAPPED_DATA_START} to its committed end.
 */
export function intakeExtent(f: Deno.FsFile): IntakeExtent {
  const size = f.statSync().size;
  if (size < MAPPED_DATA_START) return { start: 0, end: size, mapped: false };
  const head = new Uint8Array(COMMITTED_AT + 4);
  f.seekSync(0, Deno.SeekMode.Start);
  let got = 0;
  while (got < head.length) {
    const n = f.readSync(head.subarray(got));
    if (n === null || n === 0) break;
    got += n;
  }
  if (got < head.length || new TextDecoder().decode(head.subarray(0, 8)) !== MAPPED_MAGIC) {
    return { start: 0, end: size, mapped: false };
  }
  const committed = new DataView(head.buffer).getUint32(COMMITTED_AT, true);
  const end = Math.min(Math.max(committed, MAPPED_DATA_START), size);
  return { start: MAPPED_DATA_START, end, mapped: true };
}

/**
 * Whether a mapped segment holds bytes past its committed end (a line a writer was copying
 * when it died). Reads one byte.
 */
export function uncommittedTail(f: Deno.FsFile, x: IntakeExtent): boolean {
  if (!x.mapped) return false;
  const b = new Uint8Array(1);
  f.seekSync(x.end, Deno.SeekMode.Start);
  const n = f.readSync(b);
  return n === 1 && b[0] !== 0;
}
