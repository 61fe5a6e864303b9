/**
 * Isolation benchmark (issue 16); every ratio is against a baseline measured in the same run.
 *
 *   deno run -A --unstable-worker-options bench/isolation.ts
 *
 * 1. `exec "1 + 2"` round trip with sessions as processes (by the exec lane, and through the
 *    kernel alone) vs a bare echo server with the same
 *    framing (target ≤ 4×; the fastest of several echo servers, see `execVsEcho`), alternated in rounds so both see the same load; and, in the same
 *    rounds, the floor of its four hops (`_hop_floor.ts`: the kernel's transport, no work) vs
 *    the echo server's two, and the kernel vs that floor (what the kernel itself adds); and the
 *    floor again with a Unix socket instead of pipes between relay and child; and the floor of
 *    the two-hop design (`_hop_floor.ts --direct`: a process that evaluates, elides and
 *    renders each `src` itself, as if the client spoke to its session with no kernel between).
 * 2. Session start: attach + first `exec "1 + 2"` of a new session name (a process starts) vs
 *    the same on an existing session.
 * 3. Containment under load: `exec "1 + 2"` in one session while another grows to its heap
 *    limit and dies, vs the same with the other session idle.
 * 4. Confinement: `^true` in a confined session (Landlock, socket filter, bubblewrap) vs an
 *    unconfined one (target ≤ 1.2×), two kernels in this process alternated in rounds; and
 *    the start of a confined session vs an unconfined one.
 *
 * @module
 */

import { join } from "node:path";
import { KernelClient } from "../lib/client/client.ts";
import { spawnKernel } from "./_kernel.ts";
import { echoLine, execVsEcho, line, med, startEchoServers, times } from "./_kernel_bench.ts";
import { startDirectFloor, startHopFloor } from "./_hop_floor.ts";
import { startKernel } from "../lib/kernel/server.ts";
import { emptySandboxSpec } from "../lib/exec/sandbox_spec.ts";
import { hostSandbox } from "../lib/exec/sandbox.ts";

async function main(): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "shoal-bench-isolation-" });
  const kernelPath = join(dir, "k.sock");
  const echoes = await startEchoServers(dir);
  const floorPath = join(dir, "floor.sock");
  const floorRelay = await startHopFloor(floorPath);
  const socketFloorPath = join(dir, "floor-socket.sock");
  const socketFloorRelay = await startHopFloor(socketFloorPath, true);
  const directPath = join(dir, "direct.sock");
  const directFloor = await startDirectFloor(directPath);
  const kernel = await spawnKernel(
    [
      "--socket",
      kernelPath,
      "--ephemeral",
      "--no-journal",
      "--session-memory",
      "256",
    ],
    dir,
  );
  try {
    // 1. Round trip.
    const k = await KernelClient.connect({ socket: kernelPath, attach: { session: "bench" } });
    const f = await KernelClient.connect({ socket: floorPath });
    const fs = await KernelClient.connect({ socket: socketFloorPath });
    const fd = await KernelClient.connect({ socket: directPath });
    // The same session through the kernel alone (four hops): what the exec lane saves.
    const viaKernel = await KernelClient.connect({
      socket: kernelPath,
      attach: { session: "bench" },
      lane: false,
    });
    const {
      echoMs,
      echoAll,
      execMs,
      floorMs: [floorMs, socketFloorMs, directMs, kernelRouteMs],
    } = await execVsEcho(echoes.clients, k, [f, fs, fd, viaKernel]);
    viaKernel.close();
    f.close();
    fs.close();
    fd.close();
    console.log(echoLine(echoMs, echoAll));
    line("exec `1 + 2` (session process, exec lane) vs echo", execMs, echoMs, 4);
    console.log(
      `  the same through the kernel (no lane, four hops) ${(kernelRouteMs * 1000).toFixed(0)} ` +
        `µs: ${(kernelRouteMs / echoMs).toFixed(2)}× echo; ${k.laneExecs} of the lane client's ` +
        `execs went by the lane`,
    );
    console.log(
      `  four-hop floor (relay, no work) ${(floorMs * 1000).toFixed(0)} µs: ` +
        `${(floorMs / echoMs).toFixed(2)}× echo; the kernel is ${(execMs / floorMs).toFixed(2)}× ` +
        `the floor`,
    );
    console.log(
      `  the same floor with a Unix socket between relay and child instead of pipes ` +
        `${(socketFloorMs * 1000).toFixed(0)} µs: ${(socketFloorMs / echoMs).toFixed(2)}× echo ` +
        `(the link's transport is not what costs: the hops are)`,
    );
    console.log(
      `  two hops (client ↔ a process that evaluates, elides and renders; no kernel) ` +
        `${(directMs * 1000).toFixed(0)} µs: ${(directMs / echoMs).toFixed(2)}× echo (what a ` +
        `client speaking to its session directly would start from)`,
    );

    // 2. Session start.
    const fresh: number[] = [];
    const warm: number[] = [];
    for (let i = 0; i < 8; i++) {
      let t = performance.now();
      const c = await KernelClient.connect({ socket: kernelPath, attach: { session: `s${i}` } });
      await c.call("exec", { src: "1 + 2" });
      fresh.push(performance.now() - t);
      c.close();
      t = performance.now();
      const w = await KernelClient.connect({ socket: kernelPath, attach: { session: "bench" } });
      await w.call("exec", { src: "1 + 2" });
      warm.push(performance.now() - t);
      w.close();
    }
    console.log(
      `session start (attach + first exec): new session ${med(fresh).toFixed(1)} ms, ` +
        `existing session ${med(warm).toFixed(1)} ms`,
    );

    // 3. Containment under load.
    const idle = await times(300, () => k.call("exec", { src: "1 + 2" }));
    const hog = await KernelClient.connect({ socket: kernelPath, attach: { session: "hog" } });
    const hogDone = hog.call("exec", {
      src: 'let xs = (0..40000000).map(x => {a: x, b: "s"}); xs.len()',
    }).catch((err) => err);
    let finished = false;
    void hogDone.then(() => (finished = true));
    const busy: number[] = [];
    while (!finished) busy.push(...await times(20, () => k.call("exec", { src: "1 + 2" })));
    const err = await hogDone;
    console.log(
      `a neighbour hit its heap limit: ${String((err as Error)?.message ?? err).slice(0, 60)}…`,
    );
    const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.99)];
    console.log(
      `exec "1 + 2" while a neighbour grows to 256 MiB and dies: median ` +
        `${(med(busy) * 1000).toFixed(0)} µs, p99 ${(p99(busy) * 1000).toFixed(0)} µs ` +
        `(${busy.length} execs) vs idle median ${(med(idle) * 1000).toFixed(0)} µs, ` +
        `p99 ${(p99(idle) * 1000).toFixed(0)} µs: ${(med(busy) / med(idle)).toFixed(2)}×`,
    );
    hog.close();
    k.close();
  } finally {
    kernel.kill("SIGTERM");
    await kernel.status;
    await echoes.stop();
    for (const relay of [floorRelay, socketFloorRelay, directFloor]) {
      relay.kill("SIGTERM");
      await relay.status;
    }
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** 4. A confined session's `^true` and start against an unconfined one's, in one run. */
async function confinement(): Promise<void> {
  const host = hostSandbox();
  if (host.landlockAbi < 4 || !host.seccomp) {
    console.log("confinement: not measured (no Landlock ABI ≥ 4 or socket filter here)");
    return;
  }
  const dir = await Deno.makeTempDir({ prefix: "shoal-bench-confine-" });
  const spec = { ...emptySandboxSpec(), fs_read: [`${dir}/**`], fs_write: [`${dir}/**`] };
  const start = (name: string, confined: boolean) =>
    startKernel({
      socket: join(dir, `${name}.sock`),
      ephemeral: true,
      journal: false,
      cwd: dir,
      confinement: () => (confined ? spec : null),
    });
  const open = await start("open", false);
  const shut = await start("shut", true);
  try {
    const attach = (path: string, session: string) =>
      KernelClient.connect({ socket: path, attach: { session } });
    const o = await attach(open.path, "b");
    const c = await attach(shut.path, "b");
    const run = (k: KernelClient) => () => k.call("exec", { src: "^true" });
    await times(100, run(o));
    await times(100, run(c));
    const openT: number[] = [];
    const shutT: number[] = [];
    for (let r = 0; r < 10; r++) {
      openT.push(...await times(50, run(o)));
      shutT.push(...await times(50, run(c)));
    }
    line("exec `^true` confined vs unconfined", med(shutT), med(openT), 1.2);
    const startOpen: number[] = [];
    const startShut: number[] = [];
    for (let i = 0; i < 6; i++) {
      for (const [path, out] of [[open.path, startOpen], [shut.path, startShut]] as const) {
        const t = performance.now();
        const x = await attach(path, `s${i}`);
        await x.call("exec", { src: "1 + 2" });
        out.push(performance.now() - t);
        x.close();
      }
    }
    console.log(
      `session start (attach + first exec): confined ${med(startShut).toFixed(1)} ms vs ` +
        `unconfined ${med(startOpen).toFixed(1)} ms: ${
          (med(startShut) / med(startOpen)).toFixed(2)
        }×`,
    );
    o.close();
    c.close();
  } finally {
    await open.close();
    await shut.close();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) {
  await main();
  await confinement();
}
