/**
 * The two MCP servers a trial compares, started the way a host starts them: `shoal-mcp` over a
 * kernel of its own (state under the trial directory), and `mcp-server-commands@0.5.0` (a
 * one-tool bash server) installed with npm into the trial directory at bench time, as
 * `bench/mcp.ts` does — never a project dependency. Both run with the workspace as their cwd
 * and the trial environment (`TRIAL_ENV`). Clients are `@modelcontextprotocol/sdk` 1.32 — what
 * hosts ship — and list the tools first, as hosts do.
 *
 * @module
 */

import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "mcp-sdk-1.32/client/index.js";
import { StdioClientTransport } from "mcp-sdk-1.32/client/stdio.js";
import { TRIAL_ENV } from "./tasks.ts";
import { spawnKernel } from "../_kernel.ts";

/** The servers a trial can use. */
export type ServerName = "shoal" | "bash";
/** Every server name. */
export const SERVERS: ServerName[] = ["shoal", "bash"];

const root = (p: string) => fileURLToPath(new URL(`../../${p}`, import.meta.url));
const DENO_RUN = ["run", "-A", "--unstable-worker-options", "--config", root("deno.json")];
/** The peer bash server, pinned. */
export const PEER = "mcp-server-commands@0.5.0";

/** A trial's directories. */
export interface TrialDirs {
  dir: string;
  /** The workspace: the servers' cwd and where task fixtures live. */
  ws: string;
}

/** The trial directory of a server (`AGENT_TRIAL_DIR` overrides the default root). */
export function trialDirs(server: ServerName): TrialDirs {
  const base = Deno.env.get("AGENT_TRIAL_DIR") ??
    join(Deno.env.get("TMPDIR") ?? "/tmp", "shoal-agent-trial");
  const dir = join(base, server);
  return { dir, ws: join(dir, "ws") };
}

/** A running server with a connected client. */
export interface Running {
  client: Client;
  /** The server's `instructions` (null when it sends none). */
  instructions: string | null;
  close(): Promise<void>;
}

async function installPeer(dir: string): Promise<string> {
  const prefix = join(dir, "peer");
  const bin = join(prefix, "node_modules", ".bin", "mcp-server-commands");
  try {
    await Deno.stat(bin);
    return bin;
  } catch { /* install it */ }
  const r = await new Deno.Command("npm", {
    args: [
      "install",
      "--prefix",
      prefix,
      "--ignore-scripts",
      "--no-audit",
      "--no-fund",
      "--loglevel=error",
      PEER,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!r.success) throw new Error(`npm install ${PEER}: ${new TextDecoder().decode(r.stderr)}`);
  return bin;
}

function startKernel(dir: string, ws: string): Promise<Deno.ChildProcess> {
  const args = ["--socket", join(dir, "k.sock"), "--state-dir", join(dir, "state")];
  return spawnKernel(args, ws, { ...Deno.env.toObject(), ...TRIAL_ENV });
}

/** Start `server` for a trial in `dirs` and connect a host-like client to it. */
export async function startServer(server: ServerName, dirs: TrialDirs): Promise<Running> {
  await Deno.mkdir(dirs.ws, { recursive: true });
  const env = { ...Deno.env.toObject(), ...TRIAL_ENV, HOME: join(dirs.dir, "home") };
  await Deno.mkdir(env.HOME, { recursive: true });
  let kernel: Deno.ChildProcess | null = null;
  let transport: StdioClientTransport;
  if (server === "shoal") {
    kernel = await startKernel(dirs.dir, dirs.ws);
    transport = new StdioClientTransport({
      command: Deno.execPath(),
      args: [
        ...DENO_RUN,
        root("mcp.ts"),
        "--socket",
        join(dirs.dir, "k.sock"),
        "--session",
        "trial",
      ],
      env: { ...env, SHOAL_NO_AUTOSTART: "1" },
      cwd: dirs.ws,
      stderr: "ignore",
    });
  } else {
    transport = new StdioClientTransport({
      command: await installPeer(dirs.dir),
      args: [],
      env,
      cwd: dirs.ws,
      stderr: "ignore",
    });
  }
  const client = new Client({ name: "agent-trial-host", version: "1" }, { capabilities: {} });
  await client.connect(transport);
  await client.listTools(); // hosts list first (it arms output-schema validation)
  return {
    client,
    instructions: client.getInstructions() ?? null,
    async close() {
      await client.close().catch(() => {});
      if (kernel) {
        try {
          kernel.kill("SIGTERM");
        } catch { /* gone */ }
        await kernel.status;
      }
    },
  };
}

/** Exactly what an agent in a host is shown of a server: its instructions and tools/list. */
export async function shownText(r: Running): Promise<string> {
  const { tools } = await r.client.listTools();
  return [
    "## instructions",
    "",
    r.instructions ?? "(none)",
    "",
    "## tools/list",
    "",
    JSON.stringify(tools, null, 2),
  ].join("\n");
}
