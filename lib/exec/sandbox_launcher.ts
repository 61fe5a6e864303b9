/**
 * `shoal __sandbox PLAN -- PROGRAM ARGS…` (or this module run directly from a checkout): the
 * launcher that confines a whole process. On its main thread — before it has started anything —
 * it installs the Landlock domain and the socket filter of `PLAN` (JSON, `LaunchPlan`), then
 * `execve`s PROGRAM in its own place. PROGRAM and everything it ever starts inherit both, and
 * no per-spawn launcher is needed. Any failure exits 126 with one `shoal-sandbox:` line on
 * stderr; nothing runs unconfined.
 *
 * @module
 */

import { confineLibc } from "./confine_libc.ts";
import { type LandlockRules, restrictSelf } from "./landlock.ts";
import { installIpSocketFilter, type IpSockets } from "./seccomp.ts";

/** What the launcher installs (plain JSON on its command line). */
export interface LaunchPlan {
  /** Filesystem rules; rights as decimal strings (64-bit masks). */
  paths: { path: string; rights: string }[];
  tcp: { connect: number[] | null; bind: number[] | null } | null;
  /** Which IP sockets the socket filter lets through (it refuses Unix sockets always); null: no
   * filter for this architecture (the plan's report says so). */
  sockets: IpSockets | null;
  /** Scope abstract Unix sockets and signals to the domain. */
  scope: boolean;
}

/** Exit status when confinement failed (as a shell's "cannot execute"). */
export const SANDBOX_FAILED = 126;

function die(message: string): never {
  const line = new TextEncoder().encode(`shoal-sandbox: ${message}\n`);
  try {
    Deno.stderr.writeSync(line);
  } catch { /* nowhere to say it */ }
  Deno.exit(SANDBOX_FAILED);
}

const enc = new TextEncoder();
const cstr = (s: string) => enc.encode(s + "\0");

function pointers(bufs: Uint8Array[]): BigUint64Array {
  const a = new BigUint64Array(bufs.length + 1);
  bufs.forEach((b, i) => a[i] = BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(b))));
  return a;
}

/** Confine this process as `plan` says, then become `argv` (never returns). */
export function confineAndExec(plan: LaunchPlan, argv: string[]): never {
  if (argv.length === 0) die("no program to run after --");
  const rules: LandlockRules = {
    paths: plan.paths.map((p) => ({ path: p.path, rights: BigInt(p.rights) })),
    tcp: plan.tcp,
    scope: plan.scope,
  };
  try {
    restrictSelf(rules);
    if (plan.sockets !== null) installIpSocketFilter(plan.sockets);
  } catch (e) {
    die(`cannot confine ${argv[0]}: ${(e as Error).message}`);
  }
  const l = confineLibc();
  if (l === null) die(`cannot execute ${argv[0]}: no FFI`);
  const args = argv.map(cstr);
  const env = Object.entries(Deno.env.toObject()).map(([k, v]) => cstr(`${k}=${v}`));
  const argvP = pointers(args), envP = pointers(env);
  l.execve(args[0], new Uint8Array(argvP.buffer), new Uint8Array(envP.buffer));
  die(`cannot execute ${argv[0]}`);
}

/** The entry: `PLAN -- PROGRAM ARGS…`. */
export function sandboxMain(args: string[]): never {
  const sep = args.indexOf("--");
  if (sep !== 1) die("usage: shoal __sandbox PLAN-JSON -- PROGRAM [ARGS…]");
  let plan: LaunchPlan;
  try {
    plan = JSON.parse(args[0]) as LaunchPlan;
    if (!Array.isArray(plan.paths)) throw new Error("paths must be a list");
  } catch (e) {
    die(`bad sandbox plan: ${(e as Error).message}`);
  }
  confineAndExec(plan, args.slice(sep + 1));
}

if (import.meta.main) sandboxMain(Deno.args);
