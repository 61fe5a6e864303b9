/**
 * `shoal-mcp [--socket PATH] [--session NAME] [--token TOKEN] [--budget-ms MS]` — the MCP stdio
 * facade over a Shoal kernel session (also reachable as `shoal mcp`). It starts a kernel when
 * none answers (unless SHOAL_NO_AUTOSTART is set), logs only to stderr and exits when stdin
 * closes.
 *
 * @module
 */

import { mcpMain } from "./lib/mcp/mod.ts";

if (import.meta.main) Deno.exit(await mcpMain(Deno.args));
