// The client side of the exec lane against a real Unix socket: an exec it never delivered is
// "unsent" (the kernel may run it), one delivered and then orphaned is "lost" (it may have run).

import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { join } from "node:path";
import { ExecLane } from "../../lib/client/lane.ts";
import { FrameReader, FrameWriter } from "../../lib/client/framing.ts";

/**
 * A one-connection lane server that answers `hello`, then hands the connection to `then`
 * (given the frames that follow).
 */
async function withLaneServer(
  then: (conn: Deno.Conn, next: () => Promise<string | null>) => Promise<void>,
  client: (lane: ExecLane) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir();
  const path = join(dir, "lane.sock");
  const listener = Deno.listen({ transport: "unix", path });
  const served = (async () => {
    const conn = await listener.accept();
    const reader = new FrameReader(conn);
    const next = async () => {
      const f = await reader.next();
      return f && f.kind === "line" ? f.text : null;
    };
    const hello = JSON.parse((await next())!);
    await new FrameWriter(conn).send({ jsonrpc: "2.0", id: hello.id, result: { instance: "i1" } });
    await then(conn, next);
  })();
  try {
    const lane = await ExecLane.open(path, "ticket");
    assertEquals(lane.instance, "i1");
    await client(lane);
    lane.close();
    await served;
  } finally {
    listener.close();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("lane: an exec after the session closed the lane is unsent, not lost", async () => {
  await withLaneServer(
    (conn) => Promise.resolve(conn.close()),
    async (lane) => {
      for (let i = 0; i < 200 && lane.alive; i++) await new Promise((r) => setTimeout(r, 5));
      assertEquals(lane.alive, false, "the lane saw its end");
      assertEquals(await lane.exec({ seq: 1, src: "1" }), "unsent");
    },
  );
});

Deno.test("lane: an exec the session read and never answered is lost", async () => {
  await withLaneServer(
    async (conn, next) => {
      const m = JSON.parse((await next())!);
      assertEquals(m.method, "exec");
      conn.close();
    },
    async (lane) => {
      assertEquals(await lane.exec({ seq: 1, src: "1" }), "lost");
      assertEquals(await lane.exec({ seq: 2, src: "2" }), "unsent", "and later ones unsent");
    },
  );
});
