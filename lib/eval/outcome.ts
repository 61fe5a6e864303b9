/**
 * Outcome values (language §10): fields, `.out` derivation with JSON sniffing, `cmd_failed`.
 *
 * @module
 */

import type { Span } from "../syntax/ast.ts";
import { BytesV, DurationV, ErrorV, OutcomeV, type Value } from "../value/types.ts";
import { ShoalError } from "../value/errors.ts";
import { outcomePayload } from "../value/coerce.ts";
import { displayTop } from "../value/render.ts";
import { doc } from "./docs.ts";

const LOSSY = new TextDecoder("utf-8", { ignoreBOM: true });
const ENC = new TextEncoder();

/** The `cmd_failed` error for a non-ok outcome («`cmd` exited with status N», hint = stderr). */
export function cmdFailed(o: OutcomeV, span: Span | null): ShoalError {
  const why = o.status !== null
    ? `exited with status ${o.status}`
    : o.signal !== null
    ? `died from ${o.signal}`
    : "failed";
  const stderr = LOSSY.decode(o.stderr);
  const hint = stderr.trim() === "" ? null : stderr.trim();
  return new ShoalError(
    new ErrorV("cmd_failed", `\`${o.cmd}\` ${why}`, hint, stderr, o.status, span ?? o.span),
  );
}

export { outcomePayload };

/** `.out`: the payload, raising `cmd_failed` when the outcome is not ok. */
export function outcomeOut(o: OutcomeV, span: Span | null): Value {
  if (!o.ok) throw cmdFailed(o, span);
  return outcomePayload(o);
}

type OutcomeField = (o: OutcomeV, span: Span | null) => Value;

/** The native outcome fields (§10.1), each with its documentation. */
export const OUTCOME_FIELDS: Readonly<Record<string, OutcomeField>> = {
  ok: doc(".ok -> bool", "true when the command succeeded (exit status 0)", (o) => o.ok),
  status: doc(
    ".status -> int | null",
    "the exit status (null when killed by a signal)",
    (o) => o.status,
  ),
  out: doc(
    ".out -> value",
    "stdout as a value: JSON parsed, else text minus one trailing newline; raises if not ok",
    (o, span) => outcomeOut(o, span),
  ),
  err: doc(
    ".err -> bytes",
    "stderr; raises cmd_failed if not ok (.stderr never does)",
    (o, span) => {
      if (!o.ok) throw cmdFailed(o, span);
      return new BytesV(o.stderr);
    },
  ),
  // spilled stdout: lazy content-store bytes with the true length (issue 7)
  stdout: doc(
    ".stdout -> bytes",
    "stdout, raw (readable even on failure)",
    (o) => new BytesV(o.stdout, o.stdoutRef, o.stdoutSize),
  ),
  stderr: doc(
    ".stderr -> bytes",
    "stderr, raw (readable even on failure)",
    (o) => new BytesV(o.stderr),
  ),
  signal: doc(
    ".signal -> str | null",
    'the signal that killed it ("SIGKILL"), or null',
    (o) => o.signal,
  ),
  dur: doc(".dur -> duration", "how long it ran", (o) => new DurationV(o.durNs)),
  pid: doc(".pid -> int", "its process id (0 for builtins)", (o) => o.pid),
  cmd: doc(".cmd -> str", "the command line that ran", (o) => o.cmd),
};

/** A native outcome field; `undefined` for any other name. */
export function outcomeField(o: OutcomeV, name: string, span: Span | null): Value | undefined {
  return Object.hasOwn(OUTCOME_FIELDS, name) ? OUTCOME_FIELDS[name](o, span) : undefined;
}

/**
 * The bytes a builtin's value becomes on stdout and in `>` redirects (§9.4): str plus a
 * trailing newline if missing; bytes raw; null nothing; outcome its stdout; others
 * display_top + newline.
 */
export function valueBytes(v: Value): Uint8Array {
  if (v === null) return new Uint8Array(0);
  if (typeof v === "string") return ENC.encode(v.endsWith("\n") ? v : v + "\n");
  if (v instanceof BytesV) return v.data;
  if (v instanceof OutcomeV) return v.stdout;
  return ENC.encode(displayTop(v) + "\n");
}

/** A successful builtin outcome wrapping `value` (§10.3). */
export function builtinOutcome(head: string, value: Value, span: Span | null): OutcomeV {
  const out = value === null ? new Uint8Array(0) : valueBytes(value);
  return new OutcomeV(0, true, null, out, new Uint8Array(0), 0n, 0, head, value, span);
}
