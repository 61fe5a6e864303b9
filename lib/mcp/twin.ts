/**
 * Text twins of errors: what an agent that sees only the text of a tool result must read to act
 * on a failure in one step — the error in a sentence, where in its source, the hint, stderr's
 * first lines, and for a parse error the rewritten source it can send back as it is.
 */

import type { RpcErrorObject } from "../client/errors.ts";

type Obj = Record<string, unknown>;

/** Lines of stderr an error twin shows. */
export const STDERR_LINES = 12;

const isObj = (x: unknown): x is Obj => typeof x === "object" && x !== null && !Array.isArray(x);

/** The first `n` lines of `text`, with a count of the rest. */
export function firstLines(text: string, n = STDERR_LINES): string {
  const lines = text.replace(/\n$/, "").split("\n");
  if (lines.length <= n) return lines.join("\n");
  return `${lines.slice(0, n).join("\n")}\n… ${lines.length - n} more lines`;
}

/** `line L, column C` of a byte offset into `src`. */
function position(src: string, byte: number): string {
  const bytes = new TextEncoder().encode(src).subarray(0, byte);
  const before = new TextDecoder().decode(bytes);
  const lines = before.split("\n");
  return `line ${lines.length}, column ${lines[lines.length - 1].length + 1}`;
}

/** The source line under a span with a caret row, when the source is known. */
function pointAt(src: string | undefined, span: unknown): string {
  if (src === undefined || !isObj(span) || typeof span.start !== "number") return "";
  const start = span.start;
  const end = typeof span.end === "number" ? Math.max(span.end, start + 1) : start + 1;
  const bytes = new TextEncoder().encode(src);
  const dec = new TextDecoder();
  const before = dec.decode(bytes.subarray(0, start));
  const lineStart = before.lastIndexOf("\n") + 1;
  const after = dec.decode(bytes.subarray(start));
  const nl = after.indexOf("\n");
  const line = before.slice(lineStart) + (nl < 0 ? after : after.slice(0, nl));
  // A span over the whole one-line source points at nothing the source does not show.
  if (!src.includes("\n") && start === 0 && end >= bytes.length) return "";
  if (line.length > 160) return ` (at ${position(src, start)})`;
  const col = before.length - lineStart;
  const width = Math.max(
    1,
    Math.min(dec.decode(bytes.subarray(start, end)).length, line.length - col),
  );
  return ` (at ${position(src, start)})\n  ${line}\n  ${" ".repeat(col)}${"^".repeat(width)}`;
}

/** Rewrites a parse error offers: `[{form, src}]` (built by the language). */
function rewritesOf(data: Obj): Array<{ form: string; src: string }> {
  const r = data.rewrites;
  if (!Array.isArray(r)) return [];
  return r.filter((x): x is { form: string; src: string } =>
    isObj(x) && typeof x.src === "string" && typeof x.form === "string"
  );
}

/** The text an agent reads for a kernel (or argument) error. `src` is the source it sent. */
export function errorText(e: RpcErrorObject, src?: string, lead?: string): string {
  const data = isObj(e.data) ? e.data : {};
  const out: string[] = lead ? [lead] : [];
  const hint = typeof data.hint === "string" && data.hint !== "" ? data.hint : null;
  switch (e.code) {
    case -32001: {
      out.push(`Parse error: ${e.message}${pointAt(src, data.span)}`);
      const rw = rewritesOf(data);
      // The hint may spell the rewrites out too; they are shown once, below, as resendable.
      const hintLines = (hint ?? "").split("\n").filter((l) =>
        l.trim() !== "" && !rw.some((r) => l.includes(r.src))
      );
      if (hintLines.length) out.push(`hint: ${hintLines.join("\n")}`);
      if (rw.length) {
        out.push("Resend as:");
        for (const r of rw) {
          out.push(`  ${r.form === "native" ? "native" : "sh"}: ${r.src}`);
        }
      }
      out.push("Nothing ran.");
      break;
    }
    case -32002: {
      const code = typeof data.code === "string" ? data.code : "error";
      out.push(`Error ${code}: ${e.message}${pointAt(src, data.span)}`);
      const status = data.status;
      if (typeof status === "number" && !e.message.includes(`status ${status}`)) {
        out.push(`exit status ${status}`);
      }
      const stderr = typeof data.stderr === "string" ? data.stderr.trim() : "";
      if (hint && hint !== stderr) out.push(`hint: ${hint}`);
      if (stderr !== "") out.push(`stderr:\n${firstLines(stderr).replace(/^/gm, "  ")}`);
      break;
    }
    case -32602: {
      out.push(e.message);
      const issues = Array.isArray(data.issues) ? data.issues : [];
      if (issues.length && !e.message.startsWith("invalid arguments")) {
        for (const i of issues) if (isObj(i)) out.push(`  ${i.path}: ${i.message}`);
      }
      out.push("Nothing ran; fix the arguments and call again.");
      break;
    }
    default: {
      out.push(`${e.message} (error ${e.code})`);
      if (hint) out.push(`hint: ${hint}`);
    }
  }
  return out.join("\n");
}

/** The call that reads the next page of a cut render (`more` from the kernel). */
export function pagingLine(ref: unknown, more: unknown): string | null {
  if (typeof ref !== "string" || !isObj(more) || !Array.isArray(more.slice)) return null;
  const args: Obj = { ref };
  if (typeof more.path === "string" && more.path !== "") args.path = more.path;
  args.slice = more.slice;
  return `Read on: shoal_get ${JSON.stringify(args)}`;
}
