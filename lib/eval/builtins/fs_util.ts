/**
 * Filesystem helpers shared by the structured builtins (language §14) and the path methods
 * (§15.6): resolving against the *session* cwd (§17), the `ls`/`stat` row schema, and turning
 * Deno's OS errors into short, stable message tails.
 *
 * Nothing here touches the process cwd: every path is made absolute against the cwd the
 * caller passes in before the filesystem port (lib/eval/fs_port.ts) sees it.
 *
 * @module
 */

import { isAbsolute, join } from "node:path";
import type { Span } from "../../syntax/ast.ts";
import { DateTimeV, PathV, RecordV, SizeV, typeName, type Value } from "../../value/types.ts";
import { fail } from "../../value/errors.ts";
import { systemTimeZone } from "../../value/datetime.ts";
import type { FsInfo } from "../fs_port.ts";
import type { CmdArgs } from "./registry.ts";

/** `p` made absolute against `cwd`, lexically normalised (`a/../b` → `b`). */
export function absPath(cwd: string, p: string): string {
  return isAbsolute(p) ? p : join(cwd, p);
}

/**
 * The text of a str/path argument, else type_error «`head` expects a path, found T».
 * `what` names the command or method for the message.
 */
export function pathText(v: Value, what: string, span: Span | null): string {
  if (typeof v === "string") return v;
  if (v instanceof PathV) return v.path;
  throw fail("type_error", `${what} expects a path, found ${typeName(v)}`, null, span);
}

/**
 * The OS reason of a failed file operation without Deno's trailing call description:
 * «No such file or directory (os error 2)».
 */
export function osReason(e: unknown): string {
  const msg = e instanceof Error ? e.message : String(e);
  const m = /^(.*?\(os error \d+\))/.exec(msg);
  return m ? m[1] : msg;
}

/** True when `e` is "no such file or directory" (Deno's `NotFound`, by name: any FsPort). */
export function isNotFound(e: unknown): boolean {
  return e instanceof Error && e.name === "NotFound";
}

/** The `type` column of an `ls`/`stat` row for lstat info. */
export function entryType(info: FsInfo): string {
  if (info.isSymlink) return "symlink";
  if (info.isDirectory) return "dir";
  if (info.isFile) return "file";
  return "other";
}

/** A file time as a datetime in the system zone, or null when the platform has none. */
export function fileTime(d: Date | null): DateTimeV | null {
  if (d === null) return null;
  return new DateTimeV(BigInt(d.getTime()) * 1_000_000n, systemTimeZone());
}

/** The final component of an absolute path (the path itself for `/`). */
export function baseName(abs: string): string {
  const trimmed = abs.length > 1 ? abs.replace(/\/+$/, "") : abs;
  const i = trimmed.lastIndexOf("/");
  return i < 0 || trimmed === "/" ? trimmed : trimmed.slice(i + 1);
}

/**
 * The `ls`/`stat` row `{path, name, type, size, modified}` for `abs` from its lstat `info` (a
 * symlink is reported as itself).
 */
export function metaRow(abs: string, info: FsInfo): RecordV {
  return new RecordV(
    new Map<string, Value>([
      ["path", new PathV(abs)],
      ["name", baseName(abs)],
      ["type", entryType(info)],
      ["size", new SizeV(BigInt(info.size))],
      ["modified", fileTime(info.mtime)],
    ]),
  );
}

/** True when flag `short` or one of the long spellings was given. */
export function flag(args: CmdArgs, ...names: string[]): boolean {
  for (const n of names) {
    const v = args.flags.get(n);
    if (v !== undefined && v !== false) return true;
  }
  return false;
}

/** A name argument as str (`which`, `env`). */
export function nameArg(head: string, v: Value, span: Span): string {
  if (typeof v === "string") return v;
  if (v instanceof PathV) return v.path;
  throw fail("type_error", `${head} expects a name (str), found ${typeName(v)}`, null, span);
}
