/**
 * What every MCP tool is: its listing (name, description, schemas, annotations) and the handler
 * that maps a call onto kernel methods.
 */

import type { z } from "zod";
import type { KernelLink } from "../kernel_link.ts";
import type { ToolResult } from "../result.ts";
import type { CreateTaskResult } from "../tasks_ext.ts";
import type { HostAsk } from "../approval.ts";

/** A JSON object. */
export type Obj = Record<string, unknown>;

/** What a tool handler gets besides its arguments. */
export interface ToolContext {
  link: KernelLink;
  budgetMs: number;
  /** Aborted when the MCP request is cancelled (or the client goes away). */
  signal: AbortSignal;
  /** Present when the request carried a progress token. */
  progress?: (elapsedMs: number, message: string) => Promise<void>;
  /**
   * Present when the client declared the tasks extension for this call: work that goes on past
   * the first round answers with this task handle at once (`tasks_ext.ts`).
   */
  createTask?: (task: string) => Promise<CreateTaskResult>;
  /** Present when the person can be asked in the host and an approver is configured. */
  host?: HostAsk;
}

/** Tool annotations (MCP 2025-03-26+). */
export interface Annotations {
  title?: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** One tool. */
export interface ToolDef {
  name: string;
  title: string;
  description: string;
  input: z.ZodType;
  outputSchema: Obj;
  annotations: Annotations;
  /** The kernel method whose absence hides this tool from tools/list (see KernelLink.probe). */
  needs?: string;
  run(args: Obj, ctx: ToolContext): Promise<ToolResult | CreateTaskResult>;
}
