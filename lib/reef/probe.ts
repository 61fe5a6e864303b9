/**
 * The version probe (subsystems §6): `<bin> --version` with stdin from /dev/null, a 300 ms
 * hard deadline (then the process group is killed), output capped; the first dotted token of
 * a successful run's output, else a bare integer, else unknown. Only constraints that need a
 * version probe, and each binary is probed once per identity (a replaced binary is probed
 * again; the cache is bounded).
 *
 * The host supplies the spawner, so a journaling or sandboxed host sees probes like any spawn.
 *
 * @module
 */

import {
  type CaptureOptions,
  type CaptureResult,
  type FileIdentity,
  fileIdentity,
  sameIdentity,
  spawnCapture,
} from "../exec/mod.ts";
import { extractVersion, UNKNOWN, type Version } from "./version.ts";

/** Starts a program to completion (a host's process port; default: lib/exec's capture). */
export type Spawner = (opts: CaptureOptions) => Promise<CaptureResult>;

/** The probe's hard deadline. */
export const PROBE_DEADLINE_MS = 300;

const MAX_ENTRIES = 1024;
const cache = new Map<string, { id: FileIdentity; version: Version }>();

/** The version a probe of `path` found before, while the file is unchanged; else undefined. */
export function cachedVersion(path: string): Version | undefined {
  const e = cache.get(path);
  if (e === undefined) return undefined;
  const id = fileIdentity(path);
  return id !== null && sameIdentity(id, e.id) ? e.version : undefined;
}

/** Probe `path --version` (cached per binary identity). Never throws. */
export async function probeVersion(
  path: string,
  cwd: string,
  env: Readonly<Record<string, string>>,
  spawn: Spawner = spawnCapture,
): Promise<Version> {
  const hit = cachedVersion(path);
  if (hit !== undefined) return hit;
  const id = fileIdentity(path);
  let version = UNKNOWN;
  try {
    const r = await spawn({
      argv: [path, "--version"],
      cwd,
      env,
      stdin: "none",
      timeoutMs: PROBE_DEADLINE_MS,
      graceMs: 20,
      stdoutCap: 4096,
      stderrCap: 4096,
      spill: false,
    });
    if (!r.timedOut && r.status === 0) {
      const dec = new TextDecoder();
      version = extractVersion(dec.decode(r.stdout) + "\n" + dec.decode(r.stderr));
    }
  } catch {
    version = UNKNOWN;
  }
  if (id !== null) {
    if (!cache.has(path) && cache.size >= MAX_ENTRIES) cache.clear();
    cache.set(path, { id, version });
  }
  return version;
}
