/**
 * Reef: scoped, locked tool resolution (subsystems §6, language §18). Resolution, not
 * activation: nothing changes when the cwd does, the session PATH is never touched; only a
 * constrained spawn's child gets an absolute `argv[0]` and a synthesized PATH.
 *
 * ```ts
 * import { resolveCommand } from "./lib/reef/mod.ts";
 * const r = await resolveCommand("node", { cwd, env, policy: "script" });
 * // r.path = the locked, hash-verified node; r.childPath = "<view>/bin:<PATH>"
 * ```
 *
 * Everything here takes the session's cwd and environment explicitly (no process state) and
 * reports failures as {@link ReefError} with a stable code. The evaluator's entry point is
 * lib/eval/resolve_head.ts.
 *
 * @module
 */

export { type ReefCode, ReefError } from "./errors.ts";
export {
  type Constraint,
  parseConstraint,
  parseVersion,
  renderConstraint,
  satisfies,
  type Version,
} from "./version.ts";
export {
  type Manifest,
  type ManifestProblem,
  overrideManifest,
  type ProviderName,
  PROVIDERS,
  type RunnerSpec,
  type ScopeKind,
  type ToolReq,
} from "./manifest.ts";
export {
  discoverScopes,
  forgetManifest,
  LOCK_FILE,
  MANIFEST_FILES,
  type ScopeChain,
  userManifestPath,
  withLayers,
} from "./scopes.ts";
export { chainFor, type ChainRow, decide, type Decision, mentionedTools } from "./decide.ts";
export {
  type FileWriter,
  type LockEntry,
  type LockRead,
  readLock,
  renderLock,
  writeAtomic,
} from "./lock.ts";
export { cachedDigest, fileDigest } from "./digest.ts";
export { PROBE_DEADLINE_MS, probeVersion, type Spawner } from "./probe.ts";
export { allCandidates, type Candidate, PROVIDER_ORDER } from "./providers.ts";
export { childPath, ensureView, viewsRoot } from "./view.ts";
export { DEFAULT_RUNNERS, parseShebang, runnerTable, SELF } from "./runners.ts";
export {
  type Binding,
  chainOf,
  lockEntries,
  type Policy,
  type ReefContext,
  resolveTool,
} from "./resolve.ts";
export { type CommandResolution, resolveCommand } from "./command.ts";
export {
  ambientRow,
  bindingRows,
  type Cell,
  doctorRows,
  type Row,
  snapshot,
  type SnapshotBinding,
  whichAllRows,
  whichRow,
} from "./report.ts";
export { addTool, fetchTool, lockAll, parseSpec, setTool, SpecError } from "./maintain.ts";
