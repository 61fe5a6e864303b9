/**
 * The token store (protocol §3.4, D-16, D-17): the file format, validation, expiry and
 * revocation, atomic 0600 writes, concurrent writers (in-process and CLI processes) losing
 * nothing, reload on change, fail-closed on a broken file, and the CLI surface.
 */

import {
  deepStrictEqual as assertEquals,
  match as assertMatch,
  ok as assert,
  rejects,
} from "node:assert/strict";
import { join } from "node:path";
import { keyedBlake3Hex } from "../../lib/store/blake3.ts";
import { TokenStore, TokenStoreError, tokenStorePath } from "../../lib/leash/mod.ts";
import { parseTtl } from "../../lib/kernel/token_cli.ts";

const MAIN = new URL("../../main.ts", import.meta.url).pathname;

async function shoal(args: string[], env: Record<string, string> = {}) {
  const r = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, ...args],
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: r.code, out: dec.decode(r.stdout), err: dec.decode(r.stderr) };
}

Deno.test("tokens.json: format, digests, validation, expiry, revocation", async () => {
  const dir = await Deno.makeTempDir();
  const path = join(dir, "tokens.json");
  const s = new TokenStore(path);
  assertEquals(await s.validate("x".repeat(43)), "unknown", "no file: nothing validates");
  const { bearer, record } = await s.create("agent:ci", "ci", ["fs.read"]);
  assertMatch(bearer, /^[A-Za-z0-9_-]{43}$/, "32 bytes, base64url, no padding");
  const doc = JSON.parse(await Deno.readTextFile(path));
  assertEquals(doc.version, 1);
  const key = Uint8Array.fromBase64(doc.key);
  assertEquals(key.length, 32);
  assertEquals(doc.tokens[0].digest, await keyedBlake3Hex(key, bearer), "keyed BLAKE3");
  assertEquals(doc.tokens[0].id, doc.tokens[0].digest.slice(0, 16));
  assert(!JSON.stringify(doc).includes(bearer), "the bearer is never stored");
  assertEquals((await Deno.stat(path)).mode! & 0o777, 0o600);
  assertEquals([record.principal, record.profile, record.caps], ["agent:ci", "ci", ["fs.read"]]);
  const ok = await s.validate(bearer);
  assert(typeof ok === "object" && ok.id === record.id);
  assertEquals(
    await s.validate(bearer.slice(0, -1) + (bearer.endsWith("A") ? "B" : "A")),
    "unknown",
  );
  assertEquals(await s.validate("short"), "malformed");
  // TTL: expires_ns = created + ttl; ≤ 0 is born expired.
  const dead = await s.create("agent:old", "default", [], 0);
  assertEquals(await s.validate(dead.bearer), "expired");
  const soon = await s.create("agent:soon", "default", [], 3600);
  assertEquals(soon.record.expires_ns, soon.record.created_ns + 3600e9);
  await s.revoke(record.id);
  assertEquals(await s.validate(bearer), "revoked");
  assertEquals(await s.stillValid(record.id), false);
  assertEquals(await s.stillValid(soon.record.id), true);
  await rejects(s.revoke("0000000000000000"), TokenStoreError);
  await rejects(s.create("has space"), TokenStoreError);
  await rejects(s.create("agent:x", ""), TokenStoreError);
  // A looser mode on an existing store is forced back to 0600.
  await Deno.chmod(path, 0o644);
  await new TokenStore(path).list();
  assertEquals((await Deno.stat(path)).mode! & 0o777, 0o600);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a store another process changes is re-read; a broken one fails closed", async () => {
  const dir = await Deno.makeTempDir();
  const path = join(dir, "tokens.json");
  const kernelSide = new TokenStore(path);
  const writer = new TokenStore(path);
  const a = await writer.create("agent:a");
  assert(typeof (await kernelSide.validate(a.bearer)) === "object");
  const b = await writer.create("agent:b");
  assert(typeof (await kernelSide.validate(b.bearer)) === "object", "a new token, no restart");
  await writer.revoke(a.record.id);
  assertEquals(await kernelSide.validate(a.bearer), "revoked", "a revocation, no restart");
  await Deno.writeTextFile(path, "{ not json");
  await rejects(kernelSide.validate(b.bearer), /not valid JSON/);
  assertEquals(await kernelSide.stillValid(b.record.id), false);
  await rejects(writer.create("agent:c"), TokenStoreError, "a broken store is never rewritten");
  assertEquals(await Deno.readTextFile(path), "{ not json");
  await Deno.remove(dir, { recursive: true });
});

Deno.test("concurrent writers lose nothing (in-process and CLI processes)", async () => {
  const dir = await Deno.makeTempDir();
  const path = join(dir, "tokens.json");
  const stores = Array.from({ length: 4 }, () => new TokenStore(path));
  const cli = Array.from(
    { length: 4 },
    (_, i) => shoal(["token", "create", `agent:cli${i}`, "--token-store", path]),
  );
  const own = Array.from({ length: 12 }, (_, i) => stores[i % 4].create(`agent:p${i}`));
  const [cliOut] = await Promise.all([Promise.all(cli), Promise.all(own)]);
  for (const r of cliOut) assertEquals(r.code, 0, r.err);
  const list = await new TokenStore(path).list();
  assertEquals(list.length, 16, "every create survived");
  assertEquals(new Set(list.map((t) => t.id)).size, 16);
  const left = [...Deno.readDirSync(dir)].map((e) => e.name).sort();
  assertEquals(left, ["tokens.json", "tokens.json.lock"], "no temp files left");
  await Deno.remove(dir, { recursive: true });
});

Deno.test("shoal token: create prints the bearer once, list, revoke, usage errors", async () => {
  const dir = await Deno.makeTempDir();
  const env = { SHOAL_TOKEN_STORE: join(dir, "t.json") };
  const c = await shoal([
    "token",
    "create",
    "agent:rev",
    "reviewer",
    "--cap",
    "fs.read",
    "--cap",
    "proc.spawn",
    "--ttl",
    "2h",
  ], env);
  assertEquals(c.code, 0, c.err);
  const bearer = c.out.trim();
  assertMatch(bearer, /^[A-Za-z0-9_-]{43}$/);
  assertEquals(c.out.split("\n").filter((l) => l !== "").length, 1, "stdout is the bearer only");
  assertMatch(c.err, /^created [0-9a-f]{16} \(secret shown once\)/);
  const id = /created ([0-9a-f]{16})/.exec(c.err)![1];
  const l = await shoal(["token", "list"], env);
  assertEquals(l.out.trim(), `${id}\tagent:rev\treviewer\tactive`);
  const j = JSON.parse((await shoal(["token", "list", "--json"], env)).out);
  assertEquals(j[0].caps, ["fs.read", "proc.spawn"]);
  assertEquals(j[0].expires_ns - j[0].created_ns, 7200e9);
  assertEquals(j[0].digest, undefined);
  assertEquals((await shoal(["token", "revoke", id], env)).code, 0);
  assertEquals(
    (await shoal(["token", "list"], env)).out.trim(),
    `${id}\tagent:rev\treviewer\trevoked`,
  );
  const unknown = await shoal(["token", "revoke", "ffffffffffffffff"], env);
  assertEquals(unknown.code, 1);
  assertMatch(unknown.err, /no token with id/);
  assertEquals((await shoal(["token", "create"], env)).code, 2);
  assertEquals((await shoal(["token", "create", "a", "--ttl", "soon"], env)).code, 2);
  assertEquals((await shoal(["token", "frobnicate"], env)).code, 2);
  assertEquals([parseTtl("90"), parseTtl("2m"), parseTtl("1d"), parseTtl("-5")], [
    90,
    120,
    86400,
    -5,
  ]);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("one store path rule for the kernel and the CLI (D-17)", () => {
  const env = (m: Record<string, string>) => (n: string) => m[n];
  assertEquals(tokenStorePath({ stateDir: "/s" }, env({})), "/s/tokens.json");
  assertEquals(
    tokenStorePath({ stateDir: "/s" }, env({ SHOAL_TOKEN_STORE: "/t.json" })),
    "/t.json",
  );
  assertEquals(
    tokenStorePath({ stateDir: "/s" }, env({ SHOAL_TOKEN_STORE: "" })),
    "/s/tokens.json",
  );
  assertEquals(
    tokenStorePath({ explicit: "/x.json", stateDir: "/s" }, env({ SHOAL_TOKEN_STORE: "/t" })),
    "/x.json",
  );
  assertEquals(tokenStorePath({ stateDir: null }, env({})), null, "ephemeral: none");
  assertEquals(tokenStorePath({ stateDir: null }, env({ SHOAL_TOKEN_STORE: "/t" })), "/t");
});
