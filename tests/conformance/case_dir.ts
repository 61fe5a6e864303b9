/**
 * The fresh directory a case runs in: a new temp dir with the case's fixtures laid out
 * (spec/conformance.md §4): `dir/` entries become directories, others empty files.
 *
 * @module
 */
import { dirname, join } from "node:path";

const live = new Set<string>();

/** Creates a fresh temp dir holding `fixture`, and returns its canonical path. */
export async function makeCaseDir(fixture: readonly string[]): Promise<string> {
  // Canonical, so that paths the engine derives (cd, pwd) compare equal to the cwd it got.
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "shoal-case-" }));
  live.add(dir);
  try {
    for (const rel of fixture) {
      const path = join(dir, rel);
      if (rel.endsWith("/")) {
        await Deno.mkdir(path, { recursive: true });
      } else {
        await Deno.mkdir(dirname(path), { recursive: true });
        await Deno.writeFile(path, new Uint8Array());
      }
    }
  } catch (e) {
    await removeCaseDir(dir);
    throw e;
  }
  return dir;
}

/** Deletes a case dir; a leftover temp dir must not fail the run. */
export async function removeCaseDir(dir: string): Promise<void> {
  live.delete(dir);
  try {
    await Deno.remove(dir, { recursive: true });
  } catch {
    // Already gone, or left busy by a killed engine's child: the OS temp cleaner gets it.
  }
}

/** Deletes every case dir still in use; for a harness stopped by a signal. */
export function removeLiveCaseDirsSync(): void {
  for (const dir of live) {
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch {
      // Best effort while exiting.
    }
  }
  live.clear();
}
