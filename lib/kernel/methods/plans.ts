/**
 * Plan methods (protocol §4.5, §4.6 plan/approved modes, §11.5; issue 15): `explain`,
 * `exec {mode: "plan"}` (via {@link storePlan}), `plan.get`, `plan.list`, `plan.apply` and
 * `cap.request`. Derivation and verdicts happen in the session (it holds the evaluator state
 * and its principal's policy); approvals, coverage and apply checks come from lib/leash; this
 * family routes, stores, journals the decisions and publishes them on `approval`.
 *
 * @module
 */

import { quotaExceeded } from "../quota_error.ts";
import { RPC, RpcError } from "../../client/errors.ts";
import { parse } from "../../syntax/mod.ts";
import { blake3Hex } from "../../store/blake3.ts";
import {
  applyCheck,
  currentVerdict,
  decide,
  type Effect,
  isApproved,
  type Plan,
  PlanQuotaError,
  requestedKinds,
  type Reversibility,
  type Verdict,
} from "../../leash/mod.ts";
import type { KernelLeash } from "../leash_service.ts";
import { invalid, optBool, optString } from "./params.ts";
import {
  att,
  type Attachment,
  type Conn,
  type KernelServices,
  type P,
  type Register,
} from "./types.ts";
import { submitExec } from "./exec.ts";

/** A derivation the session answered. */
interface Derived {
  ast_version: 2;
  ast: unknown;
  effects: Effect[];
  reversibility: Reversibility;
  verdict: Verdict;
}

/** Source bytes one plan may hold. */
export const MAX_PLAN_SOURCE = 1024 * 1024;

function leashOf(k: KernelServices): KernelLeash {
  if (!k.leash) {
    throw new RpcError(RPC.METHOD_NOT_FOUND, "this kernel runs without Leash: no plans");
  }
  return k.leash;
}

function derive(k: KernelServices, a: Attachment, params: P): Promise<Derived> {
  leashOf(k).policies(); // the session judges with the policy in force now
  return a.session.request("derive", params) as Promise<Derived>;
}

/** `exec {mode: "plan"}`: derive, judge, store under a fresh ref, announce if it needs approval. */
export async function storePlan(k: KernelServices, a: Attachment, src: string) {
  const leash = leashOf(k);
  if (new TextEncoder().encode(src).length > MAX_PLAN_SOURCE) {
    throw invalid(`a plan's source is at most ${MAX_PLAN_SOURCE} bytes`);
  }
  const d = await derive(k, a, { src });
  let plan: Plan;
  try {
    plan = await leash.plans.create({
      src,
      session: a.session.name,
      sessionName: a.session.visibleName,
      principal: a.principal,
      effects: d.effects,
      reversibility: d.reversibility,
      verdict: d.verdict,
    });
  } catch (e) {
    if (e instanceof PlanQuotaError) {
      throw quotaExceeded("plans", e.principal, e.limit, e.limit, { why: e.message.split(";")[0] });
    }
    throw e;
  }
  const pending = d.verdict === "approval_required";
  if (pending) {
    leash.approvalEvent(a.session.name, {
      kind: "request",
      plan_ref: plan.ref,
      effects: plan.effects,
      reversibility: plan.reversibility,
      principal: plan.principal,
      session: plan.sessionName,
      src: src.length > 4096 ? src.slice(0, 4096) + "…" : src,
      expires: null,
    });
  }
  return {
    plan_ref: plan.ref,
    effects: plan.effects,
    reversibility: plan.reversibility,
    verdict: d.verdict,
    approval_pending: pending,
  };
}

/** The owner-only lookup: -32012 unknown, -32010 someone else's. */
function ownPlan(k: KernelServices, a: Attachment, ref: string | undefined): Plan {
  if (ref === undefined) throw invalid("plan_ref is required");
  const plan = leashOf(k).plans.get(ref);
  if (!plan) {
    throw new RpcError(
      RPC.UNKNOWN_PLAN,
      `unknown plan ${ref} (plans live in kernel memory: lost on restart)`,
      { plan_ref: ref },
    );
  }
  if (plan.session !== a.session.name || plan.principal !== a.principal) {
    throw new RpcError(RPC.LEASH_DENIED, "plan belongs to another principal/session", {
      plan_ref: plan.ref,
    });
  }
  return plan;
}

/**
 * `exec {mode: "approved"}` (internal re-entry): the stored plan must be this session's and
 * principal's, with byte-identical source, approved (the approval is used up here) or allowed
 * by the policy now; its effects go to the session to compare (D-22).
 */
export function approvedEffects(
  k: KernelServices,
  a: Attachment,
  src: string,
  ref: string | undefined,
): Effect[] {
  const refuse = () =>
    new RpcError(
      RPC.LEASH_DENIED,
      'mode "approved" requires an approved plan_ref for this session/principal ' +
        "(use plan → cap.request → plan.apply)",
      { plan_ref: ref ?? null },
    );
  if (ref === undefined) throw refuse();
  const plan = leashOf(k).plans.get(ref);
  if (!plan || plan.session !== a.session.name || plan.principal !== a.principal) throw refuse();
  if (plan.src !== src) throw refuse();
  const ok = applyCheck(plan, leashOf(k).policies());
  if (!ok.ok) throw refuse();
  consume(plan, ok.approved);
  return plan.effects;
}

function consume(plan: Plan, approved: boolean): void {
  plan.applied++;
  if (approved) plan.approval_used = true;
}

function planView(plan: Plan, verdict: Verdict) {
  return {
    plan_ref: plan.ref,
    effects: plan.effects,
    reversibility: plan.reversibility,
    verdict,
    approval_pending: verdict === "approval_required" && !isApproved(plan) && !plan.declined,
    approved: isApproved(plan),
  };
}

/** Add the plan family. */
export function addPlanMethods(add: Register, k: KernelServices): void {
  add("explain", async (p, conn) => {
    const a = att(conn);
    let params: P;
    if (p.src !== undefined && p.src !== null) {
      if (typeof p.src !== "string") throw invalid("`src` must be a string");
      params = { src: p.src };
    } else if (p.ast !== undefined && p.ast !== null) {
      if (typeof p.ast !== "object" || Array.isArray(p.ast)) {
        throw invalid("invalid ast: expected a Program object");
      }
      params = { ast: p.ast };
    } else throw invalid("explain requires src or ast");
    const d = k.leash
      ? await derive(k, a, params)
      : await a.session.request("derive", params) as Derived;
    // A fingerprint of what was derived, not a stored plan (D-41).
    const fingerprint = await blake3Hex(JSON.stringify([d.ast, d.effects]));
    return {
      ast_version: 2,
      ast: d.ast,
      effects: d.effects,
      reversibility: d.reversibility,
      verdict: d.verdict,
      plan_ref: `plan:${fingerprint.slice(0, 16)}`,
      stored: false,
    };
  });

  add("plan.get", (p, conn) => {
    const a = att(conn);
    const leash = leashOf(k);
    const ref = optString(p, "plan_ref");
    if (ref === undefined) throw invalid("plan.get requires `plan_ref`");
    const plan = leash.plans.get(ref);
    if (!plan) {
      throw new RpcError(RPC.UNKNOWN_PLAN, `unknown plan ${ref}`, { plan_ref: ref });
    }
    const set = leash.policies();
    const owner = plan.session === a.session.name && plan.principal === a.principal;
    // An approver may read what it is asked to approve (source, effects, who asks).
    if (
      !owner && (a.principal === plan.principal || !set.mayApprove(a.principal, plan.principal))
    ) {
      throw new RpcError(RPC.LEASH_DENIED, "plan belongs to another principal/session", {
        plan_ref: plan.ref,
      });
    }
    let ast: unknown = null;
    try {
      ast = parse(plan.src, {});
    } catch { /* bound names made it parse in its session; a bare reparse may not */ }
    return {
      ast_version: 2,
      ast,
      ...planView(plan, currentVerdict(plan, set)),
      src: plan.src,
      principal: plan.principal,
      session: plan.sessionName,
      created_ns: plan.created_ns,
      approval: plan.approval,
      declined: plan.declined,
      applied: plan.applied,
    };
  });

  add("plan.list", (p, conn) => {
    const a = att(conn);
    const leash = leashOf(k);
    const set = leash.policies();
    // `pending: true`: plans waiting for an approval this caller may give (any session).
    if (optBool(p, "pending") === true) {
      const out = [];
      for (const plan of leash.plans.all()) {
        const v = currentVerdict(plan, set);
        if (v !== "approval_required" || isApproved(plan) || plan.declined) continue;
        if (plan.principal === a.principal && plan.session === a.session.name) continue;
        if (!set.mayApprove(a.principal, plan.principal)) continue;
        out.push({ ...planView(plan, v), principal: plan.principal, session: plan.sessionName });
      }
      return out;
    }
    return leash.plans.owned(a.session.name, a.principal).map((plan) =>
      planView(plan, currentVerdict(plan, set))
    );
  });

  add("plan.apply", async (p, conn) => {
    const a = att(conn);
    const plan = ownPlan(k, a, optString(p, "plan_ref"));
    const ok = applyCheck(plan, leashOf(k).policies());
    if (!ok.ok) {
      throw new RpcError(
        ok.code === "denied" ? RPC.LEASH_DENIED : RPC.APPROVAL_REQUIRED,
        ok.message,
        { plan_ref: plan.ref, effects: plan.effects },
      );
    }
    consume(plan, ok.approved);
    return await submitExec(k, a, conn, {
      src: plan.src,
      position: "stmt",
      background: false,
      timeoutMs: undefined,
      elide: null,
      // Allowed outright: an ordinary run, judged again by the session.
      approved: ok.approved ? plan.effects : undefined,
    });
  });

  add("cap.request", (p, conn) => capRequest(k, conn, p));
}

/** `cap.request {plan_ref, effects?, decision?}` by the attached caller (D-2). */
async function capRequest(k: KernelServices, conn: Conn, p: P) {
  const a = att(conn);
  const leash = leashOf(k);
  const ref = optString(p, "plan_ref");
  if (ref === undefined) throw invalid("plan_ref is required");
  const raw = p.effects ?? [];
  if (!Array.isArray(raw)) throw invalid("`effects` must be a list of effect kinds");
  const kinds = requestedKinds(raw);
  if (kinds === null) {
    throw invalid('`effects` entries must be kind strings ("fs.write") or {kind} objects');
  }
  const action = optString(p, "decision") ?? "approve";
  if (action !== "approve" && action !== "decline") {
    throw invalid(`decision must be approve or decline (got ${action})`);
  }
  const plan = leash.plans.get(ref);
  if (!plan) throw new RpcError(RPC.UNKNOWN_PLAN, `unknown plan ${ref}`, { plan_ref: ref });
  const set = leash.policies();
  const out = decide(plan, a.principal, kinds, action, set);
  if (out.kind === "refused") {
    throw new RpcError(RPC.LEASH_DENIED, out.message, {
      plan_ref: plan.ref,
      ...(out.denied ? { effects: plan.effects } : {}),
    });
  }
  if (out.kind === "pending") {
    return {
      grant: "approval_pending",
      plan_ref: plan.ref,
      why: "requested effect scope does not cover the plan",
      uncovered_effects: out.uncovered,
    };
  }
  if (out.kind === "approved") {
    plan.approval = out.decision;
    plan.approval_used = false;
  } else plan.declined = out.decision;
  const decision = {
    decision: out.kind,
    plan_ref: plan.ref,
    principal: plan.principal,
    session: plan.sessionName,
    approver: a.principal,
    effects: out.decision.effects,
    at_ns: out.decision.at_ns,
  };
  const entry = await k.journal?.recordDecision(
    plan.session,
    a.principal,
    plan.ref,
    plan.effects,
    decision,
    a.session.facts.cwd,
  ) ?? null;
  leash.approvalEvent(plan.session, { kind: "decision", ...decision, entry_id: entry });
  if (out.kind === "declined") {
    return { grant: "declined", plan_ref: plan.ref, approver: a.principal };
  }
  return {
    grant: "approved",
    plan_ref: plan.ref,
    enforced: false, // no OS sandbox enforces the owner's policy yet (caps_enforced)
    granted_effects: raw,
    approver: a.principal,
  };
}
