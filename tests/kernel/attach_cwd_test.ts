/**
 * `session.attach {cwd}`: a session the attach creates starts in the attaching client's
 * directory (an MCP host's project, a terminal's directory), not the kernel's; an existing
 * session stays where it is; a relative path is refused, a missing one is said. Real kernel,
 * real socket.
 */

import { deepStrictEqual as assertEquals, match as assertMatch } from "node:assert/strict";
import { join } from "node:path";
import { KernelClient } from "../../lib/client/client.ts";
import { RPC } from "../../lib/client/errors.ts";
import { rpcError, withKernel } from "./_helpers.ts";

const pwd = async (c: KernelClient) =>
  (await c.call<{ value: { v: unknown } }>("exec", { src: "pwd", position: "value" })).value.v;

Deno.test("a new session starts in the attaching client's directory", async () => {
  await withKernel(async (k, dir) => {
    const real = await Deno.realPath(dir);
    for (const d of ["a", "b"]) await Deno.mkdir(join(real, d));
    const a = await KernelClient.connect({
      socket: k.path,
      attach: { session: "s", cwd: join(real, "a") },
    });
    assertEquals(a.attached!.cwd, { display: join(real, "a") });
    assertEquals(await pwd(a), join(real, "a"));
    // Attaching to it again from elsewhere does not move it.
    const b = await KernelClient.connect({
      socket: k.path,
      attach: { session: "s", cwd: join(real, "b") },
    });
    assertEquals(await pwd(b), join(real, "a"));
    // Without a cwd a new session starts where the kernel does.
    const plain = await KernelClient.connect({ socket: k.path, attach: { session: "t" } });
    assertEquals(await pwd(plain), real);
    for (const c of [a, b, plain]) c.close();
  });
});

Deno.test("attach cwd: relative is refused, missing is said", async () => {
  await withKernel(async (k, dir) => {
    const e = await rpcError(
      KernelClient.connect({ socket: k.path, attach: { session: "r", cwd: "rel/dir" } }),
    );
    assertEquals(e.code, RPC.INVALID_PARAMS);
    assertMatch(e.message, /`cwd` must be an absolute path \(got "rel\/dir"\)/);
    const missing = join(dir, "nope");
    const c = await KernelClient.connect({
      socket: k.path,
      attach: { session: "m", cwd: missing },
    });
    const cwd = c.attached!.cwd;
    assertEquals(cwd.display, await Deno.realPath(dir));
    assertMatch(cwd.note ?? "", /nope \(the attaching client's directory\) is not a directory/);
    c.close();
  });
});
