/**
 * Messages between the kernel (`session_host.ts`) and a session process (`session_worker.ts`),
 * one JSON message per line over the process's stdin and stdout. Values never cross the
 * process boundary as values: the session answers with bounded wire JSON and rendered text.
 */

import type { ElideSpec } from "../value/elide.ts";
import type { RpcErrorObject } from "../client/errors.ts";
import type { JournalDone, JournalInit, JReplyMsg, JReqMsg } from "./journal_messages.ts";

/** Main → worker: create the evaluator. */
export interface InitMsg {
  t: "init";
  session: string;
  /**
   * The kernel's cancel-slot file to map (`cancel_slots.ts`; Int32 each, slot 0 stays 0), or
   * null when it could not share one (the session keeps local flags).
   */
  slots: string | null;
  /**
   * The cgroup the kernel placed this session process in, alone (null: none here). The session
   * may kill whatever its finished commands left in it.
   */
  cgroup?: string | null;
  cwd: string;
  env: Record<string, string>;
  /** The content store to open (null: this kernel keeps no journal). (issue 7) */
  journal?: JournalInit | null;
  /**
   * The seq of this session's next `session.transcript` event: a journaling worker numbers
   * its transcript events and logs each with its exec (issue 7, D-20).
   */
  transcriptSeq?: number;
}

/** Main → worker: run one exec (the main thread keeps the FIFO; one at a time). */
export interface ExecMsg {
  t: "exec";
  task: number;
  src: string;
  position: "stmt" | "value";
  elide: ElideSpec | null;
  tty: boolean;
  /** Index of this task's own cancel slot in the session's shared slots (≠ 0 = cancel). */
  slot: number;
  /** Who submitted it (its journal row's principal; journaling kernels only). */
  principal?: string;
}

/** Main → worker: the running task was cancelled (wakes awaits at once). */
export interface CancelMsg {
  t: "cancel";
  task: number;
}

/** Main → worker: a request answered with `ReplyMsg` (value.get, env, cwd, reef). */
export interface RequestMsg {
  t: "req";
  rid: number;
  kind: "value.get" | "env" | "cwd" | "reef";
  params: Record<string, unknown>;
}

/** Main → worker: an `events.publish` on `user.*` to inject into the language channel bus. */
export interface InjectMsg {
  t: "inject";
  channel: string;
  payload: unknown;
}

/** Main → worker: are you responsive? (answered with `PongMsg` by the event loop) */
export interface PingMsg {
  t: "ping";
  n: number;
}

/** Everything the kernel sends. */
export type ToWorker =
  | InitMsg
  | ExecMsg
  | CancelMsg
  | RequestMsg
  | InjectMsg
  | JReplyMsg
  | PingMsg;

/** Session facts the worker reports after start-up and after an exec that changed them. */
export interface SessionFacts {
  cwd: string;
  env_hash: string;
  /** Root-scope bindings: name → type name (parse context and completion). */
  names: Record<string, string>;
}

/** Worker → main: evaluator ready. */
export interface ReadyMsg {
  t: "ready";
  facts: SessionFacts;
}

/** Transcript summary carried by `session.transcript` events. */
export interface TranscriptSummary {
  type: string;
  ok?: boolean;
  cmd?: string;
  n?: number;
}

/**
 * The `session.transcript` payload of a finished exec: built by the worker for the copy it logs
 * and by the main thread for the live one, which must be the same.
 */
export function transcriptPayload(
  done: { n: number; result: { ref: string }; summary: TranscriptSummary },
) {
  return { n: done.n, ref: done.result.ref, summary: done.summary };
}

/** Worker → main: an exec finished (success or an RPC error). */
export type DoneMsg =
  & {
    t: "done";
    task: number;
    facts?: SessionFacts;
    /** How journaling this exec went (journaling kernels only; issue 7). */
    journal?: JournalDone;
  }
  & (
    | {
      ok: true;
      n: number;
      result: { ref: string; uri: string; value: unknown; render: string };
      summary: TranscriptSummary;
      /** Its `session.transcript` event as the worker numbered and logged it (journaling). */
      transcript?: { seq: number; ts: number };
      /** A non-ok outcome result (task state `failed` / `cancelled`). */
      outcomeFailed: boolean;
      signalled: boolean;
    }
    | { ok: false; error: RpcErrorObject; cancelled: boolean }
  );

/** Worker → main: answer to a `RequestMsg`. */
export type ReplyMsg =
  | { t: "reply"; rid: number; ok: true; result: unknown }
  | { t: "reply"; rid: number; ok: false; error: RpcErrorObject };

/** Worker → main: the language emitted on a `user.*` channel (tagged wire payload). */
export interface EmitMsg {
  t: "emit";
  channel: string;
  payload: unknown;
}

/** Worker → main: the session cwd changed mid-exec. */
export interface CwdMsg {
  t: "cwd";
  cwd: string;
}

/** Worker → main: a child process group of a task started (`live`) or ended. */
export interface ChildMsg {
  t: "child";
  task: number;
  pgid: number;
  live: boolean;
}

/** Worker → main: the answer to a `PingMsg`. */
export interface PongMsg {
  t: "pong";
  n: number;
}

/** Everything a session process sends. */
export type FromWorker =
  | PongMsg
  | ReadyMsg
  | DoneMsg
  | ReplyMsg
  | EmitMsg
  | CwdMsg
  | ChildMsg
  | JReqMsg;
