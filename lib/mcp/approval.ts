/**
 * Approval in the host (issue 15): when a tool call needs a plan approved, the facade asks the
 * person *in the MCP host* — the source, its effects and reversibility — and on accept approves
 * through the approver identity the person configured for this facade (`--approver`), then
 * applies the plan; a decline is recorded as a decline; a cancel leaves the plan pending.
 *
 * Two eras of asking: the 2025-11-25 `elicitation/create` request the server sends mid-call, and
 * the 2026-07-28 input-required round trip (the tool answers `input_required` with the question
 * and an integrity-protected `requestState`; the client asks and retries the call with the
 * answer). A client that declares no elicitation — or a facade with no approver configured —
 * gets the plan ref and the three steps (inspect, have it approved, apply) in the result text.
 *
 * The approver's identity never reaches the model: it lives in this process (a bearer read
 * from a file, or the kernel's own user), on a connection of its own; sessions never see it in
 * their environment, and `shoal_exec` cannot name it.
 *
 * @module
 */

import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { RPC, RpcError } from "../client/mod.ts";
import type { KernelLink } from "./kernel_link.ts";
import { toolError, toolOk, type ToolResult } from "./result.ts";

type Obj = Record<string, unknown>;
const te = new TextEncoder();

/** What the person is shown about a plan. */
export interface PlanInfo {
  plan_ref: string;
  src: string;
  effects: unknown[];
  reversibility: string;
  verdict?: string;
}

/** The person's answer. */
export type Answer = "approve" | "decline" | "cancel";

/** The tool answers `input_required` (2026-07-28): the server returns `result` as it is. */
export class InputNeeded extends Error {
  constructor(readonly result: Obj) {
    super("input required");
    this.name = "InputNeeded";
  }
}

/** Asking the person in the host, for one tool call. */
export interface HostAsk {
  /** The answer a retried call carries for this tool and arguments (2026-07-28), if any. */
  carried(): { planRef: string; answer: Answer } | null;
  /** Ask about `plan`: resolves with the answer (2025), or throws {@link InputNeeded} (2026). */
  ask(plan: PlanInfo): Promise<Answer>;
}

/** The elicitation form: one yes/no. */
const SCHEMA = {
  type: "object",
  properties: {
    approve: {
      type: "boolean",
      title: "Approve and run",
      description: "Run this code once, with the effects listed",
      default: false,
    },
  },
  required: ["approve"],
};

/** The message of the elicitation: who asks to run what, with which effects. */
export function question(plan: PlanInfo, principal: string): string {
  const effects = plan.effects.length
    ? plan.effects.map((e) => `  - ${JSON.stringify(e)}`).join("\n")
    : "  (none)";
  const src = plan.src.length > 4000 ? plan.src.slice(0, 4000) + "\n…(truncated)" : plan.src;
  return `Shoal: ${principal} asks to run this (plan ${plan.plan_ref}):\n\n${src}\n\n` +
    `Effects:\n${effects}\nReversibility: ${plan.reversibility}\n\nApprove it?`;
}

/** Map an elicitation result onto an answer. */
export function answerOf(r: { action?: unknown; content?: unknown } | undefined): Answer {
  if (!r) return "cancel";
  if (r.action === "accept") {
    return (r.content as Obj | undefined)?.approve === true ? "approve" : "decline";
  }
  return r.action === "decline" ? "decline" : "cancel";
}

/** 2025-11-25: an `elicitation/create` request through `elicit`. */
export function legacyAsk(
  elicit: (p: Obj) => Promise<{ action?: unknown; content?: unknown }>,
  principal: string,
): HostAsk {
  return {
    carried: () => null,
    async ask(plan) {
      return answerOf(
        await elicit({ mode: "form", message: question(plan, principal), requestedSchema: SCHEMA }),
      );
    },
  };
}

/** Signs and checks `requestState` (attacker-controlled on re-entry: HMAC with a process key). */
export class StateSeal {
  readonly #key = randomBytes(32);

  seal(payload: Obj): string {
    const body = btoa(JSON.stringify(payload));
    return `${body}.${this.#mac(body)}`;
  }

  open(state: unknown): Obj | null {
    if (typeof state !== "string") return null;
    const dot = state.lastIndexOf(".");
    if (dot <= 0) return null;
    const body = state.slice(0, dot);
    const mac = te.encode(state.slice(dot + 1));
    const want = te.encode(this.#mac(body));
    if (mac.length !== want.length || !timingSafeEqual(mac, want)) return null;
    try {
      return JSON.parse(atob(body));
    } catch {
      return null;
    }
  }

  #mac(body: string): string {
    return createHmac("sha256", this.#key).update(body).digest("hex");
  }
}

/**
 * 2026-07-28: the question travels as an `input_required` result; the retry carries the answer
 * and the sealed state, which binds it to this tool, these arguments and that plan.
 */
export function modernAsk(
  seal: StateSeal,
  tool: string,
  args: Obj,
  retry: { state: unknown; response: { action?: unknown; content?: unknown } | undefined },
  build: (plan: PlanInfo, state: string, message: string, schema: Obj) => Obj,
  principal: string,
): HostAsk {
  const bound = JSON.stringify([tool, args]);
  return {
    carried() {
      const s = seal.open(retry.state);
      if (!s || s.call !== bound || typeof s.plan_ref !== "string" || !retry.response) return null;
      return { planRef: s.plan_ref, answer: answerOf(retry.response) };
    },
    ask(plan) {
      const state = seal.seal({ call: bound, plan_ref: plan.plan_ref });
      return Promise.reject(new InputNeeded(build(plan, state, question(plan, principal), SCHEMA)));
    },
  };
}

/** The three steps, for a client that cannot be asked (or a facade without an approver). */
export function threeSteps(plan: PlanInfo, why: string): ToolResult {
  const hex = plan.plan_ref.replace(/^plan:/, "");
  const kinds = [...new Set(plan.effects.map((e) => (e as Obj).kind))].join(", ") || "none";
  const text = `Not run: ${why}. Plan ${plan.plan_ref} (effects: ${kinds}; reversibility: ` +
    `${plan.reversibility}).\n` +
    `1. Inspect it: read the resource shoal://plan/${hex} (source, effects, verdict).\n` +
    `2. Have it approved: the person runs \`shoal plan approve ${plan.plan_ref}\` in a terminal ` +
    `(or an approver calls cap.request {"plan_ref":"${plan.plan_ref}"}).\n` +
    `3. Apply it: shoal_apply {"plan_ref":"${plan.plan_ref}"}.`;
  return {
    content: [{ type: "text", text }],
    structuredContent: { ...plan, approval_pending: true, next: ["inspect", "approve", "apply"] },
    isError: true,
  };
}

/** The plan as the agent's connection sees it (its own plan). */
async function planInfo(link: KernelLink, ref: string): Promise<PlanInfo> {
  const p = await link.call<Obj>("plan.get", { plan_ref: ref });
  return {
    plan_ref: String(p.plan_ref),
    src: String(p.src),
    effects: (p.effects as unknown[]) ?? [],
    reversibility: String(p.reversibility),
    verdict: String(p.verdict),
  };
}

/**
 * Run a plan that needs approval: ask the person (or carry the answer of the previous round),
 * approve as the configured approver, apply. `plan` makes or finds the plan on first asking;
 * `src` (when the call named source) must be the plan's.
 */
export async function approveAndApply(
  link: KernelLink,
  host: HostAsk | undefined,
  plan: () => Promise<PlanInfo>,
  why: string,
  src?: string,
): Promise<ToolResult> {
  try {
    const carried = host?.carried() ?? null;
    let info: PlanInfo;
    let answer: Answer;
    if (carried) {
      info = await planInfo(link, carried.planRef);
      if (src !== undefined && info.src !== src) {
        return toolError({
          code: RPC.LEASH_DENIED,
          message: "the answered plan is not this source's",
        });
      }
      answer = carried.answer;
    } else {
      info = await plan();
      if (!host) return threeSteps(info, why);
      answer = await host.ask(info);
    }
    const approver = await link.approver();
    if (answer === "cancel") {
      return threeSteps(info, "the question was dismissed in the host; the plan is still pending");
    }
    if (answer === "decline") {
      await approver.call("cap.request", { plan_ref: info.plan_ref, decision: "decline" });
      return {
        content: [{
          type: "text",
          text: `Declined by the person: plan ${info.plan_ref} was not run.`,
        }],
        structuredContent: { plan_ref: info.plan_ref, grant: "declined" },
        isError: true,
      };
    }
    const grant = await approver.call<Obj>("cap.request", { plan_ref: info.plan_ref });
    if (grant.grant !== "approved") return toolOk(grant);
    const r = await link.call<Obj>("plan.apply", { plan_ref: info.plan_ref });
    return toolOk(r, `Approved in the host by ${grant.approver}; ran plan ${info.plan_ref}.`);
  } catch (e) {
    if (e instanceof RpcError) return toolError(e.toJSON());
    throw e;
  }
}

/**
 * `shoal_cap_request`: with a host to ask, the person decides and the approver grants (no
 * apply); without one, the agent's own request (allowed only where its policy lets it approve
 * itself) — refused requests come back with the three steps.
 */
export async function requestApproval(
  link: KernelLink,
  host: HostAsk | undefined,
  ref: string,
  effects: unknown[],
): Promise<ToolResult> {
  try {
    if (host) {
      const carried = host.carried();
      const info = await planInfo(link, carried?.planRef ?? ref);
      const answer = carried?.answer ?? await host.ask(info);
      if (answer === "cancel") return threeSteps(info, "the question was dismissed in the host");
      const approver = await link.approver();
      return toolOk(
        await approver.call<Obj>("cap.request", {
          plan_ref: info.plan_ref,
          effects,
          decision: answer === "approve" ? "approve" : "decline",
        }),
      );
    }
    try {
      return toolOk(await link.call<Obj>("cap.request", { plan_ref: ref, effects }));
    } catch (e) {
      if (!(e instanceof RpcError) || e.code !== RPC.LEASH_DENIED || (e.data as Obj)?.effects) {
        throw e;
      }
      return threeSteps(await planInfo(link, ref), e.message);
    }
  } catch (e) {
    if (e instanceof RpcError) return toolError(e.toJSON());
    throw e;
  }
}
