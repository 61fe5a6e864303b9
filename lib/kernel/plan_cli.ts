/**
 * `shoal plan` — the person's side of the approval flow (protocol §11.5), over the kernel
 * socket:
 *
 * ```
 * shoal plan list [--pending]          your session's plans, or plans waiting for your approval
 * shoal plan show REF                  source, effects, reversibility, verdict, who asks
 * shoal plan approve REF [--effects K,K]  approve (optionally only if the plan stays within K…)
 * shoal plan decline REF
 *   [--socket PATH] [--session NAME] [--token TOKEN]
 * ```
 *
 * Without `--token` it attaches as the kernel's own user — the default approver of every
 * plan. `SHOAL_TOKEN` is deliberately not read: an agent's token in the environment must never
 * turn the person's approval into the agent's own.
 *
 * @module
 */

import { KernelClient, RpcError } from "../client/mod.ts";
import { cliArgs } from "../client/cli_args.ts";

/** Usage text. */
export const PLAN_USAGE = "usage: shoal plan list [--pending] | show REF | approve REF " +
  "[--effects K,K] | decline REF  [--socket PATH] [--session NAME] [--token TOKEN]";

type R = Record<string, unknown>;

/** Run `shoal plan …`; returns the exit status. */
export async function planMain(args: string[]): Promise<number> {
  const pos: string[] = [];
  let socket: string | undefined;
  let session = "default";
  let token: string | undefined;
  let pending = false;
  let effects: string[] = [];
  try {
    for (const { arg: a, flag, value } of cliArgs(args, (f) => new Error(`${f} needs a value`))) {
      if (flag === "--socket") socket = value();
      else if (flag === "--session") session = value();
      else if (flag === "--token") token = value();
      else if (flag === "--pending") pending = true;
      else if (flag === "--effects") effects = value().split(",").filter((s) => s !== "");
      else if (flag === "-h" || flag === "--help") {
        console.log(PLAN_USAGE);
        return 0;
      } else if (a.startsWith("-")) throw new Error(`unknown option ${a}`);
      else pos.push(a);
    }
    const [verb, ref] = pos;
    const needsRef = verb === "show" || verb === "approve" || verb === "decline";
    if (!verb || (needsRef && !ref) || (!needsRef && verb !== "list") || pos.length > 2) {
      throw new Error(verb ? `bad arguments for ${verb}` : "missing command");
    }
    const c = await KernelClient.connect({
      socket: socket ?? Deno.env.get("SHOAL_SOCKET") ?? undefined,
      socketSession: Deno.env.get("SHOAL_SESSION") || "default",
      attach: { session, ...(token ? { token } : {}), client: { kind: "shoal-plan" } },
    });
    try {
      if (verb === "list") {
        const rows = await c.call<R[]>("plan.list", pending ? { pending: true } : {});
        for (const r of rows) {
          const who = r.principal ? `\t${r.principal}` : "";
          console.log(`${r.plan_ref}\t${r.verdict}\t${r.reversibility}${who}\t${kinds(r)}`);
        }
        return 0;
      }
      if (verb === "show") {
        console.log(JSON.stringify(await c.call<R>("plan.get", { plan_ref: ref }), null, 2));
        return 0;
      }
      const r = await c.call<R>("cap.request", {
        plan_ref: ref,
        effects,
        decision: verb === "decline" ? "decline" : "approve",
      });
      console.log(`${r.grant}\t${r.plan_ref}`);
      if (r.grant === "approval_pending") {
        console.error(`not covered: ${(r.uncovered_effects as string[]).join(", ")}`);
        return 1;
      }
      return 0;
    } finally {
      c.close();
    }
  } catch (e) {
    if (e instanceof RpcError) {
      console.error(`shoal plan: ${e.message} (${e.code})`);
      return 1;
    }
    if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.ConnectionRefused) {
      console.error(`shoal plan: no kernel answers on its socket (${(e as Error).message})`);
      return 1;
    }
    console.error(`shoal plan: ${(e as Error).message}\n${PLAN_USAGE}`);
    return 2;
  }
}

function kinds(r: R): string {
  return ((r.effects as { kind: string }[]) ?? []).map((e) => e.kind).join(",");
}
