/**
 * The one `-32001 PARSE_ERROR` a kernel answers for Shoal source that does not parse (`parse`,
 * `exec`, `explain`): the parser's message, `data {span, hint, rewrites}`.
 *
 * @module
 */

import { RPC, RpcError, type RpcErrorObject } from "../client/errors.ts";
import type { ParseError } from "../syntax/mod.ts";

/** The error object (for messages that carry it, like a session's `done`). */
export function parseErrorObject(e: ParseError): RpcErrorObject {
  return {
    code: RPC.PARSE_ERROR,
    message: e.msg,
    data: { span: { start: e.span[0], end: e.span[1] }, hint: e.hint, rewrites: e.rewrites },
  };
}

/** The same, to throw from a method handler. */
export function parseRpcError(e: ParseError): RpcError {
  const o = parseErrorObject(e);
  return new RpcError(o.code, o.message, o.data);
}
