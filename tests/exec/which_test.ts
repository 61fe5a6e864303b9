// PATH lookup: executable regular files only, explicit PATH and cwd, no host state.

import assert from "node:assert/strict";
import { join } from "node:path";
import { isExecutableFile, which } from "../../lib/exec/mod.ts";
import { withTempDir } from "./_helpers.ts";

async function makeFile(path: string, mode: number) {
  await Deno.writeTextFile(path, "#!/bin/sh\n");
  await Deno.chmod(path, mode);
}

Deno.test("which: first executable regular file in PATH order", async () => {
  await withTempDir(async (dir) => {
    const a = join(dir, "a"), b = join(dir, "b"), c = join(dir, "c");
    for (const d of [a, b, c]) await Deno.mkdir(d);
    await makeFile(join(a, "tool"), 0o644); // not executable: skipped
    await Deno.mkdir(join(b, "tool")); // a directory: skipped
    await makeFile(join(c, "tool"), 0o755);
    await makeFile(join(a, "tool2"), 0o700);
    await makeFile(join(c, "tool2"), 0o755);
    const path = [a, b, c].join(":");
    assert.equal(which("tool", path), join(c, "tool"));
    assert.equal(which("tool2", path), join(a, "tool2"));
    assert.equal(which("missing", path), null);
    assert.equal(which("tool", ""), null, "empty PATH without cwd finds nothing");
    assert.equal(which("", path), null);
  });
});

Deno.test("which: symlinks are followed; the link path is returned", async () => {
  await withTempDir(async (dir) => {
    await makeFile(join(dir, "real"), 0o755);
    await Deno.symlink(join(dir, "real"), join(dir, "alias"));
    await Deno.symlink(join(dir, "nowhere"), join(dir, "dangling"));
    assert.equal(which("alias", dir), join(dir, "alias"));
    assert.equal(which("dangling", dir), null);
  });
});

Deno.test("which: names with a slash are not searched; relative ones use cwd", async () => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(join(dir, "bin"));
    await makeFile(join(dir, "bin", "run"), 0o755);
    assert.equal(which("bin/run", "/usr/bin", dir), join(dir, "bin", "run"));
    assert.equal(which("./bin/run", "/usr/bin", dir), join(dir, "bin", "run"));
    assert.equal(which(join(dir, "bin", "run"), ""), join(dir, "bin", "run"));
    assert.equal(which("bin/run", join(dir, "bin")), null, "relative without cwd: unresolved");
    assert.equal(which("bin/nope", "/usr/bin", dir), null);
  });
});

Deno.test("which: empty and relative PATH entries resolve against the given cwd", async () => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(join(dir, "rel"));
    await makeFile(join(dir, "here"), 0o755);
    await makeFile(join(dir, "rel", "there"), 0o755);
    assert.equal(which("here", "/nonexistent::/also-not", dir), join(dir, "here"));
    assert.equal(which("there", "rel", dir), join(dir, "rel", "there"));
    assert.equal(which("here", "/nonexistent:", undefined), null);
  });
});

Deno.test("isExecutableFile never throws", () => {
  assert.equal(isExecutableFile("/nonexistent/x"), false);
  assert.equal(isExecutableFile("/"), false);
  assert.equal(isExecutableFile("/bin/sh"), true);
});
