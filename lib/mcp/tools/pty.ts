/** The PTY family: open, send, read, resize, close and list (listed when the kernel has PTYs). */

import { z } from "zod";
import { forward, objectOut, READS, RUNS } from "./common.ts";
import type { Annotations, Obj, ToolDef } from "./types.ts";

const PtyId = z.string().min(1).describe("pty ref, e.g. pty:3");
const Dim = z.int().min(1).max(1000);
const PtyKey = z.union([
  z.string(),
  z.strictObject({ key: z.string().min(1) }),
  z.strictObject({ text: z.string() }),
  z.strictObject({ bytes: z.string() }),
]);
const PtyOpenIn = z.strictObject({
  cmd: z.string().min(1),
  args: z.array(z.string()).optional(),
  cols: Dim.optional(),
  rows: Dim.optional(),
  env: z.record(z.string(), z.string()).optional(),
});
const PtySendIn = z.strictObject({
  pty_id: PtyId,
  input: z.union([PtyKey, z.array(PtyKey)]).describe(
    "text, {key: NAME} (Enter, Tab, Escape, Backspace, Delete, Space, Up, Down, Left, Right, " +
      "Home, End, PageUp, PageDown, F1–F12, Ctrl-A…Ctrl-Z), {text}, {bytes: base64}, or a list",
  ),
});
const PtyIdIn = z.strictObject({ pty_id: PtyId });
const PtyResizeIn = z.strictObject({ pty_id: PtyId, cols: Dim, rows: Dim });

function pty(
  name: string,
  title: string,
  description: string,
  input: z.ZodType,
  method: string,
  out: Obj,
  ann: Annotations,
  map?: (a: Obj) => Obj,
): ToolDef {
  return {
    name,
    title,
    description,
    input,
    outputSchema: out,
    annotations: { ...ann, title },
    needs: "pty.list",
    run: forward(method, map),
  };
}

const id = { pty_id: { type: "string" } };

/** The PTY family. */
export const PTY_TOOLS: ToolDef[] = [
  pty(
    "shoal_pty_open",
    "Open a PTY",
    "Start an interactive program on a pseudo-terminal.",
    PtyOpenIn,
    "pty.open",
    objectOut({ ...id, pid: { type: "integer" } }, ["pty_id"]),
    RUNS,
    (a) => ({ cmd: a.cmd, args: a.args ?? [], cols: a.cols, rows: a.rows, env: a.env ?? {} }),
  ),
  pty(
    "shoal_pty_send",
    "Send to a PTY",
    "Send text or named keys to a PTY.",
    PtySendIn,
    "pty.send",
    objectOut({ ...id, sent: { type: "integer" } }, ["pty_id"]),
    RUNS,
  ),
  pty(
    "shoal_pty_read",
    "Read a PTY screen",
    "Read a PTY's rendered screen and cursor.",
    PtyIdIn,
    "pty.read",
    objectOut({ ...id, screen: { type: "array" } }, ["pty_id"]),
    { ...READS, idempotentHint: false },
  ),
  pty(
    "shoal_pty_resize",
    "Resize a PTY",
    "Resize a PTY (1–1000 columns and rows).",
    PtyResizeIn,
    "pty.resize",
    objectOut(id, ["pty_id"]),
    { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  ),
  pty(
    "shoal_pty_close",
    "Close a PTY",
    "Close a PTY and end its program.",
    PtyIdIn,
    "pty.close",
    objectOut({ ...id, closed: { type: "boolean" } }, ["pty_id"]),
    { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  ),
  pty(
    "shoal_pty_list",
    "List PTYs",
    "List this session's open PTYs.",
    z.strictObject({}),
    "pty.list",
    objectOut({ ptys: { type: "array" } }, ["ptys"]),
    READS,
  ),
];
