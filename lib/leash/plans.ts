/**
 * Stored plans (protocol §4.6 plan mode, §11.3, §11.5). A plan ref binds the exact source, the
 * session, the principal and a random nonce (D-3): `plan:` + 16 hex of their BLAKE3 digest,
 * re-salted on the (astronomically rare) collision, so a ref is never reused and an entry is
 * never overwritten. Plans are bounded per principal (D-31): when a principal's share is full,
 * its oldest settled plans (applied, declined or denied) make room; if none is settled the
 * new plan is refused with a message that says so.
 *
 * Approval is one-shot: applying an approved plan consumes the approval; applying it again
 * needs a fresh approval unless the policy now allows it outright.
 *
 * @module
 */

import { acquireHasher, releaseHasher } from "../store/blake3.ts";
import type { Effect } from "./effects.ts";
import type { Reversibility } from "./reversibility.ts";
import type { Verdict } from "./policy.ts";

/** Plans one principal may hold. */
export const MAX_PLANS_PER_PRINCIPAL = 256;
/** Source bytes one principal's plans may hold together. */
export const MAX_PLAN_BYTES_PER_PRINCIPAL = 8 * 1024 * 1024;
/** Plans the kernel holds at most. */
export const MAX_PLANS = 8192;

/** An approval or a refusal of a plan. */
export interface Decision {
  by: string;
  at_ns: number;
  /** The kinds the approver named (empty: the whole plan). */
  effects: string[];
}

/** A stored plan. */
export interface Plan {
  ref: string;
  src: string;
  /** The session key (name, or `name@principal` for a principal other than the person). */
  session: string;
  /** The session's visible name. */
  sessionName: string;
  principal: string;
  effects: Effect[];
  reversibility: Reversibility;
  /** The owner's verdict when the plan was made. */
  verdict: Verdict;
  created_ns: number;
  approval: Decision | null;
  /** True once an apply consumed the approval (approvals are one-shot). */
  approval_used: boolean;
  declined: Decision | null;
  /** Times applied. */
  applied: number;
}

/** Is `plan` approved and not yet applied under that approval? */
export function isApproved(plan: Plan): boolean {
  return plan.approval !== null && !plan.approval_used;
}

/**
 * The plan store was full for this principal: `why` says which bound (plans never expire, so
 * only applying or declining some makes room).
 */
export class PlanQuotaError extends Error {
  constructor(readonly principal: string, readonly limit: number, why: string) {
    super(`${why}; apply some of them, or have an approver decline them, first`);
    this.name = "PlanQuotaError";
  }
}

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`;

const te = new TextEncoder();

/** The plans of one kernel (memory only: lost on restart, D-30). */
export class PlanStore {
  readonly #plans = new Map<string, Plan>();
  readonly #byOwner = new Map<string, Set<string>>();
  readonly #bytes = new Map<string, number>();

  constructor(
    readonly maxPerPrincipal = MAX_PLANS_PER_PRINCIPAL,
    readonly maxBytesPerPrincipal = MAX_PLAN_BYTES_PER_PRINCIPAL,
    readonly maxTotal = MAX_PLANS,
  ) {}

  /** Plans held. */
  get size(): number {
    return this.#plans.size;
  }

  /** Store a new plan under a fresh ref. Throws {@link PlanQuotaError} when full. */
  async create(
    p: Omit<Plan, "ref" | "created_ns" | "approval" | "approval_used" | "declined" | "applied">,
  ): Promise<Plan> {
    const bytes = te.encode(p.src).length;
    this.#makeRoom(p.principal, bytes);
    let ref: string;
    do ref = await mintRef(p.src, p.session, p.principal); while (this.#plans.has(ref));
    const plan: Plan = {
      ...p,
      ref,
      created_ns: Date.now() * 1_000_000,
      approval: null,
      approval_used: false,
      declined: null,
      applied: 0,
    };
    this.#plans.set(ref, plan);
    let mine = this.#byOwner.get(p.principal);
    if (!mine) this.#byOwner.set(p.principal, mine = new Set());
    mine.add(ref);
    this.#bytes.set(p.principal, (this.#bytes.get(p.principal) ?? 0) + bytes);
    return plan;
  }

  /** The plan under `ref` (a `plan:` prefix is optional), or undefined. */
  get(ref: string): Plan | undefined {
    return this.#plans.get(ref.startsWith("plan:") ? ref : `plan:${ref}`);
  }

  /** Plans of one owner (session key and principal), oldest first. */
  owned(session: string, principal: string): Plan[] {
    const refs = this.#byOwner.get(principal) ?? new Set<string>();
    return [...refs].map((r) => this.#plans.get(r)!).filter((p) => p.session === session);
  }

  /** Every plan, oldest first (approvers list pending plans through this). */
  all(): IterableIterator<Plan> {
    return this.#plans.values();
  }

  /** Plans that can no longer matter: applied, declined, or denied when made. */
  static settled(p: Plan): boolean {
    return p.applied > 0 || p.declined !== null || p.verdict === "deny";
  }

  #remove(ref: string): void {
    const p = this.#plans.get(ref);
    if (!p) return;
    this.#plans.delete(ref);
    this.#byOwner.get(p.principal)?.delete(ref);
    this.#bytes.set(p.principal, (this.#bytes.get(p.principal) ?? 0) - te.encode(p.src).length);
  }

  #makeRoom(principal: string, bytes: number): void {
    const mine = () => [...(this.#byOwner.get(principal) ?? [])].map((r) => this.#plans.get(r)!);
    const full = () =>
      (this.#byOwner.get(principal)?.size ?? 0) >= this.maxPerPrincipal ||
      (this.#bytes.get(principal) ?? 0) + bytes > this.maxBytesPerPrincipal;
    if (bytes > this.maxBytesPerPrincipal) {
      throw new PlanQuotaError(
        principal,
        this.maxBytesPerPrincipal,
        `this plan's source is more than ${principal}'s budget of ` +
          `${plural(this.maxBytesPerPrincipal, "byte")} for plans not yet applied or declined`,
      );
    }
    for (const p of mine()) {
      if (!full()) break;
      if (PlanStore.settled(p)) this.#remove(p.ref);
    }
    if ((this.#byOwner.get(principal)?.size ?? 0) >= this.maxPerPrincipal) {
      throw new PlanQuotaError(
        principal,
        this.maxPerPrincipal,
        `${principal} already holds ${plural(this.maxPerPrincipal, "plan")} not yet applied or ` +
          `declined (the limit)`,
      );
    }
    if ((this.#bytes.get(principal) ?? 0) + bytes > this.maxBytesPerPrincipal) {
      throw new PlanQuotaError(
        principal,
        this.maxBytesPerPrincipal,
        `${principal}'s plans not yet applied or declined would hold more than ` +
          `${plural(this.maxBytesPerPrincipal, "byte")} of source (the limit)`,
      );
    }
    // Kernel-wide: settled plans of anyone go first, then the oldest of anyone.
    if (this.#plans.size >= this.maxTotal) {
      for (const p of this.#plans.values()) {
        if (this.#plans.size < this.maxTotal) break;
        if (PlanStore.settled(p)) this.#remove(p.ref);
      }
      if (this.#plans.size >= this.maxTotal) {
        throw new PlanQuotaError(
          principal,
          this.maxTotal,
          `the kernel already holds ${plural(this.maxTotal, "plan")} not yet applied or ` +
            `declined (its limit)`,
        );
      }
    }
  }
}

/** `plan:` + 16 hex of BLAKE3(domain, source, session, principal, nonce). */
async function mintRef(src: string, session: string, principal: string): Promise<string> {
  const h = await acquireHasher();
  try {
    const nonce = crypto.getRandomValues(new Uint8Array(16));
    for (const part of ["shoal-plan-v1", src, session, principal]) {
      const b = te.encode(part);
      h.update(te.encode(`${b.length}:`));
      h.update(b);
    }
    h.update(nonce);
    return `plan:${h.digestHex().slice(0, 16)}`;
  } finally {
    releaseHasher(h);
  }
}
