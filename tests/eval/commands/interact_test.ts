// `interact cmd…`: the command runs as a statement — in the foreground of a host with a person at
// a terminal (its `process.foreground` port) — in any position; a host without a terminal
// refuses with a pointer to the PTY methods.

import assert from "node:assert/strict";
import { spawnCapture } from "../../../lib/exec/mod.ts";
import { OutcomeV } from "../../../lib/value/types.ts";
import { error, run, session, withTempDir } from "./_helpers.ts";

Deno.test("interact runs its command as a statement where the host has a terminal", async () => {
  await withTempDir(async (dir) => {
    // A host with a person in front provides `process.foreground` (the REPL's PtyTee); the
    // command runs in statement position, where that host puts externals in the foreground.
    const ev = session(dir, {
      ports: { process: { capture: spawnCapture, foreground: spawnCapture } },
    });
    const v = await run(ev, 'let o = (interact sh -c "echo hi; exit 3")\no');
    assert.ok(v instanceof OutcomeV);
    assert.equal(new TextDecoder().decode(v.stdout), "hi\n");
    assert.equal(v.status, 3, "a failed command is its outcome, not an error");
    const e = await error(ev, "interact");
    assert.equal(e.code, "arg_error");
    const t = await error(ev, "interact (1 + 2)");
    assert.equal(t.code, "type_error");
  });
});

Deno.test("interact without a terminal refuses and names the PTY methods", async () => {
  await withTempDir(async (dir) => {
    const ev = session(dir);
    const e = await error(ev, "interact vim notes.txt");
    assert.equal(e.code, "custom");
    assert.match(e.msg, /needs a person at a terminal/);
    assert.match(e.hint ?? "", /pty\.open/);
  });
});
