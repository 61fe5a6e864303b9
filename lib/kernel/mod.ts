/**
 * The Shoal kernel: a Unix-socket JSON-RPC server whose named sessions each run their
 * evaluator in a Worker (protocol §1–§10, §13; architecture "sessions never share a thread
 * with the kernel").
 *
 * ```ts
 * import { startKernel } from "./lib/kernel/mod.ts";
 * const k = await startKernel({ socket: "/tmp/me/k.sock", ephemeral: true });
 * // … clients connect with lib/client's KernelClient …
 * await k.close();
 * ```
 *
 * `shoal kernel` (lib/kernel/cli.ts) wraps this with socket discovery, the ready line and
 * signal handling.
 *
 * @module
 */

export { type KernelHandle, type KernelOptions, startKernel } from "./server.ts";
export { defaultStateDir, KERNEL_USAGE, kernelMain, parseKernelArgs } from "./cli.ts";
export { bindKernelSocket, ListenError } from "./listen.ts";
export { type Attachment, kernelMethods, type KernelServices } from "./methods/mod.ts";
export { EventBus } from "./event_bus.ts";
export { MAX_FINISHED_TASKS, Task, TaskRegistry } from "./tasks.ts";
export { availableTier, landlockAbi } from "./tier.ts";
