/**
 * `shoal doctor [--json]`: what works on this host — Deno, FFI (the fast spawn path and PTYs),
 * Landlock and cgroup v2 (sandbox and kill scope), the state directory, the kernel socket, the
 * configuration and the terminal. Exit 0 when all is well, 1 with warnings, 2 when something
 * Shoal needs is broken (subsystems §10).
 *
 * @module
 */

import { join } from "node:path";
import { cgroupKillAvailable, spawnBackend } from "../exec/mod.ts";
import { landlockAbi } from "../kernel/tier.ts";
import { socketAnswers, socketPath } from "../client/discovery.ts";
import {
  ConfigError,
  configuredStateDir,
  defaultStateDir,
  loadConfig,
  type ShoalConfig,
} from "../config/mod.ts";

/** One check's verdict. */
export interface Check {
  name: string;
  status: "ok" | "warn" | "fail";
  detail: string;
}

const USAGE = "usage: shoal doctor [--json]";

function deno(): Check {
  const v = Deno.version.deno;
  const [maj, min] = v.split(".").map(Number);
  const ok = maj > 2 || (maj === 2 && min >= 9);
  return {
    name: "deno",
    status: ok ? "ok" : "warn",
    detail: `${v}${ok ? "" : " (Shoal is built and tested on 2.9.6: npm i -g deno@2.9.6)"}`,
  };
}

function ffi(): Check {
  const granted = Deno.permissions.querySync({ name: "ffi" }).state === "granted";
  if (!granted) {
    return {
      name: "ffi",
      status: "warn",
      detail: "not permitted: commands start through Deno.Command (about 2× slower), no PTYs",
    };
  }
  const backend = spawnBackend();
  return {
    name: "ffi",
    status: backend === "posix_spawn" ? "ok" : "warn",
    detail: backend === "posix_spawn"
      ? "allowed; commands start with posix_spawn"
      : "allowed, but posix_spawn is unavailable (glibc ≥ 2.29, Linux ≥ 5.3): using Deno.Command",
  };
}

function pty(): Check {
  try {
    Deno.statSync("/dev/ptmx");
  } catch {
    return { name: "pty", status: "warn", detail: "no /dev/ptmx: interactive programs cannot run" };
  }
  return { name: "pty", status: "ok", detail: "/dev/ptmx present" };
}

function landlock(): Check {
  const abi = landlockAbi();
  return abi > 0
    ? {
      name: "landlock",
      status: "ok",
      detail: `ABI v${abi}: restricted principals can be sandboxed`,
    }
    : {
      name: "landlock",
      status: "warn",
      detail: "unavailable: no filesystem sandbox for restricted principals",
    };
}

function cgroup(): Check {
  return cgroupKillAvailable()
    ? {
      name: "cgroup",
      status: "ok",
      detail: "cgroup v2 writable: cancel can take escaped children",
    }
    : {
      name: "cgroup",
      status: "warn",
      detail: "cgroup v2 not writable: cancel reaches the process group only",
    };
}

function stateDir(config: ShoalConfig | null): Check {
  const dir = config ? configuredStateDir(config) : defaultStateDir();
  try {
    const st = Deno.statSync(dir);
    if (!st.isDirectory) {
      return { name: "state dir", status: "fail", detail: `${dir} is not a directory` };
    }
  } catch {
    return {
      name: "state dir",
      status: "ok",
      detail: `${dir} (not created yet: the kernel makes it on first start)`,
    };
  }
  let journal = "no journal yet";
  try {
    const st = Deno.statSync(join(dir, "journal.db"));
    journal = `journal.db ${(st.size / 1024 / 1024).toFixed(1)} MiB`;
  } catch { /* none */ }
  try {
    const probe = join(dir, `.doctor-${Deno.pid}`);
    Deno.writeTextFileSync(probe, "");
    Deno.removeSync(probe);
  } catch (e) {
    return {
      name: "state dir",
      status: "fail",
      detail: `${dir} is not writable: ${(e as Error).message}`,
    };
  }
  return { name: "state dir", status: "ok", detail: `${dir} (${journal})` };
}

async function kernel(): Promise<Check> {
  let path: string;
  try {
    path = socketPath({ explicit: Deno.env.get("SHOAL_SOCKET") });
  } catch (e) {
    return { name: "kernel", status: "fail", detail: (e as Error).message };
  }
  return await socketAnswers(path)
    ? { name: "kernel", status: "ok", detail: `answering on ${path}` }
    : {
      name: "kernel",
      status: "ok",
      detail: `none on ${path} (shoal attach and shoal-mcp start one)`,
    };
}

function terminal(config: ShoalConfig | null): Check {
  const tty = Deno.stdout.isTerminal();
  const term = Deno.env.get("TERM") ?? "unset";
  const color = config?.render.color ?? true;
  return {
    name: "terminal",
    status: "ok",
    detail: tty
      ? `${term}, ${Deno.consoleSize().columns}×${Deno.consoleSize().rows}, colour ${
        color ? "on" : "off (NO_COLOR or render.color)"
      }`
      : "stdout is not a terminal (commands are captured, not run on a PTY)",
  };
}

/** Run every check. */
export async function runChecks(): Promise<Check[]> {
  let config: ShoalConfig | null = null;
  const checks: Check[] = [deno(), ffi(), pty(), landlock(), cgroup()];
  try {
    const r = loadConfig({ cwd: Deno.cwd(), env: Deno.env.toObject() });
    config = r.config;
    checks.push({
      name: "config",
      status: r.warnings.length ? "warn" : "ok",
      detail: [
        r.layers.length ? r.layers.join(", ") : "defaults only (no shoal.toml found)",
        ...r.warnings,
      ].join("\n  "),
    });
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    checks.push({ name: "config", status: "fail", detail: e.message });
  }
  checks.push(stateDir(config), await kernel(), terminal(config));
  return checks;
}

/** `shoal doctor`. */
export async function doctorMain(args: string[]): Promise<number> {
  if (args.includes("-h") || args.includes("--help")) {
    console.log(`${USAGE}\n\nReports what works on this host; exit 0 ok, 1 warnings, 2 failures.`);
    return 0;
  }
  const bad = args.find((a) => a !== "--json");
  if (bad !== undefined) {
    console.error(`shoal doctor: unknown argument ${JSON.stringify(bad)}\n${USAGE}`);
    return 2;
  }
  const checks = await runChecks();
  if (args.includes("--json")) console.log(JSON.stringify(checks));
  else {
    const w = Math.max(...checks.map((c) => c.name.length));
    for (const c of checks) console.log(`${c.status.padEnd(4)}  ${c.name.padEnd(w)}  ${c.detail}`);
  }
  if (checks.some((c) => c.status === "fail")) return 2;
  return checks.some((c) => c.status === "warn") ? 1 : 0;
}
