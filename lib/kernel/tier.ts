/**
 * Honest sandbox-tier detection for `session.attach` (protocol §11.6): which OS backend the
 * host offers. What is active for a principal is the session's confinement report
 * (`session_sandbox.ts`).
 */

import { landlockAbi } from "../exec/landlock.ts";

export { landlockAbi };

let cached: string | null | undefined;

/** Best backend on this host: "A" (Landlock), "B" (Linux without it), "C" (macOS), "D". */
export function availableTier(): string | null {
  if (cached !== undefined) return cached;
  const os = Deno.build.os;
  cached = os === "linux" ? (landlockAbi() > 0 ? "A" : "B") : os === "darwin" ? "C" : "D";
  return cached;
}
