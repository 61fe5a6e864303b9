/**
 * The shared-memory mailbox between the kernel and a session Worker: messages arrive once and
 * in send order whichever path they took (the slot, or `postMessage` when too big or when the
 * slot was still full), and a real kernel answers big and small results interleaved.
 */

import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import {
  mailboxBuffer,
  MailboxReceiver,
  MailboxSender,
  SLOT_BYTES,
} from "../../lib/kernel/mailbox.ts";
import { client, waitFor, withKernel } from "./_helpers.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test("mailbox: one delivery per message, in order, across slot and fallback", async () => {
  const sab = mailboxBuffer();
  const got: unknown[] = [];
  const rx = new MailboxReceiver(sab, (json) => got.push(JSON.parse(json)));
  let fallbacks = 0;
  // The fallback arrives at once (before the slot's message is taken): the receiver must hold
  // it back until the earlier one is delivered.
  const tx = new MailboxSender(sab, (text) => {
    fallbacks++;
    rx.fromPost(text);
  });
  const big = "é".repeat(SLOT_BYTES); // more bytes than the slot holds
  const sent = [{ n: 1 }, { n: 2, big }, { n: 3 }, { n: 4 }, { n: 5, s: "ünïcode ✓" }];
  for (const m of sent) tx.send(m);
  assert(fallbacks >= 3, `expected the slot to be busy or too small, fallbacks=${fallbacks}`);
  await waitFor(() => got.length === sent.length, 5000, "every message delivered");
  assertEquals(got, sent);
  // A later burst after the slot drained goes through the slot again.
  tx.send({ n: 6 });
  await waitFor(() => got.length === 6, 5000, "the next message delivered");
  assertEquals(got[5], { n: 6 });
  rx.close();
  tx.send({ n: 7 });
  rx.fromPost(`8:${JSON.stringify({ n: 8 })}`);
  await new Promise((r) => setTimeout(r, 20));
  assertEquals(got.length, 6, "a closed receiver delivers nothing more");
});

Deno.test("kernel: big and small exec results interleaved on one session", opts, async () => {
  await withKernel(async (k) => {
    const c = await client(k.path, "mb");
    const size = 3 * SLOT_BYTES;
    const calls = [];
    for (let i = 0; i < 20; i++) {
      calls.push(
        i % 3 === 0
          ? c.call<{ value: { v: string } }>("exec", {
            src: `(0..${size}).map(i => "x").join("")`,
            elide: { max_bytes: 4 * SLOT_BYTES },
          }).then((r) => r.value.v.length)
          : c.call<{ value: { v: number } }>("exec", { src: `${i} + 1` }).then((r) => r.value.v),
      );
    }
    const results = await Promise.all(calls);
    for (let i = 0; i < 20; i++) {
      assertEquals(results[i], i % 3 === 0 ? size : i + 1, `call ${i}`);
    }
    c.close();
  });
});
