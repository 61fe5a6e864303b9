/** The kernel ↔ session line splitter: lines across chunks, UTF-8 across chunks, big lines. */

import assert from "node:assert/strict";
import { LineSplitter } from "../../lib/kernel/line_splitter.ts";

const enc = new TextEncoder();

Deno.test("lines split across chunks and multi-byte characters split across chunks", () => {
  const got: string[] = [];
  const s = new LineSplitter((l) => got.push(l));
  const bytes = enc.encode('{"a":"é"}\n\n{"b":"→"}\n{"c"');
  for (let i = 0; i < bytes.length; i += 3) s.push(bytes.subarray(i, i + 3));
  assert.deepEqual(got, ['{"a":"é"}', '{"b":"→"}']); // the empty line is skipped
  assert.equal(s.pendingLength, 4);
  assert.equal(s.takeRest(), '{"c"');
  assert.equal(s.pendingLength, 0);
});

Deno.test("a line of many chunks costs its length, not its length squared", () => {
  const got: string[] = [];
  const s = new LineSplitter((l) => got.push(l));
  const chunk = enc.encode("x".repeat(64 * 1024));
  // 64 MiB in 64 KiB chunks: quadratic scanning would take minutes here.
  for (let i = 0; i < 1024; i++) s.push(chunk);
  s.push(enc.encode("\n"));
  assert.equal(got.length, 1);
  assert.equal(got[0].length, 64 * 1024 * 1024);
});
