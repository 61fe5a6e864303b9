/**
 * The kernel's numeric JSON-RPC error codes (protocol §6.1). Pinned: never renumber.
 * Clients branch on the number, then on `data`; never on the message text.
 */
export const RPC = {
  PARSE_ERROR_JSON: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  NOT_ATTACHED: -32000,
  PARSE_ERROR: -32001,
  RAISED: -32002,
  UNKNOWN_REF: -32004,
  BAD_PATH_OR_SLICE: -32005,
  LEASH_DENIED: -32010,
  APPROVAL_REQUIRED: -32011,
  UNKNOWN_PLAN: -32012,
  TASK_CONTROL_UNAVAILABLE: -32020,
  UNKNOWN_TASK: -32021,
  UNKNOWN_PTY: -32022,
  PTY_SPAWN_FAILED: -32023,
  AUTH_FAILED: -32030,
  /** A per-principal quota is reached (D-31); `data {quota, limit, used}`. */
  QUOTA_EXCEEDED: -32040,
  /** A hermetic principal needs a sandbox dimension this host cannot enforce; `data {missing, detail}`. */
  SANDBOX_UNENFORCEABLE: -32041,
} as const;

/** A JSON-RPC error object. */
export interface RpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/** A JSON-RPC error as a JS exception (thrown by handlers, raised by the client). */
export class RpcError extends Error {
  constructor(readonly code: number, message: string, readonly data?: unknown) {
    super(message);
    this.name = "RpcError";
  }

  /** The wire form (`data` omitted when absent). */
  toJSON(): RpcErrorObject {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}
