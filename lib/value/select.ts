/**
 * `value.get` selection (protocol §5.1): a side-effect-free path grammar
 * `seg := '.'? (field | '[' uint ']' | '[' uint '..' uint ']')` and the top-level slice.
 */

import {
  BytesV,
  DurationV,
  ErrorV,
  ListV,
  OutcomeV,
  RangeV,
  RecordV,
  TableV,
  TaskV,
  typeName,
  type Value,
} from "./types.ts";
import { outcomePayload } from "./coerce.ts";

/** One parsed path segment. */
export type PathSeg =
  | { kind: "field"; name: string }
  | { kind: "index"; i: number }
  | { kind: "range"; a: number; b: number };

/** A selection failure (`-32005 BAD_PATH_OR_SLICE`). */
export class SelectError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SelectError";
  }
}

const FIELD_CHAR = /[A-Za-z0-9_\-]/;

function parseUint(text: string, what: string): number {
  if (!/^[0-9]+$/.test(text)) throw new SelectError(what);
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new SelectError(what);
  return n;
}

/** Parse a path such as `.rows[0].name`, `out[3]`, `[2..5]`. */
export function parsePath(path: string): PathSeg[] {
  const segs: PathSeg[] = [];
  let i = 0;
  while (i < path.length) {
    if (path[i] === "[") {
      const close = path.indexOf("]", i);
      if (close < 0) throw new SelectError("unterminated [");
      const inner = path.slice(i + 1, close).trim();
      const dots = inner.indexOf("..");
      if (dots >= 0) {
        const a = parseUint(inner.slice(0, dots).trim(), "bad range start");
        const b = parseUint(inner.slice(dots + 2).trim(), "bad range end");
        segs.push({ kind: "range", a, b });
      } else {
        segs.push({ kind: "index", i: parseUint(inner, "bad index") });
      }
      i = close + 1;
      continue;
    }
    if (path[i] === ".") i++;
    let j = i;
    while (j < path.length && FIELD_CHAR.test(path[j])) j++;
    if (j === i) throw new SelectError("empty path segment");
    segs.push({ kind: "field", name: path.slice(i, j) });
    i = j;
  }
  return segs;
}

function clampRange(a: number, b: number, len: number): [number, number] {
  const start = Math.min(a, len);
  return [start, Math.min(Math.max(b, start), len)];
}

/** Field access as `value.get` sees it. `outcomeOut` derives an outcome's structured `.out`. */
function field(v: Value, name: string, outcomeOut: (o: OutcomeV) => Value): Value {
  if (v instanceof RecordV) {
    if (!v.fields.has(name)) throw new SelectError(`record has no field \`${name}\``);
    return v.fields.get(name)!;
  }
  if (v instanceof OutcomeV) {
    switch (name) {
      case "status":
        return v.status;
      case "ok":
        return v.ok;
      case "signal":
        return v.signal;
      case "out":
        // Inspection never raises: a failed command's `.out` is what it printed.
        return v.ok ? outcomeOut(v) : outcomePayload(v);
      case "stdout":
        return new BytesV(v.stdout, v.stdoutRef, v.stdoutSize);
      case "stderr":
      case "err":
        return new BytesV(v.stderr);
      case "dur_ns":
        return new DurationV(v.durNs);
      case "pid":
        return v.pid;
      case "cmd":
        return v.cmd;
      default:
        if (!v.ok) {
          const how = v.status === null
            ? `died from ${v.signal}`
            : `exited with status ${v.status}`;
          throw new SelectError(
            `\`${v.cmd}\` ${how}, so its output has no field \`${name}\`; read .err or .stdout`,
          );
        }
        return field(outcomeOut(v), name, outcomeOut);
    }
  }
  if (v instanceof ErrorV) {
    switch (name) {
      case "code":
        return v.code;
      case "msg":
        return v.msg;
      case "hint":
        return v.hint;
      case "stderr":
        return v.stderr;
      case "status":
        return v.status;
    }
    throw new SelectError(`error has no field \`${name}\``);
  }
  if (v instanceof RangeV) {
    if (name === "start") return v.start;
    if (name === "end") return v.end;
    if (name === "inclusive") return v.inclusive;
  }
  if (v instanceof TaskV) {
    if (name === "id") return v.id;
  }
  if (v instanceof TableV) {
    if (name === "rows") return new ListV(v.rows);
    if (v.rows.some((r) => r.fields.has(name))) {
      return new ListV(v.rows.map((r) => r.fields.get(name) ?? null));
    }
    throw new SelectError(`table has no column \`${name}\``);
  }
  throw new SelectError(`${typeName(v)} has no field \`${name}\``);
}

/** Apply parsed segments. Throws SelectError with the protocol's messages. */
export function selectPath(
  v: Value,
  segs: PathSeg[],
  outcomeOut: (o: OutcomeV) => Value,
): Value {
  let cur = v;
  for (const s of segs) {
    if (s.kind === "field") {
      cur = field(cur, s.name, outcomeOut);
    } else if (s.kind === "index") {
      const items = cur instanceof ListV ? cur.items : cur instanceof TableV ? cur.rows : null;
      if (!items) throw new SelectError(`cannot index ${typeName(cur)} with [${s.i}]`);
      if (s.i >= items.length) {
        throw new SelectError(`index [${s.i}] out of bounds (len ${items.length})`);
      }
      cur = items[s.i];
    } else {
      if (cur instanceof ListV) {
        const [a, b] = clampRange(s.a, s.b, cur.items.length);
        cur = new ListV(cur.items.slice(a, b));
      } else if (cur instanceof TableV) {
        const [a, b] = clampRange(s.a, s.b, cur.rows.length);
        cur = new TableV(cur.rows.slice(a, b));
      } else throw new SelectError(`cannot range-slice ${typeName(cur)}`);
    }
  }
  return cur;
}

/** The top-level half-open slice: lists/tables by item, strings by scalar, bytes by byte. */
export function sliceValue(v: Value, start: number, end: number): Value {
  if (v instanceof ListV) {
    const [a, b] = clampRange(start, end, v.items.length);
    return new ListV(v.items.slice(a, b));
  }
  if (v instanceof TableV) {
    const [a, b] = clampRange(start, end, v.rows.length);
    return new TableV(v.rows.slice(a, b));
  }
  if (typeof v === "string") {
    // Walk scalars only up to `end` — O(end), not O(string).
    let out = "";
    let idx = 0;
    for (const ch of v) {
      if (idx >= end) break;
      if (idx >= start) out += ch;
      idx++;
    }
    return out;
  }
  if (v instanceof BytesV) {
    const [a, b] = clampRange(start, end, v.data.length);
    return new BytesV(v.data.slice(a, b));
  }
  throw new SelectError(`cannot slice a ${typeName(v)}`);
}
