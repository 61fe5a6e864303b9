/**
 * Leash: effects, plans, policy, approvals, tokens and principals (protocol §3, §11, §17).
 *
 * * effects — {@link Effect}, derivation from an AST under a session's state
 *   ({@link deriveEffects}), reversibility ({@link Reversibility});
 * * policy — the TOML file ({@link parsePolicy}), reloaded on change ({@link PolicySource}),
 *   verdicts per effect and per plan ({@link CompiledPolicy}), the kernel's set of policies and
 *   who may approve what ({@link PolicySet});
 * * plans — refs bound to source, session, principal and a nonce ({@link PlanStore});
 * * tokens — `tokens.json` ({@link TokenStore}) and the one path rule ({@link tokenStorePath});
 * * the session side — {@link SessionLeash} checks each exec where the evaluator lives.
 *
 * The kernel only routes to these; it owns no policy logic.
 *
 * ```ts
 * import { PolicySet, parsePolicy } from "./lib/leash/mod.ts";
 * const set = new PolicySet(parsePolicy('[principal."agent:x"]\nfs.read = ["/srv/**"]'), "uid:1000", "/home/me");
 * set.compiled("agent:x")!.effectVerdict({ kind: "fs_read", paths: ["/srv/a"] }); // "allow"
 * ```
 *
 * @module
 */

export {
  canonicalEffects,
  covers,
  type Effect,
  EFFECT_KINDS,
  type EffectKind,
  effectKinds,
  effectsKey,
  isEffectKind,
  normalizeKind,
  parseEffects,
  requestedKinds,
} from "./effects.ts";
export {
  effectReversibility,
  isReversibility,
  type Reversibility,
  reversibilityOf,
  worse,
} from "./reversibility.ts";
export {
  type AutoApply,
  CompiledPolicy,
  emptySpec,
  type JournalRead,
  normalizePath,
  type OpaqueRule,
  pathGlob,
  permissiveSpec,
  type PolicySpec,
  type Verdict,
} from "./policy.ts";
export { NO_POLICY_FILE, type PolicyFile, PolicySet } from "./policy_set.ts";
export { parsePolicy, PolicyError } from "./policy_toml.ts";
export {
  PolicyLoadError,
  type PolicyReload,
  PolicySource,
  type PolicySourceOptions,
} from "./policy_source.ts";
export {
  type Decision,
  isApproved,
  MAX_PLAN_BYTES_PER_PRINCIPAL,
  MAX_PLANS,
  MAX_PLANS_PER_PRINCIPAL,
  type Plan,
  PlanQuotaError,
  PlanStore,
} from "./plans.ts";
export {
  type ApplyCheck,
  applyCheck,
  type ApprovalOutcome,
  coverage,
  currentVerdict,
  decide,
} from "./approvals.ts";
export {
  type InvalidReason,
  TOKEN_LIMITS,
  type TokenRecord,
  TokenStore,
  TokenStoreError,
} from "./tokens.ts";
export { localPrincipal, policyPath, tokenStorePath } from "./paths.ts";
export { type Derivation, deriveEffects, MAX_CALL_DEPTH, MAX_NODES } from "./derive.ts";
export { type DeriveHost, evaluatorHost } from "./derive_host.ts";
export { type Authority, type Checked, type LeashInit, SessionLeash } from "./gate.ts";
export { FileVersion } from "./file_watch.ts";
