// The Linux signal table: numbers ↔ names, aliases, real-time spelling.

import assert from "node:assert/strict";
import {
  signalGroup,
  signalName,
  signalNumber,
  signalTable,
  spawnStreaming,
} from "../../lib/exec/mod.ts";

Deno.test("classic signals map both ways", () => {
  const expected: [number, string][] = [
    [1, "SIGHUP"],
    [2, "SIGINT"],
    [3, "SIGQUIT"],
    [6, "SIGABRT"],
    [9, "SIGKILL"],
    [11, "SIGSEGV"],
    [13, "SIGPIPE"],
    [15, "SIGTERM"],
    [17, "SIGCHLD"],
    [18, "SIGCONT"],
    [19, "SIGSTOP"],
    [20, "SIGTSTP"],
    [31, "SIGSYS"],
  ];
  for (const [n, name] of expected) {
    assert.equal(signalName(n), name);
    assert.equal(signalNumber(name), n);
  }
});

Deno.test("signalNumber accepts case, missing prefix, aliases and numbers", () => {
  assert.equal(signalNumber("segv"), 11);
  assert.equal(signalNumber("Term"), 15);
  assert.equal(signalNumber("SIGIOT"), 6);
  assert.equal(signalNumber("POLL"), 29);
  assert.equal(signalNumber("9"), 9);
  assert.equal(signalNumber("SIG40"), 40);
  assert.equal(signalNumber("RTMIN+6"), 40);
  assert.equal(signalNumber("SIGRTMAX-1"), 63);
  assert.equal(signalNumber("SIGNOPE"), null);
  assert.equal(signalNumber("0"), null);
  assert.equal(signalNumber("65"), null);
  assert.equal(signalNumber("RTMIN+40"), null);
});

Deno.test("the table covers 1…64 with unique names that round-trip", () => {
  const table = signalTable();
  assert.equal(table.length, 64);
  assert.deepEqual(table.map(([n]) => n), Array.from({ length: 64 }, (_, i) => i + 1));
  assert.equal(new Set(table.map(([, name]) => name)).size, 64);
  for (const [n, name] of table) {
    assert.ok(name.startsWith("SIG"));
    assert.equal(signalNumber(name), n, name);
  }
  assert.equal(signalName(34), "SIGRTMIN");
  assert.equal(signalName(49), "SIGRTMIN+15");
  assert.equal(signalName(50), "SIGRTMAX-14");
  assert.equal(signalName(64), "SIGRTMAX");
  assert.equal(signalName(99), "SIG99");
});

Deno.test("signalGroup: true while the group lives, false once it is gone (never a throw)", async () => {
  const child = await spawnStreaming({
    argv: ["sleep", "30"],
    cwd: "/",
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
  });
  assert.equal(signalGroup(child.pgid, "SIGTERM"), true);
  const r = await child.result;
  assert.equal(r.signal, "SIGTERM");
  assert.equal(signalGroup(child.pgid, "SIGKILL"), false);
  assert.equal(signalGroup(child.pgid, "SIGRTMIN+1"), false);
  assert.throws(() => signalGroup(1, "SIGTERM"), RangeError);
});
