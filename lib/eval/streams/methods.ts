/**
 * Methods on stream values (language §15 step 11, §16): lazy combinators (each takes ownership
 * of the receiver's source and returns a new stream), sinks (`collect each save append tee into
 * render`), and — for any other collection method — collect (bounded only) and dispatch on the
 * list. Arguments are validated before the receiver is consumed, so a bad call leaves the
 * stream usable.
 *
 * @module
 */

import { fail } from "../../value/errors.ts";
import { asCondition } from "../../value/coerce.ts";
import {
  DurationV,
  isInt,
  ListV,
  PathV,
  RecordV,
  StreamV,
  typeName,
  type Value,
} from "../../value/types.ts";
import { type MaybePromise, then } from "../maybe.ts";
import type { Interp, MethodArgs, MethodFn, MethodTable } from "../method_types.ts";
import type { Evaluator } from "../evaluator.ts";
import { callMethod } from "../dispatch.ts";
import { arity, countArg, fnArg, isCallable } from "../methods/args.ts";
import { SEQ_METHOD_NAMES, SEQ_METHODS } from "../methods/seq.ts";
import { resolvePathArg, saveBytes, UNIVERSAL_METHODS } from "../methods/universal.ts";
import { type FsHandle, fsOf } from "../fs_port.ts";
import { collectAll, drain, mkStream, requireBounded, type Source, takeSource } from "./core.ts";
import {
  DedupeStage,
  DistinctStage,
  EnumerateStage,
  FlatMapStage,
  MapStage,
  ScanStage,
  SkipStage,
  SlidingWindow,
  TakeStage,
  TakeUntilPred,
  WhereStage,
  ZipStage,
} from "./stages.ts";
import {
  DebounceStage,
  durationArg,
  MergeStage,
  TakeUntilStream,
  ThrottleStage,
  TimeWindow,
} from "./timing.ts";
import { liveForks, replayForks } from "./tee.ts";
import { doc, docOf } from "../docs.ts";

/** The stream receiver (the dispatcher only routes streams here). */
function recvOf(recv: Value): StreamV {
  return recv as StreamV;
}

/** The other stream argument of `merge`/`zip`/`take_until`. */
function streamArg(name: string, args: MethodArgs): StreamV {
  const v = args.pos[0];
  if (v === undefined) {
    throw fail("arg_error", `.${name} requires a stream argument`, null, args.span);
  }
  if (!(v instanceof StreamV)) {
    throw fail(
      "type_error",
      `.${name} expects a stream, found ${typeName(v)}`,
      "turn a collection into one with .stream()",
      args.span,
    );
  }
  return v;
}

/** A lazy combinator: validate, then move the source into a new stage. */
function lazy(
  name: string,
  min: number,
  max: number,
  build: (ip: Interp, src: Source, s: StreamV, args: MethodArgs) => Source,
  shape: (s: StreamV, args: MethodArgs) => { label?: string; bounded?: boolean } = () => ({}),
  check: (args: MethodArgs) => void = () => {},
): MethodFn {
  return (ip, recv, args) => {
    arity(name, args, min, max);
    check(args);
    const s = recvOf(recv);
    const { label = s.label, bounded = s.bounded } = shape(s, args);
    const src = build(ip, takeSource(s, args.span), s, args);
    return mkStream(label, bounded, src);
  };
}

const fnCheck = (name: string, i = 0) => (args: MethodArgs) => void fnArg(name, args, i);

function countCheck(name: string) {
  return (args: MethodArgs) => {
    if (args.pos[0] === undefined) {
      throw fail("arg_error", `.${name} requires a count argument`, null, args.span);
    }
    countArg(name, args.pos[0], args.span);
  };
}

/** `window(n)` / `window(d)`: a positive count or duration. */
function windowCheck(args: MethodArgs): void {
  const v = args.pos[0];
  if (v instanceof DurationV) {
    durationArg("window", v, args.span, true);
    return;
  }
  if (v === undefined) {
    throw fail("arg_error", ".window requires a count or duration argument", null, args.span);
  }
  if (!isInt(v)) {
    throw fail(
      "type_error",
      `.window expects an int count or a duration, found ${typeName(v)}`,
      null,
      args.span,
    );
  }
  if (countArg("window", v, args.span) === 0) {
    throw fail("arg_error", ".window size must be positive", null, args.span);
  }
}

function clock(ip: Interp) {
  return (ip as Evaluator).ports.clock;
}

/** The items of a bounded stream (consumes it). */
function materialize(ip: Interp, recv: Value, span: MethodArgs["span"]): MaybePromise<Value[]> {
  const s = recvOf(recv);
  requireBounded(s, span);
  return collectAll(ip, takeSource(s, span));
}

/** Any other method: collect the (bounded) stream and call `name` on the list. */
function viaList(name: string): MethodFn {
  return (ip, recv, args) =>
    then(
      materialize(ip, recv, args.span),
      (items) => callMethod(ip as Evaluator, new ListV(items), name, args),
    );
}

/**
 * `first()`, `find(f)`, `any(f)`, `all(f)` stop pulling as soon as the answer is known; any
 * other argument shape goes through the list method (which reports the error).
 */
function shortCircuit(name: "first" | "find" | "any" | "all"): MethodFn {
  const general = viaList(name);
  return (ip, recv, args) => {
    const plain = args.named.size === 0 &&
      (name === "first" ? args.pos.length === 0 : args.pos.length === 1 && isCallable(args.pos[0]));
    if (!plain) return general(ip, recv, args);
    const s = recvOf(recv);
    requireBounded(s, args.span);
    const src = takeSource(s, args.span);
    let hit: Value = null;
    let found = false;
    const f = args.pos[0];
    const done = drain(ip, src, (x) => {
      if (name === "first") {
        hit = x;
        found = true;
        return false;
      }
      return then(ip.callValue(f, [x]), (r) => {
        const ok = asCondition(r);
        if (ok === (name !== "all")) {
          hit = x;
          found = true;
          return false;
        }
        return true;
      });
    });
    return then(done, () => {
      switch (name) {
        case "first":
        case "find":
          return hit;
        case "any":
          return found;
        case "all":
          return !found;
      }
    });
  };
}

/** `save`/`append` on a stream: both append one line per item and return the path. */
function lineWriter(name: "save" | "append"): MethodFn {
  return (ip, recv, args) => {
    arity(name, args, 1, 1);
    const target = resolvePathArg(ip, name, args.pos[0], args.span);
    const src = takeSource(recvOf(recv), args.span);
    let file: FsHandle;
    try {
      file = fsOf(ip).open(target, { append: true, create: true });
    } catch (e) {
      src.close();
      throw fail("custom", `${name} ${target}: ${errText(e)}`, null, args.span);
    }
    const nl = new Uint8Array([10]);
    const write = (bytes: Uint8Array) => {
      let off = 0;
      while (off < bytes.length) off += file.write(bytes.subarray(off));
    };
    let done: MaybePromise<void>;
    try {
      done = drain(ip, src, (x) => {
        try {
          write(saveBytes(x));
          write(nl);
        } catch (e) {
          throw fail("custom", `${name} ${target}: ${errText(e)}`, null, args.span);
        }
      });
    } catch (e) {
      file.close();
      throw e;
    }
    const finish = () => {
      file.close();
      return new PathV(target);
    };
    if (done instanceof Promise) {
      return done.then(finish, (e) => {
        file.close();
        throw e;
      });
    }
    return finish();
  };
}

function errText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** True for a channel handle: a record with exactly one str field `channel`. */
export function isChannelHandle(v: Value): v is RecordV {
  return v instanceof RecordV && v.fields.size === 1 && typeof v.fields.get("channel") === "string";
}

/** How `into(channel)` publishes (installed by the channels module). */
export const channelEmitter: {
  emit: ((ip: Interp, name: string, payload: Value) => void) | null;
} = { emit: null };

/** `tee(n)` on a stream. */
function tee(ip: Interp, recv: Value, args: MethodArgs): MaybePromise<Value> {
  arity("tee", args, 0, 1);
  const n = args.pos[0] === undefined ? 2 : countArg("tee", args.pos[0], args.span);
  if (n === 0) throw fail("arg_error", "tee count must be positive", null, args.span);
  const s = recvOf(recv);
  const src = takeSource(s, args.span);
  if (!s.bounded) {
    return new ListV(liveForks(src, n).map((f) => mkStream(s.label, false, f)));
  }
  return then(
    collectAll(ip, src),
    (items) => new ListV(replayForks(items, n).map((f) => mkStream(s.label, true, f))),
  );
}

/** The stream method table. */
export const STREAM_METHODS: MethodTable = {
  map: doc(
    ".map(f) -> stream",
    "f(x) for each item, lazily",
    lazy("map", 0, 1, (ip, src, _s, a) => new MapStage(ip, src, a.pos[0]), () => ({
      label: "value",
    }), fnCheck("map")),
  ),
  where: doc(
    ".where(pred) -> stream",
    "only items where pred holds",
    lazy(
      "where",
      0,
      1,
      (ip, src, _s, a) => new WhereStage(ip, src, a.pos[0]),
      undefined,
      fnCheck("where"),
    ),
  ),
  filter: doc(
    ".filter(pred) -> stream",
    "same as .where(pred)",
    lazy(
      "filter",
      0,
      1,
      (ip, src, _s, a) => new WhereStage(ip, src, a.pos[0]),
      undefined,
      fnCheck("filter"),
    ),
  ),
  scan: doc(
    ".scan(init, f) -> stream",
    "each running accumulator acc = f(acc, x)",
    lazy(
      "scan",
      2,
      2,
      (ip, src, _s, a) => new ScanStage(ip, src, a.pos[0], a.pos[1]),
      () => ({ label: "value" }),
      fnCheck("scan", 1),
    ),
  ),
  flat_map: doc(
    ".flat_map(f) -> stream",
    "the items of f(x) for each item",
    lazy(
      "flat_map",
      0,
      1,
      (ip, src, s, a) => new FlatMapStage(ip, src, a.pos[0], s.bounded, a.span),
      () => ({ label: "value" }),
      fnCheck("flat_map"),
    ),
  ),
  take: doc(
    ".take(n: int) -> stream",
    "the first n items (makes it bounded)",
    lazy(
      "take",
      1,
      1,
      (_ip, src, _s, a) => new TakeStage(src, countArg("take", a.pos[0], a.span)),
      () => ({ bounded: true }),
      countCheck("take"),
    ),
  ),
  skip: doc(
    ".skip(n: int) -> stream",
    "all but the first n items",
    lazy(
      "skip",
      1,
      1,
      (_ip, src, _s, a) => new SkipStage(src, countArg("skip", a.pos[0], a.span)),
      undefined,
      countCheck("skip"),
    ),
  ),
  take_until: doc(
    ".take_until(pred | stream) -> stream",
    "items until pred holds / the other stream yields",
    lazy(
      "take_until",
      1,
      1,
      (ip, src, _s, a) => {
        const v = a.pos[0];
        if (v instanceof StreamV) return new TakeUntilStream(src, takeSource(v, a.span));
        return new TakeUntilPred(ip, src, v);
      },
      undefined,
      (a) => {
        const v = a.pos[0];
        if (v instanceof StreamV) {
          if (v.consumed) takeSource(v, a.span);
        } else if (v === undefined || !isCallable(v)) {
          throw fail(
            v === undefined ? "arg_error" : "type_error",
            `.take_until expects a predicate or a stream${
              v === undefined ? "" : `, found ${typeName(v)}`
            }`,
            null,
            a.span,
          );
        }
      },
    ),
  ),
  dedupe: doc(
    ".dedupe() -> stream",
    "drop adjacent duplicates",
    lazy("dedupe", 0, 0, (_ip, src) => new DedupeStage(src)),
  ),
  distinct: doc(
    ".distinct() -> stream",
    "drop every repeat",
    lazy("distinct", 0, 0, (_ip, src) => new DistinctStage(src)),
  ),
  enumerate: doc(
    ".enumerate() -> stream",
    "[i, x] pairs",
    lazy("enumerate", 0, 0, (_ip, src) => new EnumerateStage(src), () => ({
      label: "list",
    })),
  ),
  buffer: doc(
    ".buffer(n: int) -> stream",
    "the same items (buffered)",
    lazy("buffer", 1, 1, (_ip, src) => src, undefined, countCheck("buffer")),
  ),
  debounce: doc(
    ".debounce(d: duration) -> stream",
    "an item only after d of quiet",
    lazy(
      "debounce",
      1,
      1,
      (ip, src, _s, a) =>
        new DebounceStage(clock(ip), src, Number((a.pos[0] as DurationV).ns) / 1e6),
      undefined,
      (a) => void durationArg("debounce", a.pos[0], a.span),
    ),
  ),
  throttle: doc(
    ".throttle(d: duration) -> stream",
    "at most one item per d",
    lazy(
      "throttle",
      1,
      1,
      (ip, src, _s, a) => new ThrottleStage(clock(ip), src, (a.pos[0] as DurationV).ns),
      undefined,
      (a) => void durationArg("throttle", a.pos[0], a.span),
    ),
  ),
  window: doc(
    ".window(n | d) -> stream",
    "sliding windows of n items (or d of time)",
    lazy(
      "window",
      1,
      1,
      (ip, src, _s, a) => {
        const v = a.pos[0];
        if (v instanceof DurationV) return new TimeWindow(clock(ip), src, v.ns);
        return new SlidingWindow(src, countArg("window", v, a.span));
      },
      () => ({ label: "list" }),
      windowCheck,
    ),
  ),
  merge: doc(
    ".merge(other: stream) -> stream",
    "items of both as they come",
    lazy(
      "merge",
      1,
      1,
      (_ip, src, _s, a) => new MergeStage(src, takeSource(a.pos[0] as StreamV, a.span)),
      (s, a) => {
        const o = a.pos[0] as StreamV;
        return { label: o.label === s.label ? s.label : "value", bounded: s.bounded && o.bounded };
      },
      (a) => {
        const o = streamArg("merge", a);
        if (o.consumed) takeSource(o, a.span);
      },
    ),
  ),
  zip: doc(
    ".zip(other: stream) -> stream",
    "[a, b] pairs until either ends",
    lazy(
      "zip",
      1,
      1,
      (_ip, src, _s, a) => new ZipStage(src, takeSource(a.pos[0] as StreamV, a.span)),
      (s, a) => ({ label: "list", bounded: s.bounded || (a.pos[0] as StreamV).bounded }),
      (a) => {
        const o = streamArg("zip", a);
        if (o.consumed) takeSource(o, a.span);
      },
    ),
  ),

  // `.stream()` of a stream is the stream itself.
  stream: doc(".stream() -> stream", "the stream itself", (_ip, recv, args) => {
    arity("stream", args, 0, 0);
    const s = recvOf(recv);
    if (s.consumed) takeSource(s, args.span);
    return s;
  }),

  // ---- sinks -------------------------------------------------------------------------------

  collect: doc(".collect() -> list", "all items (bounded streams only)", (ip, recv, args) => {
    arity("collect", args, 0, 0);
    return then(materialize(ip, recv, args.span), (items) => new ListV(items));
  }),

  each: doc(".each(f) -> null", "call f on every item", (ip, recv, args) => {
    arity("each", args, 1, 1);
    const f = fnArg("each", args);
    const src = takeSource(recvOf(recv), args.span);
    return then(drain(ip, src, (x) => then(ip.callValue(f, [x]), () => true)), () => null);
  }),

  save: doc(".save(path) -> path", "append each item to a file, one per line", lineWriter("save")),
  append: doc(
    ".append(path) -> path",
    "append each item to a file, one per line",
    lineWriter("append"),
  ),
  tee: doc(".tee(n = 2) -> list<stream>", "n streams that each see every item", tee),

  into: doc(".into(channel) -> null", "emit every item on a channel", (ip, recv, args) => {
    arity("into", args, 1, 1);
    const ch = args.pos[0];
    if (!isChannelHandle(ch)) {
      throw fail(
        "arg_error",
        `.into expects a channel, found ${typeName(ch)}`,
        'e.g. .into(channel("user.events"))',
        args.span,
      );
    }
    const emit = channelEmitter.emit;
    if (emit === null) throw fail("custom", "channels are not available", null, args.span);
    const name = ch.fields.get("channel") as string;
    const src = takeSource(recvOf(recv), args.span);
    return then(drain(ip, src, (x) => emit(ip, name, x)), () => null);
  }),

  render: doc(".render() -> null", "print items as they arrive", (ip, recv, args) => {
    arity("render", args, 0, 0);
    const ev = ip as Evaluator;
    const src = takeSource(recvOf(recv), args.span);
    return then(drain(ip, src, (x) => then(ev.sink(x), () => true)), () => null);
  }),

  first: doc(".first() -> value", "the first item", shortCircuit("first")),
  find: doc(".find(pred) -> value", "the first item where pred holds", shortCircuit("find")),
  any: doc(".any(pred) -> bool", "true once pred holds for an item", shortCircuit("any")),
  all: doc(".all(pred) -> bool", "false once pred fails for an item", shortCircuit("all")),
};

// Everything else a list can do: collect, then dispatch on the list (language §16).
for (const name of [...SEQ_METHOD_NAMES, "json"]) {
  if (Object.hasOwn(STREAM_METHODS, name)) continue;
  const d = docOf(SEQ_METHODS[name] ?? UNIVERSAL_METHODS[name]);
  STREAM_METHODS[name] = d
    ? doc(d.sig, `${d.about} (collects first)`, viaList(name))
    : viaList(name);
}
