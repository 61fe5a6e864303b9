/**
 * Checking spawn options and deciding exactly what to start: validation with stable error
 * kinds, argv[0] resolution against the *given* env's PATH and cwd, and naming a missing
 * `#!` interpreter.
 *
 * @module
 */

import { isAbsolute, resolve } from "node:path";
import { ExecError } from "./errors.ts";
import type { ArgvItem, KillScope, SpawnOptions } from "./types.ts";
import { DEFAULT_GRACE_MS } from "./types.ts";
import { DEFAULT_PATH, isExecutableFile, which } from "./which.ts";

/** What to start (see child.ts), after validation and resolution. */
export interface Prepared {
  /** Absolute path of the program the caller asked for. */
  program: string;
  /** argv for display (bytes decoded lossily). */
  displayArgv: string[];
  /** argv[1..] as given (strings, or bytes that are not UTF-8). */
  args: (string | Uint8Array)[];
  /** True when some argument is bytes that Deno cannot pass as a string. */
  needsByteArgs: boolean;
  cwd: string;
  env: Record<string, string>;
  graceMs: number;
  timeoutMs: number | undefined;
  killScope: KillScope;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
const lossyUtf8 = new TextDecoder();

const ENOENT = "No such file or directory (os error 2)";
const EACCES = "Permission denied (os error 13)";

function invalid(message: string, hint?: string): never {
  throw new ExecError("invalid_argument", message, { hint });
}

function checkText(what: string, s: string): void {
  if (s.includes("\0")) {
    invalid(`${what} contains a NUL byte`, "NUL cannot appear in argv, env or paths");
  }
}

/** Validate a millisecond option: undefined or a finite number ≥ 0. */
function checkMs(name: string, v: unknown): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== "number" || !Number.isFinite(v) || v < 0) {
    invalid(`${name} must be a finite number of milliseconds ≥ 0, got ${String(v)}`);
  }
  return v;
}

/** Validate a byte-count option: undefined or a safe integer ≥ 0. */
export function checkBytes(name: string, v: unknown, fallback: number): number {
  if (v === undefined) return fallback;
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0) {
    invalid(`${name} must be a whole number of bytes ≥ 0, got ${String(v)}`);
  }
  return v;
}

/** The host's PATH, or {@link DEFAULT_PATH} when it cannot be read. */
function hostPath(): string {
  try {
    // Ask first: without --allow-env, Deno.env.get would prompt on a terminal.
    const state = Deno.permissions.querySync({ name: "env", variable: "PATH" }).state;
    return state === "granted" ? Deno.env.get("PATH") ?? DEFAULT_PATH : DEFAULT_PATH;
  } catch {
    return DEFAULT_PATH;
  }
}

/** True when `dir` is an existing directory. */
export function isDirectory(dir: string): boolean {
  try {
    return Deno.statSync(dir).isDirectory;
  } catch {
    return false;
  }
}

/** The error for a cwd that is missing or not a directory. */
export function cwdError(cwd: string): ExecError {
  return new ExecError(
    "cwd_not_found",
    `working directory ${cwd} does not exist or is not a directory`,
    {
      path: cwd,
      osMessage: ENOENT,
      hint: "cd to an existing directory first",
    },
  );
}

/** Validate `opts` and resolve the program. Throws {@link ExecError} on bad input. */
export function prepare(opts: SpawnOptions): Prepared {
  if (opts === null || typeof opts !== "object") invalid("spawn options must be an object");
  const { argv, cwd, env } = opts;
  if (!Array.isArray(argv) || argv.length === 0) invalid("argv must be a non-empty array");
  if (typeof cwd !== "string" || !isAbsolute(cwd)) {
    invalid(`cwd must be an absolute path, got ${JSON.stringify(cwd)}`, "pass the session cwd");
  }
  checkText("cwd", cwd);
  if (env === null || typeof env !== "object" || Array.isArray(env)) {
    invalid("env must be a record of strings (the complete child environment)");
  }
  const envCopy: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (k === "" || k.includes("=")) {
      invalid(`env name ${JSON.stringify(k)} is empty or contains '='`);
    }
    checkText(`env name ${JSON.stringify(k)}`, k);
    if (typeof v !== "string") invalid(`env ${k} must be a string, got ${typeof v}`);
    checkText(`env ${k}`, v);
    envCopy[k] = v;
  }

  const displayArgv: string[] = [];
  const args: (string | Uint8Array)[] = [];
  let needsByteArgs = false;
  for (let i = 0; i < argv.length; i++) {
    const item: ArgvItem = argv[i];
    if (typeof item === "string") {
      checkText(`argv[${i}]`, item);
      displayArgv.push(item);
      if (i > 0) args.push(item);
      continue;
    }
    if (!(item instanceof Uint8Array)) invalid(`argv[${i}] must be a string or Uint8Array`);
    if (item.includes(0)) invalid(`argv[${i}] contains a NUL byte`);
    displayArgv.push(lossyUtf8.decode(item));
    let text: string | null = null;
    try {
      text = strictUtf8.decode(item);
    } catch {
      text = null;
    }
    if (i === 0) {
      if (text === null) {
        invalid("argv[0] is not valid UTF-8", "Deno can only start programs whose path is UTF-8");
      }
      continue;
    }
    if (text === null) needsByteArgs = true;
    args.push(text ?? item.slice());
  }

  const graceMs = checkMs("graceMs", opts.graceMs) ?? DEFAULT_GRACE_MS;
  const timeoutMs = checkMs("timeoutMs", opts.timeoutMs);
  const killScope = opts.killScope ?? "group";
  if (killScope !== "group" && killScope !== "cgroup") {
    invalid(`killScope must be "group" or "cgroup", got ${JSON.stringify(killScope)}`);
  }

  const name = displayArgv[0];
  if (name === "") invalid("argv[0] is empty");
  const program = which(name, envCopy.PATH ?? hostPath(), cwd);
  if (program === null) throw unresolved(name, cwd);
  return {
    program,
    displayArgv,
    args,
    needsByteArgs,
    cwd,
    env: envCopy,
    graceMs,
    timeoutMs,
    killScope,
  };
}

/**
 * A script whose `#!` interpreter is missing fails inside execve with ENOENT. Started
 * through a shim (setsid(1), the sh trampoline) that could only show as exit status 127,
 * and even a direct ENOENT does not say which file is missing; this names it. Returns the
 * error to throw, or null when the `#!` line (if any) is fine or unreadable.
 */
export function badInterpreter(program: string, name: string): ExecError | null {
  let head: Uint8Array;
  try {
    const file = Deno.openSync(program, { read: true });
    try {
      const buf = new Uint8Array(256);
      head = buf.subarray(0, file.readSync(buf) ?? 0);
    } finally {
      file.close();
    }
  } catch {
    return null; // execute-only or vanished: let execve decide
  }
  if (head[0] !== 0x23 || head[1] !== 0x21) return null; // not "#!"
  const end = head.indexOf(0x0a);
  const line = lossyUtf8.decode(head.subarray(2, end < 0 ? head.length : end));
  const interp = line.trim().split(/[ \t]/)[0];
  if (interp === undefined || !interp.startsWith("/") || isExecutableFile(interp)) return null;
  return new ExecError("not_found", `${name}: bad interpreter ${interp}: ${ENOENT}`, {
    path: program,
    osMessage: ENOENT,
    hint: `the interpreter on its #! line, ${interp}, is not an executable file`,
  });
}

/** The error for a name {@link which} could not resolve, as execvp would report it. */
function unresolved(name: string, cwd: string): ExecError {
  if (!isDirectory(cwd)) return cwdError(cwd);
  if (!name.includes("/")) {
    return new ExecError("not_found", `${name}: command not found`, {
      path: name,
      osMessage: ENOENT,
      hint: "check the spelling, or the PATH in the session environment",
    });
  }
  const path = resolve(cwd, name);
  let exists = false;
  try {
    Deno.statSync(path);
    exists = true;
  } catch {
    exists = false;
  }
  if (!exists) {
    return new ExecError("not_found", `${name}: ${ENOENT}`, { path, osMessage: ENOENT });
  }
  return new ExecError("permission_denied", `${name}: ${EACCES}`, {
    path,
    osMessage: EACCES,
    hint: "the file is not an executable regular file (chmod +x?)",
  });
}
