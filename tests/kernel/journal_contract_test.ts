/**
 * The journal contract (protocol §14, issue 19) over a real socket: every output of every
 * `journal.query` row carries a `hash` that `blob.get` resolves — inline (small) outputs too,
 * which stay in their row rather than costing a blob file per exec.
 */

import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { KernelClient } from "../../lib/client/client.ts";
import { startKernel } from "../../lib/kernel/server.ts";
import { tempDir } from "./_helpers.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

type Out = { kind: string; hash: string | null; len: number; preview?: string };

Deno.test("every output kind's hash resolves with blob.get, small ones too", opts, async () => {
  const dir = await tempDir();
  const state = join(dir, "state");
  const k = await startKernel({ socket: join(dir, "run", "k.sock"), stateDir: state, cwd: dir });
  const c = await KernelClient.connect({ socket: k.path, attach: {} });
  try {
    await c.call("exec", { src: "42" }); // value + render, both inline
    await c.call("exec", { src: "sh { echo out; echo err >&2 }" }); // stdout, stderr inline
    await c.call("exec", { src: "(0..3000).map(x => {n: x})" }); // value in the CAS
    const rows = await c.call<Array<{ src: string; outputs: Out[] }>>("journal.query", {});
    const kinds = new Set<string>();
    for (const row of rows) {
      assert(row.outputs.length > 0, `no outputs for ${row.src}`);
      for (const o of row.outputs) {
        kinds.add(o.kind);
        assert(typeof o.hash === "string" && /^[0-9a-f]{64}$/.test(o.hash), JSON.stringify(o));
        const b = await c.call<{ hash: string; len: number; size: number; value: unknown }>(
          "blob.get",
          { hash: o.hash },
        );
        assertEquals([b.hash, b.size], [o.hash, o.len], `${row.src} ${o.kind}`);
        if (o.preview !== undefined) {
          // The bytes are the output itself: JSON text comes back parsed, anything else as bytes.
          const v = b.value as { $?: string; v?: string; len?: number };
          if (v?.$ === "bytes" && v.len !== undefined) {
            assertEquals(new TextDecoder().decode(Uint8Array.fromBase64(v.v!)), o.preview);
          } else assertEquals(b.value, JSON.parse(o.preview));
        }
      }
    }
    for (const kind of ["value", "render", "stdout", "stderr"]) assert(kinds.has(kind), kind);
    // A range of an inline output, and a hash that names nothing.
    const render = rows.find((r) => r.src === "42")!.outputs.find((o) => o.kind === "render")!;
    const part = await c.call<{ len: number; more: boolean }>("blob.get", {
      hash: render.hash,
      offset: 1,
    });
    assertEquals([part.len, part.more], [render.len - 1, false]);
    const miss = await c.call("blob.get", { hash: "0".repeat(64) }).catch((e) => e);
    assertEquals((miss as { code: number }).code, -32004);
  } finally {
    c.close();
    await k.close();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
