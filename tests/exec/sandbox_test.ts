/**
 * Lowering a sandbox spec and planning it for a host (issue 16): globs to roots, network modes,
 * and what a host without a backend reports — hosts this machine is not, described to the
 * planner. The filter program is checked for its jumps.
 */

import { deepStrictEqual as assertEquals, match as assertMatch, throws } from "node:assert/strict";
import {
  emptySandboxSpec,
  globRoot,
  lowerSpec,
  parseNetGrant,
  type SandboxSpec,
  SandboxSpecError,
} from "../../lib/exec/sandbox_spec.ts";
import { type HostSandbox, planSandbox, type RuntimeNeeds } from "../../lib/exec/sandbox.ts";
import { ipSocketFilter } from "../../lib/exec/seccomp.ts";

const spec = (s: Partial<SandboxSpec>): SandboxSpec => ({ ...emptySandboxSpec(), ...s });
const needs: RuntimeNeeds = {
  read: [{ path: "/usr", why: "programs" }],
  readWrite: [{ path: "/dev/null", why: "null" }],
  hide: ["/tmp/state"],
  mask: [],
  keep: [],
};
const full: HostSandbox = { landlockAbi: 7, seccomp: true, bwrap: "/usr/bin/bwrap" };

Deno.test("globs lower to their longest directory prefix", () => {
  assertEquals(globRoot("/srv/**", "/h"), { root: "/srv", exact: true });
  assertEquals(globRoot("/srv", "/h"), { root: "/srv", exact: true });
  assertEquals(globRoot("/srv/*.txt", "/h"), { root: "/srv", exact: false });
  assertEquals(globRoot("~/p/**", "/home/me"), { root: "/home/me/p", exact: true });
  assertEquals(globRoot("/**", "/h"), { root: "/", exact: true });
  assertEquals(globRoot("**/x", "/h"), null);
  assertEquals(globRoot("rel/x", "/h"), null);
  const l = lowerSpec(spec({ fs_read: ["/usr/**", "/usr/*.so", "/no/such/dir/**"] }), "/h");
  assertEquals(l.read, ["/usr"]);
  assertEquals(l.widened, ["/usr/*.so"]);
  assertEquals(l.dropped, ["/no/such/dir/**"]);
});

Deno.test("network grants: none, ports, open, host-widened, malformed", () => {
  assertEquals(lowerSpec(spec({}), "/").net.mode, "none");
  const p = lowerSpec(spec({ net_connect: ["*:443", "*:80"], net_listen: [8080] }), "/").net;
  assertEquals([p.mode, p.connect, p.bind, p.hostWidened], ["tcp", [80, 443], [8080], []]);
  const any = lowerSpec(spec({ net_connect: ["*:*"], net_listen: ["*"] }), "/").net;
  assertEquals(any.mode, "open");
  const h = lowerSpec(spec({ net_connect: ["github.com:443"] }), "/").net;
  assertEquals([h.mode, h.connect, h.hostWidened], ["tcp", [443], ["github.com:443"]]);
  throws(() => parseNetGrant("github.com"), SandboxSpecError);
  throws(() => parseNetGrant("x:70000"), /0–65535/);
  throws(() => lowerSpec(spec({ net_listen: [-1 as unknown as number] }), "/"), SandboxSpecError);
});

Deno.test("a fully capable host enforces a narrow spec", () => {
  const r = planSandbox(lowerSpec(spec({ fs_read: ["/usr/**"] }), "/"), needs, full).report;
  assertEquals([r.enforced, r.active_tier, r.missing], [true, "A", []]);
});

Deno.test("a host without Landlock reports nothing enforced and installs nothing", () => {
  const plan = planSandbox(lowerSpec(spec({}), "/"), needs, {
    landlockAbi: 0,
    seccomp: true,
    bwrap: null,
  });
  assertEquals(plan.launch, null);
  const r = plan.report;
  assertEquals([r.enforced, r.active_tier, r.filesystem_enforced], [false, null, false]);
  assertEquals(r.network_enforced, false);
  assertEquals(r.kernel_socket_unreachable, false);
  assertEquals(r.missing.includes("filesystem") && r.missing.includes("network"), true);
});

Deno.test("without bubblewrap, roots that reach the kernel's state are not enforced", () => {
  const host = { landlockAbi: 7, seccomp: true, bwrap: null };
  const r = planSandbox(lowerSpec(spec({ fs_read: ["/tmp/**"] }), "/"), needs, host).report;
  assertEquals(r.filesystem_enforced, false);
  assertMatch(r.detail.join(" "), /\/tmp\/state .* stay reachable/);
  // Roots away from it are fine (as a user; root keeps its capabilities without bubblewrap).
  const ok = planSandbox(lowerSpec(spec({ fs_read: ["/usr/**"] }), "/"), needs, host).report;
  assertEquals(ok.filesystem_enforced, Deno.uid() !== 0);
});

Deno.test("Landlock before ABI 4 cannot restrict TCP", () => {
  const host = { landlockAbi: 3, seccomp: true, bwrap: "/usr/bin/bwrap" };
  const r = planSandbox(lowerSpec(spec({}), "/"), needs, host).report;
  assertEquals([r.filesystem_enforced, r.network_enforced], [true, false]);
  assertEquals(r.missing, ["network"]);
});

Deno.test("the socket filter's jumps stay inside the program", () => {
  for (const ip of ["any", "tcp", "none"] as const) {
    const prog = ipSocketFilter(ip, "x86_64");
    prog.forEach(([code, jt, jf], i) => {
      if ((code & 0x07) === 0x05) { // BPF_JMP
        for (const j of [jt, jf]) assertEquals(i + 1 + j < prog.length, true, `insn ${i}`);
      }
    });
    assertEquals(prog.at(-1)![0], 0x06); // ends with a return
  }
});
