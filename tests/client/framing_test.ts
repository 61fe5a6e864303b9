import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { FrameReader, FrameWriter } from "../../lib/client/framing.ts";
import { socketPath } from "../../lib/client/discovery.ts";

/** A connected pair of real Unix sockets in a temp dir. */
async function socketPair(): Promise<{ a: Deno.Conn; b: Deno.Conn; cleanup: () => Promise<void> }> {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/s.sock`;
  const listener = Deno.listen({ transport: "unix", path });
  const [a, b] = await Promise.all([
    Deno.connect({ transport: "unix", path }),
    listener.accept(),
  ]);
  listener.close();
  return {
    a,
    b,
    cleanup: async () => {
      for (const c of [a, b]) {
        try {
          c.close();
        } catch { /* already closed */ }
      }
      await Deno.remove(dir, { recursive: true });
    },
  };
}

Deno.test("frames split on newlines across chunk boundaries, blank lines skipped", async () => {
  const { a, b, cleanup } = await socketPair();
  const w = new FrameWriter(a);
  const big = "x".repeat(200_000);
  await w.send({ n: 1 });
  await w.send({ big });
  await a.write(new TextEncoder().encode('\n\n{"n":3}\n{"tail":true}'));
  a.close();
  const r = new FrameReader(b);
  const got: unknown[] = [];
  for (let f = await r.next(); f; f = await r.next()) {
    assertEquals(f.kind, "line");
    if (f.kind === "line") got.push(JSON.parse(f.text));
  }
  assertEquals(got, [{ n: 1 }, { big }, { n: 3 }, { tail: true }]);
  await cleanup();
});

Deno.test("an oversize frame is reported once and the stream resynchronises", async () => {
  const { a, b, cleanup } = await socketPair();
  const r = new FrameReader(b, 1024);
  const writer = (async () => {
    const enc = new TextEncoder();
    await a.write(enc.encode('{"ok":1}\n'));
    const chunk = enc.encode("y".repeat(4096));
    for (let i = 0; i < 64; i++) {
      let off = 0;
      while (off < chunk.length) off += await a.write(chunk.subarray(off));
    }
    await a.write(enc.encode('\n{"ok":2}\n'));
    a.close();
  })();
  const frames = [];
  for (let f = await r.next(); f; f = await r.next()) frames.push(f);
  await writer;
  assertEquals(frames.length, 3);
  assertEquals(frames[0], { kind: "line", text: '{"ok":1}' });
  assertEquals(frames[1], { kind: "oversize", bytes: 64 * 4096 });
  assertEquals(frames[2], { kind: "line", text: '{"ok":2}' });
  await cleanup();
});

Deno.test("concurrent sends never interleave inside a frame", async () => {
  const { a, b, cleanup } = await socketPair();
  const w = new FrameWriter(a);
  const payload = (i: number) => ({ i, pad: String(i).repeat(50_000) });
  const sends = Array.from({ length: 20 }, (_, i) => w.send(payload(i)));
  const r = new FrameReader(b);
  const seen: number[] = [];
  for (let k = 0; k < 20; k++) {
    const f = await r.next();
    if (f?.kind !== "line") throw new Error("expected a line");
    const m = JSON.parse(f.text);
    assertEquals(m, payload(m.i));
    seen.push(m.i);
  }
  await Promise.all(sends);
  assertEquals(seen.sort((x, y) => x - y), Array.from({ length: 20 }, (_, i) => i));
  await cleanup();
});

Deno.test("frames leave in send order, and a failed write fails those queued behind it", async () => {
  const { a, b, cleanup } = await socketPair();
  const w = new FrameWriter(a);
  // The first frame is written at once; the big ones queue behind each other, in order.
  const payload = (i: number) => ({ i, pad: "z".repeat(i % 2 ? 100_000 : 10) });
  const sends = Array.from({ length: 12 }, (_, i) => w.send(payload(i)));
  const r = new FrameReader(b);
  const seen: number[] = [];
  for (let k = 0; k < 12; k++) {
    const f = await r.next();
    if (f?.kind !== "line") throw new Error("expected a line");
    seen.push(JSON.parse(f.text).i);
  }
  await Promise.all(sends);
  assertEquals(seen, Array.from({ length: 12 }, (_, i) => i));
  // The peer goes away: a write fails, and every send after it rejects without writing.
  b.close();
  let failed = false;
  for (let i = 0; i < 64 && !failed; i++) {
    failed = await w.send(payload(1)).then(() => false, () => true);
  }
  assertEquals(failed, true);
  assertEquals(
    await w.send({ late: true }).then(() => "sent", (e) => String(e.message)),
    "connection closed",
  );
  await cleanup();
});

Deno.test("socket discovery follows the documented order", () => {
  const env = (vars: Record<string, string>) => (n: string) => vars[n];
  assertEquals(socketPath({ explicit: "/x/y.sock", env: env({}) }), "/x/y.sock");
  assertEquals(
    socketPath({ session: "work", env: env({ XDG_RUNTIME_DIR: "/run/user/1" }), euid: 1 }),
    "/run/user/1/shoal/work.sock",
  );
  assertEquals(
    socketPath({ env: env({ XDG_RUNTIME_DIR: "", TMPDIR: "/var/t" }), euid: 7 }),
    "/var/t/shoal-7/shoal/default.sock",
  );
  assertEquals(socketPath({ env: env({}), euid: 0 }), "/tmp/shoal-0/shoal/default.sock");
});
