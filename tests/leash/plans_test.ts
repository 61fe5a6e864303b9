/**
 * Plan refs and the plan store (D-3, D-31), canonical effects and coverage, reversibility, and
 * the approval decisions of §11.5.
 */

import {
  deepStrictEqual as assertEquals,
  match as assertMatch,
  ok as assert,
  rejects,
} from "node:assert/strict";
import {
  applyCheck,
  canonicalEffects,
  covers,
  decide,
  type Effect,
  effectsKey,
  parseEffects,
  parsePolicy,
  PlanQuotaError,
  PlanStore,
  PolicySet,
  requestedKinds,
  reversibilityOf,
} from "../../lib/leash/mod.ts";

const base = {
  src: "rm ./x",
  session: "default",
  sessionName: "default",
  principal: "agent:a",
  effects: [{ kind: "fs_delete", paths: ["/w/x"] }] as Effect[],
  reversibility: "conditional" as const,
  verdict: "approval_required" as const,
};

Deno.test("plan refs bind source, session, principal and a nonce; never overwrite (D-3)", async () => {
  const s = new PlanStore();
  const a = await s.create(base);
  const b = await s.create({ ...base, principal: "agent:b", session: "default@agent:b" });
  const again = await s.create(base);
  assertMatch(a.ref, /^plan:[0-9a-f]{16}$/);
  assert(a.ref !== b.ref && a.ref !== again.ref, "equal source, distinct refs");
  assertEquals([s.get(a.ref)!.principal, s.get(b.ref)!.principal], ["agent:a", "agent:b"]);
  assertEquals(s.size, 3, "nothing was overwritten");
  assertEquals(s.get(a.ref.slice(5))?.ref, a.ref, "the plan: prefix is optional");
  assertEquals(s.owned("default", "agent:a").map((p) => p.ref), [a.ref, again.ref]);
});

Deno.test("plans are bounded per principal and say so when full (D-31)", async () => {
  const s = new PlanStore(3, 1000, 100);
  const made = [];
  for (let i = 0; i < 3; i++) made.push(await s.create(base));
  await rejects(
    s.create(base),
    (e: unknown) => e instanceof PlanQuotaError && /3 plans/.test(e.message),
  );
  // Settled plans make room; another principal has its own share.
  made[0].applied = 1;
  const next = await s.create(base);
  assertEquals(s.get(made[0].ref), undefined);
  assert(s.get(next.ref));
  await s.create({ ...base, principal: "agent:b" });
  await rejects(
    s.create({ ...base, src: "x".repeat(2000) }),
    /more than agent:a.s budget of 1000 bytes for plans not yet applied or declined/,
  );
});

Deno.test("canonical effects, coverage, parsing, reversibility", () => {
  const e: Effect[] = [
    { kind: "opaque" },
    { kind: "fs_read", paths: ["/b"] },
    { kind: "fs_read", paths: ["/a", "/b"] },
    { kind: "proc_spawn", argv0: "git", bin_hash: "" },
    { kind: "proc_spawn", argv0: "git", bin_hash: "" },
    { kind: "time" },
    { kind: "time" },
  ];
  assertEquals(canonicalEffects(e), [
    { kind: "fs_read", paths: ["/a", "/b"] },
    { kind: "proc_spawn", argv0: "git", bin_hash: "" },
    { kind: "time" },
    { kind: "opaque" },
  ]);
  assertEquals(effectsKey(e), effectsKey([...e].reverse()), "order does not matter");
  assert(covers(e, [{ kind: "fs_read", paths: ["/a"] }]));
  assert(!covers(e, [{ kind: "fs_read", paths: ["/c"] }]));
  assert(!covers(e, [{ kind: "fs_write", paths: ["/a"] }]), "opaque covers nothing else");
  assertEquals(requestedKinds(["fs.write", { kind: "proc_spawn" }]), ["fs_write", "proc_spawn"]);
  assertEquals(requestedKinds([3]), null);
  assertEquals(parseEffects([{ kind: "fs.write", path: "/x" }]), [{
    kind: "fs_write",
    paths: ["/x"],
  }]);
  assertEquals(parseEffects([{ kind: "nonsense" }]), null);
  assertEquals(
    reversibilityOf([{ kind: "fs_read", paths: ["/a"] }, { kind: "time" }]),
    "reversible",
  );
  assertEquals(reversibilityOf([{ kind: "fs_write", paths: ["/a"] }]), "conditional");
  assertEquals(reversibilityOf([{ kind: "net_connect", host: "h", port: 1 }]), "irreversible");
  assertEquals(reversibilityOf([{ kind: "opaque" }]), "irreversible");
});

Deno.test("cap.request decisions: approvers, self-approval, coverage, deny (§11.5, D-2)", async () => {
  const me = "uid:1000";
  const set = new PolicySet(
    parsePolicy(`
approvers = ["agent:lead"]
[principal."agent:a"]
fs.delete = ["/w/**"]
[principal."agent:self"]
self_approve = true
[principal."agent:lead"]
`),
    me,
    "/home/me",
  );
  const s = new PlanStore();
  const p = await s.create(base);
  assertEquals(decide(p, "agent:a", [], "approve", set).kind, "refused", "not its own");
  assertEquals(decide(p, "agent:ghost", [], "approve", set).kind, "refused");
  assertEquals(decide(p, "agent:lead", [], "approve", set).kind, "approved");
  assertEquals(decide(p, me, [], "approve", set).kind, "approved");
  const narrow = decide(p, me, ["fs_read"], "approve", set);
  assertEquals(narrow, { kind: "pending", uncovered: ["fs_delete"] });
  assertEquals(decide(p, me, ["fs_delete"], "approve", set).kind, "approved");
  const selfPlan = await s.create({
    ...base,
    principal: "agent:self",
    effects: [{ kind: "time" }],
  });
  assertEquals(
    decide(selfPlan, "agent:self", [], "approve", set).kind,
    "refused",
    "its policy denies time",
  );
  const ok = await s.create({ ...base, principal: "agent:self", effects: [] });
  assertEquals(decide(ok, "agent:self", [], "approve", set).kind, "approved", "self_approve");
  // Outside the owner's grants: refused as a deny.
  const bad = await s.create({ ...base, effects: [{ kind: "fs_delete", paths: ["/etc/x"] }] });
  const r = decide(bad, me, [], "approve", set);
  assert(r.kind === "refused" && r.denied);
  // Apply checks: pending → approved → used up.
  assertEquals(applyCheck(p, set), {
    ok: false,
    code: "pending",
    message:
      `plan approval pending: an approver must approve ${p.ref} (cap.request) before it can be applied`,
  });
  p.approval = { by: me, at_ns: 1, effects: [] };
  assertEquals(applyCheck(p, set), { ok: true, approved: true });
  p.approval_used = true;
  p.applied = 1;
  const used = applyCheck(p, set);
  assert(!used.ok && used.code === "pending" && /used up/.test(used.message));
  p.declined = { by: me, at_ns: 2, effects: [] };
  const declined = applyCheck(p, set);
  assert(!declined.ok && declined.code === "denied");
});
