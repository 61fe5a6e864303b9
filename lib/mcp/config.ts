/**
 * `shoal-mcp` configuration (protocol §15.1): flags override environment variables, the socket
 * follows the shared discovery rule (lib/client/discovery.ts).
 */

import { socketPath, validSocketSession } from "../client/discovery.ts";

/** Usage text (printed on stderr with exit status 2 for `-h` or a bad argument). */
export const MCP_USAGE =
  "usage: shoal-mcp [--socket PATH] [--session NAME] [--token TOKEN] [--budget-ms MS] " +
  "[--state-dir DIR]\n" +
  "env: SHOAL_SOCKET, SHOAL_SESSION, SHOAL_TOKEN, SHOAL_NO_AUTOSTART=1, SHOAL_MCP_BUDGET_MS, " +
  "SHOAL_STATE_DIR";

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
   * The state directory a kernel this facade starts uses (`--state-dir`), the same one after a
   * kernel loss; null: the kernel's default.
   */
  stateDir: string | null;
}

/** Bad command line: the message already contains the usage. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
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
  let stateDir = nonEmpty(env("SHOAL_STATE_DIR")) ?? null;
  const budgetEnv = nonEmpty(env("SHOAL_MCP_BUDGET_MS"));
  let budgetMs = budgetEnv ? positiveInt(budgetEnv, "SHOAL_MCP_BUDGET_MS") : DEFAULT_BUDGET_MS;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const eq = a.startsWith("--") ? a.indexOf("=") : -1;
    const flag = eq > 0 ? a.slice(0, eq) : a;
    const value = () => {
      const v = eq > 0 ? a.slice(eq + 1) : args[++i];
      if (v === undefined || v === "") throw new UsageError(`${flag} needs a value\n${MCP_USAGE}`);
      return v;
    };
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
    stateDir,
  };
}
