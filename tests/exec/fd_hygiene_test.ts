// A child must see only fds 0, 1 and 2: posix_spawn children always (closefrom in the
// child), Deno.Command children (the fallback backend, other callers) once
// closeInheritedFds() ran, even for fds we opened without close-on-exec after an earlier call.

import assert from "node:assert/strict";
import { closeInheritedFds, spawnCapture } from "../../lib/exec/mod.ts";
import { setSpawnBackend, spawnBackend } from "../../lib/exec/child.ts";
import { dec, ENV } from "./_helpers.ts";

const LS_OWN_FDS = "ls /proc/$$/fd"; // the shell's own fds, not those of `ls`

function parseFds(out: Uint8Array): number[] {
  return dec.decode(out).split("\n").filter((l) => l !== "").map(Number).sort((a, b) => a - b);
}

/** The fds of a child started by a bare Deno.Command. */
async function commandChildFds(): Promise<number[]> {
  const o = await new Deno.Command("sh", { args: ["-c", LS_OWN_FDS], env: ENV }).output();
  return parseFds(o.stdout);
}

/** The fds of a child started by spawnCapture. */
async function captureChildFds(): Promise<number[]> {
  return parseFds(
    (await spawnCapture({ argv: ["sh", "-c", LS_OWN_FDS], cwd: "/", env: ENV })).stdout,
  );
}

function withLeakyFd(fn: (fd: number) => Promise<void>): Promise<void> {
  const libc = Deno.dlopen(
    "libc.so.6",
    {
      dup: { parameters: ["i32"], result: "i32" },
      close: { parameters: ["i32"], result: "i32" },
    } as const,
  );
  // dup() never sets FD_CLOEXEC: this is exactly the kind of fd that leaks into children.
  const leaky = libc.symbols.dup(0);
  assert.ok(leaky > 2);
  return fn(leaky).finally(() => {
    libc.symbols.close(leaky);
    libc.close();
  });
}

Deno.test("closeInheritedFds: Deno.Command children see only 0, 1, 2; safe to call twice", async () => {
  await withLeakyFd(async (leaky) => {
    assert.ok(
      (await commandChildFds()).includes(leaky),
      "precondition: an fd without CLOEXEC leaks",
    );
    assert.equal(closeInheritedFds(), true);
    assert.deepEqual(await commandChildFds(), [0, 1, 2]);
    assert.equal(closeInheritedFds(), true, "second call is fine");
    assert.deepEqual(await commandChildFds(), [0, 1, 2]);
  });
});

Deno.test("spawnCapture children see only 0, 1, 2 on either backend", async () => {
  const before = spawnBackend();
  try {
    await withLeakyFd(async (leaky) => {
      if (setSpawnBackend("posix_spawn") === "posix_spawn") {
        // closefrom(3) in the child: no closeInheritedFds() needed.
        assert.deepEqual(await captureChildFds(), [0, 1, 2]);
      }
      setSpawnBackend("command");
      assert.ok((await captureChildFds()).includes(leaky), "precondition: Deno.Command leaks");
      closeInheritedFds();
      assert.deepEqual(await captureChildFds(), [0, 1, 2]);
    });
  } finally {
    setSpawnBackend(before);
  }
});

Deno.test("closeInheritedFds keeps our own fds usable", async () => {
  const path = await Deno.makeTempFile();
  try {
    const f = await Deno.open(path, { write: true });
    closeInheritedFds();
    await f.write(new TextEncoder().encode("still open"));
    f.close();
    assert.equal(await Deno.readTextFile(path), "still open");
  } finally {
    await Deno.remove(path);
  }
});
