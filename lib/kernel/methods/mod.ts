/**
 * The kernel's method table (protocol §3–§14), one module per method family, each
 * registering into one table. Handlers validate params (`-32602` with a message that names the
 * field) and route work to session hosts; they own no language logic and no policy logic.
 *
 * @module
 */

import type { Methods } from "../connection.ts";
import { addEventMethods } from "./events.ts";
import { addExecMethods } from "./exec.ts";
import { addJournalMethods } from "./journal.ts";
import { addPtyMethods } from "./pty.ts";
import { addSessionMethods } from "./session.ts";
import { addTaskMethods } from "./tasks.ts";
import { addPlanMethods } from "./plans.ts";
import { type Attachment, type KernelServices, registrar } from "./types.ts";

export type { Attachment, KernelServices } from "./types.ts";
export { bindingContext } from "./session.ts";
export { MAX_QUEUED } from "./exec.ts";
export { MAX_PAYLOAD, MAX_SUBSCRIPTIONS } from "./events.ts";

/** Build the method table. */
export function kernelMethods(k: KernelServices): Methods<Attachment> {
  const m: Methods<Attachment> = new Map();
  const leash = k.leash ?? null;
  // A token attachment's token is re-checked before each request (D-16); a revoked one ends
  // the attachment: the connection must attach again.
  const add = registrar(
    m,
    leash === null ? undefined : (conn) => {
      const drop = (e: unknown) => {
        conn.attachment = null;
        throw e;
      };
      try {
        return leash.recheck(conn.attachment!.tokenId!)?.catch(drop);
      } catch (e) {
        return drop(e);
      }
    },
  );
  addSessionMethods(add, k);
  addExecMethods(add, k);
  addTaskMethods(add, k);
  addPtyMethods(add, k);
  const subscriptions = addEventMethods(add, k);
  addJournalMethods(add, k.journal ?? null); // blob.get, journal.query, journal.get (issue 7)
  addPlanMethods(add, k); // explain, plan.get/list/apply, cap.request (issue 15)
  // Diagnostics for tests and operators: live counters only, no session data.
  add("kernel.stats", () => ({ ...k.stats(), subscriptions: subscriptions() }));
  return m;
}
