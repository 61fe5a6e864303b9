/**
 * A file mapped `MAP_SHARED` into this process through FFI (Linux/glibc, `--allow-ffi`): every
 * process that maps the same file sees the same bytes at once. Used for the journal intake
 * segments (a copy into the page cache instead of a `write` per line) and for the cancel slots a
 * kernel shares with its session processes.
 *
 * Blocks are reserved up front (`posix_fallocate`): touching a page of a sparse mapping on a
 * full disk would kill the process with SIGBUS, where a failed reservation is just an error.
 *
 * @module
 */

const SYMBOLS = {
  open: { parameters: ["buffer", "i32", "u32"], result: "i32" },
  posix_fallocate: { parameters: ["i32", "i64", "i64"], result: "i32" },
  mmap: { parameters: ["pointer", "usize", "i32", "i32", "i32", "i64"], result: "pointer" },
  munmap: { parameters: ["pointer", "usize"], result: "i32" },
  close: { parameters: ["i32"], result: "i32" },
} as const;

const O_RDWR = 0o2, O_CREAT = 0o100, O_EXCL = 0o200, O_NOFOLLOW = 0o400000;
const O_CLOEXEC = 0o2000000;
const PROT_READ = 1, PROT_WRITE = 2, MAP_SHARED = 1;
const MAP_FAILED = -1n;

let libc: Deno.DynamicLibrary<typeof SYMBOLS>["symbols"] | null | undefined;

function load(): typeof libc {
  if (libc !== undefined) return libc;
  libc = null;
  if (Deno.build.os !== "linux") return null;
  try {
    // Ask first: without --allow-ffi, dlopen would prompt on a terminal or throw.
    if (Deno.permissions.querySync({ name: "ffi" }).state !== "granted") return null;
    libc = Deno.dlopen("libc.so.6", SYMBOLS).symbols;
  } catch {
    libc = null;
  }
  return libc;
}

/** True when files can be mapped here (FFI allowed, Linux/glibc). */
export function fileMapAvailable(): boolean {
  return load() !== null;
}

const enc = new TextEncoder();

/** One mapped file, owned by whoever opened it. */
export class FileMap {
  #fd: number;
  #ptr: Deno.PointerValue = null;
  #size = 0;
  #buffer: ArrayBuffer | null = null;

  private constructor(fd: number) {
    this.#fd = fd;
  }

  /**
   * Create `path` (it must not exist; never through a symlink) mapped at `size` bytes, mode
   * 0600; null when this host cannot (no FFI, not Linux, no space, a file system that cannot
   * map) — the file is removed again then.
   */
  static create(path: string, size: number): FileMap | null {
    return FileMap.#open(path, O_CREAT | O_EXCL, size);
  }

  /** Map an existing file of `size` bytes (created by another process); null when it cannot. */
  static open(path: string, size: number): FileMap | null {
    return FileMap.#open(path, 0, size);
  }

  static #open(path: string, flags: number, size: number): FileMap | null {
    const fn = load();
    if (!fn) return null;
    const fd = fn.open(enc.encode(path + "\0"), O_RDWR | O_NOFOLLOW | O_CLOEXEC | flags, 0o600);
    if (fd < 0) return null;
    const m = new FileMap(fd);
    if (!m.resize(size)) {
      fn.close(fd);
      if (flags & O_CREAT) {
        try {
          Deno.removeSync(path);
        } catch { /* nothing to keep */ }
      }
      return null;
    }
    return m;
  }

  /** The mapped bytes (a new buffer after {@link resize}; views of the old one must go). */
  get buffer(): ArrayBuffer {
    if (this.#buffer === null) throw new Error("the file mapping is closed");
    return this.#buffer;
  }

  /** Mapped size in bytes. */
  get size(): number {
    return this.#size;
  }

  /**
   * Reserve and map `size` bytes (the old mapping goes: drop every view of {@link buffer}
   * first); false when it cannot (the old mapping then stays).
   */
  resize(size: number): boolean {
    const fn = load()!;
    if (this.#fd < 0 || size <= 0 || size >= 2 ** 32) return false;
    if (fn.posix_fallocate(this.#fd, 0n, BigInt(size)) !== 0) return false;
    const p = fn.mmap(null, BigInt(size), PROT_READ | PROT_WRITE, MAP_SHARED, this.#fd, 0n);
    if (p === null || BigInt(Deno.UnsafePointer.value(p)) === MAP_FAILED) return false;
    this.#unmap();
    this.#ptr = p;
    this.#size = size;
    this.#buffer = Deno.UnsafePointerView.getArrayBuffer(p, size);
    return true;
  }

  #unmap(): void {
    if (this.#ptr === null) return;
    this.#buffer = null;
    load()!.munmap(this.#ptr, BigInt(this.#size));
    this.#ptr = null;
  }

  /** Unmap and close (the file stays). Touching an old view afterwards crashes the process. */
  close(): void {
    if (this.#fd < 0) return;
    this.#unmap();
    load()!.close(this.#fd);
    this.#fd = -1;
  }
}
