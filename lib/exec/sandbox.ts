/**
 * Confining a whole process tree (issue 16): from a lowered {@link SandboxSpec} and the
 * runtime's own needs, the command that starts a program confined — bubblewrap for a private
 * mount namespace that masks the kernel's private directories (when it works here), then the
 * Landlock launcher (`sandbox_launcher.ts`), then the program — and a report that says, dimension
 * by dimension, exactly what is in force (protocol §11.6).
 *
 * Layers of one confined process:
 * - Landlock: filesystem roots (read: read+run; write: everything; delete: remove), TCP
 *   connect/bind ports, abstract Unix sockets and signals scoped to the domain;
 * - seccomp (`seccomp.ts`): IP sockets plain TCP only (or none), no Unix sockets at all (a
 *   pathname `connect` is not something Landlock ABI 7 sees), no io_uring;
 * - bubblewrap: the state directory, the kernel's run directory and the socket directories
 *   are empty tmpfs inside (only this session's own files are bound back), so even a principal
 *   whose roots include them cannot read the journal or write another session's files;
 *   all capabilities dropped when the kernel runs as root.
 *
 * @module
 */

import { basename, dirname } from "node:path";
import { DELETE_RIGHTS, FS, fsRights, landlockAbi, READ_RIGHTS } from "./landlock.ts";
import { seccompAvailable } from "./seccomp.ts";
import type { LaunchPlan } from "./sandbox_launcher.ts";
import { beneath, exists, type LoweredSpec } from "./sandbox_spec.ts";

/** A path the runtime itself needs, and why (reported in `detail`). */
export interface RuntimeGrant {
  path: string;
  why: string;
}

/** What the confined program needs regardless of the principal's grants. */
export interface RuntimeNeeds {
  /** Read (and run) beneath these. */
  read: RuntimeGrant[];
  /** Read and write these files (and nothing else beneath them). */
  readWrite: RuntimeGrant[];
  /** Directories masked by an empty tmpfs (the program must not see them at all). */
  hide: string[];
  /** Files masked by an empty read-only file (a socket among them). */
  mask: string[];
  /** Files inside hidden directories bound back (the program's own). */
  keep: string[];
}

/** What this host can enforce. */
export interface HostSandbox {
  landlockAbi: number;
  seccomp: boolean;
  /** bubblewrap's path when it works here, else null. */
  bwrap: string | null;
}

let hostCache: HostSandbox | undefined;

/** Probe once: Landlock's ABI, a seccomp filter for this arch, a working bubblewrap. */
export function hostSandbox(): HostSandbox {
  if (hostCache !== undefined) return hostCache;
  return hostCache = {
    landlockAbi: landlockAbi(),
    seccomp: seccompAvailable(),
    bwrap: probeBwrap(),
  };
}

function probeBwrap(): string | null {
  for (const p of ["/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap"]) {
    try {
      const r = new Deno.Command(p, {
        args: [...bwrapBase(), "--", "/bin/true"],
        stdin: "null",
        stdout: "null",
        stderr: "null",
      }).outputSync();
      if (r.success) return p;
    } catch { /* not there, or not usable */ }
  }
  return null;
}

/** bubblewrap's flags before the masks: the whole root as it is (devices too: `--bind` would mount it nodev), capabilities dropped. */
function bwrapBase(): string[] {
  const args = ["--dev-bind", "/", "/"];
  // As root bubblewrap keeps every capability unless told (as a user it runs in a user
  // namespace and keeps none): a confined root must not load modules or reboot.
  if (Deno.uid() === 0) args.push("--cap-drop", "ALL");
  return args;
}

/** §11.6 enforcement fields, exactly what is in force for one principal here. */
export interface Enforcement {
  /** True only when every dimension this principal has is enforced as granted. */
  enforced: boolean;
  /** The tier active for this principal ("A" under Landlock, null when unconfined). */
  active_tier: string | null;
  filesystem_enforced: boolean;
  network_enforced: boolean;
  spawn_exec_enforced: boolean;
  /** The kernel's socket (and every other Unix socket) unreachable from the session. */
  kernel_socket_unreachable: boolean;
  landlock_abi: number;
  /** One sentence per fact a reviewer needs: what is granted, widened, missing. */
  detail: string[];
  /** Dimensions the spec needs that cannot be enforced here (hermetic refuses these). */
  missing: string[];
}

/** How to start a program confined, and what that enforces. */
export interface SandboxPlan {
  /** Null when nothing can be installed here (Landlock unavailable): the caller decides. */
  launch: LaunchPlan | null;
  /** bubblewrap argv up to (not including) the program, or null without a usable bwrap. */
  bwrap: string[] | null;
  report: Enforcement;
}

function rule(path: string, rights: bigint): { path: string; rights: string } {
  return { path, rights: rights.toString() };
}

/** Plan the confinement of one principal's sessions on this host. */
export function planSandbox(
  spec: LoweredSpec,
  needs: RuntimeNeeds,
  host: HostSandbox = hostSandbox(),
): SandboxPlan {
  const detail: string[] = [];
  const missing: string[] = [];
  const abi = host.landlockAbi;
  const landlock = abi >= 1;
  const all = landlock ? fsRights(abi) : 0n;

  // ---- filesystem
  let fs = landlock;
  if (!landlock) {
    missing.push("filesystem");
    detail.push("Landlock is not available on this host: nothing confines the filesystem");
  } else {
    detail.push(
      `filesystem (Landlock ABI ${abi}): read ${list(spec.read)}; write ${list(spec.write)}; ` +
        `delete ${list(spec.delete)}`,
    );
    detail.push(
      "runtime grants: read " + needs.read.map((g) => `${g.path} (${g.why})`).join(", ") +
        "; read-write " + needs.readWrite.map((g) => `${g.path} (${g.why})`).join(", "),
    );
  }
  if (spec.widened.length > 0) {
    fs = false;
    missing.push("filesystem");
    detail.push(
      `widened: ${list(spec.widened)} grant their whole directory at the OS level ` +
        "(Landlock rules name directories and files, not patterns)",
    );
  }
  if (spec.dropped.length > 0) {
    detail.push(`not lowered (no existing absolute root; nothing granted): ${list(spec.dropped)}`);
  }
  const roots = [...spec.read, ...spec.write, ...spec.delete];
  const exposed = needs.hide.filter((h) => roots.some((r) => beneath(h, r) || beneath(r, h)));
  if (host.bwrap === null) {
    if (exposed.length > 0) {
      fs = false;
      missing.push("filesystem");
      detail.push(
        `bubblewrap is not usable here, so ${list(exposed)} (the kernel's private state) ` +
          "stay reachable through the principal's roots",
      );
    }
  } else {
    detail.push(`hidden in a private mount namespace: ${list([...needs.hide, ...needs.mask])}`);
  }

  // ---- network
  const tcp = landlock && abi >= 4;
  let net = tcp && host.seccomp;
  const n = spec.net;
  if (!tcp && n.mode !== "open") {
    missing.push("network");
    detail.push(`Landlock ABI ${abi} cannot restrict TCP (ABI 4 can)`);
  } else if (!host.seccomp) {
    missing.push("network");
    detail.push(`no socket filter for ${Deno.build.arch}: UDP and raw sockets are not restricted`);
  }
  if (n.mode === "none") detail.push("network: no IP sockets at all");
  else if (n.mode === "open") detail.push("network: every TCP connect and listen granted");
  else {
    detail.push(
      `network: TCP connect to ${n.connect === null ? "any port" : ports(n.connect)}, ` +
        `listen on ${n.bind === null ? "any port" : ports(n.bind)}; UDP and raw IP refused`,
    );
  }
  if (n.hostWidened.length > 0) {
    net = false;
    missing.push("network");
    detail.push(
      `host grants ${list(n.hostWidened)} are enforced by port only: any host can be reached ` +
        "on a granted port (the OS rules name ports, not hosts)",
    );
  }

  // ---- kernel socket
  const socketSafe = host.seccomp && landlock;
  if (!socketSafe) {
    missing.push("kernel_socket");
    detail.push("Unix sockets are not filtered here: the session could reach the kernel socket");
  } else detail.push("Unix sockets: none can be created (the kernel socket is unreachable)");

  // ---- privileges: as root only bubblewrap drops the capabilities Landlock does not cover
  // (module loading, raw devices, reboot…).
  if (Deno.uid() === 0 && host.bwrap === null && landlock) {
    fs = false;
    missing.push("privileges");
    detail.push(
      "the kernel runs as root and bubblewrap is not usable here: the session keeps " +
        "root's capabilities",
    );
  }

  // ---- spawns: children inherit the domain; pins gate the session's own spawns.
  let spawn = landlock;
  if (spec.pins.length > 0) {
    detail.push(
      `spawns pinned to ${list(spec.pins)}: checked (resolved path, BLAKE3 of the file) right ` +
        "before each spawn — a swap between the check and the exec is not seen (TOCTOU); " +
        "write roots cannot execute, so the principal cannot plant a binary; programs started " +
        "by a child (a shell's commands) are not pinned",
    );
  }
  if (!landlock) spawn = false;

  const launch: LaunchPlan | null = landlock
    ? {
      paths: [
        ...needs.read.map((g) => rule(g.path, READ_RIGHTS)),
        ...needs.readWrite.map((g) => rule(g.path, READ_RIGHTS | (all & ~READ_RIGHTS))),
        ...spec.read.map((p) => rule(p, READ_RIGHTS)),
        // Pinned spawns: what the principal can write it cannot execute (W^X).
        ...spec.write.map((p) => rule(p, spec.pins.length > 0 ? all & ~FS.EXECUTE : all)),
        ...spec.delete.map((p) => rule(p, DELETE_RIGHTS)),
      ],
      tcp: tcp && n.mode !== "open" ? { connect: n.connect, bind: n.bind } : null,
      sockets: !host.seccomp
        ? null
        : n.mode === "none"
        ? "none"
        : n.mode === "open"
        ? "any"
        : "tcp",
      scope: true,
    }
    : null;
  // A directory beneath another hidden one is hidden with it (no mount point shows inside).
  const hide = needs.hide.filter((d) =>
    exists(d) && !needs.hide.some((o) => o !== d && beneath(d, o))
  );
  const bwrap = host.bwrap === null || launch === null ? null : [
    host.bwrap,
    ...bwrapBase(),
    ...hide.flatMap((d) => ["--tmpfs", d]),
    ...needs.mask.flatMap((f) => exists(f) ? ["--ro-bind", "/dev/null", f] : []),
    ...needs.keep.flatMap((f) => exists(f) ? ["--bind", f, f] : []),
    // Read-only once the session's own files are bound in: nothing can be left there.
    ...hide.flatMap((d) => ["--remount-ro", d]),
    "--",
  ];
  const enforced = fs && net && spawn && socketSafe;
  return {
    launch,
    bwrap,
    report: {
      enforced,
      active_tier: landlock ? "A" : null,
      filesystem_enforced: fs,
      network_enforced: net,
      spawn_exec_enforced: spawn,
      kernel_socket_unreachable: socketSafe,
      landlock_abi: abi,
      detail,
      missing: [...new Set(missing)],
    },
  };
}

function list(xs: readonly string[]): string {
  return xs.length === 0 ? "nothing" : xs.join(", ");
}

function ports(ps: readonly number[]): string {
  return ps.length === 0 ? "no port" : ps.length > 8 ? `${ps.length} ports` : ps.join(", ");
}

/** The parent directories of `paths` (for hiding the directories a file lives in). */
export function parentsOf(paths: readonly string[]): string[] {
  return [...new Set(paths.map((p) => dirname(p)))];
}

const LAUNCHER = new URL("./sandbox_launcher.ts", import.meta.url);

/** The launcher's argv up to (not including) the program: `shoal __sandbox PLAN --`. */
function launcherArgv(launch: LaunchPlan): string[] {
  const exe = Deno.execPath();
  const plan = JSON.stringify(launch);
  if (!/^deno(\.exe)?$/.test(basename(exe))) return [exe, "__sandbox", plan, "--"];
  return [exe, "run", "-A", "-q", "--no-prompt", LAUNCHER.href, plan, "--"];
}

/**
 * The argv that starts `program` confined as `plan` says: [sh joining `cgroupProcs` →]
 * [bubblewrap →] launcher → program. bubblewrap forks, so a cgroup must be joined before it
 * starts (a shell's `echo $$ > cgroup.procs; exec …`); without bubblewrap the launcher execs
 * in place and the caller may move the pid itself. Null when `plan` cannot be launched.
 */
export function confinedArgv(
  plan: SandboxPlan,
  program: string[],
  cgroupProcs: string | null,
): string[] | null {
  if (plan.launch === null) return null;
  const inner = [...launcherArgv(plan.launch), ...program];
  if (plan.bwrap === null) return inner;
  const outer = [...plan.bwrap, ...inner];
  if (cgroupProcs === null) return outer;
  return [
    "/bin/sh",
    "-c",
    'echo $$ > "$1" || exit 126; shift; exec "$@"',
    "sh",
    cgroupProcs,
    ...outer,
  ];
}
