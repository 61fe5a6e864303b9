/**
 * `shoal-mcp` configuration (protocol §15.1): flags override environment variables, the socket
 * follows the shared discovery rule (lib/client/discovery.ts).
 */

import { socketPath, validSocketSession } from "../client/discovery.ts";
import { cliArgs } from "../client/cli_args.ts";

/** Usage text (printed on stderr with exit status 2 for `-h` or a bad argument). */
export const MCP_USAGE =
  "usage: shoal-mcp [--socket PATH] [--session NAME] [--token TOKEN] [--budget-ms MS] " +
  "[--state-dir DIR] [--approver local|FILE]\n" +
  "env: SHOAL_SOCKET, SHOAL_SESSION, SHOAL_TOKEN, SHOAL_NO_AUTOSTART=1, SHOAL_MCP_BUDGET_MS, " +
  "SHOAL_STATE_DIR, SHOAL_APPROVER, SHOAL_MCP_SDK_ONLY=1";

/** The default wait budget of a `shoal_exec`/`shoal_wait` call without `timeout_ms`. */
export const DEFAULT_BUDGET_MS = 25_000;

/** Resolved configuration. */
export interface McpConfig {
  /** Kernel socket path (explicit or discovered). */
  socket: string;
  /** Session to attach to. */
  session: string;
  /** Bearer token for `session.attach` (null: attach as the local user). */
  token: string | null;
  /** Start a kernel when none answers (false when SHOAL_NO_AUTOSTART is set and non-empty). */
  autostart: boolean;
  /** How long a tool call waits before it returns a task handle. */
  budgetMs: number;
  /**
   * Who approves plans in the host (issue 15): `local` — the kernel's own user (a tokenless
   * connection) — or the bearer of an approver principal read from a file. Null: nobody; the
   * agent gets the three-step flow instead of a question in the host.
   */
  approver: { kind: "local" } | { kind: "token"; token: string; file: string } | null;
  /**
   * The state directory a kernel this facade starts uses (`--state-dir`), the same one after a
   * kernel loss; null: the kernel's default.
   */
  stateDir: string | null;
  /**
   * Serve every request through the MCP SDK, plain `shoal_exec` calls too (SHOAL_MCP_SDK_ONLY
   * non-empty): the reference the fast path is compared with, and a way round it.
   */
  sdkOnly: boolean;
}

/** Bad command line: the message already contains the usage. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/**
 * `--approver local` or `--approver FILE` (a file holding an approver's bearer, which must not
 * be readable by others: the model never sees it, so it is not taken from an argument).
 */
function approverOf(v: string | null): McpConfig["approver"] {
  if (v === null) return null;
  if (v === "local") return { kind: "local" };
  let text: string;
  try {
    const st = Deno.statSync(v);
    if (st.mode !== null && (st.mode & 0o077) !== 0) {
      throw new UsageError(`--approver ${v}: the file is readable by others (chmod 600 it)`);
    }
    text = Deno.readTextFileSync(v).trim();
  } catch (e) {
    if (e instanceof UsageError) throw e;
    throw new UsageError(
      `--approver ${v}: cannot read the approver's token: ${(e as Error).message}`,
    );
  }
  if (!/^[A-Za-z0-9_-]{43}$/.test(text)) {
    throw new UsageError(`--approver ${v}: the file must hold one bearer token (43 characters)`);
  }
  return { kind: "token", token: text, file: v };
}

function positiveInt(text: string, what: string): number {
  const n = Number(text);
  if (!/^[0-9]+$/.test(text) || !Number.isSafeInteger(n) || n < 1) {
    throw new UsageError(`${what} must be a positive integer of milliseconds (got ${text})`);
  }
  return n;
}

/**
 * Parse arguments and environment. Returns null for `-h/--help`; throws UsageError for a bad
 * argument.
 */
export function parseMcpArgs(
  args: string[],
  env: (name: string) => string | undefined = (n) => Deno.env.get(n),
): McpConfig | null {
  const nonEmpty = (v: string | undefined) => (v !== undefined && v !== "" ? v : undefined);
  let socket = nonEmpty(env("SHOAL_SOCKET"));
  let session = nonEmpty(env("SHOAL_SESSION")) ?? "default";
  let token = nonEmpty(env("SHOAL_TOKEN")) ?? null;
  let approver = nonEmpty(env("SHOAL_APPROVER")) ?? null;
  let stateDir = nonEmpty(env("SHOAL_STATE_DIR")) ?? null;
  const budgetEnv = nonEmpty(env("SHOAL_MCP_BUDGET_MS"));
  let budgetMs = budgetEnv ? positiveInt(budgetEnv, "SHOAL_MCP_BUDGET_MS") : DEFAULT_BUDGET_MS;
  const missing = (f: string) => new UsageError(`${f} needs a value\n${MCP_USAGE}`);
  for (const { arg: a, flag, value } of cliArgs(args, missing)) {
    switch (flag) {
      case "--socket":
        socket = value();
        break;
      case "--session":
        session = value();
        break;
      case "--token":
        token = value();
        break;
      case "--approver":
        approver = value();
        break;
      case "--state-dir":
        stateDir = value();
        break;
      case "--budget-ms":
        budgetMs = positiveInt(value(), "--budget-ms");
        break;
      case "-h":
      case "--help":
        return null;
      default:
        throw new UsageError(`unknown argument ${JSON.stringify(a)}\n${MCP_USAGE}`);
    }
  }
  if (!validSocketSession(session)) {
    throw new UsageError(
      `invalid session name ${JSON.stringify(session)}: use letters, digits, '.', '_' or '-'`,
    );
  }
  return {
    socket: socketPath({ explicit: socket, session, env }),
    session,
    token,
    autostart: nonEmpty(env("SHOAL_NO_AUTOSTART")) === undefined,
    budgetMs,
    approver: approverOf(approver),
    stateDir,
    sdkOnly: nonEmpty(env("SHOAL_MCP_SDK_ONLY")) !== undefined,
  };
}
