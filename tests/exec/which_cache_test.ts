// Remembered PATH hits (lib/exec/dir_watch.ts): every change that would alter a fresh search's
// answer is seen by the next search, however it was made.

import assert from "node:assert/strict";
import { join } from "node:path";
import { which } from "../../lib/exec/mod.ts";
import { dirWatch } from "../../lib/exec/dir_watch.ts";
import { withTempDir } from "./_helpers.ts";

async function tool(path: string, mode = 0o755) {
  await Deno.writeTextFile(path, "#!/bin/sh\n");
  await Deno.chmod(path, mode);
}

/** Search twice (the second answer comes from memory when nothing changed). */
function twice(name: string, path: string): string | null {
  const first = which(name, path);
  assert.equal(which(name, path), first, "a repeated search answers the same");
  return first;
}

Deno.test("which cache: the host has a directory watch here", () => {
  // Linux with FFI (the tests run with -A): without it nothing is remembered, and the tests
  // below would pass without testing the cache.
  assert.notEqual(dirWatch(), null);
});

Deno.test("which cache: a binary installed earlier in PATH is found at once", async () => {
  await withTempDir(async (dir) => {
    const a = join(dir, "a"), b = join(dir, "b");
    await Deno.mkdir(a);
    await Deno.mkdir(b);
    await tool(join(b, "t"));
    const path = `${a}:${b}`;
    assert.equal(twice("t", path), join(b, "t"));
    await tool(join(a, "t"));
    assert.equal(twice("t", path), join(a, "t"));
    // Moved in (an installer's rename) rather than created there.
    await tool(join(dir, "u.tmp"));
    await tool(join(b, "u"));
    assert.equal(twice("u", path), join(b, "u"));
    await Deno.rename(join(dir, "u.tmp"), join(a, "u"));
    assert.equal(twice("u", path), join(a, "u"));
  });
});

Deno.test("which cache: a hit made non-executable or removed falls through", async () => {
  await withTempDir(async (dir) => {
    const a = join(dir, "a"), b = join(dir, "b");
    await Deno.mkdir(a);
    await Deno.mkdir(b);
    await tool(join(a, "t"));
    await tool(join(b, "t"));
    const path = `${a}:${b}`;
    assert.equal(twice("t", path), join(a, "t"));
    await Deno.chmod(join(a, "t"), 0o644);
    assert.equal(twice("t", path), join(b, "t"));
    await Deno.remove(join(b, "t"));
    assert.equal(twice("t", path), null);
  });
});

Deno.test("which cache: a PATH directory created later is searched", async () => {
  await withTempDir(async (dir) => {
    const later = join(dir, "later", "bin"), b = join(dir, "b");
    await Deno.mkdir(b);
    await tool(join(b, "t"));
    const path = `${later}:${b}`;
    assert.equal(twice("t", path), join(b, "t"));
    await Deno.mkdir(later, { recursive: true });
    await tool(join(later, "t"));
    assert.equal(twice("t", path), join(later, "t"));
  });
});

Deno.test("which cache: a symlinked PATH directory retargeted (a profile switch)", async () => {
  await withTempDir(async (dir) => {
    const v1 = join(dir, "v1"), v2 = join(dir, "v2"), b = join(dir, "b");
    for (const d of [v1, v2, b]) await Deno.mkdir(d, { recursive: true });
    await Deno.mkdir(join(v1, "bin"));
    await Deno.mkdir(join(v2, "bin"));
    await tool(join(v2, "bin", "t"));
    await tool(join(b, "t"));
    await Deno.symlink(v1, join(dir, "current"));
    const path = `${join(dir, "current", "bin")}:${b}`;
    assert.equal(twice("t", path), join(b, "t"));
    // Switched the way profile managers do: a new link renamed over the old one.
    await Deno.symlink(v2, join(dir, "next"));
    await Deno.rename(join(dir, "next"), join(dir, "current"));
    assert.equal(twice("t", path), join(dir, "current", "bin", "t"));
  });
});

Deno.test("which cache: a symlinked hit whose target goes falls through", async () => {
  await withTempDir(async (dir) => {
    const a = join(dir, "a"), b = join(dir, "b"), store = join(dir, "store");
    for (const d of [a, b, store]) await Deno.mkdir(d);
    await tool(join(store, "real"));
    await Deno.symlink(join(store, "real"), join(a, "t"));
    await tool(join(b, "t"));
    const path = `${a}:${b}`;
    assert.equal(twice("t", path), join(a, "t"));
    await Deno.remove(join(store, "real"));
    assert.equal(twice("t", path), join(b, "t"));
  });
});

Deno.test("which cache: relative PATH entries follow the cwd every time", async () => {
  await withTempDir(async (dir) => {
    const x = join(dir, "x"), y = join(dir, "y");
    for (const d of [x, y]) await Deno.mkdir(join(d, "bin"), { recursive: true });
    await tool(join(x, "bin", "t"));
    await tool(join(y, "bin", "t"));
    assert.equal(which("t", "bin", x), join(x, "bin", "t"));
    assert.equal(which("t", "bin", y), join(y, "bin", "t"));
  });
});
