/**
 * The journal's write schedule (lib/kernel/write_window.ts): the first work after a quiet spell
 * goes after QUIET_MS; while work keeps coming, writes are at least BUSY_MS apart.
 */

import assert from "node:assert/strict";
import { BUSY_MS, QUIET_MS, WriteWindow } from "../../lib/kernel/write_window.ts";

Deno.test("a write window: quiet spells go soon, steady work at most once per busy interval", () => {
  const w = new WriteWindow();
  assert.ok(QUIET_MS < BUSY_MS);
  assert.equal(w.delay(1_000), QUIET_MS, "nothing written yet: soon");
  w.wrote(1_000);
  assert.equal(w.delay(1_000), BUSY_MS, "right after a write: a full busy interval");
  assert.equal(w.delay(1_030), BUSY_MS - 30);
  assert.equal(w.delay(1_000 + BUSY_MS - 5), QUIET_MS, "never sooner than the quiet delay");
  assert.equal(w.delay(1_000 + 10 * BUSY_MS), QUIET_MS, "after a quiet spell: soon again");
});
