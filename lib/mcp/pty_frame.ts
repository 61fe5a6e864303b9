/**
 * The text twin of a PTY screen (`shoal_pty_read`, `shoal://pty/{id}`): the screen as an agent
 * reads it — a header (program, size, state, cursor, what `wait_for` matched), the rows
 * numbered 0.. like `screen[i]`, a caret line under the cursor, runs of blank rows collapsed,
 * and the scrollback lines that were asked for. The structured result stays authoritative.
 *
 * @module
 */

import { boundText } from "../client/bound_text.ts";
import type { ToolResult } from "./result.ts";

type Obj = Record<string, unknown>;

interface Screen {
  pty_id: string;
  cmd?: string;
  cols?: number;
  rows?: number;
  pid?: number;
  cursor?: { row: number; col: number; hidden: boolean };
  screen?: string[];
  alive?: boolean;
  exit?: { status: number | null; signal: string | null } | null;
  alternate?: boolean;
  title?: string;
  changed?: boolean;
  matched?: { source: string; text: string } | null;
  timed_out?: boolean;
  waited_ms?: number;
  scrollback?: { first: number; total: number; start?: number; lines?: string[] };
}

function state(s: Screen): string {
  if (s.alive !== false) return `running (pid ${s.pid})`;
  const e = s.exit;
  if (!e) return "ended";
  return e.signal !== null ? `killed by ${e.signal}` : `exited with status ${e.status}`;
}

/** The framed screen of a `pty.read` result (bounded to the text cap). */
export function ptyFrame(result: Obj): string {
  const s = result as unknown as Screen;
  const rows = s.screen ?? [];
  const cur = s.cursor;
  const head = [
    s.pty_id,
    s.cmd ?? "",
    `${s.cols}x${s.rows}`,
    state(s),
    cur ? (cur.hidden ? "cursor hidden" : `cursor at row ${cur.row}, col ${cur.col}`) : "",
    s.alternate ? "alternate screen" : "",
    s.title ? `title ${JSON.stringify(s.title)}` : "",
    s.changed === false ? "unchanged since the last read" : "",
  ].filter((x) => x !== "").join(" · ");
  const out = [head];
  if (s.matched !== undefined) {
    out.push(
      s.matched
        ? `wait_for matched ${
          JSON.stringify(s.matched.text)
        } in the ${s.matched.source} after ${s.waited_ms} ms`
        : s.timed_out
        ? `wait_for: no match within ${s.waited_ms} ms`
        : `wait_for: no match; the program ended after ${s.waited_ms} ms`,
    );
  } else if (s.timed_out !== undefined) {
    // until_exit: the state above says how it ended.
    out.push(
      s.timed_out
        ? `still running after ${s.waited_ms} ms (read with until_exit again, or a longer ` +
          `timeout_ms, to wait on)`
        : `ended after ${s.waited_ms} ms of waiting`,
    );
  }
  const sb = s.scrollback;
  if (sb?.lines && sb.lines.length > 0) {
    out.push(`scrollback lines ${sb.start}–${sb.start! + sb.lines.length - 1}:`);
    for (const [i, l] of sb.lines.entries()) out.push(`${String(sb.start! + i).padStart(6)}│${l}`);
    out.push("screen:");
  }
  const w = String(Math.max(0, rows.length - 1)).length;
  for (let y = 0; y < rows.length;) {
    const isCursorRow = cur !== undefined && !cur.hidden && cur.row === y;
    if (rows[y] === "" && !isCursorRow) {
      let end = y;
      while (
        end + 1 < rows.length && rows[end + 1] === "" &&
        !(cur && !cur.hidden && cur.row === end + 1)
      ) {
        end++;
      }
      if (end > y) {
        out.push(`${" ".repeat(w)}┆ rows ${y}–${end} blank`);
        y = end + 1;
        continue;
      }
    }
    out.push(`${String(y).padStart(w)}│${rows[y]}`);
    if (isCursorRow) out.push(`${" ".repeat(w)}│${" ".repeat(cur!.col)}^`);
    y++;
  }
  if (sb && sb.total > 0 && !sb.lines) {
    out.push(
      `(${sb.total} lines scrolled off, ${sb.first}–${sb.total - 1} kept: read them with ` +
        `scrollback [start, end] or [-N])`,
    );
  }
  return boundText(out.join("\n"), `shoal://pty/${s.pty_id.slice(4)}`);
}

/** A `pty.read` result as a tool result: the framed screen, a link to `shoal://pty/N`. */
export function ptyToolResult(result: Obj): ToolResult {
  const id = String(result.pty_id ?? "");
  const uri = `shoal://pty/${id.slice(4)}`;
  return {
    content: [
      { type: "text", text: ptyFrame(result) },
      { type: "resource_link", uri, name: id, mimeType: "application/json" },
    ],
    structuredContent: result,
    isError: false,
  };
}
