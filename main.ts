/**
 * `shoal` — the command line.
 *
 * ```
 * shoal -c SRC            evaluate SRC, print the final value
 * shoal FILE [ARGS…]      run a script (`args` and `script` are bound)
 * shoal                   interactive line REPL when stdin is a terminal
 * shoal SUBCOMMAND …      see SUBCOMMANDS (kernel, mcp, … are added by their owners)
 * ```
 *
 * Errors print `error[code]: msg`, the source line with a caret under the span and
 * `hint: …`, and exit with status 1; `exit n` exits with n.
 *
 * @module
 */

import { resolve } from "node:path";
import { ParseError } from "./lib/syntax/errors.ts";
import type { Span } from "./lib/syntax/ast.ts";
import { displayTop, renderBlock } from "./lib/value/render.ts";
import { ListV, OutcomeV, PathV, type Value } from "./lib/value/types.ts";
import { Evaluator, toErrorValue } from "./lib/eval/mod.ts";
import { hasAdaptedValue } from "./lib/eval/adapters/mod.ts";
import { closeInheritedFds } from "./lib/exec/mod.ts";

/** A subcommand: receives the arguments after its name, returns the exit status. */
export type Subcommand = (args: string[]) => Promise<number>;

/**
 * Subcommands by name. Each owner adds one entry that imports its module lazily, so the plain
 * `shoal -c` path loads nothing it does not use.
 */
export const SUBCOMMANDS: Map<string, Subcommand> = new Map();

SUBCOMMANDS.set("kernel", async (args) => (await import("./lib/kernel/cli.ts")).kernelMain(args));
// A kernel's session process (issue 16): spoken to over stdin/stdout by its kernel only.
SUBCOMMANDS.set(
  "__session",
  async () => (await import("./lib/kernel/session_worker.ts")).serveSession(),
);
SUBCOMMANDS.set("mcp", async (args) => (await import("./lib/mcp/mod.ts")).mcpMain(args));
// Journal, retention and undo over the state directory (issue 7).
SUBCOMMANDS.set(
  "journal",
  async (args) => (await import("./lib/kernel/journal_cli.ts")).journalMain(args),
);
SUBCOMMANDS.set(
  "gc",
  async (args) => (await import("./lib/kernel/journal_cli.ts")).gcCliMain(args),
);
SUBCOMMANDS.set(
  "undo",
  async (args) => (await import("./lib/kernel/journal_cli.ts")).undoCliMain(args),
);

const enc = new TextEncoder();

function write(fd: { writeSync(p: Uint8Array): number }, bytes: Uint8Array): void {
  for (let off = 0; off < bytes.length;) off += fd.writeSync(bytes.subarray(off));
}

/** The CLI statement sink: outcomes print their stdout bytes, other values `display_top`. */
function stdoutSink(v: Value): void {
  // An adapted command shows its table, not the machine format it was parsed from.
  if (hasAdaptedValue(v)) write(Deno.stdout, enc.encode(renderBlock(v) + "\n"));
  else if (v instanceof OutcomeV) write(Deno.stdout, v.stdout);
  else write(Deno.stdout, enc.encode(displayTop(v) + "\n"));
}

/** Line/column (1-based, columns in characters) of a UTF-8 byte offset. */
function locate(src: string, byteOff: number): { line: number; col: number; text: string } {
  const bytes = enc.encode(src);
  const before = new TextDecoder().decode(bytes.subarray(0, Math.min(byteOff, bytes.length)));
  const lines = before.split("\n");
  const line = lines.length;
  const col = Array.from(lines[lines.length - 1]).length + 1;
  const text = src.split("\n")[line - 1] ?? "";
  return { line, col, text };
}

/** `error[code]: msg`, the source line with a caret under the span, and the hint. */
export function formatDiagnostic(
  code: string,
  msg: string,
  hint: string | null | undefined,
  span: Span | null | undefined,
  src: string,
  file: string,
): string {
  let out = `error[${code}]: ${msg}\n`;
  if (span) {
    const at = locate(src, span[0]);
    const end = locate(src, Math.max(span[0], span[1]));
    const width = end.line === at.line ? Math.max(1, end.col - at.col) : 1;
    const gutter = String(at.line).length;
    out += `${" ".repeat(gutter)}--> ${file}:${at.line}:${at.col}\n`;
    out += `${at.line} | ${at.text}\n`;
    out += `${" ".repeat(gutter)} | ${" ".repeat(at.col - 1)}${"^".repeat(width)}\n`;
  }
  if (hint) out += `hint: ${hint}\n`;
  return out;
}

/** Evaluate `src` in `ev`, print the final value, return the exit status. */
async function runSource(ev: Evaluator, src: string, file: string): Promise<number> {
  try {
    const v = await ev.evalSource(src);
    if (ev.pendingExit !== null) return ev.pendingExit;
    if (v instanceof OutcomeV && !hasAdaptedValue(v)) write(Deno.stdout, v.stdout);
    else if (v !== null) write(Deno.stdout, enc.encode(renderBlock(v) + "\n"));
    return 0;
  } catch (e) {
    if (e instanceof ParseError) {
      write(Deno.stderr, enc.encode(formatDiagnostic("parse", e.msg, e.hint, e.span, src, file)));
      return 2;
    }
    const err = toErrorValue(e);
    write(
      Deno.stderr,
      enc.encode(formatDiagnostic(err.code, err.msg, err.hint, err.span, src, file)),
    );
    if (err.code === "internal" && e instanceof Error && e.stack) {
      write(Deno.stderr, enc.encode(e.stack + "\n"));
    }
    return 1;
  }
}

/** True when `src` fails to parse only because it ends too early (an open block or string). */
function incomplete(ev: Evaluator, src: string): boolean {
  try {
    ev.parse(src);
    return false;
  } catch (e) {
    return e instanceof ParseError &&
      (/found Eof/.test(e.msg) || (/^unterminated/.test(e.msg) && !/newline/.test(e.msg)));
  }
}

async function repl(): Promise<number> {
  const ev = new Evaluator({ repl: true, adapters: true, ports: { sink: stdoutSink } });
  const decoder = new TextDecoder();
  const buf = new Uint8Array(64 * 1024);
  let pending = "";
  let entry = "";
  write(Deno.stdout, enc.encode("shoal> "));
  for (;;) {
    const n = await Deno.stdin.read(buf);
    if (n === null) break;
    pending += decoder.decode(buf.subarray(0, n), { stream: true });
    let nl;
    while ((nl = pending.indexOf("\n")) >= 0) {
      entry += (entry ? "\n" : "") + pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      // An open `{`, `(` or string continues on the next line.
      if (entry.trim() !== "" && incomplete(ev, entry)) {
        write(Deno.stdout, enc.encode("  ...> "));
        continue;
      }
      if (entry.trim() !== "") {
        await runSource(ev, entry, "<repl>");
        if (ev.pendingExit !== null) return ev.pendingExit;
      }
      entry = "";
      write(Deno.stdout, enc.encode("shoal> "));
    }
  }
  write(Deno.stdout, enc.encode("\n"));
  return 0;
}

const USAGE = `usage: shoal -c SRC | shoal FILE [ARGS…] | shoal SUBCOMMAND …`;

/** The CLI entry point; returns the exit status. */
export async function main(argv: string[]): Promise<number> {
  closeInheritedFds();
  const [first, ...rest] = argv;
  if (first === undefined) {
    if (Deno.stdin.isTerminal()) return await repl();
    const src = new TextDecoder().decode(await new Response(Deno.stdin.readable).arrayBuffer());
    return await runSource(
      new Evaluator({ adapters: true, ports: { sink: stdoutSink } }),
      src,
      "<stdin>",
    );
  }
  if (first === "-h" || first === "--help") {
    console.log(USAGE);
    return 0;
  }
  if (first === "-c") {
    if (rest[0] === undefined) {
      console.error(USAGE);
      return 2;
    }
    return await runSource(
      new Evaluator({ adapters: true, ports: { sink: stdoutSink } }),
      rest[0],
      "<-c>",
    );
  }
  const sub = SUBCOMMANDS.get(first);
  if (sub !== undefined) return await sub(rest);
  let src: string;
  try {
    src = await Deno.readTextFile(first);
  } catch (e) {
    console.error(`shoal: cannot read ${first}: ${(e as Error).message}`);
    return 2;
  }
  const ev = new Evaluator({ adapters: true, ports: { sink: stdoutSink } });
  ev.root.declare("args", new ListV(rest));
  ev.root.declare("script", new PathV(resolve(first)));
  return await runSource(ev, src, first);
}

if (import.meta.main) Deno.exit(await main(Deno.args));
