// Failures to start are typed ExecErrors with stable kinds; bad options never crash or hang.

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  type ExecErrorKind,
  isExecError,
  spawnCapture,
  spawnStreaming,
} from "../../lib/exec/mod.ts";
import { ENV, withTempDir } from "./_helpers.ts";

async function expectKind(p: Promise<unknown>, kind: ExecErrorKind): Promise<Error> {
  try {
    await p;
  } catch (e) {
    assert.ok(isExecError(e), `expected ExecError, got ${e}`);
    assert.equal(e.kind, kind, e.message);
    assert.ok(e.message.length > 0);
    return e;
  }
  assert.fail(`expected ${kind}, but the spawn succeeded`);
}

Deno.test("unknown command → not_found with the OS message", async () => {
  const e = await expectKind(
    spawnCapture({ argv: ["zzzz-no-such-command-shoal"], cwd: "/", env: ENV }),
    "not_found",
  );
  assert.ok(isExecError(e));
  assert.match(e.osMessage!, /No such file or directory/);
  assert.match(e.message, /zzzz-no-such-command-shoal/);
});

Deno.test("empty PATH in the given env finds nothing, even if the host has it", async () => {
  await expectKind(spawnCapture({ argv: ["sh"], cwd: "/", env: { PATH: "" } }), "not_found");
});

Deno.test("missing path with a slash → not_found; file without x bit / directory → permission_denied", async () => {
  await withTempDir(async (dir) => {
    await expectKind(
      spawnCapture({ argv: ["./nope"], cwd: dir, env: ENV }),
      "not_found",
    );
    const plain = join(dir, "plain.sh");
    await Deno.writeTextFile(plain, "#!/bin/sh\necho hi\n");
    await Deno.chmod(plain, 0o644);
    const e = await expectKind(
      spawnCapture({ argv: [plain], cwd: dir, env: ENV }),
      "permission_denied",
    );
    assert.ok(isExecError(e) && e.path === plain);
    await expectKind(spawnCapture({ argv: [dir], cwd: dir, env: ENV }), "permission_denied");
  });
});

Deno.test("script with a missing #! interpreter → not_found with a hint", async () => {
  await withTempDir(async (dir) => {
    const script = join(dir, "bad.sh");
    await Deno.writeTextFile(script, "#!/nonexistent/interp\necho hi\n");
    await Deno.chmod(script, 0o755);
    const e = await expectKind(spawnCapture({ argv: [script], cwd: dir, env: ENV }), "not_found");
    assert.ok(isExecError(e));
    assert.match(e.hint!, /interpreter/);
  });
});

Deno.test("a cwd that does not exist is reported as cwd_not_found", async () => {
  const e = await expectKind(
    spawnCapture({ argv: ["true"], cwd: "/nonexistent/shoal/dir", env: ENV }),
    "cwd_not_found",
  );
  assert.match(e.message, /\/nonexistent\/shoal\/dir/);
  await withTempDir(async (dir) => {
    const file = join(dir, "f");
    await Deno.writeTextFile(file, "");
    await expectKind(spawnCapture({ argv: ["true"], cwd: file, env: ENV }), "cwd_not_found");
  });
});

Deno.test("malformed options → invalid_argument", async () => {
  const bad: Record<string, unknown>[] = [
    { argv: [], cwd: "/", env: ENV },
    { argv: [""], cwd: "/", env: ENV },
    { argv: ["true"], cwd: "relative/dir", env: ENV },
    { argv: ["true"], cwd: "/", env: null },
    { argv: ["true"], cwd: "/", env: { "A=B": "x" } },
    { argv: ["true"], cwd: "/", env: { A: 1 } },
    { argv: ["echo", "a\0b"], cwd: "/", env: ENV },
    { argv: ["echo", new Uint8Array([97, 0])], cwd: "/", env: ENV },
    { argv: [new Uint8Array([0xff])], cwd: "/", env: ENV },
    { argv: ["echo", 42], cwd: "/", env: ENV },
    { argv: ["echo", undefined, "x"], cwd: "/", env: ENV },
    { argv: ["true"], cwd: "/", env: ENV, stdoutCap: -1 },
    { argv: ["true"], cwd: "/", env: ENV, stdoutCap: 1.5 },
    { argv: ["true"], cwd: "/", env: ENV, timeoutMs: Infinity },
    { argv: ["true"], cwd: "/", env: ENV, graceMs: -5 },
    { argv: ["true"], cwd: "/", env: ENV, killScope: "everything" },
    { argv: ["true"], cwd: "/", env: ENV, stdout: { file: "x" } },
    { argv: ["true"], cwd: "/", env: ENV, stdin: 42 },
    { argv: ["true"], cwd: "/", env: ENV, spill: "yes" },
  ];
  for (const opts of bad) {
    // deno-lint-ignore no-explicit-any
    await expectKind(spawnCapture(opts as any), "invalid_argument");
  }
});

Deno.test("a locked stdin stream is rejected before anything starts", async () => {
  const s = new ReadableStream<Uint8Array>();
  const reader = s.getReader();
  await expectKind(
    spawnCapture({ argv: ["cat"], cwd: "/", env: ENV, stdin: s }),
    "invalid_argument",
  );
  reader.releaseLock();
});

Deno.test("unopenable redirect files → redirect_failed (stdin, stdout, stderr)", async () => {
  await withTempDir(async (dir) => {
    await expectKind(
      spawnCapture({ argv: ["cat"], cwd: dir, env: ENV, stdin: { path: "missing" } }),
      "redirect_failed",
    );
    await expectKind(
      spawnCapture({ argv: ["cat"], cwd: dir, env: ENV, stdin: { path: dir } }),
      "redirect_failed",
    );
    await expectKind(
      spawnCapture({ argv: ["true"], cwd: dir, env: ENV, stdout: { path: "no/such/dir/f" } }),
      "redirect_failed",
    );
    await expectKind(
      spawnCapture({ argv: ["true"], cwd: dir, env: ENV, stderr: { path: dir } }),
      "redirect_failed",
    );
  });
});

Deno.test("the stdin stream of a spawn that failed is cancelled, not left hanging", async () => {
  let cancelled = false;
  const s = new ReadableStream<Uint8Array>({
    cancel() {
      cancelled = true;
    },
  });
  await expectKind(
    spawnCapture({ argv: ["zzzz-no-such-command-shoal"], cwd: "/", env: ENV, stdin: s }),
    "not_found",
  );
  assert.ok(cancelled);
});

Deno.test("an already-aborted signal → cancelled, nothing started", async () => {
  const ac = new AbortController();
  ac.abort();
  await expectKind(
    spawnCapture({ argv: ["true"], cwd: "/", env: ENV, signal: ac.signal }),
    "cancelled",
  );
  await expectKind(
    spawnStreaming({ argv: ["true"], cwd: "/", env: ENV, signal: ac.signal }),
    "cancelled",
  );
});

Deno.test("streaming mode reports the same start errors", async () => {
  await expectKind(
    spawnStreaming({ argv: ["zzzz-no-such-command-shoal"], cwd: "/", env: ENV }),
    "not_found",
  );
  await expectKind(
    spawnStreaming({ argv: ["true"], cwd: "/nonexistent/shoal", env: ENV }),
    "cwd_not_found",
  );
});
