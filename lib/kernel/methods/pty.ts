/**
 * PTY methods (protocol §12): `pty.open/send/read/resize/close/list`, plus what goes beyond
 * upstream — `pty.read {wait_for, match, timeout_ms}` waits for text instead of polling, and
 * `scrollback` pages through the lines that scrolled off. Handlers validate params, check that
 * the PTY belongs to the attachment's session *and* principal (D-14), enforce the principal's
 * quota (D-31), and route to the session's evaluator host, where the PTYs live.
 *
 * @module
 */

import { RPC, RpcError } from "../../client/errors.ts";
import { decodeInput } from "../pty_input.ts";
import type { PtyEntry } from "../pty_registry.ts";
import type { MatchIn } from "../pty_session.ts";
import {
  invalid,
  optBool,
  optString,
  optStringArray,
  optStringRecord,
  optUint,
  reqString,
} from "./params.ts";
import { att, type Attachment, type KernelServices, type P, type Register } from "./types.ts";

/** Terminal sizes are clamped to this (open and resize). */
export const MAX_PTY_DIMENSION = 1000;
/** Scrollback lines kept by default. */
export const DEFAULT_SCROLLBACK = 1000;
/** Scrollback lines at most, and cells (lines × columns) at most: memory per PTY. */
export const MAX_SCROLLBACK = 10000;
const MAX_SCROLLBACK_CELLS = 1_000_000;
/** `wait_for` without `timeout_ms` waits this long; no wait is longer than the max. */
export const DEFAULT_WAIT_MS = 10_000;
export const MAX_WAIT_MS = 300_000;
const MAX_PATTERN = 1024;

/** A terminal dimension: an integer 0–65535 (a u16), clamped to 1–{@link MAX_PTY_DIMENSION}. */
function dimension(p: P, key: string, fallback: number | null, method: string): number {
  const v = p[key];
  if (v === undefined || v === null) {
    if (fallback === null) throw invalid(`${method} requires \`${key}\` (1–${MAX_PTY_DIMENSION})`);
    return fallback;
  }
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || v > 65535) {
    throw invalid(
      `\`${key}\` must be an integer from 1 to ${MAX_PTY_DIMENSION}, got ${JSON.stringify(v)}`,
    );
  }
  return Math.min(MAX_PTY_DIMENSION, Math.max(1, v));
}

function ptyId(p: P, method: string): string {
  const ref = reqString(p, "pty_id", method);
  return ref.startsWith("shoal://pty/") ? `pty:${ref.slice(12)}` : ref;
}

/** `pty.read` wait options, validated (the regex compiled here once, and again in the host). */
function waitParams(p: P): Record<string, unknown> {
  const waitFor = optString(p, "wait_for");
  const untilExit = optBool(p, "until_exit") ?? false;
  const out: Record<string, unknown> = {};
  const match = optString(p, "match");
  if (match !== undefined && !["any", "output", "screen"].includes(match)) {
    throw invalid('`match` must be "any", "output" or "screen"');
  }
  const timeout = optUint(p, "timeout_ms");
  const flags = optString(p, "flags");
  if (untilExit) {
    if (waitFor !== undefined || match !== undefined || flags !== undefined) {
      throw invalid(
        "`until_exit` waits for the program to end; `wait_for`, `match` and `flags` wait for " +
          "text — send one or the other",
      );
    }
    return { until_exit: true, timeout_ms: Math.min(timeout ?? DEFAULT_WAIT_MS, MAX_WAIT_MS) };
  }
  if (waitFor === undefined) {
    if (match !== undefined || timeout !== undefined || flags !== undefined) {
      throw invalid(
        "`match`, `flags` and `timeout_ms` go with `wait_for` (a regular expression) or " +
          "`until_exit: true`",
      );
    }
    return out;
  }
  if (waitFor === "" || waitFor.length > MAX_PATTERN) {
    throw invalid(`\`wait_for\` must be a regular expression of 1–${MAX_PATTERN} characters`);
  }
  if (flags !== undefined && !/^(?!.*(.).*\1)[imsu]*$/.test(flags)) {
    throw invalid('`flags` may hold each of "i", "m", "s" and "u" once');
  }
  try {
    new RegExp(waitFor, flags);
  } catch (e) {
    throw invalid(`\`wait_for\` is not a valid regular expression: ${(e as Error).message}`, {
      wait_for: waitFor,
    });
  }
  out.wait_for = waitFor;
  if (flags) out.flags = flags;
  if (match) out.match = match as MatchIn;
  out.timeout_ms = Math.min(timeout ?? DEFAULT_WAIT_MS, MAX_WAIT_MS);
  return out;
}

/** `scrollback: [start]` or `[start, end]` (integers; negative counts back from the total). */
function scrollbackParam(p: P): [number] | [number, number] | undefined {
  const v = p.scrollback;
  if (v === undefined || v === null) return undefined;
  const ok = Array.isArray(v) && v.length >= 1 && v.length <= 2 &&
    v.every((x) => typeof x === "number" && Number.isSafeInteger(x));
  if (!ok) {
    throw invalid(
      "`scrollback` must be [start] or [start, end] (line numbers; negative counts back from " +
        "the newest, e.g. [-50] for the last 50 lines)",
    );
  }
  return v.length === 1 ? [v[0]] : [v[0], v[1]];
}

/** Add the PTY family. */
export function addPtyMethods(add: Register, k: KernelServices): void {
  const reg = k.ptys;
  const closing = new Map<number, Promise<unknown>>();
  const route = (a: Attachment, params: Record<string, unknown>) =>
    a.session.request("pty", params) as Promise<Record<string, unknown>>;
  const entry = (p: P, a: Attachment, method: string): PtyEntry =>
    reg.get(ptyId(p, method), a.session, a.principal);

  add("pty.open", async (p, conn) => {
    const a = att(conn);
    const cmd = reqString(p, "cmd", "pty.open");
    if (cmd === "") throw invalid("pty.open requires a non-empty `cmd`");
    const args = optStringArray(p, "args") ?? [];
    const cols = dimension(p, "cols", 80, "pty.open");
    const rows = dimension(p, "rows", 24, "pty.open");
    const env = optStringRecord(p, "env") ?? {};
    const wanted = optUint(p, "scrollback") ?? DEFAULT_SCROLLBACK;
    const scrollback = Math.min(wanted, MAX_SCROLLBACK, Math.floor(MAX_SCROLLBACK_CELLS / cols));
    const e = reg.reserve(a.session, a.principal, [cmd, ...args].join(" "));
    try {
      const r = await route(a, { op: "open", id: e.id, cmd, args, cols, rows, env, scrollback });
      e.pid = r.pid as number;
      a.session.ptyChildren.set(e.id, e.pid);
      return r;
    } catch (err) {
      reg.release(e);
      throw err;
    }
  });

  add("pty.send", async (p, conn) => {
    const a = att(conn);
    const e = entry(p, a, "pty.send");
    if (!("input" in p)) {
      throw invalid("pty.send requires `input` (text, {key}, {text}, {bytes} or a list)");
    }
    const bytes = decodeInput(p.input);
    return await route(a, { op: "send", id: e.id, bytes: bytes.toBase64() });
  });

  add("pty.read", async (p, conn) => {
    const a = att(conn);
    const e = entry(p, a, "pty.read");
    const scrollback = scrollbackParam(p);
    return await route(a, { op: "read", id: e.id, ...waitParams(p), scrollback });
  });

  add("pty.resize", async (p, conn) => {
    const a = att(conn);
    const e = entry(p, a, "pty.resize");
    const cols = dimension(p, "cols", null, "pty.resize");
    const rows = dimension(p, "rows", null, "pty.resize");
    return await route(a, { op: "resize", id: e.id, cols, rows });
  });

  add("pty.close", async (p, conn) => {
    const a = att(conn);
    const ref = ptyId(p, "pty.close");
    // Idempotent: closing again answers like the first close.
    const prior = reg.closedResult(ref, a.session, a.principal);
    if (prior !== undefined) return prior;
    const e = reg.get(ref, a.session, a.principal);
    let c = closing.get(e.id);
    if (c === undefined) {
      c = route(a, { op: "close", id: e.id }).then((r) => {
        reg.release(e, r);
        return r;
      }, (err) => {
        if (err instanceof RpcError && err.code === RPC.UNKNOWN_PTY) reg.release(e);
        throw err;
      }).finally(() => closing.delete(e.id));
      closing.set(e.id, c);
    }
    return await c;
  });

  add("pty.list", async (_p, conn) => {
    const a = att(conn);
    const mine = reg.idsOf(a.session, a.principal);
    if (mine.size === 0) return { ptys: [] };
    const r = await route(a, { op: "list" }) as { ptys: { pty_id: string }[] };
    return { ptys: r.ptys.filter((x) => mine.has(Number(x.pty_id.slice(4)))) };
  });
}
