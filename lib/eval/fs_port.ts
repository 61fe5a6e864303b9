/**
 * The filesystem port: every file operation the evaluator performs (structured builtins, path
 * methods, `save`/`append`, builtin redirects, globbing, `cd`, scripts and modules, `watch`
 * and `tail`) goes through an {@link FsPort}, so a host (the kernel, a test) can observe,
 * confine or replace it. {@link denoFs} is the plain Deno implementation.
 *
 * Every path the evaluator passes is already absolute (resolved against the *session* cwd).
 * The port is synchronous where the call sites are (the evaluator stays synchronous on hot
 * paths); only `watch` yields events asynchronously. Failures throw: Deno's error classes are
 * the convention (an error whose `name` is `"NotFound"` is "no such file", the message tail
 * «… (os error N)» becomes the language error's reason), and any other thrown Error becomes
 * the caller's usual `custom`/`io_error` language error with that message.
 *
 * @module
 */

import { tmpdir } from "node:os";

/** What `stat`/`lstat` report (a structural subset of `Deno.FileInfo`). */
export interface FsInfo {
  isFile: boolean;
  isDirectory: boolean;
  isSymlink: boolean;
  /** Size in bytes. */
  size: number;
  /** Last modification time, or null when the platform has none. */
  mtime: Date | null;
  /** Permission bits, or null when the platform has none. */
  mode: number | null;
  /** Owner user id, or null when the platform has none. */
  uid: number | null;
}

/** One directory entry (`readDir`). */
export interface FsDirEntry {
  name: string;
  isFile: boolean;
  isDirectory: boolean;
  isSymlink: boolean;
}

/** How `open` opens a file (Deno's `OpenOptions` subset the evaluator uses). */
export interface FsOpenOptions {
  read?: boolean;
  write?: boolean;
  append?: boolean;
  create?: boolean;
}

/** An open file: partial reads (`head`, shebangs, `tail`) and streamed appends. */
export interface FsHandle {
  /** Read into `buf`; the byte count, or null at end of file. */
  read(buf: Uint8Array): number | null;
  /** Write (part of) `data`; the byte count written. */
  write(data: Uint8Array): number;
  /** Move to absolute byte offset `offset`. */
  seek(offset: number): void;
  /** The open file's info. */
  stat(): FsInfo;
  close(): void;
}

/** A filesystem change event (`Deno.FsEvent`'s shape). */
export interface FsEvent {
  /** `create`, `modify`, `remove`, `rename`, `access`, `any`, `other`. */
  kind: string;
  paths: string[];
}

/** A live filesystem watcher (`Deno.FsWatcher`'s shape). */
export interface FsWatcher extends AsyncIterable<FsEvent> {
  close(): void;
}

/** Everything the evaluator asks of the filesystem. */
export interface FsPort {
  /** Info about `path`, following symlinks. */
  stat(path: string): FsInfo;
  /** Info about `path` itself (a symlink is reported as a symlink). */
  lstat(path: string): FsInfo;
  /** The canonical absolute path (symlinks resolved). */
  realPath(path: string): string;
  /** The whole file. */
  readFile(path: string): Uint8Array;
  /** Replace (or with `append`, extend) the file, creating it when absent. */
  writeFile(path: string, data: Uint8Array, opts?: { append?: boolean }): void;
  /** Open a file for partial reads or streamed writes. */
  open(path: string, opts: FsOpenOptions): FsHandle;
  /** The entries of a directory (no `.`/`..`). */
  readDir(path: string): Iterable<FsDirEntry>;
  mkdir(path: string, opts?: { recursive?: boolean; mode?: number }): void;
  remove(path: string, opts?: { recursive?: boolean }): void;
  rename(from: string, to: string): void;
  copyFile(from: string, to: string): void;
  /** Create the symlink `path` whose stored target text is `target`. */
  symlink(target: string, path: string): void;
  /** Create the hard link `path` to the existing file `target`. */
  link(target: string, path: string): void;
  /** The stored target text of the symlink `path`. */
  readLink(path: string): string;
  /** Set access and modification times. */
  utime(path: string, atime: Date, mtime: Date): void;
  /** The system temp directory (the `rm` trash lives below it). */
  tempDir(): string;
  /** The user id files created here belong to (the trash must be ours), or null. */
  uid(): number | null;
  /** Watch `path` for changes (the OS watcher is registered immediately). */
  watch(path: string, opts: { recursive: boolean }): FsWatcher;
}

/** A Deno file as an {@link FsHandle}. */
function denoHandle(f: Deno.FsFile): FsHandle {
  return {
    read: (buf) => f.readSync(buf),
    write: (data) => f.writeSync(data),
    seek: (offset) => {
      f.seekSync(offset, Deno.SeekMode.Start);
    },
    stat: () => f.statSync(),
    close: () => f.close(),
  };
}

/** The real filesystem through Deno's synchronous file APIs. */
export const denoFs: FsPort = {
  stat: (path) => Deno.statSync(path),
  lstat: (path) => Deno.lstatSync(path),
  realPath: (path) => Deno.realPathSync(path),
  readFile: (path) => Deno.readFileSync(path),
  writeFile: (path, data, opts) => Deno.writeFileSync(path, data, { append: opts?.append }),
  open: (path, opts) => denoHandle(Deno.openSync(path, opts)),
  readDir: (path) => Deno.readDirSync(path),
  mkdir: (path, opts) => Deno.mkdirSync(path, opts),
  remove: (path, opts) => Deno.removeSync(path, opts),
  rename: (from, to) => Deno.renameSync(from, to),
  copyFile: (from, to) => Deno.copyFileSync(from, to),
  symlink: (target, path) => Deno.symlinkSync(target, path),
  link: (target, path) => Deno.linkSync(target, path),
  readLink: (path) => Deno.readLinkSync(path),
  utime: (path, atime, mtime) => Deno.utimeSync(path, atime, mtime),
  tempDir: () => tmpdir(),
  uid: () => Deno.uid(),
  watch: (path, opts) => Deno.watchFs(path, opts),
};

/**
 * The filesystem port of an interpreter: method tables see the evaluator as `Interp`, which
 * hides its ports (the same lookup `journaledWrite` does); anything without one gets
 * {@link denoFs}.
 */
export function fsOf(ip: unknown): FsPort {
  return (ip as { ports?: { fs?: FsPort } }).ports?.fs ?? denoFs;
}
