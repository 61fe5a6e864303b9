/**
 * `shoal` — the command line (subsystems §10).
 *
 * ```
 * shoal                     the REPL when stdin is a terminal, else run stdin as a script
 * shoal [--] FILE [ARGS…]   run a script (`args` and `script` are bound)
 * shoal -c|--command SRC    evaluate SRC, print the final value
 * shoal SUBCOMMAND …        see `shoal --help`
 * ```
 *
 * Exit statuses: 0 ok; an uncaught `cmd_failed` → the child's status (1–255); another runtime
 * error → 1; a parse error or bad usage → 2; `exit N` → N.
 *
 * @module
 */

import denoJson from "./deno.json" with { type: "json" };
import { closeInheritedFds } from "./lib/exec/mod.ts";
import { nearest } from "./lib/eval/errors.ts";

export { formatDiagnostic } from "./lib/shell/diagnostic.ts";

/** A subcommand: receives the arguments after its name, returns the exit status. */
export type Subcommand = (args: string[]) => Promise<number>;

/**
 * Subcommands by name. Each owner adds one entry that imports its module lazily, so the plain
 * `shoal -c` path loads nothing it does not use (and one line in {@link SUBCOMMAND_HELP}).
 */
export const SUBCOMMANDS: Map<string, Subcommand> = new Map();

/** One line per subcommand for `shoal --help` (and its usage for `shoal help NAME`). */
export const SUBCOMMAND_HELP: Map<string, string> = new Map();

SUBCOMMANDS.set("kernel", async (args) => (await import("./lib/kernel/cli.ts")).kernelMain(args));
SUBCOMMAND_HELP.set("kernel", "serve sessions over JSON-RPC on a Unix socket");
// A kernel's session process (issue 16): spoken to over stdin/stdout by its kernel only.
// (Names starting with `__` are internal: not listed by --help.)
SUBCOMMANDS.set(
  "__session",
  async () => (await import("./lib/kernel/session_worker.ts")).serveSession(),
);
// A confined session's launcher (issue 16): confines itself, then execs the session process.
SUBCOMMANDS.set(
  "__sandbox",
  async (args) => (await import("./lib/exec/sandbox_launcher.ts")).sandboxMain(args),
);
SUBCOMMANDS.set("mcp", async (args) => (await import("./lib/mcp/mod.ts")).mcpMain(args));
SUBCOMMAND_HELP.set("mcp", "the MCP facade on stdio (same as shoal-mcp)");
// Journal, retention and undo over the state directory (issue 7).
SUBCOMMANDS.set(
  "journal",
  async (args) => (await import("./lib/kernel/journal_cli.ts")).journalMain(args),
);
SUBCOMMAND_HELP.set("journal", "list or show what ran (the journal in the state directory)");
SUBCOMMANDS.set(
  "gc",
  async (args) => (await import("./lib/kernel/journal_cli.ts")).gcCliMain(args),
);
SUBCOMMAND_HELP.set("gc", "delete old journal rows and unreferenced blobs (dry run by default)");
// Leash (issue 15): bearer tokens, and the person's side of plan approval.
SUBCOMMANDS.set(
  "token",
  async (args) => (await import("./lib/kernel/token_cli.ts")).tokenMain(args),
);
SUBCOMMANDS.set("plan", async (args) => (await import("./lib/kernel/plan_cli.ts")).planMain(args));
SUBCOMMAND_HELP.set("token", "create, list or revoke bearer tokens for agents (Leash)");
SUBCOMMAND_HELP.set("plan", "list, show, approve or decline plans waiting for you (Leash)");
SUBCOMMANDS.set(
  "undo",
  async (args) => (await import("./lib/kernel/journal_cli.ts")).undoCliMain(args),
);
SUBCOMMAND_HELP.set("undo", "reverse the file changes of one journal entry");
// The human shell (issue 14).
SUBCOMMANDS.set("attach", async (args) => (await import("./lib/shell/attach.ts")).attachMain(args));
SUBCOMMAND_HELP.set("attach", "open the REPL on a kernel session an agent is using");
SUBCOMMANDS.set("doctor", async (args) => (await import("./lib/shell/doctor.ts")).doctorMain(args));
SUBCOMMAND_HELP.set("doctor", "report what works on this host (FFI, sandbox, state dir, kernel)");
SUBCOMMANDS.set(
  "config",
  async (args) => (await import("./lib/shell/config_cli.ts")).configMain(args),
);
SUBCOMMAND_HELP.set("config", "show the resolved shoal.toml configuration and its layers");
SUBCOMMANDS.set("help", (args) => Promise.resolve(helpMain(args)));
SUBCOMMAND_HELP.set("help", "show this help, or a subcommand's (`shoal help journal`)");

/** The program's version (deno.json). */
export const VERSION: string = denoJson.version;

function usage(): string {
  const names = [...SUBCOMMANDS.keys()].filter((n) => !n.startsWith("__")).sort();
  const w = Math.max(...names.map((n) => n.length));
  return [
    `shoal ${VERSION} — a structured shell for humans and AI agents`,
    "",
    "usage:",
    "  shoal                       the REPL (at a terminal), else run stdin as a script",
    "  shoal [--] FILE [ARGS…]     run a script; `args` holds ARGS",
    "  shoal -c, --command SRC [ARGS…]  evaluate SRC and print its value",
    "  shoal SUBCOMMAND [ARGS…]    (`shoal SUBCOMMAND --help` for its options)",
    "  shoal -h, --help | -V, --version",
    "",
    "subcommands:",
    ...names.map((n) => `  ${n.padEnd(w)}  ${SUBCOMMAND_HELP.get(n) ?? ""}`),
    "",
    "exit status: 0 ok, the failed command's status for an uncaught cmd_failed, 1 other",
    "errors, 2 parse errors and bad usage, N for `exit N`.",
  ].join("\n");
}

/** `shoal help [SUBCOMMAND]`. */
function helpMain(args: string[]): number | Promise<number> {
  if (args.length === 0 || args[0] === "-h" || args[0] === "--help") {
    console.log(usage());
    return 0;
  }
  const sub = SUBCOMMANDS.get(args[0]);
  if (sub === undefined || args[0] === "help") {
    console.error(`shoal help: no subcommand ${JSON.stringify(args[0])}\n\n${usage()}`);
    return 2;
  }
  return sub(["--help"]);
}

/** Evaluate a script file, `-c` source or stdin: see lib/shell/batch.ts. */
async function batch(
  src: { text: string; file: string; args: string[]; script?: string },
): Promise<number> {
  return (await import("./lib/shell/batch.ts")).runBatch(src);
}

/** The CLI entry point; returns the exit status. */
export async function main(argv: string[]): Promise<number> {
  closeInheritedFds();
  const [first, ...rest] = argv;
  if (first === undefined) {
    if (Deno.stdin.isTerminal()) return (await import("./lib/shell/repl.ts")).replMain({});
    const text = new TextDecoder().decode(await new Response(Deno.stdin.readable).arrayBuffer());
    return await batch({ text, file: "<stdin>", args: [] });
  }
  switch (first) {
    case "-h":
    case "--help":
      console.log(usage());
      return 0;
    case "-V":
    case "--version":
      console.log(`shoal ${VERSION}`);
      return 0;
    case "-c":
    case "--command":
      if (rest[0] === undefined) {
        console.error(`shoal: ${first} needs the source to run\n\n${usage()}`);
        return 2;
      }
      return await batch({ text: rest[0], file: "<-c>", args: rest.slice(1) });
    case "--":
      if (rest[0] === undefined) {
        console.error(`shoal: -- needs a script file\n\n${usage()}`);
        return 2;
      }
      return await script(rest[0], rest.slice(1));
  }
  const sub = SUBCOMMANDS.get(first);
  if (sub !== undefined) return await sub(rest);
  if (first.startsWith("-")) {
    console.error(`shoal: unknown option ${JSON.stringify(first)}\n\n${usage()}`);
    return 2;
  }
  return await script(first, rest);
}

async function script(file: string, args: string[]): Promise<number> {
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (e) {
    const sub = e instanceof Deno.errors.NotFound && !file.includes("/")
      ? nearest(file, SUBCOMMANDS.keys())
      : null;
    const near = sub === null ? "" : ` (did you mean the subcommand \`${sub}\`?)`;
    console.error(`shoal: cannot read ${file}: ${(e as Error).message}${near}`);
    return 2;
  }
  return await batch({ text, file, args, script: file });
}

if (import.meta.main) Deno.exit(await main(Deno.args));
