/**
 * Honest sandbox-tier detection for `session.attach` (protocol §11.6): which OS backend the
 * host *could* offer. Nothing in this kernel installs a sandbox yet, so callers report the
 * active tier as null and `enforced: false` whatever this returns.
 */

const SYS_LANDLOCK_CREATE_RULESET = 444; // same number on x86_64 and aarch64
const LANDLOCK_CREATE_RULESET_VERSION = 1;

let cached: string | null | undefined;

/** The Landlock ABI version, or 0 when unavailable (or FFI is not permitted). */
export function landlockAbi(): number {
  if (Deno.build.os !== "linux") return 0;
  try {
    const lib = Deno.dlopen("libc.so.6", {
      syscall: { parameters: ["i64", "pointer", "usize", "u32"], result: "i64" },
    });
    try {
      const r = lib.symbols.syscall(
        BigInt(SYS_LANDLOCK_CREATE_RULESET),
        null,
        0n,
        LANDLOCK_CREATE_RULESET_VERSION,
      );
      return Number(r) > 0 ? Number(r) : 0;
    } finally {
      lib.close();
    }
  } catch {
    return 0;
  }
}

/** Best backend on this host: "A" (Landlock), "B" (Linux without it), "C" (macOS), "D". */
export function availableTier(): string | null {
  if (cached !== undefined) return cached;
  const os = Deno.build.os;
  cached = os === "linux" ? (landlockAbi() > 0 ? "A" : "B") : os === "darwin" ? "C" : "D";
  return cached;
}
