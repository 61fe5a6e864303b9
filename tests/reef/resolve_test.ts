// Resolution in real temp trees with real (fake-tool) binaries: providers and ranking, the
// version probe, conflicts, the lock and drift after replacing a binary, the script and
// interactive policies, views and hermetic PATHs.

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  allCandidates,
  fileDigest,
  readLock,
  ReefError,
  resolveCommand,
  resolveTool,
  viewsRoot,
} from "../../lib/reef/mod.ts";
import { PROBE_DEADLINE_MS } from "../../lib/reef/probe.ts";
import { viewHash } from "../../lib/reef/view.ts";
import { withTree } from "./_helpers.ts";

async function reefError(p: Promise<unknown>): Promise<ReefError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ReefError) return e;
    throw e;
  }
  throw new Error("expected a ReefError");
}

function child(out: { path: string | null; childPath: string | undefined }, ...args: string[]) {
  const r = new Deno.Command(out.path!, {
    args,
    env: { PATH: out.childPath ?? "" },
    clearEnv: true,
  })
    .outputSync();
  return new TextDecoder().decode(r.stdout).trim();
}

Deno.test("providers: npm-local, venv, mise, cargo, system/ambient, nearest ancestors", async () => {
  await withTree((t) => {
    t.tool("node_modules/.bin/tsc", "5.4.0");
    t.tool("proj/node_modules/.bin/tsc", "5.5.0");
    t.tool("proj/.venv/bin/black", "24.1");
    t.tool("home/.local/share/mise/installs/node/20.11.1/bin/node", "20.11.1");
    t.tool("home/.local/share/mise/installs/node/22.3.0/bin/node", "22.3.0");
    Deno.symlinkSync("22.3.0", t.path("home/.local/share/mise/installs/node/22"));
    t.tool("home/.cargo/bin/rg", "14.1.0");
    t.tool("bin/node", "18.19.0");
    const ctx = { cwd: t.path("proj/src"), env: t.env(), viewsRoot: viewsRoot(t.env()) };
    Deno.mkdirSync(ctx.cwd, { recursive: true });
    const c = (tool: string) =>
      allCandidates(tool, ctx).filter((x) => x.path.startsWith(t.root))
        .map((x) => [x.provider, x.scope, x.path.slice(t.root.length), x.version.raw]);

    assert.deepEqual(c("tsc"), [[
      "npm-local",
      "npm-local",
      "/proj/node_modules/.bin/tsc",
      "unknown",
    ]]);
    assert.deepEqual(c("black"), [["venv", "venv", "/proj/.venv/bin/black", "unknown"]]);
    assert.deepEqual(c("node"), [
      ["mise", "mise", "/home/.local/share/mise/installs/node/20.11.1/bin/node", "20.11.1"],
      ["mise", "mise", "/home/.local/share/mise/installs/node/22.3.0/bin/node", "22.3.0"],
      ["system", "ambient", "/bin/node", "unknown"], // the tree's bin, on PATH
    ]);
    assert.deepEqual(c("rg").slice(0, 1), [["cargo", "cargo", "/home/.cargo/bin/rg", "unknown"]]);
    const sh = allCandidates("sh", ctx);
    assert.ok(
      sh.some((x) => x.scope === "system" && x.path === "/bin/sh"),
      "canonical dirs are system",
    );
  });
});

Deno.test("ranking: highest version (probed when needed), then provider order, then path", async () => {
  await withTree(async (t) => {
    t.tool("home/.local/share/mise/installs/node/20.11.1/bin/node", "20.11.1");
    t.tool("bin/node", "22.4.0"); // ambient, version known only by probing
    t.write(".reef.toml", '[tools]\nnode = "22"\n');
    const b = await resolveTool("node", t.ctx(".", "interactive"));
    assert.equal(b!.path, t.path("bin/node"));
    assert.equal(b!.version, "22.4.0");
    assert.equal(b!.provider, "system");
    assert.equal(b!.scope, "reef");
    // latest compares versions too (upstream picked by provider order instead).
    t.write(".reef.toml", '[tools]\nnode = "latest"\n');
    Deno.removeSync(t.path("reef.lock"));
    const l = await resolveTool("node", t.ctx(".", "interactive"));
    assert.equal(l!.version, "22.4.0");
    // A provider pin restricts the search.
    t.write(".reef.toml", '[tools]\nnode = { version = "20", provider = "mise" }\n');
    Deno.removeSync(t.path("reef.lock"));
    const m = await resolveTool("node", t.ctx(".", "interactive"));
    assert.equal(m!.provider, "mise");
    assert.equal(m!.version, "20.11.1");
  });
});

Deno.test("nothing satisfies: reef_not_found says what was searched and found", async () => {
  await withTree(async (t) => {
    t.tool("bin/node", "18.19.0");
    t.write(".reef.toml", '[tools]\nnode = "22"\n');
    const e = await reefError(resolveTool("node", t.ctx(".", "interactive")));
    assert.equal(e.code, "reef_not_found");
    assert.match(e.message, /nothing installed satisfies "22"/);
    assert.match(e.message, /bin\/node 18\.19\.0/);
    assert.match(e.hint!, /reef fetch node/);
  });
});

Deno.test("a probe that hangs is cut at the deadline and counts as unknown", async () => {
  await withTree(async (t) => {
    t.write("bin/slowtool", "#!/bin/sh\nsleep 5\necho slowtool 1.0.0\n", 0o755);
    t.write(".reef.toml", '[tools]\nslowtool = "1"\n');
    const t0 = performance.now();
    const e = await reefError(resolveTool("slowtool", t.ctx(".", "interactive")));
    const ms = performance.now() - t0;
    assert.equal(e.code, "reef_not_found");
    assert.ok(ms < PROBE_DEADLINE_MS + 2000, `probe took ${ms} ms`);
  });
});

Deno.test("conflicting scopes and provider pins: reef_conflict naming both files", async () => {
  await withTree(async (t) => {
    t.tool("bin/faketool", "22.0.0");
    t.write(".reef.toml", '[tools]\nfaketool = "18"\n');
    t.write("sub/.reef.toml", '[tools]\nfaketool = "22"\n');
    const e = await reefError(resolveTool("faketool", t.ctx("sub", "interactive")));
    assert.equal(e.code, "reef_conflict");
    assert.ok(
      e.message.includes(t.path("sub/.reef.toml")) && e.message.includes(t.path(".reef.toml")),
    );
    t.write(".reef.toml", '[tools]\nfaketool = { provider = "system" }\n');
    t.write("sub/.reef.toml", '[tools]\nfaketool = { version = "22", provider = "mise" }\n');
    const p = await reefError(resolveTool("faketool", t.ctx("sub", "interactive")));
    assert.equal(p.code, "reef_conflict");
    assert.match(p.message, /pins provider mise but .* pins system/);
    // Compatible scopes refine: far "22" + near "22.0" is fine.
    t.write(".reef.toml", '[tools]\nfaketool = "22"\n');
    t.write("sub/.reef.toml", '[tools]\nfaketool = "22.0"\n');
    assert.equal((await resolveTool("faketool", t.ctx("sub", "interactive")))!.constraint, "22.0");
  });
});

Deno.test("lock: script policy needs it, interactive writes it, drift after replacing the binary", async () => {
  await withTree(async (t) => {
    const bin = t.tool("bin/faketool", "2.1.0");
    t.write(".reef.toml", '[tools]\nfaketool = "2"\n');
    const script = t.ctx(".", "script");
    const u = await reefError(resolveTool("faketool", script));
    assert.equal(u.code, "reef_unlocked");
    assert.match(u.hint!, /reef lock/);
    assert.equal(readLock(t.path("reef.lock")).ok, false, "script policy writes nothing");

    const notices: string[] = [];
    const b = await resolveTool("faketool", {
      ...t.ctx(".", "interactive"),
      notice: (l) => notices.push(l),
    });
    assert.deepEqual(notices, [`reef: locked faketool@2.1.0 via system (${bin})`]);
    const lock = readLock(t.path("reef.lock"));
    assert.ok(lock.ok);
    const e = lock.entries.get("faketool")!;
    assert.equal(e.path, bin);
    assert.equal(e.blake3, b!.blake3);
    assert.match(e.blake3, /^[0-9a-f]{64}$/);
    assert.match(e.resolved_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

    // Locked: the script policy now resolves, without probing again.
    assert.equal((await resolveTool("faketool", script))!.path, bin);

    // Replace the binary (same path, new bytes): drift, before any provider is asked.
    t.tool("bin/faketool", "2.1.1");
    const d = await reefError(resolveTool("faketool", script));
    assert.equal(d.code, "reef_drift");
    assert.match(d.message, /changed since it was locked/);
    assert.match(d.hint!, /reef lock --refresh/);
    const di = await reefError(resolveTool("faketool", t.ctx(".", "interactive")));
    assert.equal(di.code, "reef_drift", "interactive does not silently relock a drifted binary");

    // The locked binary gone: reef_not_found with the refresh hint.
    Deno.removeSync(bin);
    const g = await reefError(resolveTool("faketool", script));
    assert.equal(g.code, "reef_not_found");
    assert.match(g.hint!, /reef lock --refresh/);
  });
});

Deno.test("a lock entry that no longer satisfies the constraint is unlocked, not used", async () => {
  await withTree(async (t) => {
    t.tool("bin/faketool", "2.1.0");
    t.write(".reef.toml", '[tools]\nfaketool = "2"\n');
    await resolveTool("faketool", t.ctx(".", "interactive"));
    t.write(".reef.toml", '[tools]\nfaketool = "3"\n');
    const e = await reefError(resolveTool("faketool", t.ctx(".", "script")));
    assert.equal(e.code, "reef_unlocked");
    assert.match(e.message, /the locked 2\.1\.0 \(system\) does not satisfy "3"/);
  });
});

Deno.test("an invalid lock is an error, never treated as empty or overwritten", async () => {
  await withTree(async (t) => {
    t.tool("bin/faketool", "1.0.0");
    t.write(".reef.toml", '[tools]\nfaketool = "*"\n');
    t.write("reef.lock", "[tool.faketool]\nname = 1\n");
    const e = await reefError(resolveTool("faketool", t.ctx(".", "interactive")));
    assert.equal(e.code, "reef_provider");
    assert.match(e.message, /is not a valid lock/);
    assert.equal(Deno.readTextFileSync(t.path("reef.lock")), "[tool.faketool]\nname = 1\n");
  });
});

Deno.test("commands: explicit paths and unmentioned heads bypass Reef; constrained ones get a view", async () => {
  await withTree(async (t) => {
    const faketool = t.tool("bin/faketool", "1.0.0");
    const helper = t.tool("bin/helper", "3.0.0");
    t.tool("other/helper", "9.9.9");
    t.write(".reef.toml", '[tools]\nfaketool = "*"\nhelper = "*"\n');
    const ictx = t.ctx(".", "interactive");
    assert.equal((await resolveCommand("./bin/faketool", ictx)).via, "explicit");
    const plain = await resolveCommand("sh", ictx);
    assert.equal(plain.via, "path");
    assert.equal(plain.childPath, undefined);
    await resolveTool("helper", ictx);
    const r = await resolveCommand("faketool", ictx);
    assert.equal(r.via, "reef");
    assert.equal(r.path, faketool);
    assert.match(r.blake3!, /^[0-9a-f]{64}$/);
    const [view, ...rest] = r.childPath!.split(":");
    assert.ok(view.startsWith(t.path("run/shoal/views/")), view);
    assert.equal(rest.join(":"), t.env().PATH, "non-hermetic: the old PATH follows the view");
    assert.equal(Deno.readLinkSync(join(view, "faketool")), faketool);
    assert.equal(Deno.readLinkSync(join(view, "helper")), helper, "every locked tool is bound");
    // A child finds the locked helper first, even with another one earlier on the old PATH.
    const out = new Deno.Command("/bin/sh", {
      args: ["-c", "helper"],
      env: { PATH: `${view}:${t.path("other")}` },
      clearEnv: true,
    }).outputSync();
    assert.equal(new TextDecoder().decode(out.stdout).trim(), "helper 3.0.0 ran");
    assert.equal(child(r, "x"), "faketool 1.0.0 ran x");
    assert.equal(Deno.statSync(t.path("run/shoal/views")).mode! & 0o077, 0, "views are private");
  });
});

Deno.test("hermetic: the child's PATH is only the view", async () => {
  await withTree(async (t) => {
    t.tool("bin/faketool", "1.0.0");
    t.write(".reef.toml", '[tools]\nfaketool = "*"\nsh = "*"\n');
    t.write("sub/.reef.toml", "[options]\nhermetic = true\n"); // no [tools]: still applies
    await resolveTool("sh", t.ctx(".", "interactive"));
    const r = await resolveCommand("faketool", t.ctx("sub", "interactive"));
    assert.ok(!r.childPath!.includes(":"), r.childPath);
    // Through sh (locked, in the view): a command the view does not bind is not found.
    const out = new Deno.Command("/bin/sh", {
      args: ["-c", "command -v sh; command -v ls || echo no-ls"],
      env: { PATH: r.childPath! },
      clearEnv: true,
    }).outputSync();
    const lines = new TextDecoder().decode(out.stdout).trim().split("\n");
    assert.equal(lines[0], join(r.childPath!, "sh"));
    assert.equal(lines[1], "no-ls");
  });
});

Deno.test("a view someone changed is checked and rebuilt before it is trusted", async () => {
  await withTree(async (t) => {
    const bin = t.tool("bin/faketool", "1.0.0");
    t.write(".reef.toml", '[tools]\nfaketool = "*"\n');
    // Another process left the view with a wrong link (this process never saw it).
    const hash = viewHash([{ name: "faketool", path: bin, blake3: await fileDigest(bin) }]);
    const planted = t.path(`run/shoal/views/${hash}/bin`);
    Deno.mkdirSync(planted, { recursive: true, mode: 0o700 });
    Deno.chmodSync(t.path("run/shoal/views"), 0o700);
    Deno.symlinkSync("/bin/false", join(planted, "faketool"));
    const r = await resolveCommand("faketool", t.ctx(".", "interactive"));
    assert.equal(r.childPath!.split(":")[0], planted);
    assert.equal(Deno.readLinkSync(join(planted, "faketool")), bin);
  });
});

Deno.test("a views directory others can write is refused", async () => {
  await withTree(async (t) => {
    t.tool("bin/faketool", "1.0.0");
    t.write(".reef.toml", '[tools]\nfaketool = "*"\n');
    Deno.mkdirSync(t.path("run/shoal/views"), { recursive: true });
    Deno.chmodSync(t.path("run/shoal/views"), 0o777);
    const e = await reefError(resolveCommand("faketool", t.ctx(".", "interactive")));
    assert.equal(e.code, "reef_provider");
    assert.match(e.message, /not a private directory/);
  });
});
