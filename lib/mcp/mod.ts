/**
 * The MCP facade (`shoal-mcp`): an MCP stdio server that drives a Shoal kernel session through
 * lib/client only. `mcpMain(args)` runs the process; the pieces are exported for tests.
 * @module
 */

export { mcpMain, SERVER_INFO } from "./server.ts";
export { DEFAULT_BUDGET_MS, MCP_USAGE, type McpConfig, parseMcpArgs } from "./config.ts";
export { ROOTS, TEMPLATES } from "./resources.ts";
export { TOOLS } from "./tools/mod.ts";
export { parseShoalUri, percentDecode, subscribableChannel } from "./uri.ts";
