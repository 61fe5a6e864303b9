/**
 * Executable views (subsystems §6): a directory of symlinks `name → locked binary` that a
 * Reef-resolved child gets at the front of its PATH (or as its whole PATH when a scope says
 * `hermetic = true`), so the tools it starts resolve to the same locked binaries. The
 * session's own PATH never changes.
 *
 * `$XDG_RUNTIME_DIR/shoal/views/<hash>/bin`, else `$TMPDIR/shoal-views-<uid>/<hash>/bin`;
 * `<hash>` covers names, paths and content digests (order-independent). A view is built in a
 * staging directory and renamed into place (a concurrent builder that loses reuses the
 * winner's). Unlike upstream, an existing view is checked once per process before it is
 * trusted, and rebuilt when someone changed it; the root must be private to this user.
 *
 * @module
 */

import { createHash } from "node:crypto";
import { join } from "node:path";
import { fileIdentity } from "../exec/mod.ts";
import { reason, ReefError } from "./errors.ts";

/** One binding of a view. */
export interface ViewBinding {
  name: string;
  path: string;
  blake3: string;
}

/** The directory views live in for a session environment. */
export function viewsRoot(env: Readonly<Record<string, string>>): string {
  const run = env.XDG_RUNTIME_DIR;
  if (run !== undefined && run.startsWith("/")) return join(run, "shoal", "views");
  const tmp = env.TMPDIR !== undefined && env.TMPDIR.startsWith("/") ? env.TMPDIR : "/tmp";
  return join(tmp, `shoal-views-${Deno.uid() ?? 0}`);
}

/** Names a symlink can carry (a bare command head). */
function linkable(name: string): boolean {
  return name !== "" && name !== "." && name !== ".." && !name.includes("/") &&
    !name.includes("\0");
}

/** Create `dir` (and missing parents) private to this user, and check it is ours. */
function privateDir(dir: string): void {
  try {
    Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (e) {
    if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
  }
  const st = Deno.lstatSync(dir);
  const uid = Deno.uid();
  if (!st.isDirectory || (uid !== null && st.uid !== uid) || ((st.mode ?? 0) & 0o022) !== 0) {
    throw new ReefError(
      "reef_provider",
      `the views directory ${dir} is not a private directory of this user`,
      "remove it, or set XDG_RUNTIME_DIR to a private directory",
    );
  }
}

/** The view's hash: order-independent over (name, path, digest). */
export function viewHash(bindings: readonly ViewBinding[]): string {
  const lines = bindings.filter((b) => linkable(b.name))
    .map((b) => `${b.name}\0${b.path}\0${b.blake3}\n`).sort();
  const h = createHash("sha256");
  for (const l of lines) h.update(l);
  return h.digest("hex").slice(0, 32);
}

function matches(binDir: string, bindings: readonly ViewBinding[]): boolean {
  try {
    const want = new Map(bindings.filter((b) => linkable(b.name)).map((b) => [b.name, b.path]));
    let n = 0;
    for (const e of Deno.readDirSync(binDir)) {
      n++;
      if (!e.isSymlink || Deno.readLinkSync(join(binDir, e.name)) !== want.get(e.name)) {
        return false;
      }
    }
    return n === want.size;
  } catch {
    return false;
  }
}

function removeQuietly(path: string): void {
  try {
    Deno.removeSync(path, { recursive: true });
  } catch {
    // already gone
  }
}

/** Views verified (or built) by this process: hash → bin dir. */
const known = new Map<string, string>();
const KNOWN_MAX = 1024;

/**
 * The `bin` directory of the view for `bindings` under `root`, built when missing. Throws
 * `reef_provider` when it cannot be built.
 */
export function ensureView(root: string, bindings: readonly ViewBinding[]): string {
  const hash = viewHash(bindings);
  const dir = join(root, hash);
  const bin = join(dir, "bin");
  const k = known.get(root + "\0" + hash);
  if (k !== undefined && fileIdentity(k)?.kind === "dir") return k;
  try {
    privateDir(root);
    if (fileIdentity(bin)?.kind === "dir") {
      if (matches(bin, bindings)) return remember(root, hash, bin);
      // Changed behind our back: move it aside (others may be using it) and rebuild.
      const aside = join(root, `.stale-${hash}-${crypto.randomUUID().slice(0, 8)}`);
      Deno.renameSync(dir, aside);
      removeQuietly(aside);
    }
    const stage = join(root, `.stage-${hash}-${Deno.pid}-${crypto.randomUUID().slice(0, 8)}`);
    Deno.mkdirSync(join(stage, "bin"), { recursive: true, mode: 0o700 });
    for (const b of bindings) {
      if (linkable(b.name)) Deno.symlinkSync(b.path, join(stage, "bin", b.name));
    }
    try {
      Deno.renameSync(stage, dir);
    } catch (e) {
      removeQuietly(stage);
      // Another builder won the race: theirs is the same view.
      if (!matches(bin, bindings)) throw e;
    }
    return remember(root, hash, bin);
  } catch (e) {
    if (e instanceof ReefError) throw e;
    throw new ReefError("reef_provider", `building the Reef view ${dir}: ${reason(e)}`);
  }
}

function remember(root: string, hash: string, bin: string): string {
  if (known.size >= KNOWN_MAX) known.clear();
  known.set(root + "\0" + hash, bin);
  return bin;
}

/** The child's PATH: the view first, then the previous PATH unless hermetic. */
export function childPath(
  viewBin: string,
  previous: string | undefined,
  hermetic: boolean,
): string {
  if (hermetic || previous === undefined || previous === "") return viewBin;
  return `${viewBin}:${previous}`;
}
