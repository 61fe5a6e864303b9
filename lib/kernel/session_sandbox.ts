/**
 * The sandbox of one confined session (issue 16): the runtime's own needs (what a Deno session
 * process reads to start and run), the kernel's private places it must never see, and the
 * §11.6 report `session.attach` gives for the principal.
 *
 * @module
 */

import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  confinedArgv,
  type Enforcement,
  hostSandbox,
  planSandbox,
  type RuntimeGrant,
  type RuntimeNeeds,
  type SandboxPlan,
} from "../exec/sandbox.ts";
import { availableTier } from "./tier.ts";
import { type LoweredSpec, lowerSpec, type SandboxSpec } from "../exec/sandbox_spec.ts";

/** Where a kernel keeps what its sessions must not touch. */
export interface KernelPlaces {
  /** The state directory (journal, tokens, policy), the content store, the intake. */
  state: string[];
  /** The kernel's private run directory (cancel-slot files of every session). */
  runDir: string;
  /** The kernel's socket. */
  socket: string;
}

const SOURCES = new URL("../../", import.meta.url);

function realpath(p: string): string {
  try {
    return Deno.realPathSync(p);
  } catch {
    return p;
  }
}

/** deno's cache (modules, npm packages, emitted JS): read-only inside. */
function denoDir(): string | null {
  const env = (n: string) => Deno.env.get(n) || undefined;
  const d = env("DENO_DIR") ??
    (env("XDG_CACHE_HOME") ? join(env("XDG_CACHE_HOME")!, "deno") : undefined) ??
    (env("HOME") ? join(env("HOME")!, ".cache", "deno") : undefined);
  return d ?? null;
}

/** The default socket directories of discovery (protocol §2.1) for this user. */
function socketDirs(): string[] {
  const euid = Deno.uid() ?? 0;
  const dirs = [join("/tmp", `shoal-${euid}`)];
  const xdg = Deno.env.get("XDG_RUNTIME_DIR");
  if (xdg) dirs.push(join(xdg, "shoal"));
  const tmp = Deno.env.get("TMPDIR");
  if (tmp) dirs.push(join(tmp, `shoal-${euid}`));
  return [...new Set(dirs)];
}

/**
 * What a session process needs whatever its principal may touch, each with why. `slots` is its
 * cancel-slot file (shared with the kernel) and `own` its private directories (spills, trash):
 * read-write, and bound back into the hidden directories they live in.
 */
export function sessionRuntimeNeeds(
  places: KernelPlaces,
  slots: string | null,
  own: string[],
): RuntimeNeeds {
  const read: RuntimeGrant[] = [
    { path: realpath(Deno.execPath()), why: "the runtime binary" },
    { path: "/usr", why: "system programs, shared libraries (libc for FFI), time zones" },
    { path: "/lib", why: "shared libraries" },
    { path: "/lib64", why: "the dynamic loader" },
    { path: "/bin", why: "system programs" },
    { path: "/sbin", why: "system programs" },
    { path: "/etc/ld.so.cache", why: "the dynamic loader's cache" },
    { path: "/etc/localtime", why: "the local time zone" },
    { path: "/etc/passwd", why: "user names" },
    { path: "/etc/group", why: "group names" },
    { path: "/etc/nsswitch.conf", why: "name service order" },
    { path: "/proc", why: "process facts (own status, stray sweep)" },
    { path: "/sys/fs/cgroup", why: "the session's own cgroup" },
    { path: "/sys/devices/system/cpu", why: "the CPU count" },
    { path: "/dev/urandom", why: "randomness" },
    { path: "/dev/random", why: "randomness" },
    { path: "/dev/zero", why: "zero bytes" },
  ];
  if (SOURCES.protocol === "file:") {
    read.push({ path: realpath(fileURLToPath(SOURCES)), why: "Shoal's own modules" });
  }
  const dd = denoDir();
  if (dd !== null) read.push({ path: realpath(dd), why: "deno's module and npm caches" });
  const readWrite: RuntimeGrant[] = [
    { path: "/dev/null", why: "the null device" },
    { path: "/dev/tty", why: "terminals" },
    { path: "/dev/pts", why: "terminals (PTYs)" },
    { path: "/dev/ptmx", why: "opening PTYs" },
  ];
  if (slots !== null) readWrite.push({ path: slots, why: "the session's cancel flags" });
  for (const d of own) readWrite.push({ path: d, why: "the session's own spills and trash" });
  const keep = [...(slots === null ? [] : [slots]), ...own];
  const hide = [places.runDir, ...socketDirs(), ...places.state];
  return {
    read,
    readWrite,
    hide: [...new Set(hide.map(realpath))],
    // The kernel's own socket may sit in a directory the principal shares: mask the file.
    mask: [places.socket],
    keep,
  };
}

/** Lower `spec` and plan its session's confinement on this host. */

/** The confinement of one session: its plan, its report, how to start it. */
export class SessionConfinement {
  readonly plan: SandboxPlan;
  readonly lowered: LoweredSpec;

  /** Lower `spec` (`~` is the kernel's HOME) and plan it; throws `SandboxSpecError`. */
  constructor(
    readonly spec: SandboxSpec,
    places: KernelPlaces,
    slots: string | null,
    own: string[],
    home = Deno.env.get("HOME") ?? "/",
  ) {
    this.lowered = lowerSpec(spec, home);
    this.plan = planSandbox(this.lowered, sessionRuntimeNeeds(places, slots, own));
  }

  /** What the session's spawn gate checks (null: nothing pinned). */
  get pins(): { grants: string[]; writable: string[] } | null {
    const l = this.lowered;
    return l.pins.length === 0 ? null : { grants: l.pins, writable: [...l.write, ...l.delete] };
  }

  /** What is in force (§11.6). */
  get report(): Enforcement {
    return this.plan.report;
  }

  /** A hermetic spec with a dimension this host cannot enforce must not run at all. */
  get refused(): boolean {
    return this.spec.hermetic === true && this.plan.report.missing.length > 0;
  }

  /** True when the session starts confined (Landlock is there to install). */
  get confined(): boolean {
    return this.plan.launch !== null;
  }

  /** True when the start forks before the session runs: the cgroup is joined by the start. */
  get joinsCgroup(): boolean {
    return this.plan.bwrap !== null;
  }

  /** The session's argv started through its sandbox (unchanged when nothing can confine it). */
  wrap(argv: string[], cgroupProcs: string | null): string[] {
    return confinedArgv(this.plan, argv, cgroupProcs) ?? argv;
  }
}

/** The §11.6 enforcement fields of `session.attach` (`caps`) for a session. */
export interface SandboxCaps {
  enforced: boolean;
  tier: string | null;
  available_tier: string | null;
  filesystem_enforced: boolean;
  network_enforced: boolean;
  spawn_exec_enforced: boolean;
  kernel_socket_unreachable: boolean;
  landlock_abi: number;
  detail: string;
}

/**
 * What is in force for the session's principal on this host. Unconfined (the permissive
 * local human): nothing is enforced and no tier is active, whatever the host offers.
 */
export function sandboxCaps(conf: SessionConfinement | null): SandboxCaps {
  const host = hostSandbox();
  const available = availableTier();
  if (conf === null) {
    return {
      enforced: false,
      tier: null,
      available_tier: available,
      filesystem_enforced: false,
      network_enforced: false,
      spawn_exec_enforced: false,
      kernel_socket_unreachable: false,
      landlock_abi: host.landlockAbi,
      detail: "unconfined: this principal's policy restricts nothing the OS could enforce; " +
        "every effect runs with the kernel's own permissions",
    };
  }
  const r = conf.report;
  return {
    enforced: r.enforced,
    tier: r.active_tier,
    available_tier: available,
    filesystem_enforced: r.filesystem_enforced,
    network_enforced: r.network_enforced,
    spawn_exec_enforced: r.spawn_exec_enforced,
    kernel_socket_unreachable: r.kernel_socket_unreachable,
    landlock_abi: r.landlock_abi,
    detail: r.detail.join("; "),
  };
}
