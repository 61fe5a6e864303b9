/**
 * Socket discovery (protocol §2.1) — one rule shared by the kernel, the CLI and the MCP facade:
 * explicit path → $XDG_RUNTIME_DIR/shoal/<session>.sock → $TMPDIR/shoal-<euid>/shoal/<session>.sock
 * → /tmp/shoal-<euid>/shoal/<session>.sock. Empty variables count as unset.
 */

import { join } from "node:path";

/** Inputs to discovery (defaults read from the process). */
export interface DiscoveryInput {
  explicit?: string | null;
  session?: string | null;
  env?: (name: string) => string | undefined;
  euid?: number;
}

/** A session name usable in a file name. */
export function validSocketSession(name: string): boolean {
  return /^[A-Za-z0-9._-]{1,64}$/.test(name) && name !== "." && name !== "..";
}

/** Resolve the kernel socket path. */
export function socketPath(input: DiscoveryInput = {}): string {
  const env = input.env ?? ((n: string) => Deno.env.get(n));
  const nonEmpty = (v: string | null | undefined) => (v && v.length > 0 ? v : undefined);
  const explicit = nonEmpty(input.explicit);
  if (explicit) return explicit;
  const session = nonEmpty(input.session) ?? "default";
  if (!validSocketSession(session)) {
    throw new Error(
      `invalid session name ${JSON.stringify(session)}: use letters, digits, '.', '_' or '-'`,
    );
  }
  const file = `${session}.sock`;
  const xdg = nonEmpty(env("XDG_RUNTIME_DIR"));
  if (xdg) return join(xdg, "shoal", file);
  const euid = input.euid ?? Deno.uid() ?? 0;
  const tmp = nonEmpty(env("TMPDIR"));
  if (tmp) return join(tmp, `shoal-${euid}`, "shoal", file);
  return join("/tmp", `shoal-${euid}`, "shoal", file);
}

/**
 * The default state directory (protocol §2.3): `$XDG_STATE_HOME/shoal`, else
 * `~/.local/state/shoal`. The kernel keeps its journal there and every host its `rm` trash.
 */
export function defaultStateDir(): string {
  const xdg = Deno.env.get("XDG_STATE_HOME");
  if (xdg) return join(xdg, "shoal");
  const home = Deno.env.get("HOME");
  return home ? join(home, ".local", "state", "shoal") : join(Deno.cwd(), "shoal");
}

/** True when something accepts connections on the Unix socket at `path`. */
export async function socketAnswers(path: string): Promise<boolean> {
  try {
    const c = await Deno.connect({ transport: "unix", path });
    c.close();
    return true;
  } catch {
    return false;
  }
}
