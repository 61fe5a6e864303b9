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

/** The native outcome fields (§10.1); `undefined` for any other name. */
export function outcomeField(o: OutcomeV, name: string, span: Span | null): Value | undefined {
  switch (name) {
    case "status":
      return o.status;
    case "ok":
      return o.ok;
    case "signal":
      return o.signal;
    case "dur":
      return new DurationV(o.durNs);
    case "pid":
      return o.pid;
    case "cmd":
      return o.cmd;
    case "stdout": // spilled stdout: lazy content-store bytes with the true length (issue 7)
      return new BytesV(o.stdout, o.stdoutRef, o.stdoutSize);
    case "stderr":
      return new BytesV(o.stderr);
    case "out":
      return outcomeOut(o, span);
    case "err":
      if (!o.ok) throw cmdFailed(o, span);
      return new BytesV(o.stderr);
  }
  return undefined;
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
