/**
 * Optional stronger kill scope: one cgroup v2 per child, emptied with `cgroup.kill`
 * (Linux ≥ 5.14). Unlike a process-group kill it also takes descendants that called
 * setsid. Used only when asked for (`killScope: "cgroup"`) and when the cgroup v2 tree
 * under our own cgroup is writable; otherwise callers fall back to the process group.
 *
 * @module
 */

import { join } from "node:path";
import process from "node:process";
import { signalNumber } from "./signals.ts";

let base: string | null | undefined; // undefined: not probed; null: unavailable
let counter = 0;
/** Cgroups left populated by background processes; removed once they empty. */
const leftovers = new Set<string>();

function sweepLeftovers(): void {
  for (const path of leftovers) {
    try {
      Deno.removeSync(path);
      leftovers.delete(path);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) leftovers.delete(path);
    }
  }
}

/** The cgroup v2 directory of this process, or null (read from /proc/self). */
function ownCgroupDir(): string | null {
  const mountinfo = Deno.readTextFileSync("/proc/self/mountinfo");
  let mount: string | null = null;
  for (const line of mountinfo.split("\n")) {
    const sep = line.indexOf(" - ");
    if (sep < 0) continue;
    if (line.slice(sep + 3).split(" ")[0] !== "cgroup2") continue;
    mount = unescapeMount(line.slice(0, sep).split(" ")[4]);
    break;
  }
  if (mount === null) return null;
  const own = Deno.readTextFileSync("/proc/self/cgroup").split("\n").find((l) =>
    l.startsWith("0::")
  );
  if (own === undefined) return null;
  return join(mount, own.slice(3).trim());
}

/** mountinfo escapes space, tab, newline and backslash as octal. */
function unescapeMount(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, o) => String.fromCharCode(parseInt(o, 8)));
}

/**
 * True when per-child cgroups with `cgroup.kill` can be created here. Probed once (by
 * creating and removing one cgroup); never throws.
 */
export function cgroupKillAvailable(): boolean {
  if (base !== undefined) return base !== null;
  base = null;
  try {
    const dir = ownCgroupDir();
    if (dir === null) return false;
    const probe = join(dir, `shoal-exec-probe-${Deno.pid}`);
    Deno.mkdirSync(probe);
    try {
      Deno.statSync(join(probe, "cgroup.kill"));
      base = dir;
    } finally {
      Deno.removeSync(probe);
    }
  } catch {
    base = null;
  }
  return base !== null;
}

/**
 * SIGKILL every process in this process's own cgroup except itself and members of the process
 * groups in `live` — the strays that commands which have ended left behind, setsid escapers
 * among them. Only for a process that the kernel placed alone in a cgroup of its own (a
 * session process: `dedicated` is that cgroup's path, checked against /proc/self/cgroup);
 * anywhere else it does nothing. Returns the number of processes signalled.
 */
export function killStrays(dedicated: string, live: ReadonlySet<number>): number {
  // Checked once per process: reading mountinfo each exec cost ~150 µs (measured), and a
  // process the kernel placed in its own cgroup is never moved out of it.
  if (confirmedOwn !== dedicated) {
    let dir: string | null;
    try {
      dir = ownCgroupDir();
    } catch {
      return 0;
    }
    if (dir === null || dir !== dedicated) return 0;
    confirmedOwn = dir;
  }
  let pids: string[];
  try {
    pids = readProcs(confirmedOwn).split("\n");
  } catch {
    return 0;
  }
  let killed = 0;
  for (const p of pids) {
    const pid = Number(p);
    if (!Number.isSafeInteger(pid) || pid <= 1 || pid === Deno.pid) continue;
    const pgid = processGroupOf(pid);
    if (pgid === null || live.has(pgid)) continue;
    try {
      process.kill(pid, 9);
      killed++;
    } catch { /* already gone */ }
  }
  return killed;
}

/** The dedicated cgroup `killStrays` has confirmed this process is in. */
let confirmedOwn: string | null = null;

/** Its `cgroup.procs`, kept open: a re-read from the start is 3 syscalls, not 6 (every exec). */
let procsFile: { dir: string; file: Deno.FsFile } | null = null;
const procsChunk = new Uint8Array(4096);
const procsText = new TextDecoder();

/** The pids in `dir`'s cgroup.procs, one a line (throws when it cannot be read). */
function readProcs(dir: string): string {
  if (procsFile?.dir !== dir) {
    procsFile?.file.close();
    procsFile = null;
    procsFile = { dir, file: Deno.openSync(join(dir, "cgroup.procs")) };
  }
  const f = procsFile.file;
  try {
    f.seekSync(0, Deno.SeekMode.Start);
    let text = "";
    for (let n = f.readSync(procsChunk); n !== null && n > 0; n = f.readSync(procsChunk)) {
      text += procsText.decode(procsChunk.subarray(0, n), { stream: true });
    }
    return text + procsText.decode();
  } catch (e) {
    procsFile = null; // opened afresh next time
    f.close();
    throw e;
  }
}

/** The process group of `pid` from /proc (field 5 of stat), or null when it is gone. */
function processGroupOf(pid: number): number | null {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    // comm may hold spaces and parentheses: the fields start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[2]);
  } catch {
    return null;
  }
}

/** One child's cgroup. */
export class Cgroup {
  private constructor(readonly path: string) {}

  /**
   * Create a fresh cgroup under this process's own (`prefix` names it: `shoal-exec` for a
   * command, `shoal-session` for a kernel's session process), or null when cgroups are
   * unavailable.
   */
  static create(prefix = "shoal-exec"): Cgroup | null {
    if (!cgroupKillAvailable()) return null;
    sweepLeftovers();
    const path = join(base!, `${prefix}-${Deno.pid}-${++counter}`);
    try {
      Deno.mkdirSync(path);
      return new Cgroup(path);
    } catch {
      return null;
    }
  }

  /** The file a process writes its pid to in order to join. */
  get procsFile(): string {
    return join(this.path, "cgroup.procs");
  }

  /** Move the running process `pid` into this cgroup; false when it cannot be moved. */
  adopt(pid: number): boolean {
    try {
      Deno.writeTextFileSync(this.procsFile, String(pid));
      return true;
    } catch {
      return false;
    }
  }

  /** Pids currently in the cgroup. */
  pids(): number[] {
    try {
      return Deno.readTextFileSync(this.procsFile).split("\n").filter((l) => l !== "").map(
        Number,
      );
    } catch {
      return [];
    }
  }

  /** True while any process is in the cgroup. */
  populated(): boolean {
    try {
      return /^populated 1$/m.test(Deno.readTextFileSync(join(this.path, "cgroup.events")));
    } catch {
      return false;
    }
  }

  /** Send `sig` to every member (including those that left the process group). */
  signalAll(sig: string): void {
    const n = signalNumber(sig);
    if (n === null) throw new RangeError(`unknown signal ${sig}`);
    for (const pid of this.pids()) {
      try {
        process.kill(pid, n);
      } catch {
        // already gone
      }
    }
  }

  /**
   * Bound the memory of every member together (`memory.max`, bytes). Only where a memory
   * controller is delegated to this cgroup (its parent enables `memory` in
   * `cgroup.subtree_control`); false otherwise, and nothing is bounded here.
   */
  limitMemory(bytes: number): boolean {
    try {
      Deno.writeTextFileSync(join(this.path, "memory.max"), String(Math.floor(bytes)));
      return true;
    } catch {
      return false;
    }
  }

  /** SIGKILL every member at once. */
  kill(): void {
    try {
      Deno.writeTextFileSync(join(this.path, "cgroup.kill"), "1");
    } catch {
      // removed already
    }
  }

  /**
   * Remove the cgroup if it is empty. When background members remain it is kept and
   * removed by a later {@link Cgroup.create} once they are gone; returns false then.
   */
  remove(): boolean {
    try {
      Deno.removeSync(this.path);
      return true;
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return true;
      leftovers.add(this.path);
      return false;
    }
  }
}
