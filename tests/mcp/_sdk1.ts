/**
 * `@modelcontextprotocol/sdk` 1.x clients (1.0.x, 1.12.x, 1.32.x, installed as version-aliased
 * npm imports) over a `shoal-mcp` subprocess, each able to negotiate any protocol version it
 * supports, so a test can speak to the facade as every deployed host generation does.
 */

import { Client as Client10 } from "mcp-sdk-1.0/client/index.js";
import { StdioClientTransport as Stdio10 } from "mcp-sdk-1.0/client/stdio.js";
import { Client as Client112 } from "mcp-sdk-1.12/client/index.js";
import { StdioClientTransport as Stdio112 } from "mcp-sdk-1.12/client/stdio.js";
import { Client as Client132 } from "mcp-sdk-1.32/client/index.js";
import { StdioClientTransport as Stdio132 } from "mcp-sdk-1.32/client/stdio.js";
import { CONFIG, MCP, within } from "./_helpers.ts";

/** The 1.x SDK lines the tests install. */
export type Sdk1 = "1.0" | "1.12" | "1.32";

/** Every protocol version each line can negotiate (its newest first). */
export const SDK1_VERSIONS: Record<Sdk1, string[]> = {
  "1.0": ["2024-11-05"],
  "1.12": ["2025-03-26", "2024-11-05"],
  "1.32": ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"],
};

/** The calls a test makes; each resolves with what the client's own validation accepted. */
export interface Sdk1Client {
  listTools(): Promise<{ tools: Array<Record<string, unknown>> }>;
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<
    Record<string, unknown>
  >;
  readResource(params: { uri: string }): Promise<Record<string, unknown>>;
  getInstructions?(): string | undefined;
  getServerCapabilities(): Record<string, unknown> | undefined;
  close(): Promise<void>;
}

/** A connected 1.x client. */
export interface Sdk1Handle {
  client: Sdk1Client;
  /** The protocol version the server answered `initialize` with. */
  negotiated: string;
  /** The server's `instructions` from the initialize result. */
  instructions: string | undefined;
  stderr(): string;
  close(): Promise<void>;
}

const LINES = {
  "1.0": [Client10, Stdio10],
  "1.12": [Client112, Stdio112],
  "1.32": [Client132, Stdio132],
} as const;

type Msg = { method?: string; params?: Record<string, unknown>; result?: Record<string, unknown> };

/** Spawn `shoal-mcp` with `args` and connect a `line` client that asks for `version`. */
export async function connectSdk1(
  line: Sdk1,
  version: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<Sdk1Handle> {
  const [ClientCtor, StdioCtor] = LINES[line];
  let err = "";
  // deno-lint-ignore no-explicit-any
  const transport: any = new (StdioCtor as any)({
    command: Deno.execPath(),
    args: ["run", "-A", "--unstable-worker-options", "--config", CONFIG, MCP, ...args],
    env: { ...Deno.env.toObject(), ...env },
    stderr: "pipe",
  });
  // Ask for `version` instead of the line's newest; remember what the server answered.
  let negotiated = "";
  let instructions: string | undefined;
  const send = transport.send.bind(transport);
  transport.send = (m: Msg, o?: unknown) => {
    if (m.method === "initialize") m = { ...m, params: { ...m.params, protocolVersion: version } };
    return send(m, o);
  };
  const started = transport.start.bind(transport);
  transport.start = async () => {
    await started();
    transport.stderr?.on("data", (d: Uint8Array | string) => {
      err += typeof d === "string" ? d : new TextDecoder().decode(d);
    });
    const onmessage = transport.onmessage;
    transport.onmessage = (m: Msg) => {
      if (m.result && typeof m.result.protocolVersion === "string" && !negotiated) {
        negotiated = m.result.protocolVersion;
        instructions = m.result.instructions as string | undefined;
      }
      onmessage?.(m);
    };
  };
  // deno-lint-ignore no-explicit-any
  const client: any = new (ClientCtor as any)({ name: `sdk-${line}-test`, version: "1" }, {
    capabilities: {},
  });
  await within(60_000, client.connect(transport), `sdk ${line} connect (stderr: ${err})`);
  return {
    client,
    get negotiated() {
      return negotiated;
    },
    get instructions() {
      return instructions;
    },
    stderr: () => err,
    close: () => within(10_000, client.close(), "client close"),
  };
}
