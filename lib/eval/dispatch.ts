/**
 * Field access and method dispatch (language §15, §10.4, §11.1): the dispatch order, the
 * field→method fallback for non-records, outcome forwarding and did-you-mean hints.
 *
 * Method implementations live in per-receiver tables (methods/*.ts); other subsystems (paths,
 * streams, tasks…) add theirs with `registerMethods`.
 *
 * @module
 */

import type { Span } from "../syntax/ast.ts";
import {
  BytesV,
  ClosureV,
  CommandV,
  DateTimeV,
  DurationV,
  ErrorV,
  GlobV,
  ListV,
  OutcomeV,
  RecordV,
  TableV,
  type TypeName,
  typeName,
  type Value,
} from "../value/types.ts";
import { fail } from "../value/errors.ts";
import { addDuration, DATETIME_FIELDS, dateTimeField } from "../value/datetime.ts";
import { type MaybePromise, then } from "./maybe.ts";
import type { MethodArgs, MethodFn, MethodTable } from "./method_types.ts";
import type { Evaluator } from "./evaluator.ts";
import { levenshtein, nearest } from "./errors.ts";
import { doc, docOf } from "./docs.ts";
import { callValue } from "./calls.ts";
import { NO_NAMED } from "./expressions.ts";
import { OUTCOME_FIELDS, outcomeField, outcomeOut, outcomePayload } from "./outcome.ts";
import { SEQ_METHOD_NAMES, SEQ_METHODS } from "./methods/seq.ts";
import { STR_METHOD_NAMES, STR_METHODS } from "./methods/str.ts";
import { setReceiverHint } from "./methods/args.ts";
import { RECORD_METHOD_NAMES, RECORD_METHODS } from "./methods/record.ts";
import { NUMBER_METHOD_NAMES, NUMBER_METHODS } from "./methods/number.ts";
import { BYTES_METHOD_NAMES, BYTES_METHODS } from "./methods/bytes.ts";
import { UNIVERSAL_METHOD_NAMES, UNIVERSAL_METHODS } from "./methods/universal.ts";

interface Entry {
  table: MethodTable;
  names: readonly string[];
}

const BY_TYPE = new Map<string, Entry[]>();

/**
 * Register a method table for receivers of type `type` (tables registered later are consulted
 * after earlier ones). `names` lists the method names offered in did-you-mean hints (defaults
 * to the table's keys).
 */
export function registerMethods(
  type: TypeName,
  table: MethodTable,
  names: readonly string[] = Object.keys(table),
): void {
  const list = BY_TYPE.get(type) ?? [];
  list.push({ table, names });
  BY_TYPE.set(type, list);
}

for (const t of ["list", "table", "range"] as const) {
  registerMethods(t, SEQ_METHODS, SEQ_METHOD_NAMES);
}
registerMethods("str", STR_METHODS, STR_METHOD_NAMES);
registerMethods("record", RECORD_METHODS, RECORD_METHOD_NAMES);
registerMethods("int", NUMBER_METHODS, NUMBER_METHOD_NAMES);
registerMethods("float", NUMBER_METHODS, NUMBER_METHOD_NAMES);
registerMethods("bytes", BYTES_METHODS, BYTES_METHOD_NAMES);

/**
 * Tables whose methods check their receiver themselves: a method that exists for *some*
 * receiver raises its own type_error on the wrong one (`5.len()`, `{}.first()`, `5kb.abs()`)
 * instead of "unknown method".
 */
const GENERAL: MethodTable[] = [SEQ_METHODS, STR_METHODS, NUMBER_METHODS, RECORD_METHODS];

const own = Object.prototype.hasOwnProperty;

/** Find the implementation of `name` for `recv` (own tables, universal, general). */
function findMethod(recv: Value, name: string): MethodFn | undefined {
  const entries = BY_TYPE.get(typeName(recv));
  if (entries !== undefined) {
    for (const e of entries) if (own.call(e.table, name)) return e.table[name];
  }
  if (own.call(UNIVERSAL_METHODS, name)) return UNIVERSAL_METHODS[name];
  for (const t of GENERAL) if (own.call(t, name)) return t[name];
  return undefined;
}

/** The method names known for a receiver type (did-you-mean candidates). */
export function knownMethods(t: TypeName): string[] {
  const out: string[] = [];
  for (const e of BY_TYPE.get(t) ?? []) out.push(...e.names);
  out.push(...UNIVERSAL_METHOD_NAMES, "methods");
  return out;
}

/**
 * Names other languages give the same thing (an agent's first guess), and the Shoal method to
 * use instead — checked before spelling distance, which cannot see that `drop` is `skip`.
 */
const SYNONYMS: Record<string, string> = {
  drop: "skip",
  tail: "last",
  head: "first",
  filter_map: "map",
  includes: "contains",
  has: "contains",
  startsWith: "starts_with",
  endsWith: "ends_with",
  toUpperCase: "upper",
  toLowerCase: "lower",
  uppercase: "upper",
  lowercase: "lower",
  strip: "trim",
  keys_list: "keys",
  unique: "uniq",
  distinct: "uniq",
  reversed: "reverse",
  order_by: "sort_by",
  select: "where",
  sum_by: "map",
};

/** The did-you-mean hint for an unknown method (language §15). */
export function methodHint(t: TypeName, name: string): string | null {
  const known = knownMethods(t);
  const has = (m: string) => known.includes(m);
  if ((name === "length" || name === "size") && has("len")) return "did you mean .len()?";
  const same = own.call(SYNONYMS, name) ? SYNONYMS[name] : undefined;
  if (same !== undefined && has(same)) return `did you mean .${same}()?`;
  if (name === "push" && (t === "list" || t === "table")) {
    return "shoal values are immutable — build a new list with `list + [item]`";
  }
  if (t === "str" && (name === "substring" || name === "substr" || name === "slice")) {
    return "did you mean .take(n) / .skip(n)? (chain them: s.skip(start).take(len))";
  }
  if (name.startsWith("to_") && has(name.slice(3))) return `did you mean .${name.slice(3)}()?`;
  const near = nearest(name, known);
  if (near !== null) return `did you mean .${near}()?`;
  const us = name.indexOf("_");
  if (us > 0 && has(name.slice(0, us))) return `did you mean .${name.slice(0, us)}()?`;
  return null;
}

function unknownMethod(recv: Value, name: string, span: Span | null): Error {
  const t = typeName(recv);
  const hint = [methodHint(t, name), closestMethods(t, name)].filter((h) => h !== null);
  return fail("field_missing", `unknown method \`.${name}\` on ${t}`, hint.join("; "), span);
}

/**
 * «bytes has .str(), .lines(), .len() …»: the receiver's methods nearest to `name` first
 * (issue 13), so a wrong guess shows what would work; null for a type with none.
 */
export function closestMethods(t: TypeName, name: string, n = 8): string | null {
  const members = memberDocs(t);
  if (members.length === 0) return null;
  // Near misses first; the rest in table order (the type's own methods before universal ones).
  const close = Math.max(2, Math.floor(name.length / 2));
  const ranked = members.map((m, i) => {
    const d = levenshtein(name, m.name);
    return { m, i, d: d <= close ? d : close + 1 };
  })
    .sort((a, b) => a.d - b.d || a.i - b.i)
    .slice(0, n)
    .map(({ m }) => (m.sig.includes("(") ? `.${m.name}()` : `.${m.name}`));
  const more = members.length > n ? ` … (all ${members.length}: help ${t})` : "";
  return `${t} has ${ranked.join(", ")}${more}`;
}

// A method of another type (`bytes.upper()`): say what this receiver has, and how to convert.
setReceiverHint((t, name) => {
  const convert = t === "bytes" && Object.hasOwn(STR_METHODS, name)
    ? `convert to text first: .str().${name}()`
    : null;
  return [convert, closestMethods(t, name)].filter((h) => h !== null).join("; ") || null;
});

/** Marker: no method of that name applies (lets the field fallback report the field error). */
const NO_METHOD = Symbol("no method");

/** Call `recv.name(args)` (language §15 dispatch order). */
export function callMethod(
  ev: Evaluator,
  recv: Value,
  name: string,
  args: MethodArgs,
): MaybePromise<Value> {
  const r = dispatch(ev, recv, name, args);
  if (r === NO_METHOD) throw unknownMethod(recv, name, args.span);
  return r;
}

function dispatch(
  ev: Evaluator,
  recv: Value,
  name: string,
  args: MethodArgs,
): MaybePromise<Value> | typeof NO_METHOD {
  ev.checkCancelled();
  if (typeof recv === "string") {
    // The ref resolves to the stored value, which then receives the call (issue 7).
    if (recv.startsWith("val:blake3:")) {
      return then(ev.resolveCasRef(recv, args.span), (v) => callMethod(ev, v, name, args));
    }
  } else if (recv instanceof RecordV) {
    // A record field holding a callable is a method (`mod.f(x)`, §9.8).
    const f = recv.fields.get(name);
    if (f instanceof ClosureV || f instanceof CommandV) {
      return callValue(ev, f, args.pos, args.named, args.span);
    }
    if (ev.hooks.channelMethod !== undefined) {
      const r = ev.hooks.channelMethod(ev, recv, name, args);
      if (r !== undefined) return r;
    }
  } else if (recv instanceof GlobV) {
    if (Object.hasOwn(GLOB_MEMBERS, name)) return GLOB_MEMBERS[name](ev, recv, args.span);
    if (!(name === "tap" || name === "also" || name === "methods" || hasOwnTable(recv, name))) {
      return then(
        ev.expandGlob(recv, args.span),
        (paths) => callMethod(ev, new ListV([...paths]), name, args),
      );
    }
  } else if (recv instanceof OutcomeV) {
    if (name === "stdout" || name === "stderr") {
      if (args.pos.length || args.named.size) {
        throw fail("arg_error", `.${name} takes no arguments`, null, args.span);
      }
      // Spilled stdout is lazy content-store bytes with its true length (issue 7).
      if (name === "stdout" && recv.stdoutRef !== null) {
        return new BytesV(recv.stdout, recv.stdoutRef, recv.stdoutSize);
      }
      return ev.bytesValue(name === "stdout" ? recv.stdout : recv.stderr);
    }
    if (name !== "tap" && name !== "also" && name !== "methods") {
      return callMethod(ev, outcomePayload(recv), name, args);
    }
  }
  if (name === "methods") return METHODS_FN(ev, recv, args);
  // (9) Lazy content-store bytes: load the whole blob for anything but their length (issue 7).
  if (
    recv instanceof BytesV && recv.size > recv.data.length && recv.ref !== null &&
    name !== "len" && name !== "count" && name !== "is_empty"
  ) {
    const port = ev.ports.journal;
    if (port === undefined) {
      throw fail(
        "io_error",
        `cannot load \`${recv.ref}\`: this session has no journal/CAS`,
        null,
        args.span,
      );
    }
    const ref = recv.ref;
    return port.loadBytes(ref).then(
      (data) => callMethod(ev, new BytesV(data, ref), name, args),
      (e) => {
        throw fail("io_error", `cannot load \`${ref}\`: ${(e as Error).message}`, null, args.span);
      },
    );
  }
  const fn = findMethod(recv, name);
  if (fn === undefined) return NO_METHOD;
  return fn(ev, recv, args);
}

function hasOwnTable(recv: Value, name: string): boolean {
  for (const e of BY_TYPE.get(typeName(recv)) ?? []) if (own.call(e.table, name)) return true;
  return false;
}

function fieldError(v: Value, name: string, span: Span | null): Error {
  const t = typeName(v);
  return fail("field_missing", `${t} has no field \`${name}\``, closestMethods(t, name), span);
}

/**
 * `v.name` without parentheses: a field, else (non-records only) a zero-argument method call;
 * when no method applies either, the original field error (language §15).
 */
export function fieldOrMethod(
  ev: Evaluator,
  v: Value,
  name: string,
  span: Span,
): MaybePromise<Value> {
  if (v instanceof RecordV) {
    const f = v.fields.get(name);
    if (f !== undefined || v.fields.has(name)) return f ?? null;
    throw fail("field_missing", `missing field \`${name}\``, null, span);
  }
  if (v instanceof OutcomeV) {
    const f = outcomeField(v, name, span);
    if (f !== undefined) return f;
    return fieldOrMethod(ev, outcomeOut(v, span), name, span);
  }
  if (v instanceof ErrorV) return errorField(v, name, span);
  if (v instanceof DateTimeV) {
    const f = dateTimeField(v, name);
    if (f !== undefined) return f;
    return methodFallback(ev, v, name, span, `datetime has no field \`${name}\``);
  }
  if (v instanceof GlobV && name === "pattern") return v.pattern;
  // A table's `rows` (its records) and its columns, as value.get paths name them.
  if (v instanceof TableV) {
    const col = tableField(v, name);
    if (col !== undefined) return col;
  }
  if (v instanceof DurationV && Object.hasOwn(DURATION_FIELDS, name)) {
    return ev.relativeTime(v, name === "ago", span);
  }
  return methodFallback(ev, v, name, span, null);
}

/** `t.rows` (the records) or `t.COLUMN` (that column's cells, null where a row lacks it). */
export function tableField(t: TableV, name: string): Value | undefined {
  if (t.rows.some((r) => r.fields.has(name))) {
    return new ListV(t.rows.map((r) => r.fields.get(name) ?? null));
  }
  if (name === "rows") return new ListV(t.rows);
  return undefined;
}

function methodFallback(
  ev: Evaluator,
  v: Value,
  name: string,
  span: Span,
  msg: string | null,
): MaybePromise<Value> {
  const r = dispatch(ev, v, name, { pos: [], named: NO_NAMED, span });
  if (r === NO_METHOD) {
    throw msg === null ? fieldError(v, name, span) : fail("field_missing", msg, null, span);
  }
  return r;
}

/** The fields of an error value (§11.1). */
const ERROR_FIELDS: Readonly<Record<string, (e: ErrorV) => Value>> = {
  code: doc(".code -> str", 'the stable error code ("not_found", "cmd_failed", …)', (e) => e.code),
  msg: doc(".msg -> str", "the message", (e) => e.msg),
  hint: doc(".hint -> str | null", "advice on how to fix it", (e) => e.hint),
  stderr: doc(".stderr -> str | null", "a failed command's stderr", (e) => e.stderr),
  status: doc(".status -> int | null", "a failed command's exit status", (e) => e.status),
};

function errorField(e: ErrorV, name: string, span: Span): Value {
  if (Object.hasOwn(ERROR_FIELDS, name)) return ERROR_FIELDS[name](e);
  throw fail("field_missing", `error has no field \`${name}\``, null, span);
}

/** Glob members answered before the glob expands (§9.6); every other method expands it. */
const GLOB_MEMBERS: Readonly<
  Record<string, (ev: Evaluator, g: GlobV, span: Span | null) => MaybePromise<Value>>
> = {
  pattern: doc(".pattern -> str", "the pattern text", (_ev, g) => g.pattern),
  expand: doc(
    ".expand() -> list<path>",
    "the matching paths (sorted, absolute)",
    (ev, g, span) => then(ev.expandGlob(g, span), (p) => new ListV([...p])),
  ),
};

/** Fields of a duration. */
const DURATION_FIELDS: Readonly<Record<string, string>> = {
  ago: "the datetime this long before now",
  from_now: "the datetime this long after now",
};

/** `.methods()` on any value: its members, one line each (issue 13). */
const METHODS_FN = doc(
  ".methods() -> table",
  "this value's methods and fields with one-line signatures",
  (_ev: Evaluator, recv: Value, args: MethodArgs): Value => {
    if (args.pos.length || args.named.size) {
      throw fail("arg_error", ".methods takes no arguments", null, args.span);
    }
    return methodsTable(recv);
  },
);

/** One member of a type, as `help` and `.methods()` show it. */
export interface MemberDoc {
  name: string;
  sig: string;
  about: string;
}

function fromTable(t: Readonly<Record<string, object>>): MemberDoc[] {
  return Object.entries(t).map(([name, f]) => {
    const d = docOf(f);
    return { name, sig: d?.sig ?? `.${name}()`, about: d?.about ?? "" };
  });
}

/**
 * Every field and method a value of type `t` answers to, with its documentation, read from
 * the same tables dispatch uses (own fields first, then the type's tables, then universal).
 */
export function memberDocs(t: TypeName): MemberDoc[] {
  const out: MemberDoc[] = [];
  if (t === "outcome") out.push(...fromTable(OUTCOME_FIELDS));
  if (t === "error") out.push(...fromTable(ERROR_FIELDS));
  if (t === "glob") out.push(...fromTable(GLOB_MEMBERS));
  if (t === "datetime") {
    for (const f of DATETIME_FIELDS) out.push({ name: f, sig: `.${f} -> int`, about: `the ${f}` });
  }
  if (t === "duration") {
    for (const [f, about] of Object.entries(DURATION_FIELDS)) {
      out.push({ name: f, sig: `.${f} -> datetime`, about });
    }
  }
  if (t !== "error") {
    for (const e of BY_TYPE.get(t) ?? []) out.push(...fromTable(e.table));
    out.push(...fromTable(UNIVERSAL_METHODS));
    out.push({ name: "methods", ...docOf(METHODS_FN)! });
  }
  const seen = new Set<string>();
  return out.filter((m) => !seen.has(m.name) && seen.add(m.name));
}

/** `x.methods()`: a table of `{name, sig, about}`; an outcome adds its `.out`'s methods. */
function methodsTable(v: Value): TableV {
  const rows = memberDocs(typeName(v));
  if (v instanceof OutcomeV && v.ok) {
    const t = typeName(outcomePayload(v));
    for (const m of memberDocs(t)) {
      if (!rows.some((r) => r.name === m.name)) {
        rows.push({ ...m, about: `${m.about} (of .out, a ${t})` });
      }
    }
  }
  return new TableV(
    rows.map((r) =>
      new RecordV(new Map<string, Value>([["name", r.name], ["sig", r.sig], ["about", r.about]]))
    ),
  );
}

/** `d.ago` / `d.from_now` relative to a clock reading. */
export function relativeTo(now: DateTimeV, d: DurationV, ago: boolean): DateTimeV {
  return addDuration(now, ago ? -d.ns : d.ns);
}
