/**
 * Protocol types shared by the kernel, its clients and the MCP facade (protocol §3–§13).
 * Wire values are `$`-tagged JSON (lib/value/wire.ts produces them on the kernel side).
 */

/** `session.attach` params (every field optional — D-34). */
export interface AttachParams {
  session?: string | null;
  token?: string | null;
  client?: { kind?: string; tty?: boolean };
  /**
   * Where a session this attach creates starts (absolute; the client's own directory, e.g. the
   * project an MCP host launched its facade in). An existing session stays where it is.
   */
  cwd?: string | null;
  /** false: this client will not use an exec lane, so none is granted (default: one is). */
  lane?: boolean;
}

/** Elision defaults advertised at attach. */
export interface ElideDefaults {
  max_bytes: number;
  max_rows: number;
  max_items: number;
  max_bytes_raw: number;
  hard_cap: number;
}

/** `session.attach` result. */
export interface AttachResult {
  session: string;
  principal: string;
  caps: {
    enforced: boolean;
    tier: string | null;
    available_tier: string | null;
    /** The principal whose policy section applies (null: none — everything is denied). */
    policy_principal: string | null;
    profile: string;
    token_caps: string[];
    opaque: "allow" | "deny" | "approval_required";
    /** May approve other principals' plans (additive). */
    approver?: boolean;
    /** Where the policy comes from: the policy file, the built-in rule, or none (additive). */
    policy?: "file" | "builtin" | "none";
    note?: string;
    /** §11.6 per-dimension enforcement for this principal on this host (issue 16). */
    filesystem_enforced?: boolean;
    network_enforced?: boolean;
    spawn_exec_enforced?: boolean;
    /** The kernel socket (every Unix socket) cannot be reached from the session. */
    kernel_socket_unreachable?: boolean;
    landlock_abi?: number;
    /** What is in force, granted, widened or missing, in sentences. */
    detail?: string;
  };
  /** `note`: why the session started somewhere else than asked (its directory is gone). */
  cwd: { display: string; raw?: string; note?: string };
  /**
   * Names this session's transcript (additive): it changes whenever the transcript starts
   * afresh — a new kernel, a restarted worker — so refs seen under another one are gone.
   */
  instance?: string;
  env_hash: string;
  ast_version: 2;
  caps_enforced: boolean;
  elide_defaults: ElideDefaults;
  channels: string[];
  /**
   * The session's exec lane (additive; absent: none): plain execs may go straight to the
   * session on `socket` after a `hello {ticket}` (`lane.ts`), two hops instead of four.
   */
  lane?: { socket: string; ticket: string };
}

/** An event notification's params. */
export interface KernelEvent {
  channel: string;
  seq: number;
  ts: number;
  payload: unknown;
}

/** `exec` params. */
export interface ExecParams {
  src: string;
  mode?: "run" | "plan" | "approved";
  position?: "stmt" | "value";
  async?: boolean;
  timeout_ms?: number | null;
  elide?: { max_bytes?: number; max_rows?: number; max_items?: number } | null;
  plan_ref?: string | null;
}

/** `exec` result: inline value, or a task handle. */
export type ExecResult =
  | { ref: string; uri: string; value: unknown; render: string }
  | {
    task: string;
    events: string;
    timed_out?: boolean;
    /** With `timed_out`: the task's state then. */
    state?: TaskState;
    /** A queued task: the task it waits behind, and how long that one has run (ms). */
    behind?: string;
    behind_ms?: number;
    /** Nobody waits for the task ahead inline (a background job, a timed-out exec). */
    behind_detached?: boolean;
  };

/** Task states. */
export type TaskState = "queued" | "running" | "cancelling" | "completed" | "failed" | "cancelled";

/** `task.get` record. */
export interface TaskRecord {
  task: string;
  session: string;
  state: TaskState;
  started_ns: number | null;
  finished_ns: number | null;
  result_ref: string | null;
  error: { code: number; message: string; data?: unknown } | null;
  /** True while task.suspend holds the task's process groups stopped (additive). */
  suspended?: boolean;
}

/** The static channels advertised at attach. */
export const STATIC_CHANNELS = ["session.transcript", "journal", "approval", "render"] as const;
