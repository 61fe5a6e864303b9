// Streaming mode: stdout read live with back-pressure, stderr captured, same cancel rules.

import assert from "node:assert/strict";
import { spawnStreaming } from "../../lib/exec/mod.ts";
import { cmdline, dec, enc, ENV, killGroupQuietly, liveMembers, waitFor } from "./_helpers.ts";

Deno.test("stdout arrives as a live stream; result reports status and stderr", async () => {
  const child = await spawnStreaming({
    argv: ["sh", "-c", "echo first; sleep 0.2; echo second; echo oops >&2; exit 5"],
    cwd: "/",
    env: ENV,
  });
  const reader = child.stdout.getReader();
  const t0 = performance.now();
  const first = await reader.read();
  assert.equal(dec.decode(first.value), "first\n");
  assert.ok(performance.now() - t0 < 180, "first line came before the child finished");
  let rest = "";
  while (true) {
    const { done, value } = await reader.read();
    if (done) break;
    rest += dec.decode(value);
  }
  assert.equal(rest, "second\n");
  const r = await child.result;
  assert.equal(r.status, 5);
  assert.equal(dec.decode(r.stderr), "oops\n");
  assert.ok(r.durNs > 150_000_000n);
});

Deno.test("cancelling the stdout stream gives the child SIGPIPE", async () => {
  const child = await spawnStreaming({ argv: ["yes"], cwd: "/", env: ENV });
  const reader = child.stdout.getReader();
  await reader.read();
  await reader.cancel();
  const r = await child.result;
  assert.equal(r.status, null);
  assert.equal(r.signal, "SIGPIPE");
  assert.equal(r.cancelled, false);
});

Deno.test("an unread stdout stalls the child (back-pressure, no unbounded buffering)", async () => {
  const child = await spawnStreaming({
    argv: ["head", "-c", "50000000", "/dev/zero"],
    cwd: "/",
    env: ENV,
  });
  const before = Deno.memoryUsage().rss;
  await new Promise((r) => setTimeout(r, 300));
  assert.ok(Deno.memoryUsage().rss - before < 16 * 1024 * 1024, "nothing read ahead");
  assert.deepEqual(liveMembers(child.pgid), [child.pid], "head is blocked, still alive");
  let n = 0;
  for await (const c of child.stdout) n += c.length;
  assert.equal(n, 50_000_000);
  assert.equal((await child.result).status, 0);
});

Deno.test("streaming with stdin and cancel()", async () => {
  const child = await spawnStreaming({
    argv: ["sh", "-c", "cat; sleep 300"],
    cwd: "/",
    env: ENV,
    stdin: enc.encode("fed\n"),
    // Room for sh to act on SIGINT on a loaded machine before SIGTERM follows (the ladder
    // stops as soon as the group is gone, so this costs nothing when it is quick).
    graceMs: 2000,
  });
  try {
    const reader = child.stdout.getReader();
    assert.equal(dec.decode((await reader.read()).value), "fed\n");
    // Cancel once `sleep` runs: a SIGINT landing between `cat` and `sleep` could leave `sleep`
    // to the ladder's SIGTERM (about 1 run in 6 under a full suite's load).
    const sleeping = () => liveMembers(child.pgid).some((p) => cmdline(p)[0] === "sleep");
    assert.ok(await waitFor(sleeping), "sleep started");
    child.cancel();
    assert.equal((await reader.read()).done, true, "stdout ends once the group is dead");
    const r = await child.result;
    assert.ok(r.cancelled);
    assert.equal(r.signal, "SIGINT");
    assert.deepEqual(liveMembers(child.pgid), []);
  } finally {
    killGroupQuietly(child.pgid);
  }
});
