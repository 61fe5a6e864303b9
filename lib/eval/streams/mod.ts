/**
 * Streams (language §16): registers the stream method table, `.stream()`/`.tee()` on
 * collections, strings and bytes, the sources `every watch tail`, and the evaluator hook that
 * materializes a bounded stream for `for x in stream`. Importing this module (and
 * `../channels/mod.ts`) wires streams and channels into every evaluator.
 *
 * @module
 */

import { fail } from "../../value/errors.ts";
import { BytesV, DurationV, GlobV, ListV, PathV, typeName, type Value } from "../../value/types.ts";
import type { MethodArgs, MethodTable } from "../method_types.ts";
import { installHooks } from "../evaluator.ts";
import { registerMethods } from "../dispatch.ts";
import { registerCallForm } from "../builtins/registry.ts";
import { arity, checkNamed, countArg } from "../methods/args.ts";
import { trySeq } from "../methods/seq.ts";
import { splitLines } from "../methods/str.ts";
import { ArraySource, collectAll, mkStream, requireBounded, takeSource } from "./core.ts";
import { SeqSource } from "./stages.ts";
import { EverySource } from "./timing.ts";
import { absPath, TailSource, WatchSource } from "./fs_sources.ts";
import { STREAM_METHODS } from "./methods.ts";
import { doc } from "../docs.ts";

export * from "./core.ts";
export { STREAM_METHODS } from "./methods.ts";

registerMethods("stream", STREAM_METHODS);

const LOSSY = new TextDecoder("utf-8", { ignoreBOM: true });

/** The items `.stream()` yields for a collection, str (lines) or bytes (lines). */
function streamItems(recv: Value): SeqSource | ArraySource {
  if (typeof recv === "string") return new ArraySource(splitLines(recv));
  if (recv instanceof BytesV) return new ArraySource(splitLines(LOSSY.decode(recv.data)));
  return new SeqSource(trySeq(recv)!);
}

const COLLECTION_STREAMS: MethodTable = {
  stream: doc(
    ".stream() -> stream",
    "a lazy stream of the items (str/bytes: of the lines)",
    (_ip, recv, args) => {
      arity("stream", args, 0, 0);
      return mkStream("value", true, streamItems(recv));
    },
  ),
  tee: doc(".tee(n = 2) -> list<stream>", "n streams replaying the items", (_ip, recv, args) => {
    arity("tee", args, 0, 1);
    const n = args.pos[0] === undefined ? 2 : countArg("tee", args.pos[0], args.span);
    if (n === 0) throw fail("arg_error", "tee count must be positive", null, args.span);
    // Every fork replays the receiver itself (immutable), so nothing is materialized.
    return new ListV(Array.from({ length: n }, () => mkStream("value", true, streamItems(recv))));
  }),
};

for (const t of ["list", "table", "range"] as const) registerMethods(t, COLLECTION_STREAMS, []);
registerMethods("str", { stream: COLLECTION_STREAMS.stream }, []);
registerMethods("bytes", { stream: COLLECTION_STREAMS.stream }, []);

installHooks({
  collectStream: (ev, s, span) => {
    requireBounded(s, span);
    return collectAll(ev, takeSource(s, span));
  },
});

function flag(name: string, a: MethodArgs, key: string, dflt: boolean): boolean {
  const v = a.named.get(key);
  if (v === undefined) return dflt;
  if (typeof v !== "boolean") {
    throw fail("type_error", `${name} ${key}: expects a bool, found ${typeName(v)}`, null, a.span);
  }
  return v;
}

function pathText(name: string, a: MethodArgs, allowGlob: boolean): string {
  if (a.pos.length !== 1) {
    throw fail("arg_error", `${name} expects 1 argument, got ${a.pos.length}`, null, a.span);
  }
  const v = a.pos[0];
  if (typeof v === "string") return v;
  if (v instanceof PathV) return v.path;
  if (allowGlob && v instanceof GlobV) return absPath(v.origin, v.pattern);
  throw fail(
    "type_error",
    `${name} expects a path${allowGlob ? " or glob" : ""}, found ${typeName(v)}`,
    null,
    a.span,
  );
}

registerCallForm(
  "every",
  doc("every(d: duration) -> stream", "a stream of datetimes, one every d", (ev, a) => {
    checkNamed("every", a);
    if (a.pos.length !== 1) {
      throw fail("arg_error", `every expects 1 argument, got ${a.pos.length}`, null, a.span);
    }
    const d = a.pos[0];
    if (!(d instanceof DurationV)) {
      throw fail("type_error", `every expects a duration, found ${typeName(d)}`, null, a.span);
    }
    if (d.ns < 0n) {
      throw fail(
        "type_error",
        "every expects a positive interval, found a negative duration",
        null,
        a.span,
      );
    }
    if (d.ns === 0n) throw fail("arg_error", "every expects a positive interval", null, a.span);
    return mkStream("datetime", false, new EverySource(ev.ports.clock, d.ns));
  }),
);

registerCallForm(
  "watch",
  doc(
    "watch(path | glob, recursive: bool = true) -> stream",
    "a stream of {path, kind, ts} file events",
    (ev, a) => {
      checkNamed("watch", a, ["recursive"]);
      const target = absPath(ev.cwd(), pathText("watch", a, true));
      const recursive = flag("watch", a, "recursive", true);
      return mkStream(
        "event",
        false,
        new WatchSource(ev.ports.clock, ev.ports.fs, target, recursive),
      );
    },
  ),
);

registerCallForm(
  "tail",
  doc(
    "tail(path, from_start: bool = false) -> stream",
    "a stream of a growing file's new lines",
    (ev, a) => {
      checkNamed("tail", a, ["from_start"]);
      const abs = absPath(ev.cwd(), pathText("tail", a, false));
      const fromStart = flag("tail", a, "from_start", false);
      return mkStream("str", false, new TailSource(ev.ports.clock, ev.ports.fs, abs, fromStart));
    },
  ),
);
