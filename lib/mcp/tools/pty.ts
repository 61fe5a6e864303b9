/**
 * The PTY family: open, send, read (with `wait_for`), resize, close and list — listed when the
 * kernel has PTYs. Reads answer with the framed screen as their text twin (`pty_frame.ts`).
 */

import { z } from "zod";
import { toolOk } from "../result.ts";
import { ptyToolResult } from "../pty_frame.ts";
import { forward, kernelResult, objectOut, READS, RUNS } from "./common.ts";
import type { Obj, ToolDef } from "./types.ts";

const PtyId = z.string().min(1).describe("pty ref, e.g. pty:3");
const Dim = z.int().min(1).max(1000);
const PtyKey = z.union([
  z.string(),
  z.strictObject({ key: z.string().min(1) }),
  z.strictObject({ text: z.string() }),
  z.strictObject({ bytes: z.string() }),
]);
const PtyOpenIn = z.strictObject({
  cmd: z.string().min(1).describe("program, resolved like a command of the session (PATH, cwd)"),
  args: z.array(z.string()).optional(),
  cols: Dim.optional().describe("columns (default 80)"),
  rows: Dim.optional().describe("rows (default 24)"),
  env: z.record(z.string(), z.string()).optional().describe(
    "variables over the session environment (TERM defaults to xterm-256color)",
  ),
  scrollback: z.int().min(0).max(10000).optional().describe(
    "lines kept after they scroll off the screen (default 1000)",
  ),
});
const PtySendIn = z.strictObject({
  pty_id: PtyId,
  input: z.union([PtyKey, z.array(PtyKey)]).describe(
    "text, {key: NAME} (Enter, Tab, Escape, Backspace, Delete, Space, Up, Down, Left, Right, " +
      "Home, End, PageUp, PageDown, F1–F12, Ctrl-A…Ctrl-Z), {text}, {bytes: base64}, or a list",
  ),
});
const PtyIdIn = z.strictObject({ pty_id: PtyId });
const PtyReadIn = z.strictObject({
  pty_id: PtyId,
  wait_for: z.string().min(1).max(1024).optional().describe(
    "a regular expression: return as soon as the output since the last read (or the screen) " +
      "matches, the program exits, or timeout_ms passes — one call instead of polling",
  ),
  until_exit: z.boolean().optional().describe(
    "true: wait until the program ends (or timeout_ms passes) — a job that prints nothing",
  ),
  match: z.enum(["any", "output", "screen"]).optional().describe(
    "where wait_for looks: any (default), output (only what was printed since the last read: " +
      "use it to wait for the *next* prompt), screen (the whole visible screen)",
  ),
  flags: z.string().regex(/^[imsu]*$/).optional().describe("regex flags: i, m, s, u"),
  timeout_ms: z.int().min(1).optional().describe(
    "how long wait_for or until_exit waits (default 10 s, or the wait budget if shorter; up " +
      "to 55000 waits one call for a known long job)",
  ),
  scrollback: z.array(z.int()).min(1).max(2).optional().describe(
    "[start, end) of the lines that scrolled off, numbered from the first; negative counts " +
      "back from the newest ([-50]: the last 50)",
  ),
});
const PtyResizeIn = z.strictObject({ pty_id: PtyId, cols: Dim, rows: Dim });

function ptyTools(): ToolDef[] {
  const pty = (
    name: string,
    title: string,
    description: string,
    input: z.ZodType,
    method: string,
    out: Obj,
    ann: ToolDef["annotations"],
    run?: ToolDef["run"],
  ): ToolDef => ({
    name,
    title,
    description,
    input,
    outputSchema: out,
    annotations: { title, ...ann },
    needs: "pty.list",
    run: run ?? forward(method),
  });
  const id = { pty_id: { type: "string" } };
  const exit = { type: ["object", "null"], description: "{status, signal} once it ended" };
  return [
    pty(
      "shoal_pty_open",
      "Open a PTY",
      "Start an interactive program (a REPL, an editor, an installer that asks questions, top…) " +
        "on a pseudo-terminal in the session's cwd and environment. Then read its screen with " +
        "shoal_pty_read — with wait_for to wait for a prompt — and answer with shoal_pty_send; " +
        "shoal_pty_close ends it.",
      PtyOpenIn,
      "pty.open",
      objectOut({ ...id, pid: { type: "integer" }, cols: {}, rows: {}, cmd: {} }, ["pty_id"]),
      RUNS,
      (a, ctx) =>
        kernelResult(async () => {
          const r = await ctx.link.call<Obj>("pty.open", {
            cmd: a.cmd,
            args: a.args ?? [],
            cols: a.cols,
            rows: a.rows,
            env: a.env ?? {},
            scrollback: a.scrollback,
          });
          const lead = `Opened ${r.pty_id} (${r.cmd}, pid ${r.pid}, ${r.cols}x${r.rows}). ` +
            `Read it with shoal_pty_read {"pty_id":"${r.pty_id}","wait_for":"<prompt regex>"}.`;
          return toolOk(r, lead);
        }, "pty.open"),
    ),
    pty(
      "shoal_pty_send",
      "Send to a PTY",
      "Type text or named keys into a PTY, as a person at its terminal would.",
      PtySendIn,
      "pty.send",
      objectOut({ ...id, sent: { type: "integer" } }, ["pty_id"]),
      RUNS,
    ),
    pty(
      "shoal_pty_read",
      "Read a PTY screen",
      "Read a PTY's screen: its rows as plain text, the cursor, whether it changed since the " +
        "last read, and whether the program is still alive (or how it exited). wait_for " +
        "returns as soon as a regex matches; scrollback pages through lines that scrolled off.",
      PtyReadIn,
      "pty.read",
      objectOut({
        ...id,
        screen: { type: "array", items: { type: "string" } },
        cursor: { type: "object" },
        changed: { type: "boolean" },
        alive: { type: "boolean" },
        exit,
        matched: { type: ["object", "null"] },
        timed_out: { type: "boolean" },
        scrollback: { type: "object" },
      }, ["pty_id", "screen", "alive"]),
      { ...READS, idempotentHint: false },
      (a, ctx) =>
        kernelResult(async () => {
          const args: Obj = { ...a };
          // Without timeout_ms a wait never outlives the call's budget; with it, it is the
          // agent's choice, as for shoal_exec and shoal_wait (the kernel caps it at 5 min).
          if (args.wait_for !== undefined || args.until_exit === true) {
            args.timeout_ms ??= Math.min(10_000, ctx.budgetMs);
          }
          return ptyToolResult(await ctx.link.call<Obj>("pty.read", args));
        }, "pty.read"),
    ),
    pty(
      "shoal_pty_resize",
      "Resize a PTY",
      "Resize a PTY (1–1000 columns and rows); the program is told (SIGWINCH).",
      PtyResizeIn,
      "pty.resize",
      objectOut({ ...id, cols: {}, rows: {} }, ["pty_id"]),
      { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    ),
    pty(
      "shoal_pty_close",
      "Close a PTY",
      "Close a PTY: its program and everything it started are killed. Closing again is harmless.",
      PtyIdIn,
      "pty.close",
      objectOut({ ...id, closed: { type: "boolean" }, exit }, ["pty_id"]),
      { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    ),
    pty(
      "shoal_pty_list",
      "List PTYs",
      "List this session's open PTYs (ids, programs, sizes, alive).",
      z.strictObject({}),
      "pty.list",
      objectOut({ ptys: { type: "array" } }, ["ptys"]),
      READS,
    ),
  ];
}

/** The PTY family. */
export const PTY_TOOLS: ToolDef[] = ptyTools();
