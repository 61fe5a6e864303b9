/**
 * The kernel client layer: protocol types, framing, socket discovery, error codes and a
 * demultiplexing client. The MCP facade depends on this module only.
 * @module
 */

export * from "./protocol.ts";
export * from "./errors.ts";
export * from "./framing.ts";
export * from "./discovery.ts";
export * from "./envelope.ts";
export * from "./socket_trust.ts";
export * from "./client.ts";
export * from "./autostart.ts";
