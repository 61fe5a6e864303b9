/**
 * The Shoal value model (language spec §4).
 *
 * Scalars that JavaScript already has are unboxed for speed:
 * - `null` → null, `bool` → boolean, `str` → string;
 * - `int` (i64) → a JS `number` when it is a safe integer, otherwise a `bigint`
 *   (always normalised: a bigint int is never within the safe range — use `mkInt`);
 * Everything else is an instance of one of the classes below, each with a readonly `t` tag
 * equal to its `type_name`. Use `typeName(v)` rather than inspecting representations.
 */

import type { CmdExpr, Span } from "../syntax/ast.ts";

/** Any Shoal value. */
export type Value =
  | null
  | boolean
  | number
  | bigint
  | string
  | FloatV
  | SizeV
  | DurationV
  | PathV
  | GlobV
  | RegexV
  | DateTimeV
  | TimeV
  | BytesV
  | ListV
  | RecordV
  | TableV
  | RangeV
  | StreamV
  | ErrorV
  | OutcomeV
  | TaskV
  | ClosureV
  | CommandV
  | SecretV;

/** An int: safe-integer number or out-of-safe-range bigint (normalised, see `mkInt`). */
export type Int = number | bigint;

/** Every runtime type name (also the names usable in `TYPE name` patterns). */
export type TypeName =
  | "null"
  | "bool"
  | "int"
  | "float"
  | "str"
  | "path"
  | "glob"
  | "regex"
  | "size"
  | "duration"
  | "datetime"
  | "time"
  | "bytes"
  | "list"
  | "record"
  | "table"
  | "range"
  | "stream"
  | "error"
  | "outcome"
  | "task"
  | "closure"
  | "command"
  | "secret";

/** The i64 bounds. */
export const I64_MIN = -(2n ** 63n);
/** The i64 bounds. */
export const I64_MAX = 2n ** 63n - 1n;
/** The u64 maximum (sizes). */
export const U64_MAX = 2n ** 64n - 1n;

/** Normalise an exact integer: safe range → number, else bigint. Does not range-check. */
export function mkInt(v: bigint | number): Int {
  if (typeof v === "number") return v;
  return v >= -9007199254740991n && v <= 9007199254740991n ? Number(v) : v;
}

/** True for an int value (number or bigint representation). */
export function isInt(v: Value): v is Int {
  return typeof v === "number" || typeof v === "bigint";
}

/** An int as a bigint. */
export function intToBig(v: Int): bigint {
  return typeof v === "bigint" ? v : BigInt(v);
}

/** A float (boxed so it can be told apart from an int). */
export class FloatV {
  readonly t = "float" as const;
  constructor(readonly v: number) {}
}

/** A size in bytes (u64). */
export class SizeV {
  readonly t = "size" as const;
  constructor(readonly bytes: bigint) {}
}

/** A duration in nanoseconds (i64). */
export class DurationV {
  readonly t = "duration" as const;
  constructor(readonly ns: bigint) {}
}

/** A filesystem path (text; may be relative — resolved against the session cwd when used). */
export class PathV {
  readonly t = "path" as const;
  constructor(readonly path: string) {}
}

/** A glob pattern with the cwd it was made in and its hidden-file flag. */
export class GlobV {
  readonly t = "glob" as const;
  constructor(
    readonly pattern: string,
    readonly origin: string,
    readonly hidden = false,
    readonly follow = false,
  ) {}
}

/** A compiled regular expression and its source text. */
export class RegexV {
  readonly t = "regex" as const;
  constructor(readonly source: string, readonly re: RegExp) {}
}

/**
 * A zoned instant: `ns` nanoseconds since the Unix epoch (UTC) and the zone it is viewed in
 * (`"UTC"`, an IANA name such as `"Europe/Paris"`, or a fixed offset such as `"+02:00"`).
 */
export class DateTimeV {
  readonly t = "datetime" as const;
  constructor(readonly ns: bigint, readonly zone = "UTC") {}
}

/** A time of day. */
export class TimeV {
  readonly t = "time" as const;
  constructor(readonly h: number, readonly m: number, readonly s: number, readonly nanos = 0) {}
}

/** Bytes; `ref` is set when the bytes also live in the content store (`val:blake3:<hex>`). */
export class BytesV {
  readonly t = "bytes" as const;
  constructor(
    readonly data: Uint8Array,
    readonly ref: string | null = null,
    /**
     * True length in bytes. Larger than `data.length` only for lazy content-store bytes
     * (`ref` set): `data` is then a prefix and the rest loads on demand. (issue 7)
     */
    readonly size: number = data.length,
  ) {}
}

/** A list. Values are immutable: never mutate `items` after construction. */
export class ListV {
  readonly t = "list" as const;
  constructor(readonly items: Value[]) {}
}

/** A record: insertion-ordered fields. Never mutate `fields` after construction. */
export class RecordV {
  readonly t = "record" as const;
  constructor(readonly fields: Map<string, Value>) {}
}

/** A table: rows of records. Never mutate `rows` after construction. */
export class TableV {
  readonly t = "table" as const;
  constructor(readonly rows: RecordV[]) {}
}

/** An int range `start..end` / `start..=end`. */
export class RangeV {
  readonly t = "range" as const;
  constructor(readonly start: Int, readonly end: Int, readonly inclusive: boolean) {}
}

/**
 * A single-consumer stream. The evaluator owns the behaviour (`source`); the value layer only
 * needs the label, whether it is bounded, and whether it has been consumed.
 */
export class StreamV {
  readonly t = "stream" as const;
  consumed = false;
  constructor(readonly label: string, readonly bounded: boolean, readonly source: unknown) {}
}

/** A language error value (`ErrorVal`). `code` spellings are API (protocol §6.2). */
export class ErrorV {
  readonly t = "error" as const;
  constructor(
    readonly code: string,
    readonly msg: string,
    readonly hint: string | null = null,
    readonly stderr: string | null = null,
    readonly status: number | null = null,
    readonly span: Span | null = null,
  ) {}
}

/** The result of running a command (language spec §10). */
export class OutcomeV {
  readonly t = "outcome" as const;
  constructor(
    readonly status: number | null,
    readonly ok: boolean,
    readonly signal: string | null,
    readonly stdout: Uint8Array,
    readonly stderr: Uint8Array,
    readonly durNs: bigint,
    readonly pid: number,
    readonly cmd: string,
    /** The structured value of a builtin/adapter (`.out` returns it verbatim); undefined for raw externals. */
    readonly parsed: Value | undefined = undefined,
    readonly span: Span | null = null,
    readonly stdoutTruncated = false,
    readonly stderrTruncated = false,
    /** Content-store ref of the full stdout when it was spilled beyond the capture cap. */
    readonly stdoutRef: string | null = null,
    /** Full stdout length when `stdoutRef` is set (`stdout` then holds the in-memory prefix). */
    readonly stdoutSize: number = stdout.length,
  ) {}
}

/** A background task handle. The evaluator owns its behaviour (`impl`). */
export class TaskV {
  readonly t = "task" as const;
  constructor(readonly id: number, readonly desc: string, readonly impl: unknown) {}
}

/** A parameter as seen from outside a closure (for render and `--help`). */
export interface ParamInfo {
  name: string;
  type?: string;
  hasDefault: boolean;
}

/**
 * A function or lambda. `name` is null for lambdas. `impl` holds the evaluator's private data
 * (body, captured environment, native implementation…).
 */
export class ClosureV {
  readonly t = "closure" as const;
  constructor(
    readonly name: string | null,
    readonly params: ParamInfo[],
    readonly rest: ParamInfo | null,
    readonly impl: unknown,
  ) {}
}

/** A stored command (`alias`): the parsed command and the alias name. */
export class CommandV {
  readonly t = "command" as const;
  constructor(readonly cmd: CmdExpr, readonly name: string) {}
}

/** A secret: its name and value (never rendered, never placed in argv). */
export class SecretV {
  readonly t = "secret" as const;
  constructor(readonly name: string, readonly value: string) {}
}

/** The runtime type name of a value. */
export function typeName(v: Value): TypeName {
  if (v === null) return "null";
  switch (typeof v) {
    case "boolean":
      return "bool";
    case "number":
    case "bigint":
      return "int";
    case "string":
      return "str";
    default:
      return v.t;
  }
}
