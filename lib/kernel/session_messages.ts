/**
 * Messages between the kernel (`session_host.ts`) and a session process (`session_worker.ts`),
 * one JSON message per line over the process's stdin and stdout. Values never cross the
 * process boundary as values: the session answers with bounded wire JSON and rendered text.
 */

import type { More } from "./paged_render.ts";
import type { ElideSpec } from "../value/elide.ts";
import type { RpcErrorObject } from "../client/errors.ts";
import type {
  JournalDone,
  JournalInit,
  JournalNote,
  JReplyMsg,
  JReqMsg,
} from "./journal_messages.ts";
import type { PtyNotice } from "./pty_session.ts";
import type { Effect, LeashInit } from "../leash/mod.ts";
import type { IntakeBegin, IntakeFinish, IntakeWhole } from "../store/mod.ts";

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
  /** The kernel's state directory (the evaluator's trash is below it), or null. */
  stateDir?: string | null;
  /** The process runs confined (issue 16): it makes itself non-dumpable first. */
  confined?: boolean;
  /** Spawn pins of a confined session (`spawn_pin.ts`; absent: nothing pinned). */
  pins?: { grants: string[]; writable: string[] } | null;
  /** The content store to open (null: this kernel keeps no journal). (issue 7) */
  journal?: JournalInit | null;
  /**
   * The seq of this session's next `session.transcript` event: a journaling worker numbers
   * its transcript events and logs each with its exec (issue 7, D-20).
   */
  transcriptSeq?: number;
  /**
   * The first transcript number this worker gives (`out:N`): one past every ref this session
   * handed out before — in an earlier worker or an earlier kernel — so none is ever reused.
   */
  firstOut?: number;
  /** The session principal's policy (issue 15); absent: no policy evaluation at all. */
  leash?: LeashInit | null;
  /**
   * After a crash: why the last process died and the root names bound before it (the fresh
   * process says so when an exec trips over one of them: `lost_bindings.ts`).
   */
  lost?: { reason: string; names: string[] } | null;
  /**
   * The exec lane (`session_lane.ts`; absent: none — a confined session): the socket to serve,
   * the cancel slots lent for lane execs, the session's principal (its journal rows), and the
   * policy file whose change sends execs back through the kernel.
   */
  lane?: {
    socket: string;
    slots: number[];
    principal: string;
    policyFile: string | null;
    /** Names this process (`SessionHost.instance`): a lane claim says which one it spoke to. */
    instance: string;
  } | null;
  /** The policy file's signature when the kernel read the policy it sends (`file_watch.ts`). */
  policyStamp?: string;
}

/** Main → worker: the policy file reloaded (issue 15). */
export interface PolicyMsg {
  t: "policy";
  leash: LeashInit;
  /** As in {@link InitMsg}. */
  policyStamp?: string;
}

/** The exec lane (`session_lane.ts`): a ticket the kernel gave an attachment, or took back. */
export type LaneMsg =
  | { t: "lane.grant"; ticket: string; tty: boolean }
  | { t: "lane.revoke"; ticket: string }
  | { t: "lane.slots"; slots: number[] }
  | { t: "lane.claim"; ticket: string; seq: number }
  | { t: "lane.sync"; n: number };

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
  /**
   * Approved mode (issue 15): the stored plan's effects. The worker re-derives and runs only
   * if they are unchanged and the policy does not deny it now (D-22).
   */
  approved?: Effect[];
  /** The attachment's lane ticket and this exec's seq on it (the session orders lane execs). */
  lane?: { ticket: string; seq: number };
}

/** Main → worker: the running task was cancelled (wakes awaits at once). */
export interface CancelMsg {
  t: "cancel";
  task: number;
}

/**
 * Request kinds the session answers (`pty`: the session's PTYs, session_ptys.ts; `derive`:
 * effects and verdict of source or an AST, issue 15; `complete`: completion with the
 * session's bindings, cwd and env; `reef`: the Reef snapshot, issue 18).
 */
export type RequestKind =
  | "value.get"
  | "env"
  | "cwd"
  | "reef"
  | "pty"
  | "derive"
  | "complete";

/** Main → worker: a request answered with `ReplyMsg` (value.get, env, cwd, pty, derive, …). */
export interface RequestMsg {
  t: "req";
  rid: number;
  kind: RequestKind;
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

/** Main → worker: the answer to a {@link StoreMsg} (confined sessions; issue 16). */
export type StoreReplyMsg =
  | { t: "storer"; rid: number; ok: true; result: unknown }
  | { t: "storer"; rid: number; ok: false; error: { code: string; message: string } };

/** Everything the kernel sends. */
export type ToWorker =
  | StoreReplyMsg
  | InitMsg
  | ExecMsg
  | CancelMsg
  | RequestMsg
  | InjectMsg
  | JReplyMsg
  | PolicyMsg
  | LaneMsg
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
      /**
       * `more`: where a cut render goes on (`paged_render.ts`); `journal`: added on the main
       * thread when the record is not whole (issue 19).
       */
      result: {
        ref: string;
        uri: string;
        value: unknown;
        render: string;
        more?: More;
        journal?: JournalNote;
      };
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
  /** The task the session is running as it answers (null: none). */
  running: number | null;
  /** A kernel exec waiting in the session behind a lane exec (null: none). */
  pending?: number | null;
}

/**
 * The exec lane: a lane exec begins (`task` is its negative id in this process; the kernel
 * makes it a task), or a claimed one will never run from the lane.
 */
export type LaneNoticeMsg =
  | {
    t: "lane.begin";
    ticket: string;
    seq: number;
    task: number;
    slot: number;
    src: string;
    position: "stmt" | "value";
  }
  | { t: "lane.unclaimed"; ticket: string; seq: number }
  | { t: "lane.synced"; n: number };

/**
 * Worker → main: one journal intake line for the kernel to write (a confined session cannot
 * reach the intake; issue 16). Ordered before the exec's `done`.
 */
export interface IntakeMsg {
  t: "intake";
  line: IntakeBegin | IntakeFinish | IntakeWhole;
}

/** A content-store operation a confined session asks of the kernel (bytes as base64). */
export type StoreOp =
  | { op: "put"; b64: string; fsync: boolean }
  | { op: "open"; fsync: boolean }
  | { op: "chunk"; id: number; b64: string }
  | { op: "close"; id: number }
  | { op: "abort"; id: number }
  | { op: "get"; ref: string }
  | { op: "range"; ref: string; offset: number; length: number }
  | { op: "refresh"; ref: string };

/** Worker → main: a content-store operation (answered with {@link StoreReplyMsg}). */
export interface StoreMsg {
  t: "store";
  rid: number;
  op: StoreOp;
}

/** Worker → main: a PTY's screen changed, its program exited, or it was closed. */
export interface PtyNoticeMsg {
  t: "pty";
  notice: PtyNotice;
}

/** Everything a session process sends. */
export type FromWorker =
  | LaneNoticeMsg
  | IntakeMsg
  | StoreMsg
  | PtyNoticeMsg
  | PongMsg
  | ReadyMsg
  | DoneMsg
  | ReplyMsg
  | EmitMsg
  | CwdMsg
  | ChildMsg
  | JReqMsg;
