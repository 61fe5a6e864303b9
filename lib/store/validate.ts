/**
 * Input checking for journal writes: every field is validated and normalised
 * before any SQL runs, so bad input is an `invalid_input` error naming the
 * field, never a half-written row or a SQLite constraint message.
 *
 * @module
 */

import { invalid } from "./errors.ts";
import {
  MAX_OUTPUTS_PER_ROW,
  PREVIEW_MAX_BYTES,
  QUERY_LIMIT_DEFAULT,
  QUERY_LIMIT_MAX,
  TEXT_MAX_BYTES,
} from "./limits.ts";
import { parseRef, toRef } from "./refs.ts";
import type {
  Effect,
  ErrorInfo,
  FinishStatus,
  OutcomeInput,
  OutputRecord,
  StatementInput,
} from "./types.ts";

const encoder = new TextEncoder();

/** UTF-8 byte length of `s`, computed only when it could exceed `max`. */
function exceedsBytes(s: string, max: number): boolean {
  if (s.length * 3 <= max) return false;
  return encoder.encode(s).length > max;
}

/** A required string, at most `max` UTF-8 bytes. */
export function text(name: string, v: unknown, max = TEXT_MAX_BYTES, allowEmpty = true): string {
  if (typeof v !== "string") throw invalid(`${name} must be a string`, { field: name });
  if (!allowEmpty && v === "") throw invalid(`${name} must not be empty`, { field: name });
  if (exceedsBytes(v, max)) {
    throw invalid(`${name} is longer than ${max} bytes`, { field: name, max });
  }
  return v;
}

/** An optional nullable string. */
export function optText(name: string, v: unknown, max = 4096): string | null {
  if (v === undefined || v === null) return null;
  return text(name, v, max);
}

/** A time in ms since the epoch (finite, ≥ 0; fractions are dropped). */
export function ms(name: string, v: unknown): number {
  if (typeof v !== "number" || !Number.isFinite(v) || v < 0 || v > 8.64e15) {
    throw invalid(`${name} must be a time in milliseconds since the epoch`, { field: name });
  }
  return Math.floor(v);
}

/** A non-negative safe integer. */
export function count(name: string, v: unknown): number {
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0) {
    throw invalid(`${name} must be a non-negative integer`, { field: name });
  }
  return v;
}

/** A journal row id (positive safe integer). */
export function rowId(name: string, v: unknown): number {
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v <= 0) {
    throw invalid(`${name} must be a positive integer id`, { field: name });
  }
  return v;
}

/** A listing limit: default 100, clamped to 1000. */
export function limit(v: unknown, def = QUERY_LIMIT_DEFAULT, max = QUERY_LIMIT_MAX): number {
  if (v === undefined || v === null || v === 0) return def;
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0) {
    throw invalid("limit must be a non-negative integer", { field: "limit" });
  }
  return Math.min(v, max);
}

/** Any JSON value, serialised (undefined → null). */
export function json(name: string, v: unknown): string {
  let s: string | undefined;
  try {
    s = JSON.stringify(v === undefined ? null : v);
  } catch (e) {
    throw invalid(`${name} is not JSON-serialisable: ${(e as Error).message}`, { field: name });
  }
  if (s === undefined) throw invalid(`${name} is not JSON-serialisable`, { field: name });
  if (exceedsBytes(s, TEXT_MAX_BYTES)) {
    throw invalid(`${name} is larger than ${TEXT_MAX_BYTES} bytes of JSON`, { field: name });
  }
  return s;
}

/** Normalise an effect kind the way clients may spell it (`fs.write` ≡ `fs_write`). */
export function effectKind(v: unknown, name = "effect kind"): string {
  if (typeof v !== "string" || !/^[A-Za-z][A-Za-z0-9_.]{0,63}$/.test(v)) {
    throw invalid(
      `${name} must be a word like fs_write or fs.write, got ${JSON.stringify(v)}`,
      { field: name },
    );
  }
  return v.replaceAll(".", "_");
}

/** Validated effects (kinds normalised) and their distinct kinds. */
export function effects(v: unknown): { list: Effect[]; kinds: string[] } {
  if (v === undefined || v === null) return { list: [], kinds: [] };
  if (!Array.isArray(v)) throw invalid("effects must be an array of {kind, ...}");
  const list: Effect[] = [];
  const kinds = new Set<string>();
  for (const e of v) {
    if (typeof e !== "object" || e === null || Array.isArray(e)) {
      throw invalid("each effect must be an object with a kind", { field: "effects" });
    }
    const kind = effectKind((e as Effect).kind, "effects[].kind");
    list.push({ ...(e as Effect), kind });
    kinds.add(kind);
  }
  return { list, kinds: [...kinds] };
}

/** Validated outputs (refs canonicalised). */
export function outputs(v: unknown): OutputRecord[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw invalid("outputs must be an array");
  if (v.length > MAX_OUTPUTS_PER_ROW) {
    throw invalid(`a row may carry at most ${MAX_OUTPUTS_PER_ROW} outputs`);
  }
  return v.map((o, i) => {
    const at = `outputs[${i}]`;
    if (typeof o !== "object" || o === null) throw invalid(`${at} must be an object`);
    const r = o as OutputRecord;
    const out: OutputRecord = {
      kind: text(`${at}.kind`, r.kind, 64, false),
      len: count(`${at}.len`, r.len),
    };
    if (r.ref !== undefined) out.ref = toRef(parseRef(r.ref));
    if (r.preview !== undefined) out.preview = text(`${at}.preview`, r.preview, PREVIEW_MAX_BYTES);
    if (r.hash !== undefined) {
      if (r.preview === undefined) throw invalid(`${at}.hash names an inline preview's bytes`);
      out.hash = parseRef(r.hash);
    }
    if (r.truncated !== undefined) {
      if (typeof r.truncated !== "boolean") throw invalid(`${at}.truncated must be a boolean`);
      out.truncated = r.truncated;
    }
    if (out.ref === undefined && out.preview === undefined) {
      throw invalid(`${at} needs a ref (CAS blob) or a preview`);
    }
    return out;
  });
}

/** Hashes referenced by outputs. */
export function outputHashes(list: readonly OutputRecord[]): Array<{ hash: string; role: string }> {
  const out: Array<{ hash: string; role: string }> = [];
  for (const o of list) {
    if (o.ref !== undefined) out.push({ hash: parseRef(o.ref), role: o.kind });
    // An inline output's hash, so `blob.get` finds its row (no blob file: GC ignores it).
    else if (o.hash !== undefined) out.push({ hash: o.hash, role: `${INLINE_ROLE}${o.kind}` });
  }
  return out;
}

/** `blob_ref.role` prefix of an inline output's hash (no blob file behind it). */
export const INLINE_ROLE = "inline:";

function finishStatus(name: string, v: unknown): FinishStatus {
  if (v !== "ok" && v !== "error" && v !== "cancelled") {
    throw invalid(`${name} must be ok, error or cancelled`, { field: name });
  }
  return v;
}

function errorInfo(name: string, v: unknown): ErrorInfo | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== "object") throw invalid(`${name} must be {code, message}`);
  const e = v as ErrorInfo;
  return {
    code: text(`${name}.code`, e.code, 128, false),
    message: text(`${name}.message`, e.message, 64 * 1024),
  };
}

/** A validated outcome, ready for SQL. */
export interface Outcome {
  status: FinishStatus;
  ok: number;
  durationNs: number;
  exitStatus: number | null;
  signal: string | null;
  outputs: OutputRecord[];
  outputsJson: string;
  error: ErrorInfo | null;
  effects: { list: Effect[]; kinds: string[] } | null;
}

/** Validate the outcome part of a finish or statement. */
export function outcome(name: string, v: OutcomeInput): Outcome {
  if (typeof v !== "object" || v === null) throw invalid(`${name} must be an object`);
  const status = finishStatus(`${name}.status`, v.status);
  if (v.ok !== undefined && typeof v.ok !== "boolean") {
    throw invalid(`${name}.ok must be a boolean`);
  }
  const exitStatus = v.exitStatus === undefined || v.exitStatus === null ? null : (() => {
    if (!Number.isSafeInteger(v.exitStatus)) throw invalid(`${name}.exitStatus must be an integer`);
    return v.exitStatus as number;
  })();
  const outs = outputs(v.outputs);
  return {
    status,
    ok: (v.ok ?? status === "ok") ? 1 : 0,
    durationNs: count(`${name}.durationNs`, v.durationNs),
    exitStatus,
    signal: optText(`${name}.signal`, v.signal, 32),
    outputs: outs,
    outputsJson: JSON.stringify(outs),
    error: errorInfo(`${name}.error`, v.error),
    effects: v.effects === undefined ? null : effects(v.effects),
  };
}

/** Validated statement row values. */
export interface Statement extends Outcome {
  source: string;
  head: string;
  astJson: string;
  cwd: string | null;
  startedAt: number | null;
}

/** Validate one statement. */
export function statement(i: number, v: StatementInput): Statement {
  const name = `statements[${i}]`;
  const o = outcome(name, v);
  const source = text(`${name}.source`, v.source);
  return {
    ...o,
    source,
    head: headOf(source),
    astJson: json(`${name}.ast`, v.ast),
    cwd: v.cwd === undefined ? null : text(`${name}.cwd`, v.cwd, 64 * 1024),
    startedAt: v.startedAt === undefined ? null : ms(`${name}.startedAt`, v.startedAt),
  };
}

/** First whitespace-separated word of a source text ("" for blank source). */
export function headOf(source: string): string {
  const m = /^\s*(\S+)/.exec(source);
  return m ? m[1] : "";
}
