/**
 * The structured filesystem and environment builtins (language §14): `ls cat head stat mkdir
 * touch cp mv rm ln env sleep` (`which` is Reef's: builtins/reef.ts), plus the registration of the path method table
 * (§15.6). Each returns a plain value; the dispatcher wraps it in a successful outcome and
 * applies builtin redirects (§9.4, §10.3).
 *
 * Error codes follow the corpus (spec/conformance.md §4.2, §7): wrong argument counts are
 * `arg_error`, wrong argument types `type_error`, and filesystem failures (missing files
 * included) are `custom` with a «verb <path>: <OS reason>» message.
 *
 * Relative paths resolve against the session cwd; results carry absolute paths (§17).
 *
 * @module
 */

import { join } from "node:path";
import type { Span, TypeRef } from "../../syntax/ast.ts";
import {
  BytesV,
  DateTimeV,
  DurationV,
  GlobV,
  isInt,
  ListV,
  PathV,
  RecordV,
  SizeV,
  TableV,
  typeName,
  type Value,
} from "../../value/types.ts";
import { fail, ShoalError } from "../../value/errors.ts";
import { coerceWord } from "../../value/coerce.ts";
import { comparePaths } from "../../value/compare.ts";
import { callMethod, registerMethods } from "../dispatch.ts";
import type { MaybePromise } from "../maybe.ts";
import { PATH_METHODS } from "../methods/path.ts";
import type { Evaluator } from "../evaluator.ts";
import type { FsInfo, FsPort } from "../fs_port.ts";
import { type BuiltinCtx, type CmdArgs, registerBuiltin, registerCallForm } from "./registry.ts";
import { absPath, baseName, flag, metaRow, nameArg, osReason, pathText } from "./fs_util.ts";
import { doc } from "../docs.ts";
import {
  CAT_FLAGS,
  CP_FLAGS,
  ENV_FLAGS,
  HEAD_FLAGS,
  LN_FLAGS,
  LS_FLAGS,
  MKDIR_FLAGS,
  MV_FLAGS,
  RM_FLAGS,
  SLEEP_FLAGS,
  STAT_FLAGS,
  TOUCH_FLAGS,
} from "./gnu_flags.ts";

registerMethods("path", PATH_METHODS);

const LOSSY = new TextDecoder("utf-8", { ignoreBOM: true });

/**
 * The positional values as path values: a glob value is expanded now and a list spread
 * (`rm (glob("*.tmp"))`, `cat (files)`), as the same words would be; anything else as it is.
 */
function spreadPaths(ctx: BuiltinCtx, args: CmdArgs): Value[] {
  if (!args.pos.some((v) => v instanceof GlobV || v instanceof ListV)) return args.pos;
  const out: Value[] = [];
  for (const v of args.pos) {
    if (v instanceof GlobV) out.push(...ctx.ev.expandGlob(v, args.span));
    else if (v instanceof ListV) out.push(...v.items);
    else out.push(v);
  }
  return out;
}

/** The positional values as absolute paths (type_error for non-path values). */
function absArgs(ctx: BuiltinCtx, head: string, args: CmdArgs): string[] {
  return spreadPaths(ctx, args).map((v) => absPath(ctx.ev.cwd(), pathText(v, head, args.span)));
}

/** A `custom` filesystem failure «verb path: reason» (never a JS exception). */
function fsError(verb: string, path: string, e: unknown, span: Span): ShoalError {
  if (e instanceof ShoalError) return e;
  return fail("custom", `${verb} ${path}: ${osReason(e)}`, null, span);
}

function lstatOrNull(fs: FsPort, p: string): FsInfo | null {
  try {
    return fs.lstat(p);
  } catch {
    return null;
  }
}

function isDir(fs: FsPort, p: string): boolean {
  try {
    return fs.stat(p).isDirectory;
  } catch {
    return false;
  }
}

// ---- ls / stat / cat / head -----------------------------------------------------------------

registerBuiltin(
  "ls",
  doc(
    "ls [-a] [-t|-S] [-r] [-d] [PATH…] -> table",
    "rows of {path, name, type, size, modified}; a dir lists its entries",
    {
      flags: LS_FLAGS,
      structured: true,
      run(ctx, args) {
        const all = flag(args, "all");
        const itself = flag(args, "directory");
        const targets = args.pos.length ? absArgs(ctx, "ls", args) : [ctx.ev.cwd()];
        const fs = ctx.ev.ports.fs;
        const rows: RecordV[] = [];
        for (const t of targets) {
          ctx.ev.checkCancelled();
          let info: FsInfo;
          try {
            info = fs.stat(t);
          } catch (e) {
            // A dangling symlink is still an entry to list.
            const l = lstatOrNull(fs, t);
            if (l === null) throw fsError("ls", t, e, args.span);
            rows.push(metaRow(t, l));
            continue;
          }
          if (!info.isDirectory || itself) {
            try {
              rows.push(metaRow(t, fs.lstat(t)));
            } catch (e) {
              throw fsError("ls", t, e, args.span);
            }
            continue;
          }
          try {
            for (const e of fs.readDir(t)) {
              if (!all && e.name.startsWith(".")) continue;
              const p = join(t, e.name);
              const l = lstatOrNull(fs, p);
              if (l !== null) rows.push(metaRow(p, l));
            }
          } catch (e) {
            throw fsError("ls", t, e, args.span);
          }
        }
        rows.sort((a, b) =>
          comparePaths((a.fields.get("path") as PathV).path, (b.fields.get("path") as PathV).path)
        );
        // GNU order flags: -t newest first, -S largest first (ties stay by path), -r reverses.
        const key = flag(args, "time") ? "modified" : flag(args, "size_sort") ? "size" : null;
        if (key !== null) rows.sort((a, b) => rowKey(b, key) - rowKey(a, key));
        if (flag(args, "reverse")) rows.reverse();
        return new TableV(rows);
      },
    },
  ),
);

/** A row's `modified` (ms) or `size` (bytes) as a number for sorting; absent sorts last. */
function rowKey(row: RecordV, key: "modified" | "size"): number {
  const v = row.fields.get(key);
  if (v instanceof DateTimeV) return Number(v.ns / 1_000_000n);
  if (v instanceof SizeV) return Number(v.bytes);
  return -Infinity;
}

registerBuiltin(
  "stat",
  doc("stat PATH… -> record | table", "the ls row of each path itself", {
    flags: STAT_FLAGS,
    structured: true,
    run(ctx, args) {
      if (args.pos.length === 0) throw fail("arg_error", "stat expects a path", null, args.span);
      const rows = absArgs(ctx, "stat", args).map((p) => {
        try {
          return metaRow(p, ctx.ev.ports.fs.lstat(p));
        } catch (e) {
          throw fsError("stat", p, e, args.span);
        }
      });
      return rows.length === 1 ? rows[0] : new TableV(rows);
    },
  }),
);

registerBuiltin(
  "cat",
  doc("cat PATH… -> bytes", "the files' bytes, joined (.str() or .lines() for text)", {
    flags: CAT_FLAGS,
    structured: true,
    run(ctx, args) {
      if (args.pos.length === 0) throw fail("arg_error", "cat expects a path", null, args.span);
      const parts: Uint8Array[] = [];
      let total = 0;
      for (const p of absArgs(ctx, "cat", args)) {
        ctx.ev.checkCancelled();
        try {
          const d = ctx.ev.ports.fs.readFile(p);
          parts.push(d);
          total += d.length;
        } catch (e) {
          throw fsError("read", p, e, args.span);
        }
      }
      if (parts.length === 1) return new BytesV(parts[0]);
      const out = new Uint8Array(total);
      let at = 0;
      for (const d of parts) {
        out.set(d, at);
        at += d.length;
      }
      return new BytesV(out);
    },
  }),
);

/** The `head` line (or byte) count: int or numeric str (≥ 0). */
function headCount(v: Value | undefined, span: Span, what = "line"): number {
  if (v === undefined) return 10;
  let n: Value = v;
  if (typeof v === "string") {
    if (!/^\+?\d+$/.test(v.trim())) {
      throw fail("arg_error", `head: expected a ${what} count, found "${v}"`, null, span);
    }
    n = Number(v.trim());
  }
  if (!isInt(n)) {
    throw fail(
      "type_error",
      `head: ${what} count must be an int, found ${typeName(v)}`,
      null,
      span,
    );
  }
  if (n < 0) throw fail("arg_error", `head: ${what} count cannot be negative`, null, span);
  return Number(n);
}

/** The first `count` bytes of a file, reading no more than that. */
function firstBytes(fs: FsPort, path: string, count: number): Uint8Array {
  const out = new Uint8Array(count);
  let got = 0;
  const f = fs.open(path, { read: true });
  try {
    while (got < count) {
      const n = f.read(out.subarray(got));
      if (n === null || n === 0) break;
      got += n;
    }
  } finally {
    f.close();
  }
  return out.slice(0, got);
}

/** The first `count` lines of a file, reading only as much as needed. */
function firstLines(fs: FsPort, path: string, count: number): string[] {
  const lines: string[] = [];
  if (count === 0) {
    fs.stat(path);
    return lines;
  }
  const f = fs.open(path, { read: true });
  try {
    const buf = new Uint8Array(64 * 1024);
    let pending: Uint8Array[] = [];
    const flush = (tail: Uint8Array) => {
      pending.push(tail);
      let len = 0;
      for (const p of pending) len += p.length;
      const all = new Uint8Array(len);
      let at = 0;
      for (const p of pending) {
        all.set(p, at);
        at += p.length;
      }
      pending = [];
      let text = LOSSY.decode(all);
      if (text.endsWith("\r")) text = text.slice(0, -1);
      lines.push(text);
    };
    while (lines.length < count) {
      const n = f.read(buf);
      if (n === null) {
        if (pending.length) flush(new Uint8Array(0));
        break;
      }
      let start = 0;
      for (let i = 0; i < n && lines.length < count; i++) {
        if (buf[i] === 10) {
          flush(buf.slice(start, i));
          start = i + 1;
        }
      }
      if (lines.length < count && start < n) pending.push(buf.slice(start, n));
    }
  } finally {
    f.close();
  }
  return lines;
}

registerBuiltin(
  "head",
  doc(
    "head [-n N | -N | -c N] PATH -> list<str> | bytes",
    "the first N lines (default 10), or with -c the first N bytes",
    {
      flags: HEAD_FLAGS,
      structured: true,
      run(ctx, args) {
        const lines = args.flags.get("lines");
        const bytes = args.flags.get("bytes");
        const legacy = lines === undefined && bytes === undefined && args.pos.length === 2;
        const paths = legacy ? 1 : args.pos.length;
        if (paths === 0) throw fail("arg_error", "head expects a path", null, args.span);
        if (paths > 1) {
          throw fail(
            "arg_error",
            `head reads one file, got ${args.pos.length} arguments`,
            "for several: [a, b].map(f => head -n 3 (f)), or sh { head -n 3 a b }",
            args.span,
          );
        }
        const p = absPath(ctx.ev.cwd(), pathText(args.pos[0], "head", args.span));
        try {
          // -c N: the first N bytes, as bytes (GNU head -c).
          if (bytes !== undefined) {
            return new BytesV(firstBytes(ctx.ev.ports.fs, p, headCount(bytes, args.span, "byte")));
          }
          const count = headCount(legacy ? args.pos[1] : lines, args.span, "line");
          return new ListV(firstLines(ctx.ev.ports.fs, p, count));
        } catch (e) {
          throw fsError("read", p, e, args.span);
        }
      },
    },
  ),
);

// ---- mkdir / touch ----------------------------------------------------------------------------

/** `mkdir -m 755`: an octal mode, or null. */
function modeFlag(args: CmdArgs): number | null {
  const v = args.flags.get("mode");
  if (v === undefined) return null;
  const text = typeof v === "string" ? v : isInt(v) ? String(v) : "";
  if (!/^[0-7]{1,4}$/.test(text)) {
    throw fail(
      "arg_error",
      `mkdir: -m expects an octal mode like 755, found ${text || typeName(v)}`,
      null,
      args.span,
    );
  }
  return parseInt(text, 8);
}

registerBuiltin(
  "mkdir",
  doc("mkdir [-p] [-m MODE] DIR… -> list<path>", "make directories", {
    flags: MKDIR_FLAGS,
    structured: true,
    run(ctx, args) {
      if (args.pos.length === 0) throw fail("arg_error", "mkdir expects a path", null, args.span);
      const parents = flag(args, "parents");
      const mode = modeFlag(args);
      return new ListV(
        absArgs(ctx, "mkdir", args).map((p) => {
          try {
            ctx.ev.ports.fs.mkdir(p, { recursive: parents, ...(mode === null ? {} : { mode }) });
          } catch (e) {
            throw fsError("mkdir", p, e, args.span);
          }
          ctx.ev.ports.journal?.effect({ kind: "fs_write", paths: [p] }); // issue 7
          return new PathV(p);
        }),
      );
    },
  }),
);

registerBuiltin(
  "touch",
  doc("touch [-c] PATH… -> list<path>", "create files or update their modified time", {
    flags: TOUCH_FLAGS,
    structured: true,
    run(ctx, args) {
      if (args.pos.length === 0) throw fail("arg_error", "touch expects a path", null, args.span);
      const fs = ctx.ev.ports.fs;
      return new ListV(
        absArgs(ctx, "touch", args).map((p) => {
          try {
            // Existing entries (directories included) only get a new mtime.
            if (lstatOrNull(fs, p) === null) {
              if (flag(args, "no_create")) return null; // touch -c: never creates
              fs.open(p, { create: true, write: true }).close();
            }
            const now = new Date();
            fs.utime(p, now, now);
          } catch (e) {
            throw fsError("touch", p, e, args.span);
          }
          ctx.ev.ports.journal?.effect({ kind: "fs_write", paths: [p] }); // issue 7
          return new PathV(p);
        }).filter((p) => p !== null),
      );
    },
  }),
);

// ---- cp / mv ----------------------------------------------------------------------------------

/** Copy a file, symlink or (recursively) directory `src` to the new path `dst`. */
function copyTree(ev: Evaluator, src: string, dst: string): void {
  ev.checkCancelled();
  const fs = ev.ports.fs;
  const info = fs.lstat(src);
  if (info.isSymlink) {
    fs.symlink(fs.readLink(src), dst);
  } else if (info.isDirectory) {
    fs.mkdir(dst, { recursive: true, mode: info.mode ?? 0o777 });
    for (const e of fs.readDir(src)) copyTree(ev, join(src, e.name), join(dst, e.name));
  } else {
    fs.copyFile(src, dst);
  }
}

/** True when `p` is `dir` itself or inside it. */
function within(p: string, dir: string): boolean {
  return p === dir || p.startsWith(dir.endsWith("/") ? dir : dir + "/");
}

/** Sources and the per-source targets of `cp`/`mv` (dest dir ⇒ dest/name). */
function plan(
  ctx: BuiltinCtx,
  head: "cp" | "mv",
  args: CmdArgs,
): { srcs: string[]; targets: string[] } {
  if (args.pos.length < 2) {
    throw fail("arg_error", `${head} expects a source and a destination`, null, args.span);
  }
  const all = absArgs(ctx, head, args);
  const srcs = all.slice(0, -1);
  const dest = all[all.length - 1];
  const destIsDir = isDir(ctx.ev.ports.fs, dest);
  if (srcs.length > 1 && !destIsDir) {
    throw fail(
      "arg_error",
      `${head}: copying several sources needs an existing directory as the destination`,
      null,
      args.span,
    );
  }
  const targets = srcs.map((s) => (destIsDir ? join(dest, baseName(s)) : dest));
  return { srcs, targets };
}

registerBuiltin(
  "cp",
  doc("cp [-r] [-n] SRC… DEST -> list<path>", "copy files (directories with -r)", {
    flags: CP_FLAGS,
    structured: true,
    run(ctx, args) {
      const recursive = flag(args, "r", "R", "recursive");
      const { srcs, targets } = plan(ctx, "cp", args);
      // Check every source before copying anything.
      const infos = srcs.map((s) => {
        try {
          return ctx.ev.ports.fs.lstat(s);
        } catch (e) {
          throw fsError("copy", s, e, args.span);
        }
      });
      infos.forEach((info, i) => {
        if (info.isDirectory && !recursive) {
          throw fail("arg_error", "cp: directory requires --recursive", null, args.span);
        }
        if (info.isDirectory && within(targets[i], srcs[i])) {
          throw fail(
            "custom",
            `copy ${srcs[i]}: cannot copy a directory into itself`,
            null,
            args.span,
          );
        }
      });
      const keep = flag(args, "no_clobber");
      const fs = ctx.ev.ports.fs;
      const copied = srcs.map((s, i) => {
        const t = targets[i];
        // cp -n: an existing target stays as it is (and is not in the result).
        if (keep && lstatOrNull(fs, t) !== null) return null;
        try {
          if (infos[i].isDirectory) copyTree(ctx.ev, s, t);
          else if (s !== t) ctx.ev.ports.fs.copyFile(s, t);
        } catch (e) {
          throw fsError("copy", s, e, args.span);
        }
        ctx.ev.ports.journal?.effect({ kind: "fs_write", paths: [t] }); // issue 7
        return new PathV(t);
      });
      return new ListV(copied.filter((p) => p !== null));
    },
  }),
);

/** True for EXDEV (rename across filesystems). */
function crossDevice(e: unknown): boolean {
  return /os error 18\)/.test(e instanceof Error ? e.message : "");
}

/** Rename, falling back to copy + delete across filesystems. */
function moveEntry(ev: Evaluator, src: string, dst: string): void {
  try {
    ev.ports.fs.rename(src, dst);
  } catch (e) {
    if (!crossDevice(e)) throw e;
    copyTree(ev, src, dst);
    ev.ports.fs.remove(src, { recursive: true });
  }
}

registerBuiltin(
  "mv",
  doc("mv [-n] SRC… DEST -> list<path>", "move or rename", {
    flags: MV_FLAGS,
    structured: true,
    run(ctx, args) {
      const { srcs, targets } = plan(ctx, "mv", args);
      for (const s of srcs) {
        if (lstatOrNull(ctx.ev.ports.fs, s) === null) {
          throw fail(
            "custom",
            `move ${s}: No such file or directory (os error 2)`,
            null,
            args.span,
          );
        }
      }
      const keep = flag(args, "no_clobber");
      const moved = srcs.map((s, i) => {
        const t = targets[i];
        // mv -n: an existing target stays as it is (and the source where it was).
        if (keep && s !== t && lstatOrNull(ctx.ev.ports.fs, t) !== null) return null;
        try {
          if (s !== t) moveEntry(ctx.ev, s, t);
        } catch (e) {
          throw fsError("move", s, e, args.span);
        }
        // Journal (issue 7): effects and the move-back inverse.
        const jp = ctx.ev.ports.journal;
        if (jp && s !== t) {
          jp.effect({ kind: "fs_delete", paths: [s] });
          jp.effect({ kind: "fs_write", paths: [t] });
          jp.undoable({ kind: "move_back", from: t, to: s });
        }
        return new PathV(t);
      });
      return new ListV(moved.filter((p) => p !== null));
    },
  }),
);

// ---- rm ---------------------------------------------------------------------------------------

/** The process-wide trash sequence (language §14: a global sequence). */
let trashSeq = 0;

/**
 * Where `rm` moves things: `<state dir>/trash` — it outlives reboots and the content-store
 * GC — or, for a host with no state directory, `<system temp>/shoal-trash/<pid>`.
 */
export function trashDir(ev: Evaluator): string {
  return ev.stateDir !== null
    ? join(ev.stateDir, "trash")
    : join(ev.ports.fs.tempDir(), "shoal-trash", String(Deno.pid));
}

/** A trash name that no earlier session used: time, sequence and the original name. */
function trashName(ev: Evaluator, dir: string, p: string): string {
  const stamp = new Date(Number(ev.now().ns / 1_000_000n)).toISOString().replace(/[-:.]/g, "");
  for (;;) {
    const t = join(dir, `${stamp}-${++trashSeq}-${baseName(p)}`);
    if (lstatOrNull(ev.ports.fs, t) === null) return t;
  }
}

/** A Shoal literal of `s` for a command the user can resend (`mv '…' '…'`). */
function literal(s: string): string {
  if (!/['\n\r]/.test(s)) return `'${s}'`;
  return JSON.stringify(s).replace(/[{}]/g, (c) => `\\${c}`);
}

registerBuiltin(
  "rm",
  doc(
    "rm [-r] [-f] [--permanent] PATH… -> list",
    "move to the trash (undo restores); --permanent deletes",
    {
      flags: RM_FLAGS,
      structured: true,
      run(ctx, args) {
        const force = flag(args, "force");
        if (args.pos.length === 0) {
          if (force) return new ListV([]); // rm -f with nothing to remove is fine, as in GNU
          throw fail(
            "no_matches",
            "rm: no paths to remove",
            "a glob that matches nothing passes no paths",
            args.span,
          );
        }
        const permanent = flag(args, "permanent");
        const recursive = flag(args, "recursive");
        let paths = absArgs(ctx, "rm", args);
        // Never the root, `.` or `..` (checked on the words as written: resolving them first
        // would turn `sub/..` into the directory itself).
        spreadPaths(ctx, args).forEach((v, i) => {
          const text = pathText(v, "rm", args.span).replace(/\/+$/, "");
          const last = text.slice(text.lastIndexOf("/") + 1);
          if (paths[i] === "/" || text === "" || last === "." || last === "..") {
            throw fail(
              "custom",
              `rm ${pathText(v, "rm", args.span)}: refusing to remove \`/\`, \`.\` or \`..\``,
              null,
              args.span,
            );
          }
        });
        const verb = permanent ? "remove" : "trash";
        const fs = ctx.ev.ports.fs;
        // rm -f: what is not there is simply skipped.
        if (force) paths = paths.filter((p) => lstatOrNull(fs, p) !== null);
        // Every path must exist (and be removable) before anything is removed.
        for (const p of paths) {
          let info: FsInfo;
          try {
            info = fs.lstat(p);
          } catch (e) {
            throw fsError(verb, p, e, args.span);
          }
          if (permanent && info.isDirectory && !recursive) {
            throw fail("custom", `remove ${p}: is a directory (use -r)`, null, args.span);
          }
        }
        if (permanent) {
          return new ListV(paths.map((p) => {
            try {
              fs.remove(p, { recursive });
            } catch (e) {
              throw fsError("remove", p, e, args.span);
            }
            ctx.ev.ports.journal?.effect({ kind: "fs_delete", paths: [p] }); // issue 7: no inverse
            return new PathV(p);
          }));
        }
        if (paths.length === 0) return new ListV([]);
        const dir = trashDir(ctx.ev);
        try {
          fs.mkdir(dir, { recursive: true, mode: 0o700 });
        } catch (e) {
          throw fsError("trash", dir, e, args.span);
        }
        // The temp dir is shared: never move files into a directory someone else controls.
        const st = lstatOrNull(fs, dir);
        const uid = fs.uid();
        if (st === null || !st.isDirectory || (uid !== null && st.uid !== uid)) {
          throw fail(
            "custom",
            `trash ${dir}: not a private directory of this user`,
            null,
            args.span,
          );
        }
        return new ListV(paths.map((p) => {
          const t = trashName(ctx.ev, dir, p);
          try {
            moveEntry(ctx.ev, p, t);
          } catch (e) {
            throw fsError("trash", p, e, args.span);
          }
          // Journal (issue 7): the trash move is reversible.
          ctx.ev.ports.journal?.effect({ kind: "fs_delete", paths: [p] });
          ctx.ev.ports.journal?.undoable({ kind: "trash_move", original: p, trash: t });
          // Where it went, and the command that puts it back (`undo` does too, in a journal).
          return new RecordV(
            new Map<string, Value>([
              ["path", new PathV(p)],
              ["trash", new PathV(t)],
              ["restore", `mv ${literal(t)} ${literal(p)}`],
            ]),
          );
        }));
      },
    },
  ),
);

// ---- ln ---------------------------------------------------------------------------------------

registerBuiltin(
  "ln",
  doc("ln [-s] [-f] TARGET LINK -> record", "make a hard (or with -s symbolic) link", {
    flags: LN_FLAGS,
    structured: true,
    run(ctx, args) {
      if (args.pos.length !== 2) {
        throw fail(
          "arg_error",
          `ln expects a target and a link name, got ${args.pos.length} argument${
            args.pos.length === 1 ? "" : "s"
          }`,
          null,
          args.span,
        );
      }
      const symbolic = flag(args, "s", "symbolic");
      const target = pathText(args.pos[0], "ln", args.span);
      const link = absPath(ctx.ev.cwd(), pathText(args.pos[1], "ln", args.span));
      // A symlink stores its target text as given (resolved later relative to the link's dir);
      // a hard link needs the real file.
      const targetOut = symbolic ? target : absPath(ctx.ev.cwd(), target);
      try {
        // ln -f: an existing link name (not a directory) is replaced.
        const old = flag(args, "force") ? lstatOrNull(ctx.ev.ports.fs, link) : null;
        if (old !== null && !old.isDirectory) ctx.ev.ports.fs.remove(link);
        if (symbolic) ctx.ev.ports.fs.symlink(target, link);
        else ctx.ev.ports.fs.link(targetOut, link);
      } catch (e) {
        throw fsError("link", link, e, args.span);
      }
      return new RecordV(
        new Map<string, Value>([
          ["target", new PathV(targetOut)],
          ["link", new PathV(link)],
          ["symbolic", symbolic],
        ]),
      );
    },
  }),
);

// ---- env / sleep ----------------------------------------------------------------------

registerBuiltin(
  "env",
  doc("env [NAME] -> record | str | null", "the session environment, or one variable", {
    flags: ENV_FLAGS,
    structured: true,
    run(ctx, args) {
      if (args.pos.length > 1) {
        throw fail(
          "arg_error",
          `env takes at most one name, got ${args.pos.length}`,
          null,
          args.span,
        );
      }
      // Prefix assignments (`FOO=1 env FOO`) are visible to this invocation only.
      const env = new Map(ctx.ev.env());
      for (const p of ctx.cmd.env) env.set(p.name, p.value);
      if (args.pos.length === 0) return new RecordV(env);
      return env.get(nameArg("env", args.pos[0], args.span)) ?? null;
    },
  }),
);

const DURATION: TypeRef = { name: "duration", args: [], optional: false, span: [0, 0] };

registerBuiltin(
  "sleep",
  doc("sleep DURATION", "wait (2s, 500ms, 1m, or seconds: 0.5)", {
    flags: SLEEP_FLAGS,
    structured: true,
    run(ctx, args) {
      if (args.pos.length !== 1) {
        throw fail(
          "arg_error",
          `sleep expects one duration, got ${args.pos.length} arguments`,
          null,
          args.span,
        );
      }
      let d: Value = args.pos[0];
      // GNU sleep takes fractional seconds: `sleep 0.5`.
      if (typeof d === "string" && /^\d*\.\d+$/.test(d)) {
        d = new DurationV(BigInt(Math.round(Number(d) * 1e9)));
      } else if (typeof d === "string") {
        try {
          d = coerceWord(d, DURATION);
        } catch {
          throw fail(
            "type_error",
            `sleep expects a duration, found "${d}"`,
            "a number of seconds (0.5) or units ns us ms s m h d w, combined as in 1m30s",
            args.span,
          );
        }
      } else if (isInt(d)) d = new DurationV(BigInt(d) * 1_000_000_000n);
      if (!(d instanceof DurationV)) {
        throw fail("type_error", `sleep expects a duration, found ${typeName(d)}`, null, args.span);
      }
      if (d.ns < 0n) throw fail("type_error", "sleep duration cannot be negative", null, args.span);
      const ms = Number(d.ns / 1_000_000n);
      if (ms === 0) return null;
      return cancellableSleep(ctx.ev, ms).then(() => null);
    },
  }),
);

/** Sleep `ms` on the evaluator's clock, ending early (with `cancelled`) on cancellation. */
async function cancellableSleep(ev: Evaluator, ms: number): Promise<void> {
  await ev.withCancelSignal(async (signal) => {
    if (signal === undefined) return await ev.ports.clock.sleep(ms);
    let onAbort: (() => void) | null = null;
    const aborted = new Promise<void>((resolve) => {
      onAbort = () => resolve();
      signal.addEventListener("abort", onAbort, { once: true });
    });
    try {
      await Promise.race([ev.ports.clock.sleep(ms), aborted]);
    } finally {
      if (onAbort) signal.removeEventListener("abort", onAbort);
    }
  });
  ev.checkCancelled();
}

// ---- save ---------------------------------------------------------------------------------------

/** `save path value` / `save(path, value)`: `value.save(path)`, yielding the value (§14). */
function saveForm(ev: Evaluator, pos: Value[], span: Span): MaybePromise<Value> {
  if (pos.length !== 2) {
    throw fail("arg_error", `save expects a path and a value, got ${pos.length}`, null, span);
  }
  return callMethod(ev, pos[1], "save", { pos: [pos[0]], named: new Map(), span });
}

registerBuiltin(
  "save",
  doc("save PATH VALUE -> value", "write VALUE to PATH (same as VALUE.save(PATH))", {
    structured: false,
    run: (ctx, args) => saveForm(ctx.ev, args.pos, args.span),
  }),
);

registerCallForm(
  "save",
  doc("save(path, value) -> value", "write value to path (same as value.save(path))", (ev, a) => {
    if (a.named.size) {
      const k = [...a.named.keys()][0];
      throw fail("arg_error", `unknown argument \`${k}\``, null, a.span);
    }
    return saveForm(ev, a.pos, a.span ?? [0, 0]);
  }),
);
