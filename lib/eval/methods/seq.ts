/**
 * Collection methods (language §15.2) for list, table and range receivers.
 *
 * A table is treated as its rows (records) and a range as its ints, read through `Seq` so a
 * range is never materialized by `len`, `contains`, `first`, `take`, `sum`… Results are plain
 * lists (only `collect()` keeps a table a table), as in the reference manual. A str receiver
 * reaches these methods as its Unicode scalars when the str table has no method of that name.
 * A bare record is not a collection: every method here raises type_error on it.
 *
 * Callbacks go through `ip.callValue` and stay synchronous while results are synchronous.
 */

import { arith, rangeAt, rangeContains, rangeLen } from "../../value/arith.ts";
import { asCondition } from "../../value/coerce.ts";
import { compareValues, valuesEqual } from "../../value/compare.ts";
import { fail } from "../../value/errors.ts";
import {
  isInt,
  ListV,
  mkInt,
  type RangeV,
  RecordV,
  typeName,
  type Value,
} from "../../value/types.ts";
import { type MaybePromise, then } from "../maybe.ts";
import type { Interp, MethodArgs, MethodTable } from "../method_types.ts";
import { argAt, arity, countArg, fnArg, intToIndex } from "./args.ts";
import { doc } from "../docs.ts";

/** Random access to the elements of a collection without materializing ranges. */
export interface Seq {
  /** Element count (ranges longer than 2^53 report MAX_SAFE_INTEGER). */
  readonly length: number;
  /** Element `i` (0 ≤ i < length). */
  at(i: number): Value;
  /** The backing array when the elements already exist as one (lists, tables). */
  readonly items: readonly Value[] | null;
}

/** Largest number of elements a method will materialize from a range (≈ 1 GB of slots). */
export const MAX_MATERIALIZE = 100_000_000;

function arraySeq(items: readonly Value[]): Seq {
  return { length: items.length, at: (i) => items[i], items };
}

function rangeSeq(r: RangeV): Seq {
  const len = rangeLen(r);
  const n = typeof len === "number" ? len : Number.MAX_SAFE_INTEGER;
  return { length: n, at: (i) => rangeAt(r, i), items: null };
}

/** Split a str into its Unicode scalar values. */
export function strChars(s: string): string[] {
  return Array.from(s);
}

/** The elements of a collection value, or null when `v` is not one (records are not). */
export function trySeq(v: Value): Seq | null {
  if (v === null || typeof v !== "object") {
    return typeof v === "string" ? arraySeq(strChars(v)) : null;
  }
  switch (v.t) {
    case "list":
      return arraySeq(v.items);
    case "table":
      return arraySeq(v.rows);
    case "range":
      return rangeSeq(v);
    default:
      return null;
  }
}

/** True for list, table and range values (the collections `flatten`/`zip`/`flat_map` accept). */
export function isCollection(v: Value): boolean {
  return v !== null && typeof v === "object" && (v.t === "list" || v.t === "table" ||
    v.t === "range");
}

const COUNT_METHODS = new Set(["len", "count", "is_empty"]);

/** The type_error for a collection method called on something that is not a collection. */
export function notCollection(name: string, recv: Value, span: MethodArgs["span"]): Error {
  const t = typeName(recv);
  if (COUNT_METHODS.has(name)) {
    return fail("type_error", `.${name} unsupported on ${t}`, null, span);
  }
  const hint = t === "record"
    ? "a record is not a collection — use .keys(), .values() or .items()"
    : null;
  return fail("type_error", `.${name} expects a list, table or range, found ${t}`, hint, span);
}

function seqOf(name: string, recv: Value, args: MethodArgs): Seq {
  const s = trySeq(recv);
  if (s === null) throw notCollection(name, recv, args.span);
  return s;
}

/** Refuse to build a result of more than MAX_MATERIALIZE elements (huge ranges). */
function guardSize(name: string, n: number, span: MethodArgs["span"]): void {
  if (n > MAX_MATERIALIZE) {
    throw fail(
      "arg_error",
      `.${name} would materialize ${n} elements (limit ${MAX_MATERIALIZE})`,
      "bound the range first, e.g. .take(n)",
      span,
    );
  }
}

/** The elements as an array (shared with the receiver for lists/tables — do not mutate). */
function elements(name: string, s: Seq, span: MethodArgs["span"]): readonly Value[] {
  if (s.items !== null) return s.items;
  guardSize(name, s.length, span);
  const out: Value[] = new Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.at(i);
  return out;
}

/**
 * Run `step` over the elements in order while it returns true; synchronous until a step
 * returns a promise. Checks for cancellation every 1,024 elements.
 */
function iterate(
  ip: Interp,
  s: Seq,
  step: (x: Value, i: number) => MaybePromise<boolean>,
): MaybePromise<number> {
  const n = s.length;
  for (let i = 0; i < n; i++) {
    if ((i & 1023) === 1023) ip.checkCancelled();
    const r = step(s.at(i), i);
    if (r instanceof Promise) return iterateAsync(ip, s, step, i, r);
    if (!r) return i;
  }
  return n;
}

async function iterateAsync(
  ip: Interp,
  s: Seq,
  step: (x: Value, i: number) => MaybePromise<boolean>,
  at: number,
  pending: Promise<boolean>,
): Promise<number> {
  if (!(await pending)) return at;
  for (let i = at + 1; i < s.length; i++) {
    if ((i & 1023) === 1023) ip.checkCancelled();
    if (!(await step(s.at(i), i))) return i;
  }
  return s.length;
}

/** Call `f(x)` for every element, collecting the results. */
function mapSeq(ip: Interp, s: Seq, f: Value): MaybePromise<Value[]> {
  const out: Value[] = [];
  return then(
    iterate(ip, s, (x) => {
      const r = ip.callValue(f, [x]);
      if (r instanceof Promise) {
        return r.then((y) => {
          out.push(y);
          return true;
        });
      }
      out.push(r);
      return true;
    }),
    () => out,
  );
}

/**
 * A set of values under language equality (§4.1): primitive values hash by a key that unifies
 * int/float; everything else is compared linearly. path == str by display, so a path is also
 * checked against the str keys and a str against the paths seen so far.
 */
export class EqIndex {
  private readonly keyed = new Map<string, number>();
  private readonly others: { v: Value; idx: number }[] = [];
  private readonly paths: { v: Value; idx: number }[] = [];

  /** The index stored for a value equal to `v`, or -1. */
  find(v: Value): number {
    const k = primKey(v);
    if (k !== undefined) {
      const hit = this.keyed.get(k);
      if (hit !== undefined) return hit;
      if (typeof v === "string") {
        for (const p of this.paths) if (valuesEqual(p.v, v)) return p.idx;
      }
      return -1;
    }
    if (v !== null && typeof v === "object" && v.t === "path") {
      const hit = this.keyed.get("s" + v.path);
      if (hit !== undefined) return hit;
    }
    for (const o of this.others) if (valuesEqual(o.v, v)) return o.idx;
    return -1;
  }

  /** Remember `v` (not already present) under `idx`. */
  add(v: Value, idx: number): void {
    const k = primKey(v);
    if (k !== undefined) {
      this.keyed.set(k, idx);
      return;
    }
    this.others.push({ v, idx });
    if (v !== null && typeof v === "object" && v.t === "path") this.paths.push({ v, idx });
  }
}

/** Hash key for values whose equality is plain payload equality (ints and floats unified). */
function primKey(v: Value): string | undefined {
  if (v === null) return "z";
  switch (typeof v) {
    case "boolean":
      return v ? "t" : "f";
    case "number":
    case "bigint":
      return "n" + v;
    case "string":
      return "s" + v;
  }
  if (v.t === "float") {
    const x = v.v;
    if (Number.isNaN(x)) return undefined; // NaN equals nothing: linear scan keeps every one
    if (Number.isInteger(x)) return "n" + (Number.isSafeInteger(x) ? String(x) : BigInt(x));
    return "f" + x;
  }
  return undefined;
}

function aggregateArgs(name: string, args: MethodArgs): void {
  if (args.pos.length > 0 || args.named.size > 0) {
    throw fail(
      "arg_error",
      `${name} takes no arguments (did you mean .map(f).${name}()?)`,
      null,
      args.span,
    );
  }
}

function count(name: string) {
  return (_ip: Interp, recv: Value, args: MethodArgs): Value => {
    arity(name, args, 0, 0);
    if (recv !== null && typeof recv === "object" && recv.t === "range") {
      const n = rangeLen(recv);
      return name === "is_empty" ? n === 0 : n;
    }
    const s = seqOf(name, recv, args);
    return name === "is_empty" ? s.length === 0 : s.length;
  };
}

function firstLast(name: "first" | "last") {
  return (_ip: Interp, recv: Value, args: MethodArgs): Value => {
    arity(name, args, 0, 1);
    const s = seqOf(name, recv, args);
    if (args.pos.length === 0) {
      if (s.length === 0) return null;
      return s.at(name === "first" ? 0 : s.length - 1);
    }
    const n = Math.min(countArg(name, args.pos[0], args.span), s.length);
    const from = name === "first" ? 0 : s.length - n;
    return new ListV(slice(name, s, from, from + n, args.span));
  };
}

function slice(name: string, s: Seq, from: number, to: number, span: MethodArgs["span"]): Value[] {
  if (s.items !== null) return s.items.slice(from, to);
  guardSize(name, to - from, span);
  const out: Value[] = new Array(to - from);
  for (let i = from; i < to; i++) out[i - from] = s.at(i);
  return out;
}

function predicateMethod(name: string, mode: "where" | "any" | "all" | "find") {
  return (ip: Interp, recv: Value, args: MethodArgs): MaybePromise<Value> => {
    arity(name, args, 0, 1);
    const f = fnArg(name, args);
    const s = seqOf(name, recv, args);
    const kept: Value[] = [];
    let found: Value = null;
    // any/find stop at the first true, all at the first false
    const stopOn = mode !== "all";
    const done = iterate(ip, s, (x) => {
      const r = ip.callValue(f, [x]);
      const judge = (y: Value): boolean => {
        const ok = asCondition(y);
        if (mode === "where") {
          if (ok) kept.push(x);
          return true;
        }
        if (ok === stopOn) {
          found = x;
          return false;
        }
        return true;
      };
      return r instanceof Promise ? r.then(judge) : judge(r);
    });
    return then(done, (stoppedAt) => {
      switch (mode) {
        case "where":
          return new ListV(kept);
        case "find":
          return found;
        case "any":
          return stoppedAt < s.length;
        case "all":
          return stoppedAt === s.length;
      }
    });
  };
}

function sortValues(values: readonly Value[], keys: readonly Value[] | null): Value[] {
  if (keys === null) return values.slice().sort(compareValues);
  const idx = Array.from(values.keys());
  idx.sort((a, b) => compareValues(keys[a], keys[b]));
  return idx.map((i) => values[i]);
}

function sortBy(name: string) {
  return (ip: Interp, recv: Value, args: MethodArgs): MaybePromise<Value> => {
    arity(name, args, 0, 1);
    const f = args.pos.length === 0 && name === "sort" ? null : fnArg(name, args);
    const s = seqOf(name, recv, args);
    const values = elements(name, s, args.span);
    if (f === null) return new ListV(sortValues(values, null));
    return then(mapSeq(ip, s, f), (keys) => new ListV(sortValues(values, keys)));
  };
}

function minMax(name: "min" | "max") {
  return (_ip: Interp, recv: Value, args: MethodArgs): Value => {
    aggregateArgs(name, args);
    const s = seqOf(name, recv, args);
    if (s.length === 0) return null;
    let best = s.at(0);
    for (let i = 1; i < s.length; i++) {
      const x = s.at(i);
      const c = compareValues(x, best);
      // Like Rust's Iterator::min_by / max_by: the first minimum, the last maximum.
      if (name === "min" ? c < 0 : c >= 0) best = x;
    }
    return best;
  };
}

function skipTake(name: "skip" | "take") {
  return (_ip: Interp, recv: Value, args: MethodArgs): Value => {
    arity(name, args, 1, 1);
    const s = seqOf(name, recv, args);
    const n = Math.min(countArg(name, args.pos[0], args.span), s.length);
    return new ListV(
      name === "take" ? slice(name, s, 0, n, args.span) : slice(name, s, n, s.length, args.span),
    );
  };
}

function reduce(name: string) {
  return (ip: Interp, recv: Value, args: MethodArgs): MaybePromise<Value> => {
    arity(name, args, 0, 2);
    if (args.pos.length < 2) {
      throw fail(
        "arg_error",
        `.${name} requires an initial value and a function`,
        `e.g. .${name}(0, (acc, x) => acc + x)`,
        args.span,
      );
    }
    const f = fnArg(name, args, 1);
    const s = seqOf(name, recv, args);
    let acc = args.pos[0];
    return then(
      iterate(ip, s, (x) => {
        const r = ip.callValue(f, [acc, x]);
        if (r instanceof Promise) {
          return r.then((y) => {
            acc = y;
            return true;
          });
        }
        acc = r;
        return true;
      }),
      () => acc,
    );
  };
}

function group(name: string) {
  return (ip: Interp, recv: Value, args: MethodArgs): MaybePromise<Value> => {
    arity(name, args, 0, 1);
    const f = fnArg(name, args);
    const s = seqOf(name, recv, args);
    return then(mapSeq(ip, s, f), (keys) => {
      const index = new EqIndex();
      const groups: { key: Value; values: Value[] }[] = [];
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i];
        let g = index.find(k);
        if (g < 0) {
          g = groups.length;
          groups.push({ key: k, values: [] });
          index.add(k, g);
        }
        groups[g].values.push(s.at(i));
      }
      return new ListV(
        groups.map((g) =>
          new RecordV(new Map<string, Value>([["key", g.key], ["values", new ListV(g.values)]]))
        ),
      );
    });
  };
}

/** The elements of a nested collection (`flatten`, `flat_map` results). */
function collectionItems(v: Value, span: MethodArgs["span"], context: string): Seq {
  const s = isCollection(v) ? trySeq(v) : null;
  if (s === null) {
    throw fail("type_error", `${context}expected collection, found ${typeName(v)}`, null, span);
  }
  return s;
}

/** Collection methods by name (receiver: list, table, range; str as its chars). */
export const SEQ_METHODS: MethodTable = {
  len: doc(".len() -> int", "number of items", count("len")),
  // A glob's `.expand()` is often written after `.where(…)` already made it a list.
  expand: doc(".expand() -> list", "the items as a list (a list is itself)", (_ip, recv, args) => {
    arity("expand", args, 0, 0);
    if (recv instanceof ListV) return recv;
    return new ListV([...elements("expand", seqOf("expand", recv, args), args.span)]);
  }),
  count: doc(".count() -> int", "number of items (same as .len())", count("count")),
  is_empty: doc(".is_empty() -> bool", "true when there are no items", count("is_empty")),
  first: doc(
    ".first(n?: int) -> value | list",
    "the first item (null if empty), or the first n",
    firstLast("first"),
  ),
  last: doc(
    ".last(n?: int) -> value | list",
    "the last item (null if empty), or the last n",
    firstLast("last"),
  ),

  collect: doc(
    ".collect() -> list",
    "a range's items as a list (lists stay as they are)",
    (_ip, recv, args) => {
      arity("collect", args, 0, 0);
      if (recv !== null && typeof recv === "object" && (recv.t === "list" || recv.t === "table")) {
        return recv;
      }
      const s = seqOf("collect", recv, args);
      return new ListV(elements("collect", s, args.span).slice());
    },
  ),

  map: doc(
    ".map(f) -> list",
    "f(x) for every item: .map(.name), .map(x => x * 2)",
    (ip, recv, args) => {
      arity("map", args, 0, 1);
      const f = fnArg("map", args);
      const s = seqOf("map", recv, args);
      guardSize("map", s.length, args.span);
      return then(mapSeq(ip, s, f), (out) => new ListV(out));
    },
  ),

  where: doc(
    ".where(pred) -> list",
    "items where pred is true: .where(.size > 1mb)",
    predicateMethod("where", "where"),
  ),
  filter: doc(".filter(pred) -> list", "same as .where(pred)", predicateMethod("filter", "where")),
  any: doc(".any(pred) -> bool", "true if pred holds for some item", predicateMethod("any", "any")),
  all: doc(
    ".all(pred) -> bool",
    "true if pred holds for every item",
    predicateMethod("all", "all"),
  ),
  find: doc(
    ".find(pred) -> value",
    "the first item where pred holds, or null",
    predicateMethod("find", "find"),
  ),

  each: doc(".each(f) -> null", "call f on every item (for its effects)", (ip, recv, args) => {
    arity("each", args, 0, 1);
    const f = fnArg("each", args);
    const s = seqOf("each", recv, args);
    return then(
      iterate(ip, s, (x) => {
        const r = ip.callValue(f, [x]);
        return r instanceof Promise ? r.then(() => true) : true;
      }),
      () => null,
    );
  }),

  reduce: doc(".reduce(init, f) -> value", "fold left: acc = f(acc, x)", reduce("reduce")),
  fold: doc(".fold(init, f) -> value", "same as .reduce(init, f)", reduce("fold")),

  flat_map: doc(
    ".flat_map(f) -> list",
    "f(x) is a list for every item; all of them joined",
    (ip, recv, args) => {
      arity("flat_map", args, 0, 1);
      const f = fnArg("flat_map", args);
      const s = seqOf("flat_map", recv, args);
      return then(mapSeq(ip, s, f), (parts) => {
        const out: Value[] = [];
        for (const p of parts) {
          const inner = collectionItems(p, args.span, ".flat_map result: ");
          for (let i = 0; i < inner.length; i++) out.push(inner.at(i));
        }
        return new ListV(out);
      });
    },
  ),

  sort: doc(".sort(key?) -> list", "ascending (by key when given): .sort(.size)", sortBy("sort")),
  sort_by: doc(".sort_by(key) -> list", "ascending by key: .sort_by(.modified)", sortBy("sort_by")),

  reverse: doc(".reverse() -> list", "the items in reverse order", (_ip, recv, args) => {
    arity("reverse", args, 0, 0);
    const s = seqOf("reverse", recv, args);
    return new ListV(elements("reverse", s, args.span).slice().reverse());
  }),

  uniq: doc(".uniq() -> list", "first occurrence of each distinct item", (ip, recv, args) => {
    arity("uniq", args, 0, 0);
    const s = seqOf("uniq", recv, args);
    const index = new EqIndex();
    const out: Value[] = [];
    for (let i = 0; i < s.length; i++) {
      if ((i & 1023) === 1023) ip.checkCancelled();
      const x = s.at(i);
      if (index.find(x) < 0) {
        index.add(x, out.length);
        out.push(x);
      }
    }
    return new ListV(out);
  }),

  sum: doc(
    ".sum() -> value",
    "all items added (sizes stay sizes); 0 when empty",
    (ip, recv, args) => {
      aggregateArgs("sum", args);
      const s = seqOf("sum", recv, args);
      if (s.length === 0) return 0;
      let acc = s.at(0);
      for (let i = 1; i < s.length; i++) {
        if ((i & 1023) === 1023) ip.checkCancelled();
        acc = arith("+", acc, s.at(i));
      }
      return acc;
    },
  ),

  min: doc(".min() -> value", "the smallest item, or null", minMax("min")),
  max: doc(".max() -> value", "the largest item, or null", minMax("max")),

  flatten: doc(".flatten() -> list", "one level of nested lists joined", (_ip, recv, args) => {
    arity("flatten", args, 0, 0);
    const s = seqOf("flatten", recv, args);
    const out: Value[] = [];
    for (let i = 0; i < s.length; i++) {
      const inner = collectionItems(s.at(i), args.span, "");
      if (inner.items !== null) { for (const x of inner.items) out.push(x); }
      else for (const x of elements("flatten", inner, args.span)) out.push(x);
    }
    return new ListV(out);
  }),

  enumerate: doc(".enumerate() -> list", "[[0, x0], [1, x1], …]", (_ip, recv, args) => {
    arity("enumerate", args, 0, 0);
    const s = seqOf("enumerate", recv, args);
    const xs = elements("enumerate", s, args.span);
    return new ListV(xs.map((x, i) => new ListV([i, x])));
  }),

  skip: doc(".skip(n: int) -> list", "all but the first n items", skipTake("skip")),
  take: doc(".take(n: int) -> list", "the first n items", skipTake("take")),

  chunks: doc(".chunks(n: int) -> list", "lists of n items each", (_ip, recv, args) => {
    arity("chunks", args, 1, 1);
    const s = seqOf("chunks", recv, args);
    const n = countArg("chunks", args.pos[0], args.span);
    if (n === 0) throw fail("arg_error", "chunk size must be positive", null, args.span);
    const xs = elements("chunks", s, args.span);
    const out: Value[] = [];
    for (let i = 0; i < xs.length; i += n) out.push(new ListV(xs.slice(i, i + n)));
    return new ListV(out);
  }),

  zip: doc(
    ".zip(other) -> list",
    "[[a0, b0], [a1, b1], …] up to the shorter",
    (_ip, recv, args) => {
      arity("zip", args, 1, 1);
      const s = seqOf("zip", recv, args);
      const other = args.pos[0];
      if (!isCollection(other)) {
        throw fail(
          "type_error",
          `.zip expects a collection (list, table or range), found ${typeName(other)}`,
          null,
          args.span,
        );
      }
      const o = trySeq(other)!;
      const n = Math.min(s.length, o.length);
      guardSize("zip", n, args.span);
      const out: Value[] = new Array(n);
      for (let i = 0; i < n; i++) out[i] = new ListV([s.at(i), o.at(i)]);
      return new ListV(out);
    },
  ),

  group: doc(
    ".group(key) -> table",
    "{key, values} per distinct key, in first-seen order",
    group("group"),
  ),
  group_by: doc(".group_by(key) -> table", "same as .group(key)", group("group_by")),

  join: doc('.join(sep = "") -> str', "str items joined with sep", (_ip, recv, args) => {
    arity("join", args, 0, 1, ["sep"]);
    const sep = argAt(args, 0, "sep") ?? "";
    if (typeof sep !== "string") {
      throw fail(
        "type_error",
        `.join separator must be str, found ${typeName(sep)}`,
        null,
        args.span,
      );
    }
    const s = seqOf("join", recv, args);
    const parts: string[] = new Array(s.length);
    for (let i = 0; i < s.length; i++) {
      const x = s.at(i);
      if (typeof x !== "string") {
        throw fail(
          "type_error",
          `.join expects every element to be str, found ${typeName(x)}`,
          'convert first, e.g. .map(x => "{x}").join(…)',
          args.span,
        );
      }
      parts[i] = x;
    }
    return parts.join(sep);
  }),

  contains: doc(".contains(x) -> bool", "true if some item == x", (_ip, recv, args) => {
    arity("contains", args, 1, 1);
    const x = args.pos[0];
    if (recv !== null && typeof recv === "object" && recv.t === "range") {
      if (isInt(x)) return rangeContains(recv, x);
      if (x !== null && typeof x === "object" && x.t === "float" && Number.isInteger(x.v)) {
        return rangeContains(recv, mkInt(BigInt(x.v)));
      }
      return false;
    }
    const s = seqOf("contains", recv, args);
    for (let i = 0; i < s.length; i++) if (valuesEqual(s.at(i), x)) return true;
    return false;
  }),

  get: doc(
    ".get(i: int, default = null) -> value",
    "the item at i (negative from the end), else default",
    (_ip, recv, args) => {
      arity("get", args, 1, 2, ["default"]);
      const key = args.pos[0];
      const dflt = argAt(args, 1, "default") ?? null;
      if (recv !== null && typeof recv === "object" && recv.t === "list" && isInt(key)) {
        const n = recv.items.length;
        const k = intToIndex(key);
        const i = k < 0 ? n + k : k;
        return i >= 0 && i < n ? recv.items[i] : dflt;
      }
      throw fail(
        "type_error",
        `get expects record+str or list+int, found ${typeName(recv)}+${typeName(key)}`,
        null,
        args.span,
      );
    },
  ),
};

/** The collection method names (for did-you-mean); `stream`/`tee` live in the stream layer. */
export const SEQ_METHOD_NAMES: readonly string[] = [...Object.keys(SEQ_METHODS), "stream", "tee"];
