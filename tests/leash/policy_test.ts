/**
 * The policy file (protocol §11.4): every key and alias, dotted and nested namespaces, errors
 * with line and column, and verdicts per effect and per plan exactly as §11.4 states them.
 */

import { deepStrictEqual as assertEquals, ok as assert, throws } from "node:assert/strict";
import {
  CompiledPolicy,
  type Effect,
  emptySpec,
  parsePolicy,
  permissiveSpec,
  PolicyError,
  PolicySet,
} from "../../lib/leash/mod.ts";

const HOME = "/home/me";

Deno.test("every §11.4 key, its aliases, and the fs/env/secret/proc namespaces", () => {
  const f = parsePolicy(`
approvers = ["agent:lead"]

[principal."agent:a"]
fs.read = ["~/p/**", "/usr/**"]
fs.write = ["~/p/out/**"]
fs.delete = []
net = ["github.com:443", "*.example.net:*"]
net_listen = [8080, "*"]
spawn = ["git"]
env_read = ["HOME"]
env_write = ["X"]
secrets = ["gh"]
session_write = true
journal_read = "all"
time = true
auto_apply = "reversible"
opaque = "ask"
hermetic = true
approvers = ["agent:b"]
self_approve = true

[principal."agent:b".fs]
read = ["/srv/**"]

[principal."agent:b".env]
read = ["PATH"]
write = ["Y"]

[principal."agent:b".secret]
use = ["k"]

[principal."agent:b".proc]
spawn = ["rg"]

[principal."agent:c"]
net_connect = ["h:1"]
proc_spawn = ["x"]
secret_use = ["s"]
env.read = ["E"]
journal_read = true
`);
  assertEquals(f.approvers, ["agent:lead"]);
  const a = f.principals["agent:a"];
  assertEquals(a.fs_read, ["~/p/**", "/usr/**"]);
  assertEquals(a.fs_write, ["~/p/out/**"]);
  assertEquals(a.net_connect, ["github.com:443", "*.example.net:*"]);
  assertEquals(a.net_listen, [8080, "*"]);
  assertEquals(a.proc_spawn, ["git"]);
  assertEquals([a.env_read, a.env_write, a.secret_use], [["HOME"], ["X"], ["gh"]]);
  assertEquals([a.session_write, a.journal_read, a.time, a.hermetic], [true, "all", true, true]);
  assertEquals([a.auto_apply, a.opaque, a.approvers, a.self_approve], [
    "reversible",
    "ask",
    ["agent:b"],
    true,
  ]);
  const b = f.principals["agent:b"];
  assertEquals([b.fs_read, b.env_read, b.env_write, b.secret_use, b.proc_spawn], [
    ["/srv/**"],
    ["PATH"],
    ["Y"],
    ["k"],
    ["rg"],
  ]);
  // Defaults of keys a section leaves out.
  assertEquals([b.auto_apply, b.opaque, b.journal_read, b.session_write], [
    "never",
    "deny",
    "none",
    false,
  ]);
  const c = f.principals["agent:c"];
  assertEquals([c.net_connect, c.proc_spawn, c.secret_use, c.env_read, c.journal_read], [
    ["h:1"],
    ["x"],
    ["s"],
    ["E"],
    "own",
  ]);
});

Deno.test("a bad policy file is refused with its line and column", () => {
  const at = (text: string): [number, number, string] => {
    try {
      parsePolicy(text, "p.toml");
    } catch (e) {
      assert(e instanceof PolicyError, String(e));
      return [e.line, e.column, e.message];
    }
    throw new Error("expected a PolicyError");
  };
  const [l1, , m1] = at('[principal."a"]\nfs.read = ["/x"\n');
  assertEquals(l1 >= 2, true, m1);
  assert(m1.startsWith("p.toml:"), m1);
  assertEquals(at('[principal."a"]\n\n  bogus = 1\n').slice(0, 2), [3, 3]);
  assertEquals(at('[principal."a"]\nopaque = "maybe"\n').slice(0, 2), [2, 1]);
  assertEquals(at('[principal."a"]\nfs.read = ["relative/x"]\n').slice(0, 2), [2, 1]);
  assertEquals(at('[principal."a"]\nnet = ["nohostport"]\n').slice(0, 2), [2, 1]);
  assertEquals(at('[principal."a"]\nnet_listen = [70000]\n').slice(0, 2), [2, 1]);
  assertEquals(at('[principal."a"]\ntime = "yes"\n').slice(0, 2), [2, 1]);
  assertEquals(at('[principal."a"]\nspawn = ["a"]\nproc_spawn = ["b"]\n').slice(0, 2), [3, 1]);
  assertEquals(at('[principal."a".fs]\nread = ["/x"]\nexecute = ["/y"]\n').slice(0, 2), [3, 1]);
  assertEquals(at("colour = 1\n").slice(0, 2), [1, 1]);
  assert(/journal_read/.test(at('[principal."a"]\njournal_read = 3\n')[2]));
});

const verdict = (spec: Partial<ReturnType<typeof emptySpec>>) =>
  new CompiledPolicy({ ...emptySpec(), ...spec }, HOME);

Deno.test("per-effect verdicts (§11.4)", () => {
  const p = verdict({
    fs_read: ["~/p/**"],
    fs_write: ["/tmp/out/*"],
    net_connect: ["*.github.com:443", "api.x:*"],
    net_listen: [8080],
    proc_spawn: ["git", "/usr/bin/rg"],
    env_read: ["HOME"],
    secret_use: ["*"],
    time: true,
    opaque: "ask",
  });
  const v = (e: Parameters<CompiledPolicy["effectVerdict"]>[0]) => p.effectVerdict(e);
  // Every path must match; ~ expands to the kernel's HOME; `..` is popped lexically.
  assertEquals(v({ kind: "fs_read", paths: ["/home/me/p/a", "/home/me/p"] }), "allow");
  assertEquals(v({ kind: "fs_read", paths: ["/home/me/p/a", "/etc/passwd"] }), "deny");
  assertEquals(v({ kind: "fs_read", paths: ["/home/me/p/../q"] }), "deny");
  assertEquals(v({ kind: "fs_read", paths: ["~/p/x"] }), "allow");
  assertEquals(v({ kind: "fs_write", paths: ["/tmp/out/a"] }), "allow");
  assertEquals(v({ kind: "fs_write", paths: ["/tmp/out/a/b"] }), "deny", "* stays in one segment");
  assertEquals(v({ kind: "fs_delete", paths: ["/tmp/out/a"] }), "deny");
  assertEquals(v({ kind: "net_connect", host: "api.github.com", port: 443 }), "allow");
  assertEquals(v({ kind: "net_connect", host: "api.github.com", port: 80 }), "deny");
  assertEquals(v({ kind: "net_connect", host: "api.x", port: 1 }), "allow");
  assertEquals(v({ kind: "net_listen", port: 8080 }), "allow");
  assertEquals(v({ kind: "net_listen", port: 8081 }), "deny");
  // proc_spawn: the full argv0, its basename, or the hash.
  assertEquals(v({ kind: "proc_spawn", argv0: "/opt/git", bin_hash: "" }), "allow");
  assertEquals(v({ kind: "proc_spawn", argv0: "/usr/bin/rg", bin_hash: "" }), "allow");
  assertEquals(v({ kind: "proc_spawn", argv0: "curl", bin_hash: "" }), "deny");
  assertEquals(v({ kind: "env_read", names: ["HOME"] }), "allow");
  assertEquals(v({ kind: "env_read", names: ["HOME", "PATH"] }), "deny");
  assertEquals(v({ kind: "env_read", names: ["*"] }), "deny", "all names needs a * grant");
  assertEquals(v({ kind: "env_write", names: ["HOME"] }), "deny");
  assertEquals(v({ kind: "secret_use", names: ["anything"] }), "allow");
  assertEquals(v({ kind: "time" }), "allow");
  assertEquals(v({ kind: "session_write" }), "deny");
  assertEquals(v({ kind: "journal_read" }), "deny");
  assertEquals(v({ kind: "opaque" }), "approval_required");
  assertEquals(verdict({ opaque: "allow" }).effectVerdict({ kind: "opaque" }), "allow");
  assertEquals(verdict({}).effectVerdict({ kind: "opaque" }), "deny", "opaque defaults to deny");
  // An empty proc_spawn list pins nothing.
  assertEquals(
    verdict({}).effectVerdict({ kind: "proc_spawn", argv0: "anything", bin_hash: "" }),
    "allow",
  );
  const h = "a".repeat(64);
  const pinned = verdict({ proc_spawn: [h] });
  assert(pinned.pinsHashes);
  assertEquals(pinned.spawnAllowed("x", h), true);
  assertEquals(pinned.spawnAllowed("x", "b".repeat(64)), false);
});

Deno.test("plan verdicts: deny dominates, then approval, then auto_apply (§11.4)", () => {
  const read = { kind: "fs_read" as const, paths: ["/srv/a"] };
  const base = { fs_read: ["/srv/**"], opaque: "ask" as const };
  assertEquals(verdict(base).planVerdict([read], "reversible"), "approval_required", "never");
  assertEquals(
    verdict({ ...base, auto_apply: "in-grant" }).planVerdict([read], "reversible"),
    "allow",
  );
  const rev = verdict({ ...base, auto_apply: "reversible" });
  assertEquals(rev.planVerdict([read], "reversible"), "allow");
  assertEquals(rev.planVerdict([read], "conditional"), "approval_required");
  const ig = verdict({ ...base, auto_apply: "in-grant" });
  assertEquals(ig.planVerdict([read, { kind: "opaque" }], "irreversible"), "approval_required");
  assertEquals(
    ig.planVerdict([{ kind: "opaque" }, { kind: "fs_read", paths: ["/etc/x"] }], "irreversible"),
    "deny",
  );
});

Deno.test("the permissive policy allows every effect (D-23), and the person keeps it", () => {
  const p = new CompiledPolicy(permissiveSpec(), HOME);
  assert(p.allowAll);
  const all: Effect[] = [
    { kind: "net_connect", host: "example.com", port: 443 },
    { kind: "net_listen", port: 1 },
    { kind: "secret_use", names: ["x"] },
    { kind: "proc_spawn", argv0: "anything", bin_hash: "" },
    { kind: "fs_delete", paths: ["/"] },
    { kind: "opaque" },
  ];
  for (const e of all) assertEquals(p.effectVerdict(e), "allow", e.kind);
  assertEquals(p.planVerdict([{ kind: "opaque" }], "irreversible"), "allow");

  const me = "uid:1000";
  const agentsOnly = new PolicySet(parsePolicy('[principal."agent:x"]\ntime = true'), me, HOME);
  assertEquals(agentsOnly.sourceOf(me), "builtin", "adding an agent's policy keeps the person's");
  assert(agentsOnly.compiled(me)!.allowAll);
  assertEquals(agentsOnly.compiled("agent:ghost"), null, "unknown principal: denied");
  assertEquals(agentsOnly.sourceOf("agent:ghost"), "none");
  const own = new PolicySet(
    parsePolicy(`[principal."${me}"]\nfs.read = ["/**"]\nauto_apply = "in-grant"`),
    me,
    HOME,
  );
  assertEquals(own.sourceOf(me), "file", "a section for the person replaces the built-in");
  assertEquals(own.compiled(me)!.effectVerdict({ kind: "fs_write", paths: ["/x"] }), "deny");
});

Deno.test("who may approve whose plans (D-2)", () => {
  const me = "uid:1000";
  const set = new PolicySet(
    parsePolicy(`
approvers = ["agent:lead"]
[principal."agent:a"]
approvers = ["agent:peer"]
[principal."agent:self"]
self_approve = true
[principal."agent:peer"]
[principal."agent:lead"]
`),
    me,
    HOME,
  );
  assert(set.mayApprove(me, "agent:a"), "the person approves anyone");
  assert(set.mayApprove(me, me));
  assert(set.mayApprove("agent:lead", "agent:a"), "a global approver");
  assert(set.mayApprove("agent:peer", "agent:a"), "the owner's named approver");
  assert(!set.mayApprove("agent:peer", "agent:self"), "named only for agent:a");
  assert(!set.mayApprove("agent:a", "agent:a"), "no self-approval without self_approve");
  assert(set.mayApprove("agent:self", "agent:self"));
  assert(!set.mayApprove("agent:ghost", "agent:a"));
  assert(set.isApprover("agent:peer") && set.isApprover("agent:lead") && set.isApprover(me));
  assert(!set.isApprover("agent:a"));
  throws(() => parsePolicy('approvers = "x"'), PolicyError);
});
