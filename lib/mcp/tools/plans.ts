/**
 * The plan family: `shoal_plan`, `shoal_apply`, `shoal_cap_request` (listed only when the kernel
 * implements plans).
 */

import { z } from "zod";
import { forward, inlineProps, objectOut, READS, RUNS } from "./common.ts";
import { planProps } from "./exec.ts";
import type { ToolDef } from "./types.ts";

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
    run: forward("plan.apply"),
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
    run: forward("cap.request", (a) => ({ plan_ref: a.plan_ref, effects: a.effects ?? [] })),
  },
];
