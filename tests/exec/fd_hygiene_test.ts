// A child must see only fds 0, 1 and 2 once closeInheritedFds() ran, even for fds we
// opened without close-on-exec after an earlier call.

import assert from "node:assert/strict";
import { closeInheritedFds, spawnCapture } from "../../lib/exec/mod.ts";
import { dec, ENV } from "./_helpers.ts";

/** The fds of the child shell itself (not of `ls`, which opens the directory). */
async function childFds(): Promise<number[]> {
  const r = await spawnCapture({ argv: ["sh", "-c", "ls /proc/$$/fd"], cwd: "/", env: ENV });
  return dec.decode(r.stdout).split("\n").filter((l) => l !== "").map(Number).sort((a, b) => a - b);
}

Deno.test("closeInheritedFds: children see only 0, 1, 2; safe to call twice", async () => {
  const libc = Deno.dlopen(
    "libc.so.6",
    {
      dup: { parameters: ["i32"], result: "i32" },
      close: { parameters: ["i32"], result: "i32" },
    } as const,
  );
  // dup() never sets FD_CLOEXEC: this is exactly the kind of fd that leaks into children.
  const leaky = libc.symbols.dup(0);
  try {
    assert.ok(leaky > 2);
    assert.ok((await childFds()).includes(leaky), "precondition: an fd without CLOEXEC leaks");
    assert.equal(closeInheritedFds(), true);
    assert.deepEqual(await childFds(), [0, 1, 2]);
    assert.equal(closeInheritedFds(), true, "second call is fine");
    assert.deepEqual(await childFds(), [0, 1, 2]);
  } finally {
    libc.symbols.close(leaky);
    libc.close();
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
