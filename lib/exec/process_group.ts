/**
 * Signals to whole process groups. Every child we start leads its own process group
 * (see child.ts), so its pid is also its pgid and `kill(-pgid)` reaches its descendants
 * unless they moved themselves to another group.
 *
 * @module
 */

import process from "node:process";
import { openLibc } from "./libc.ts";
import { signalName, signalNumber } from "./signals.ts";

/** A signal given by name (`"SIGTERM"`, `"term"`) or number (`15`). */
export type SignalSpec = string | number;

function canonical(sig: SignalSpec): string {
  const n = typeof sig === "number" ? sig : signalNumber(sig);
  if (n === null || !Number.isInteger(n) || n < 1 || n > 64) {
    throw new RangeError(`unknown signal ${JSON.stringify(sig)}`);
  }
  return signalName(n);
}

function validPid(pid: number): void {
  if (!Number.isInteger(pid) || pid <= 1) {
    // 0, 1 and negatives would address our own group, init, or everything.
    throw new RangeError(`refusing to signal process group ${pid}`);
  }
}

/**
 * Send `sig` to process group `pgid`. Returns true when delivered, false when the group
 * no longer exists (ESRCH). Throws RangeError for an unknown signal or a pgid ≤ 1.
 */
export function signalGroup(pgid: number, sig: SignalSpec): boolean {
  validPid(pgid);
  const name = canonical(sig);
  // With FFI (and --allow-run, which Deno.kill asks for), libc's kill: Deno.kill reports a
  // group already gone (the common case: every command's group is signalled once it exits)
  // by throwing, ~10 µs per error object.
  const direct = runGranted() ? libcKillFn() : null;
  if (direct !== null) return killResult(direct(-pgid, signalNumber(name)!), -pgid, name);
  try {
    Deno.kill(-pgid, name as Deno.Signal);
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    // Deno (and node:process) know only the classic names; real-time ones need libc.
    if (e instanceof TypeError) return ffiKill(-pgid, signalNumber(name)!, name);
    throw e;
  }
}

type KillFn = (pid: number, sig: number) => number;
let libcKill: KillFn | null | undefined;

let runStatus: Deno.PermissionStatus | null | undefined;

/** Whether `--allow-run` is granted as a whole (the status object is live). */
function runGranted(): boolean {
  try {
    runStatus ??= Deno.permissions.querySync({ name: "run" });
  } catch {
    runStatus = null;
  }
  return runStatus?.state === "granted";
}

/** libc's kill (0 or the errno), or null without FFI; loaded once. */
function libcKillFn(): KillFn | null {
  if (libcKill === undefined) {
    const lib = openLibc({
      kill: { parameters: ["i32", "i32"], result: "i32" },
      __errno_location: { parameters: [], result: "pointer" },
    });
    libcKill = lib === null ? null : (pid, s) => {
      if (lib.kill(pid, s) === 0) return 0;
      const p = lib.__errno_location();
      return p === null ? -1 : new Deno.UnsafePointerView(p).getInt32();
    };
  }
  return libcKill;
}

/** What {@link signalGroup} returns for kill's result `err`; other errors are thrown. */
function killResult(err: number, target: number, name: string): boolean {
  if (err === 0) return true;
  if (err === 3) return false; // ESRCH
  if (err === 1) {
    throw new Deno.errors.PermissionDenied(`kill(${target}, ${name}): Operation not permitted`);
  }
  throw new Error(`kill(${target}, ${name}) failed with errno ${err}`);
}

function ffiKill(target: number, sig: number, name: string): boolean {
  const kill = libcKillFn();
  if (kill === null) {
    throw new RangeError(`${name} can only be sent with FFI (--allow-ffi) on this host`);
  }
  return killResult(kill(target, sig), target, name);
}

function nodeKill(target: number, sig: number): boolean {
  try {
    process.kill(target, sig);
    return true;
  } catch (e) {
    if ((e as { code?: string }).code === "ESRCH") return false;
    throw e;
  }
}

/**
 * True while group `pgid` has a live (non-zombie) member. Killed orphans stay zombies
 * until init reaps them, which can take seconds; they hold nothing and are not counted.
 */
export function groupAlive(pgid: number): boolean {
  validPid(pgid);
  if (!nodeKill(-pgid, 0)) return false;
  const members = groupMembers(pgid);
  // Without /proc (permissions, other OS) the kill(0) answer is the best we have.
  return members === null || members.some((m) => m.state !== "Z" && m.state !== "X");
}

/** One process of a group, from /proc. */
export interface GroupMember {
  pid: number;
  /** The /proc state letter: R, S, D, T (stopped), Z (zombie)… */
  state: string;
  /** Its process group (a session's members lead groups of their own). */
  pgid: number;
}

/** The members of group `pgid` read from /proc, or null when /proc is unreadable. */
export function groupMembers(pgid: number): GroupMember[] | null {
  return procMembers(PGRP_FIELD, pgid);
}

/**
 * The processes of session `sid` (all its process groups: a job-control shell's jobs lead
 * groups of their own), or null when /proc is unreadable.
 */
export function sessionMembers(sid: number): GroupMember[] | null {
  return procMembers(SESSION_FIELD, sid);
}

/**
 * Send `sig` to every live process of session `sid` (each by pid). Returns how many were
 * signalled; 0 when the session is gone or /proc is unreadable.
 */
export function signalSession(sid: number, sig: SignalSpec): number {
  validPid(sid);
  const n = signalNumber(canonical(sig))!;
  let count = 0;
  for (const m of sessionMembers(sid) ?? []) {
    if (m.state === "Z" || m.state === "X") continue;
    if (nodeKill(m.pid, n)) count++;
  }
  return count;
}

/** Fields of /proc/PID/stat after "(comm) ": state, ppid, pgrp, session, … */
const PGRP_FIELD = 2;
const SESSION_FIELD = 3;

function procMembers(field: number, id: number): GroupMember[] | null {
  const out: GroupMember[] = [];
  try {
    for (const entry of Deno.readDirSync("/proc")) {
      if (!/^\d+$/.test(entry.name)) continue;
      let stat: string;
      try {
        stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
      } catch {
        continue; // exited meanwhile
      }
      // "pid (comm) state ppid pgrp session …" — comm may contain spaces and parentheses.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[field]) === id) {
        out.push({ pid: Number(entry.name), state: fields[0], pgid: Number(fields[PGRP_FIELD]) });
      }
    }
  } catch {
    return null;
  }
  return out;
}

/** Stop every process of group `pgid` (SIGSTOP). Returns false if the group is gone. */
export function suspend(pgid: number): boolean {
  return signalGroup(pgid, "SIGSTOP");
}

/** Continue every process of group `pgid` (SIGCONT). Returns false if the group is gone. */
export function resume(pgid: number): boolean {
  return signalGroup(pgid, "SIGCONT");
}
