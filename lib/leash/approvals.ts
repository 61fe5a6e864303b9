/**
 * Approval decisions (protocol §11.5, D-2, D-22): who may approve a stored plan, the coverage
 * check of a scoped grant, and whether a plan may be applied now. Pure functions over a plan
 * and the policies in force; the kernel maps the outcomes to JSON-RPC codes, records the
 * decision in the journal and publishes it on the `approval` channel.
 *
 * @module
 */

import { effectKinds } from "./effects.ts";
import { type Decision, isApproved, type Plan } from "./plans.ts";
import type { Verdict } from "./policy.ts";
import type { PolicySet } from "./policy_set.ts";

/** Kinds of the plan that a non-empty requested scope leaves out (empty: covered). */
export function coverage(requested: readonly string[], plan: Plan): string[] {
  if (requested.length === 0) return [];
  return effectKinds(plan.effects).filter((k) => !requested.includes(k));
}

/** The owner's verdict for a plan under the policies in force now. */
export function currentVerdict(plan: Plan, set: PolicySet): Verdict {
  const p = set.compiled(plan.principal);
  return p ? p.planVerdict(plan.effects, plan.reversibility) : "deny";
}

/** What a `cap.request` comes to. */
export type ApprovalOutcome =
  | { kind: "refused"; denied: boolean; message: string }
  | { kind: "pending"; uncovered: string[] }
  | { kind: "approved" | "declined"; decision: Decision };

/**
 * Decide a `cap.request` by `approver` (already authenticated) on `plan`. Refusals: the caller
 * may not approve the owner's plans, or the owner's policy denies the plan now
 * (`denied: true`), or it was declined already. A scope that leaves kinds out keeps it pending.
 */
export function decide(
  plan: Plan,
  approver: string,
  requested: readonly string[],
  action: "approve" | "decline",
  set: PolicySet,
): ApprovalOutcome {
  if (!set.mayApprove(approver, plan.principal)) {
    return { kind: "refused", denied: false, message: set.refusal(approver, plan.principal) };
  }
  const decision: Decision = {
    by: approver,
    at_ns: Date.now() * 1_000_000,
    effects: [...requested],
  };
  if (action === "decline") return { kind: "declined", decision };
  if (plan.declined) {
    return {
      kind: "refused",
      denied: false,
      message: `plan ${plan.ref} was declined by ${plan.declined.by}; plan it again`,
    };
  }
  if (currentVerdict(plan, set) === "deny") {
    return { kind: "refused", denied: true, message: "policy denies requested effects" };
  }
  const uncovered = coverage(requested, plan);
  if (uncovered.length) return { kind: "pending", uncovered };
  return { kind: "approved", decision };
}

/** Whether a plan may be applied by its owner now. */
export type ApplyCheck =
  | { ok: true; approved: boolean }
  | { ok: false; code: "denied" | "pending"; message: string };

/** May the owner apply `plan` now (approved and not consumed, or allowed outright)? */
export function applyCheck(plan: Plan, set: PolicySet): ApplyCheck {
  if (plan.declined) {
    return {
      ok: false,
      code: "denied",
      message: `plan ${plan.ref} was declined by ${plan.declined.by}`,
    };
  }
  const v = currentVerdict(plan, set);
  if (v === "deny") {
    return { ok: false, code: "denied", message: "the policy now denies this plan" };
  }
  if (isApproved(plan)) return { ok: true, approved: true };
  if (v === "allow") return { ok: true, approved: false };
  return {
    ok: false,
    code: "pending",
    message: plan.applied > 0
      ? `plan ${plan.ref} was applied already and its approval is used up; ask for a new approval`
      : `plan approval pending: an approver must approve ${plan.ref} (cap.request) before it ` +
        `can be applied`,
  };
}
