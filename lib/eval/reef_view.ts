/**
 * The session's Reef snapshot for hosts (the kernel's `session.reef`, MCP
 * `shoal://session/reef`): the active scope and one binding per constrained tool, read from
 * the manifests and the lock at the session cwd (protocol §4.2). No probe, no hash, no
 * subprocess; an unreadable lock or manifest leaves bindings unbound rather than failing.
 *
 * @module
 */

import { snapshot, type SnapshotBinding } from "../reef/mod.ts";
import type { Evaluator } from "./evaluator.ts";
import { reefContext, sessionEnv } from "./resolve_head.ts";

/** `{active_scope, bindings}` of the session as it is now. */
export function reefView(
  ev: Evaluator,
): { active_scope: string | null; bindings: SnapshotBinding[] } {
  return snapshot(reefContext(ev, sessionEnv(ev)));
}
