/**
 * Judges an engine's answer against a case's expectation (spec/conformance.md §4) and
 * describes both sides in one line each for reports.
 *
 * @module
 */
import type { Case } from "./corpus.ts";
import { type CaseResult, invalidResult } from "./engine_contract.ts";

/** The verdict on one case. */
export interface Verdict {
  pass: boolean;
  /** What the engine produced, or why the case failed without an answer. */
  got: string;
}

/** One line that says what a case expects. */
export function describeExpected(c: Case): string {
  if (c.skip !== undefined) return `skip: ${c.skip}`;
  if (c.parse_error === true) {
    const needle = c.parse_error_contains;
    return needle === undefined
      ? "parse error"
      : `parse error containing ${JSON.stringify(needle)}`;
  }
  if (c.error !== undefined) {
    const needle = c.error_contains;
    return needle === undefined
      ? `error ${c.error}`
      : `error ${c.error} containing ${JSON.stringify(needle)}`;
  }
  if (c.value !== undefined) return `value ${c.value}`;
  return "nothing (the case has none of value/error/parse_error)";
}

/** One line that says what an engine produced. */
export function describeResult(r: CaseResult): string {
  const hint = r.kind !== "value" && r.hint !== undefined ? ` (hint: ${r.hint})` : "";
  switch (r.kind) {
    case "value":
      return `value ${r.rendered}`;
    case "error":
      return `error ${r.code}: ${r.msg}${hint}`;
    case "parse_error":
      return `parse error: ${r.msg}${hint}`;
  }
}

function contains(needle: string | undefined, msg: string, hint: string | undefined): boolean {
  return needle === undefined || msg.includes(needle) || (hint ?? "").includes(needle);
}

/** Judges `result` (an engine's untrusted answer) against the expectation of `c`. */
export function judge(c: Case, result: unknown): Verdict {
  const invalid = invalidResult(result);
  if (invalid !== undefined) {
    return { pass: false, got: `engine returned an invalid result: ${invalid}` };
  }
  const r = result as CaseResult;
  const got = describeResult(r);
  if (r.kind === "parse_error") {
    const pass = c.parse_error === true && contains(c.parse_error_contains, r.msg, r.hint);
    return { pass, got: pass || c.parse_error === true ? got : `unexpected ${got}` };
  }
  if (c.parse_error === true) return { pass: false, got: `${got} (expected a parse error)` };
  if (r.kind === "value") {
    if (c.error !== undefined || c.value === undefined) return { pass: false, got };
    // Exact, or equal after trimming as the primary runner allows.
    return { pass: r.rendered === c.value || r.rendered.trim() === c.value.trim(), got };
  }
  const pass = c.error === r.code && contains(c.error_contains, r.msg, r.hint);
  return { pass, got };
}
