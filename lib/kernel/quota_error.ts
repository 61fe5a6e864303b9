/**
 * The one error every per-principal quota raises (D-31): `-32040 QUOTA_EXCEEDED` with
 * `data {quota, limit, used, principal}` and what to do. Used by the kernel's counters
 * (`quotas.ts`) and by the owners that count for themselves (PTYs, plans).
 *
 * @module
 */

import { RPC, RpcError } from "../client/errors.ts";

/** What to do when a quota is reached, by quota. */
const HINTS: Record<string, string> = {
  sessions: "attach to one of your sessions instead of creating another",
  tasks: "await or cancel some tasks before starting more",
  subscriptions: "unsubscribe from channels you no longer read",
  event_bytes: "publish smaller payloads (a path or an out:N ref) or fewer events",
  memory_mb: "close a session or ask for smaller session heaps",
  plans: "apply some of your plans, or have an approver decline them, first (plan.list shows " +
    "them)",
  ptys: "close PTYs you no longer use (pty.list shows them)",
};

/** `principal` may not take `n` more of `quota` (it holds `used` of `limit`). */
export function quotaExceeded(
  quota: string,
  principal: string,
  used: number,
  limit: number,
  opts: { n?: number; data?: Record<string, unknown>; why?: string } = {},
): RpcError {
  const n = opts.n ?? 1;
  const what = opts.why ??
    `${principal} has reached its ${quota} quota (${used} of ${limit}${
      n === 1 ? "" : `, asking for ${n} more`
    })`;
  return new RpcError(RPC.QUOTA_EXCEEDED, `${what}; ${HINTS[quota] ?? "release some first"}`, {
    quota,
    limit,
    used,
    principal,
    ...(opts.data ?? {}),
  });
}
