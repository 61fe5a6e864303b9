/**
 * The foreground a CLI host gives statement-position commands: the PTY tee when a person is at
 * the terminal (and PTYs work here), pass-through pipes otherwise.
 *
 * @module
 */

import type { CaptureOptions, CaptureResult } from "../exec/mod.ts";
import { loadLibc } from "../exec/libc.ts";
import { pipeForeground } from "./foreground_pipe.ts";
import { ptyForeground, type PtyTeeHost } from "./pty_tee.ts";
import { Terminal } from "./terminal.ts";

/** True when programs can run on PTYs here (the FFI spawn path that `openPty` needs). */
export function ptyAvailable(): boolean {
  return loadLibc() !== null;
}

/** The foreground runner: a PTY when `tty` and PTYs are available, pipes otherwise. */
export function foregroundFor(
  tty: boolean,
  host: Partial<PtyTeeHost> = {},
): (opts: CaptureOptions) => Promise<CaptureResult> {
  if (tty && Deno.stdin.isTerminal() && ptyAvailable()) {
    return ptyForeground({ terminal: Terminal.shared(), ...host });
  }
  return pipeForeground;
}
