/**
 * The `os` namespace (language §13.2): nullary facts about the host and the session —
 * `platform arch pid hostname username cpus uptime env`. Any argument is arg_error
 * «os.x takes no arguments».
 *
 * @module
 */

import * as nodeOs from "node:os";
import { DurationV, RecordV, type Value } from "../../value/types.ts";
import type { Interp, MethodArgs } from "../method_types.ts";
import { checkArgs, type Namespace, type NsFn } from "./args.ts";
import { doc } from "../docs.ts";

/** Deno's OS name in Rust's `std::env::consts::OS` spelling (`darwin` → `macos`). */
export function platformName(os: string = Deno.build.os): string {
  return os === "darwin" ? "macos" : os;
}

function hostname(): string {
  try {
    return Deno.hostname() || "unknown";
  } catch {
    return "unknown";
  }
}

/** Session `USER`, `LOGNAME`, `USERNAME`, then the user database, then `unknown`. */
function username(ip: Interp): string {
  const env = ip.env();
  for (const k of ["USER", "LOGNAME", "USERNAME"]) {
    const v = env.get(k);
    if (v) return v;
  }
  try {
    return nodeOs.userInfo().username || "unknown";
  } catch {
    return "unknown";
  }
}

/** Time since boot: `/proc/uptime` where it exists, else the OS's own counter; null if neither. */
function uptime(): Value {
  let secs: number | null = null;
  try {
    const first = Deno.readTextFileSync("/proc/uptime").split(" ")[0];
    const n = Number(first);
    if (Number.isFinite(n)) secs = n;
  } catch {
    // not Linux (or /proc unavailable): fall through
  }
  if (secs === null) {
    try {
      secs = Deno.osUptime();
    } catch {
      try {
        secs = nodeOs.uptime();
      } catch {
        return null;
      }
    }
  }
  return new DurationV(BigInt(Math.round(secs * 1e9)));
}

function cpus(): number {
  try {
    return Math.max(1, nodeOs.availableParallelism());
  } catch {
    return Math.max(1, navigator.hardwareConcurrency || 1);
  }
}

/** The session environment as a record, keys sorted for a stable order. */
function envRecord(ip: Interp): Value {
  const env = ip.env();
  const keys = [...env.keys()].sort();
  const m = new Map<string, Value>();
  for (const k of keys) m.set(k, env.get(k) as string);
  return new RecordV(m);
}

/** The members: what each returns (its documentation) and how. */
const MEMBERS: Record<string, [string, (ip: Interp) => Value]> = {
  platform: ["-> str  the OS name (linux, macos, windows)", () => platformName()],
  arch: ["-> str  the CPU architecture", () => Deno.build.arch],
  pid: ["-> int  this process's id", () => Deno.pid],
  hostname: ["-> str  the machine's name", hostname],
  username: ["-> str  the user's name", username],
  cpus: ["-> int  how many CPUs", cpus],
  uptime: ["-> duration  time since boot", uptime],
  env: ["-> record  the session environment", envRecord],
};

function buildFunctions(): Map<string, NsFn> {
  const fns = new Map<string, NsFn>();
  for (const [name, [about, f]] of Object.entries(MEMBERS)) {
    const who = `os.${name}`;
    const fn: NsFn = (ip: Interp, args: MethodArgs) => {
      checkArgs(who, args, []);
      return f(ip);
    };
    const [ret, what] = about.split("  ");
    fns.set(name, doc(`${who}() ${ret}`, what, fn));
  }
  return fns;
}

/** The `os` namespace. */
export const osNamespace: Namespace = { name: "os", functions: buildFunctions() };
