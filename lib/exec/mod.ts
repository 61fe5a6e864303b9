/**
 * The process layer: starting external programs for the evaluator and the kernel.
 *
 * It takes plain data (argv, an absolute cwd, a complete env) and returns plain data
 * (status/signal, capped output bytes, spill info). Every child leads its own process
 * group (and session, while we have a terminal; see child.ts), never runs through a shell
 * unless asked for (`["sh", "-c", src]`), and never changes this process's cwd or env.
 *
 * ```ts
 * import { closeInheritedFds, spawnCapture } from "./lib/exec/mod.ts";
 * closeInheritedFds(); // once, at program start
 * const r = await spawnCapture({ argv: ["ls", "-l"], cwd: "/tmp", env: { PATH: "/usr/bin:/bin" } });
 * ```
 *
 * @module
 */

export { spawnCapture } from "./capture.ts";
export { spawnStreaming } from "./streaming.ts";
export { type SpawnBackend, spawnBackend } from "./child.ts";
export { ExecError, type ExecErrorDetails, type ExecErrorKind, isExecError } from "./errors.ts";
export { DEFAULT_PATH, isExecutableFile, which } from "./which.ts";
export { type FileIdentity, fileIdentity, sameIdentity } from "./statx.ts";
export { closeInheritedFds } from "./fd_hygiene.ts";
export { SIGNAL_MAX, SIGNAL_MIN, signalName, signalNumber, signalTable } from "./signals.ts";
export {
  groupAlive,
  type GroupMember,
  groupMembers,
  resume,
  signalGroup,
  type SignalSpec,
  suspend,
} from "./process_group.ts";
export { Cgroup, cgroupKillAvailable, killStrays } from "./cgroup.ts";
export {
  type SpillFactory,
  type SpillInfo,
  type SpillSink,
  tempFileSpill,
  type TempFileSpillOptions,
} from "./spill.ts";
export {
  type ArgvItem,
  type CaptureOptions,
  type CaptureResult,
  DEFAULT_CAPTURE_CAP,
  DEFAULT_GRACE_MS,
  DEFAULT_SPILL_MAX,
  type ExitInfo,
  type KillScope,
  type OutputTarget,
  type SpawnOptions,
  type StdinSpec,
  type StreamingChild,
  type StreamingOptions,
  type StreamingResult,
} from "./types.ts";
