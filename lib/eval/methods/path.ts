/**
 * Path methods (language §15.6): the pure ones (`name stem ext parent join abs`) work on the
 * path's text like Rust's `Path`; the filesystem ones (`read read_bytes lines exists is_dir
 * is_file size modified`) resolve a relative path against the *session* cwd (§17). All of them
 * also work as fields (`p.name`, `p.exists`) through the dispatcher's field→method fallback.
 *
 * Missing files give `not_found` «<abs>: …» from read/read_bytes/lines/size/modified; other IO
 * failures give `custom`; non-UTF-8 content gives `utf8_error` from read/lines.
 *
 * @module
 */

import { BytesV, ListV, PathV, SizeV, typeName, type Value } from "../../value/types.ts";
import { fail, ShoalError } from "../../value/errors.ts";
import type { Interp, MethodArgs, MethodTable } from "../method_types.ts";
import { arity } from "./args.ts";
import { splitLines } from "./str.ts";
import { absPath, fileTime, isNotFound, osReason } from "../builtins/fs_util.ts";
import { type FsInfo, fsOf, type FsPort } from "../fs_port.ts";
import { doc } from "../docs.ts";

const STRICT = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** A path split like Rust's `Path::components` (`.` inside or at the end dropped). */
interface Parts {
  root: boolean;
  comps: string[];
}

function parts(p: string): Parts {
  const root = p.startsWith("/");
  const raw = p.split("/").filter((c) => c !== "");
  const comps = raw.filter((c, i) => c !== "." || (i === 0 && !root));
  return { root, comps };
}

function joinParts(root: boolean, comps: string[]): string {
  return (root ? "/" : "") + comps.join("/");
}

/** Rust `Path::file_name`: the last normal component, else null. */
export function fileName(p: string): string | null {
  const { comps } = parts(p);
  const last = comps[comps.length - 1];
  if (last === undefined || last === "." || last === "..") return null;
  return last;
}

/** Split a file name at its last dot (Rust `rsplit_file_at_dot`): [stem, ext|null]. */
function splitDot(name: string): [string, string | null] {
  if (name === "..") return [name, null];
  const i = name.lastIndexOf(".");
  if (i <= 0) return [name, null];
  return [name.slice(0, i), name.slice(i + 1)];
}

/** Rust `Path::parent`, with an empty parent (`a.txt`) reported as null. */
export function parentOf(p: string): string | null {
  const { root, comps } = parts(p);
  if (comps.length === 0) return null;
  const rest = comps.slice(0, -1);
  if (rest.length === 0 && !root) return null;
  return joinParts(root, rest);
}

/** Rust `PathBuf::join`: an absolute segment replaces, else appended with one `/`. */
export function joinPath(base: string, seg: string): string {
  if (seg.startsWith("/") || base === "") return seg;
  return base.endsWith("/") ? base + seg : `${base}/${seg}`;
}

function pathOf(recv: Value): string {
  return (recv as PathV).path;
}

/** A method taking no arguments. */
function pure(name: string, f: (p: string, ip: Interp) => Value) {
  return (ip: Interp, recv: Value, args: MethodArgs): Value => {
    arity(name, args, 0, 0);
    return f(pathOf(recv), ip);
  };
}

/** Raise the error for a failed filesystem method on `abs`. */
function fsFail(verb: string, abs: string, e: unknown, span: MethodArgs["span"]): Error {
  if (isNotFound(e)) return fail("not_found", `${abs}: ${osReason(e)}`, null, span);
  return fail("custom", `${verb} ${abs}: ${osReason(e)}`, null, span);
}

/** A filesystem method: no arguments, the path resolved against the session cwd. */
function fsMethod(name: string, f: (abs: string, fs: FsPort) => Value) {
  return (ip: Interp, recv: Value, args: MethodArgs): Value => {
    arity(name, args, 0, 0);
    const abs = absPath(ip.cwd(), pathOf(recv));
    try {
      return f(abs, fsOf(ip));
    } catch (e) {
      if (e instanceof ShoalError) throw e;
      throw fsFail(name, abs, e, args.span);
    }
  };
}

function readText(fs: FsPort, abs: string, span: MethodArgs["span"]): string {
  const data = fs.readFile(abs);
  try {
    return STRICT.decode(data);
  } catch {
    throw fail(
      "utf8_error",
      `${abs}: file is not valid UTF-8`,
      "use .read_bytes() for binary content",
      span,
    );
  }
}

/** True when `p` (against the session cwd) can be stat'ed and `test` holds (false on any error). */
function statTest(ip: Interp, p: string, test: (i: FsInfo) => boolean): boolean {
  try {
    return test(fsOf(ip).stat(absPath(ip.cwd(), p)));
  } catch {
    return false;
  }
}

/** The path method table. */
export const PATH_METHODS: MethodTable = {
  // An `ls` row's column is `path`; a path from `glob` answers to the same name.
  path: doc(
    ".path -> path",
    "the path itself (as an ls row's .path)",
    pure("path", (p) => new PathV(p)),
  ),
  name: doc(".name -> str", "the last component (file name)", pure("name", (p) => fileName(p))),
  stem: doc(
    ".stem -> str",
    "the name without its extension",
    pure("stem", (p) => {
      const n = fileName(p);
      return n === null ? null : splitDot(n)[0];
    }),
  ),
  ext: doc(
    ".ext -> str | null",
    "the extension, without the dot",
    pure("ext", (p) => {
      const n = fileName(p);
      return n === null ? null : splitDot(n)[1];
    }),
  ),
  parent: doc(
    ".parent -> path | null",
    "the directory it is in",
    pure("parent", (p) => {
      const q = parentOf(p);
      return q === null ? null : new PathV(q);
    }),
  ),
  abs: doc(
    ".abs() -> path",
    "made absolute against the session cwd",
    pure("abs", (p, ip) => new PathV(absPath(ip.cwd(), p))),
  ),
  join: doc(".join(part: str | path) -> path", "a path below this one", (_ip, recv, args) => {
    arity("join", args, 1, 1);
    const seg = args.pos[0];
    let s: string;
    if (typeof seg === "string") s = seg;
    else if (seg instanceof PathV) s = seg.path;
    else {
      throw fail(
        "type_error",
        `path .join expects a str or path, found ${typeName(seg)}`,
        null,
        args.span,
      );
    }
    return new PathV(joinPath(pathOf(recv), s));
  }),
  read: doc(
    ".read() -> str",
    "the file's text (UTF-8)",
    (ip, recv, args) => fsMethod("read", (abs, fs) => readText(fs, abs, args.span))(ip, recv, args),
  ),
  read_bytes: doc(
    ".read_bytes() -> bytes",
    "the file's bytes",
    fsMethod("read_bytes", (abs, fs) => new BytesV(fs.readFile(abs))),
  ),
  lines: doc(
    ".lines() -> list<str>",
    "the file's lines",
    (ip, recv, args) =>
      fsMethod("lines", (abs, fs) => new ListV(splitLines(readText(fs, abs, args.span))))(
        ip,
        recv,
        args,
      ),
  ),
  exists: doc(
    ".exists() -> bool",
    "true if something is there",
    pure("exists", (p, ip) => statTest(ip, p, () => true)),
  ),
  is_dir: doc(
    ".is_dir() -> bool",
    "true for a directory",
    pure("is_dir", (p, ip) => statTest(ip, p, (i) => i.isDirectory)),
  ),
  is_file: doc(
    ".is_file() -> bool",
    "true for a regular file",
    pure("is_file", (p, ip) => statTest(ip, p, (i) => i.isFile)),
  ),
  type: doc(
    ".type -> str | null",
    'what is there, as ls says it: "file", "dir", "symlink" or "other"; null for nothing',
    pure("type", (p, ip) => {
      try {
        const i = fsOf(ip).lstat(absPath(ip.cwd(), p));
        return i.isSymlink ? "symlink" : i.isDirectory ? "dir" : i.isFile ? "file" : "other";
      } catch {
        return null;
      }
    }),
  ),
  size: doc(
    ".size -> size",
    "the file's size (1.2kb)",
    fsMethod("size", (abs, fs) => new SizeV(BigInt(fs.stat(abs).size))),
  ),
  modified: doc(
    ".modified -> datetime | null",
    "when the file last changed",
    fsMethod("modified", (abs, fs) => fileTime(fs.stat(abs).mtime)),
  ),
};
