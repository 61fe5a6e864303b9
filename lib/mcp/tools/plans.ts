/**
 * The plan family: `shoal_plan`, `shoal_apply`, `shoal_cap_request` (listed only when the kernel
 * implements plans).
 */

import { z } from "zod";
import { RPC, RpcError } from "../../client/mod.ts";
import { approveAndApply, type PlanInfo, requestApproval } from "../approval.ts";
import { toolOk } from "../result.ts";
import { forward, inlineProps, kernelResult, objectOut, READS, RUNS } from "./common.ts";
import { planProps } from "./exec.ts";
import type { Obj, ToolDef } from "./types.ts";

const PlanRef = z.string().min(1).describe("plan ref, e.g. plan:7b2fd854cb805ba1");
const PlanIn = z.strictObject({ src: z.string().describe("Shoal source to plan") });
const ApplyIn = z.strictObject({ plan_ref: PlanRef });
const CapIn = z.strictObject({
  plan_ref: PlanRef,
  effects: z.array(z.union([z.string(), z.strictObject({ kind: z.string() })])).optional()
    .describe("effect kinds the grant covers (default: the whole plan)"),
});

/** The plan family. */
export const PLAN_TOOLS: ToolDef[] = [
  {
    name: "shoal_plan",
    title: "Plan Shoal code",
    description:
      "Derive the effects, reversibility and policy verdict of source without running it.",
    input: PlanIn,
    outputSchema: objectOut(planProps, ["plan_ref"]),
    annotations: { title: "Plan Shoal code", ...READS, idempotentHint: false },
    needs: "plan.list",
    run: forward("exec", (a) => ({ src: a.src, mode: "plan", position: "value" })),
  },
  {
    name: "shoal_apply",
    title: "Apply an approved plan",
    description: "Run a stored plan that is approved (or allowed by policy).",
    input: ApplyIn,
    outputSchema: objectOut(inlineProps, ["ref", "value"]),
    annotations: { title: "Apply an approved plan", ...RUNS },
    needs: "plan.apply",
    run: async (a, ctx) => {
      try {
        return toolOk(await ctx.link.call<Obj>("plan.apply", { plan_ref: a.plan_ref }));
      } catch (e) {
        if (!(e instanceof RpcError) || e.code !== RPC.APPROVAL_REQUIRED) {
          return await kernelResult(() => Promise.reject(e), "plan.apply");
        }
        // Not approved yet: ask the person in the host, or hand back the three steps.
        const plan = async () => {
          const p = await ctx.link.call<Obj>("plan.get", { plan_ref: a.plan_ref });
          return p as unknown as PlanInfo;
        };
        return await approveAndApply(ctx.link, ctx.host, plan, "the plan is not approved yet");
      }
    },
  },
  {
    name: "shoal_cap_request",
    title: "Request approval for a plan",
    description: "Request approval for a pending plan; effects scope the grant.",
    input: CapIn,
    outputSchema: objectOut({ grant: { type: "string" }, plan_ref: { type: "string" } }, [
      "grant",
      "plan_ref",
    ]),
    annotations: {
      title: "Request approval for a plan",
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
    needs: "cap.request",
    run: (a, ctx) =>
      requestApproval(ctx.link, ctx.host, String(a.plan_ref), (a.effects as unknown[]) ?? []),
  },
];
