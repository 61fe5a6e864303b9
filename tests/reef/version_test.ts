// Constraints and versions (subsystems §6): lenient parsing, order, satisfaction, refinement.

import assert from "node:assert/strict";
import {
  compareVersions,
  extractVersion,
  parseConstraint,
  parseVersion,
  refine,
  renderConstraint,
  satisfies,
} from "../../lib/reef/version.ts";

const c = parseConstraint;
const v = parseVersion;

Deno.test("constraints parse leniently", () => {
  assert.deepEqual(c(""), { kind: "any" });
  assert.deepEqual(c(" * "), { kind: "any" });
  assert.deepEqual(c("latest"), { kind: "latest" });
  assert.deepEqual(c("22"), { kind: "numeric", parts: [22] });
  assert.deepEqual(c("v22.3"), { kind: "numeric", parts: [22, 3] });
  assert.deepEqual(c("^1.2"), { kind: "raw", text: "^1.2" });
  assert.deepEqual(c(">=3"), { kind: "raw", text: ">=3" });
  assert.deepEqual(c("lts"), { kind: "raw", text: "lts" });
  // 16+ digit components would lose precision as numbers: raw, not a wrong number.
  assert.equal(c("1234567890123456").kind, "raw");
  assert.equal(renderConstraint(c("v22.3")), "22.3");
  assert.equal(renderConstraint(c("")), "*");
});

Deno.test("version order: unknown < opaque < numeric; padding; prerelease first", () => {
  const sorted = ["unknown", "nightly", "1.2", "1.2.0-rc1", "1.10", "1.2.1", "2"].map(v)
    .sort(compareVersions).map((x) => x.raw);
  assert.deepEqual(sorted, ["unknown", "nightly", "1.2.0-rc1", "1.2", "1.2.1", "1.10", "2"]);
  assert.equal(compareVersions(v("22"), v("22.0.0")), 0);
  assert.equal(compareVersions(v("1.0.0+build5"), v("1.0.0")), 0);
  assert.equal(v("").kind, "unknown");
  assert.equal(v("v3.1.4").kind, "numeric");
});

Deno.test("satisfaction: numeric prefix, raw prefix, any", () => {
  assert.ok(satisfies(c("22"), v("22.3.0")));
  assert.ok(!satisfies(c("22"), v("2.2")));
  assert.ok(!satisfies(c("22.3"), v("22")));
  assert.ok(satisfies(c("22.0"), v("22")));
  assert.ok(!satisfies(c("22"), v("unknown")));
  assert.ok(satisfies(c("*"), v("unknown")));
  assert.ok(satisfies(c("latest"), v("unknown")));
  assert.ok(satisfies(c("nightly"), v("nightly-2026-01-01")));
  assert.ok(!satisfies(c("nightly"), v("unknown")));
});

Deno.test("refinement across scopes", () => {
  const r = (a: string, b: string) => {
    const x = refine(c(a), c(b));
    return x === null ? null : renderConstraint(x);
  };
  assert.equal(r("22", "*"), "22");
  assert.equal(r("*", "20"), "20");
  assert.equal(r("22", "22.3"), "22.3");
  assert.equal(r("22.3", "22"), "22.3");
  assert.equal(r("22", "20"), null);
  assert.equal(r("18", "22"), null);
  assert.equal(r("latest", "3.12"), "3.12");
  assert.equal(r("nightly-2026", "nightly"), "nightly-2026");
  assert.equal(r("lts", "22"), null);
});

Deno.test("--version output: first dotted token, else a bare integer", () => {
  assert.equal(extractVersion("git version 2.39.5").raw, "2.39.5");
  assert.equal(extractVersion("v22.3.0\n").raw, "22.3.0");
  assert.equal(extractVersion("Python 3.11.2").raw, "3.11.2");
  assert.equal(extractVersion("deno 2.9.6 (stable, release, x86_64)").raw, "2.9.6");
  assert.equal(extractVersion("tool 1.2.0-rc.1 (abc)").raw, "1.2.0-rc.1");
  assert.equal(extractVersion("jq-1.6").raw, "1.6");
  assert.equal(extractVersion("version 7").raw, "7");
  assert.equal(extractVersion("no digits here").kind, "unknown");
  assert.equal(extractVersion("x86_64 build").kind, "unknown");
});
