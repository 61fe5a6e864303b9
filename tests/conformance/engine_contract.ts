/**
 * The contract between the conformance harness and a language engine, plus the frames the
 * harness and its engine host process exchange.
 *
 * An engine is any module that exports `runCase` (see {@link Engine}). The harness never
 * imports an engine itself: it runs it in a separate host process so that a hung case can be
 * killed (see `engine_pool.ts` for why a Worker is not enough). The two talk JSON lines over
 * a Unix socket, which leaves the host's stdin empty and its stdout to the engine.
 *
 * @module
 */

/** What an engine reports for one case's program. */
export type CaseResult =
  | { kind: "value"; rendered: string }
  | { kind: "error"; code: string; msg: string; hint?: string }
  | { kind: "parse_error"; msg: string; hint?: string };

/** The shape of an engine module. */
export interface Engine {
  /** Parses and evaluates `src` in a fresh session whose cwd is `cwd`. */
  runCase(src: string, cwd: string): Promise<CaseResult>;
}

/** A request from the harness to its engine host: run one case. */
export interface RunRequest {
  id: number;
  src: string;
  cwd: string;
}

/** A frame from the engine host back to the harness. */
export type HostFrame =
  | { type: "ready" }
  | { type: "load_failed"; message: string }
  | { type: "result"; id: number; result: unknown }
  | { type: "threw"; id: number; message: string }
  | { type: "crash"; message: string };

const encoder = new TextEncoder();

/** Writes one JSON line, looping because a socket write may be partial. */
export async function writeLine(conn: Deno.Conn, message: unknown): Promise<void> {
  const bytes = encoder.encode(JSON.stringify(message) + "\n");
  for (let off = 0; off < bytes.length;) off += await conn.write(bytes.subarray(off));
}

/** Yields the lines of a byte stream (without their newline). */
export async function* readLines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let pending = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    pending += chunk;
    let nl;
    while ((nl = pending.indexOf("\n")) >= 0) {
      yield pending.slice(0, nl);
      pending = pending.slice(nl + 1);
    }
  }
  if (pending) yield pending;
}

/** Checks that an engine's answer has the {@link CaseResult} shape; returns a reason if not. */
export function invalidResult(r: unknown): string | undefined {
  if (typeof r !== "object" || r === null) return `expected an object, got ${typeof r}`;
  const o = r as Record<string, unknown>;
  const str = (k: string) => typeof o[k] === "string";
  const optStr = (k: string) => o[k] === undefined || str(k);
  switch (o.kind) {
    case "value":
      return str("rendered") ? undefined : "a value result needs a string `rendered`";
    case "error":
      if (!str("code") || !str("msg")) return "an error result needs string `code` and `msg`";
      return optStr("hint") ? undefined : "`hint` must be a string when present";
    case "parse_error":
      if (!str("msg")) return "a parse_error result needs a string `msg`";
      return optStr("hint") ? undefined : "`hint` must be a string when present";
    default:
      return `unknown kind ${JSON.stringify(o.kind)} (expected value, error or parse_error)`;
  }
}
