/**
 * Filesystem stream sources (language §16): `watch(path|glob, recursive:)` and
 * `tail(path, from_start:)`.
 *
 * Both are pull-driven: the OS watcher is registered at construction (so events between
 * `watch(...)` and the first pull are not lost — Deno buffers them), but it is only read while
 * a consumer waits, so an idle or abandoned source keeps nothing pending and never holds the
 * process open. `tail` reads the file itself from its own offset: the file is the buffer, so no
 * line is ever dropped and memory stays bounded by one read chunk.
 *
 * @module
 */

import { isAbsolute, join } from "node:path";
import { fail } from "../../value/errors.ts";
import { dateTimeFromEpochNs } from "../../value/datetime.ts";
import { PathV, RecordV, type Value } from "../../value/types.ts";
import type { ClockPort, FsEvent, FsHandle, FsPort, FsWatcher } from "../ports.ts";
import { splitLines } from "../methods/str.ts";
import { END, type Item, type Source } from "./core.ts";
import { DropQueue } from "./queue.ts";

/** Pending watch events before the oldest are coalesced. */
export const WATCH_CAPACITY = 64;

const MAGIC = /[*?[]/;

/** A whole-path glob as a RegExp (`**` spans directories, `*`/`?`/`[…]` stay in one). */
export function globRegex(pattern: string): RegExp {
  let re = "^";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "*" && pattern[i + 1] === "*") {
      const slash = pattern[i + 2] === "/";
      re += slash ? "(?:.*/)?" : ".*";
      i += slash ? 2 : 1;
    } else if (c === "*") re += "[^/]*";
    else if (c === "?") re += "[^/]";
    else if (c === "[") {
      const end = pattern.indexOf("]", i + 2);
      if (end < 0) re += "\\[";
      else {
        let body = pattern.slice(i + 1, end);
        if (body.startsWith("!")) body = "^" + body.slice(1);
        re += "[" + body.replace(/\\/g, "\\\\") + "]";
        i = end;
      }
    } else re += c.replace(/[.+^${}()|\\\]]/g, "\\$&");
  }
  return new RegExp(re + "$", "u");
}

function ioError(verb: string, abs: string, e: unknown): Error {
  const why = e instanceof Error ? e.message : String(e);
  return fail("io_error", `${verb} ${abs}: ${why}`);
}

function fsKind(fs: FsPort, kind: string, path: string): string | null {
  switch (kind) {
    case "create":
      return "created";
    case "modify":
      return "modified";
    case "remove":
      return "removed";
    case "rename":
      try {
        fs.lstat(path);
        return "created";
      } catch {
        return "removed";
      }
    default:
      return null; // access/other/any carry no change
  }
}

/** Closes the OS watcher of a watch source that became garbage without being closed. */
const ABANDONED = new FinalizationRegistry<FsWatcher>((w) => {
  try {
    w.close();
  } catch {
    // already closed
  }
});

/** `watch(target, recursive:)`: `{path, kind, ts}` events. */
export class WatchSource implements Source {
  private readonly watcher: FsWatcher;
  private readonly it: AsyncIterator<FsEvent>;
  private readonly queue = new DropQueue(WATCH_CAPACITY);
  private readonly filter: RegExp | null;
  private readonly root: string;
  private closed = false;

  constructor(
    private readonly clock: ClockPort,
    private readonly fs: FsPort,
    target: string,
    recursive: boolean,
  ) {
    let root = target;
    this.filter = null;
    if (MAGIC.test(target)) {
      // Watch the glob's literal directory prefix and filter full paths.
      const parts = target.split("/");
      const k = parts.findIndex((p) => MAGIC.test(p));
      root = parts.slice(0, k).join("/") || "/";
      this.filter = globRegex(target);
      recursive = recursive || parts.length - k > 1 || target.includes("**");
    }
    this.root = root;
    try {
      this.watcher = fs.watch(root, { recursive });
    } catch (e) {
      throw ioError("watch", root, e);
    }
    this.it = this.watcher[Symbol.asyncIterator]();
    ABANDONED.register(this, this.watcher, this);
  }

  pull(): Item | Promise<Item> {
    const v = this.queue.shift();
    if (v !== undefined) return this.coalesced(v);
    if (this.closed) return END;
    return this.it.next().then(
      (r) => {
        if (r.done || this.closed) return END;
        this.enqueue(r.value);
        return this.pull();
      },
      (e) => {
        if (this.closed) return END;
        throw ioError("watch", this.root, e);
      },
    );
  }

  private enqueue(ev: FsEvent): void {
    const ts = dateTimeFromEpochNs(this.clock.nowNs(), this.clock.zone());
    for (const p of ev.paths) {
      if (this.filter !== null && !this.filter.test(p)) continue;
      const kind = fsKind(this.fs, ev.kind, p);
      if (kind === null) continue;
      this.queue.push(
        new RecordV(new Map<string, Value>([["path", new PathV(p)], ["kind", kind], ["ts", ts]])),
      );
    }
  }

  /** Overflow shows up as one `{path: root, kind: "modified", ts, coalesced: true}` summary. */
  private coalesced(v: Value): Value {
    if (v instanceof RecordV && v.fields.has("dropped")) {
      return new RecordV(
        new Map<string, Value>([
          ["path", new PathV(this.root)],
          ["kind", "modified"],
          ["ts", dateTimeFromEpochNs(this.clock.nowNs(), this.clock.zone())],
          ["coalesced", true],
        ]),
      );
    }
    return v;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    ABANDONED.unregister(this);
    try {
      this.watcher.close();
    } catch {
      // already closed
    }
  }
}

/** How often `tail` looks for growth when it has caught up (ms). */
export const TAIL_POLL_MS = 25;
const CHUNK = 64 * 1024;
const LOSSY = new TextDecoder("utf-8", { ignoreBOM: true });

/** `tail(path, from_start:)`: complete lines as the file grows; shrinking restarts at 0. */
export class TailSource implements Source {
  private pos: number;
  private partial: Uint8Array = new Uint8Array(0);
  private lines: string[] = [];
  private li = 0;
  private closed = false;
  private wait: AbortController | null = null;

  constructor(
    private readonly clock: ClockPort,
    private readonly fs: FsPort,
    private readonly abs: string,
    fromStart: boolean,
  ) {
    let size: number;
    try {
      size = fs.stat(abs).size;
    } catch (e) {
      throw ioError("tail", abs, e);
    }
    this.pos = fromStart ? 0 : size;
  }

  pull(): Item | Promise<Item> {
    for (;;) {
      if (this.li < this.lines.length) return this.lines[this.li++];
      if (this.closed) return END;
      if (!this.readMore()) break;
    }
    const ctl = new AbortController();
    this.wait = ctl;
    return this.clock.sleep(TAIL_POLL_MS, ctl.signal).then(() => {
      this.wait = null;
      return this.pull();
    });
  }

  /** Read the next chunk; true when new complete lines are available. */
  private readMore(): boolean {
    let file: FsHandle;
    try {
      file = this.fs.open(this.abs, { read: true });
    } catch {
      return false; // rotated away: wait for it to come back
    }
    try {
      const size = file.stat().size;
      if (size < this.pos) {
        this.pos = 0; // truncated or replaced: start over
        this.partial = new Uint8Array(0);
      }
      if (size === this.pos) return false;
      const buf = new Uint8Array(Math.min(CHUNK, size - this.pos));
      file.seek(this.pos);
      const n = file.read(buf) ?? 0;
      if (n === 0) return false;
      this.pos += n;
      const data = concat(this.partial, buf.subarray(0, n));
      const cut = data.lastIndexOf(10);
      if (cut < 0) {
        this.partial = data;
        return false;
      }
      this.partial = data.slice(cut + 1);
      this.lines = splitLines(LOSSY.decode(data.subarray(0, cut + 1)));
      this.li = 0;
      return this.lines.length > 0;
    } catch (e) {
      throw ioError("tail", this.abs, e);
    } finally {
      file.close();
    }
  }

  close(): void {
    this.closed = true;
    this.wait?.abort();
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b.slice();
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** Resolve a path argument against the session cwd. */
export function absPath(cwd: string, p: string): string {
  return isAbsolute(p) ? p : join(cwd, p);
}
