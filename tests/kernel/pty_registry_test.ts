// The kernel's PTY table (D-14, D-31): a PTY belongs to its session *and* principal — to any
// other it is unknown, exactly like one that never existed — and each principal has a quota.
// Real session hosts (Workers); the table is what methods/pty.ts consults before routing.

import assert from "node:assert/strict";
import { RPC, RpcError } from "../../lib/client/errors.ts";
import { EventBus } from "../../lib/kernel/event_bus.ts";
import { ptyNumber, PtyRegistry } from "../../lib/kernel/pty_registry.ts";
import { SessionHost } from "../../lib/kernel/session_host.ts";

const code = (fn: () => unknown): number | null => {
  try {
    fn();
    return null;
  } catch (e) {
    return e instanceof RpcError ? e.code : -1;
  }
};

Deno.test("PTYs belong to their session and principal; quotas are per principal", async () => {
  const bus = new EventBus();
  const s1 = new SessionHost("s1", bus, { cwd: "/", env: {} });
  const s2 = new SessionHost("s2", bus, { cwd: "/", env: {} });
  await Promise.all([s1.ready(), s2.ready()]);
  try {
    const reg = new PtyRegistry(2);
    const a1 = reg.reserve(s1, "agent:a", "sh");
    assert.equal(a1.ref, "pty:1");
    assert.equal(reg.get("pty:1", s1, "agent:a"), a1);
    assert.equal(reg.get("1", s1, "agent:a"), a1, "a bare number names it too");
    // Same session, another principal; another session, same principal: unknown.
    assert.equal(code(() => reg.get("pty:1", s1, "agent:b")), RPC.UNKNOWN_PTY);
    assert.equal(code(() => reg.get("pty:1", s2, "agent:a")), RPC.UNKNOWN_PTY);
    assert.equal(reg.owns("pty:1", s1, "agent:b"), false);
    assert.deepEqual([...reg.idsOf(s1, "agent:b")], []);
    // The quota counts a principal's PTYs over all its sessions.
    reg.reserve(s2, "agent:a", "sh");
    assert.equal(code(() => reg.reserve(s1, "agent:a", "vi x")), RPC.QUOTA_EXCEEDED);
    const b1 = reg.reserve(s1, "agent:b", "sh");
    assert.deepEqual([...reg.idsOf(s1, "agent:b")], [b1.id]);
    // A closed PTY is remembered (a repeated close answers alike) for its owner only.
    reg.release(a1, { pty_id: "pty:1", closed: true, exit: null });
    assert.deepEqual(reg.closedResult("pty:1", s1, "agent:a"), {
      pty_id: "pty:1",
      closed: true,
      exit: null,
    });
    assert.equal(reg.closedResult("pty:1", s1, "agent:b"), undefined);
    assert.equal(reg.owns("pty:1", s1, "agent:a"), true);
    assert.equal(code(() => reg.get("pty:1", s1, "agent:a")), RPC.UNKNOWN_PTY);
    reg.reserve(s1, "agent:a", "sh"); // the quota freed
    // A session shut down takes its PTYs with it.
    await s2.close();
    assert.equal(reg.countOf("agent:a"), 1);
    assert.equal(ptyNumber("pty:12"), 12);
    assert.equal(ptyNumber("pty:0"), null);
    assert.equal(ptyNumber("task:1"), null);
  } finally {
    await s1.close();
    await s2.close();
  }
});
