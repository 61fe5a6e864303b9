/** URI parsing, percent-decoding, subscribable channels and configuration (pure functions). */

import { deepStrictEqual as assertEquals, throws as assertThrows } from "node:assert/strict";
import {
  BadUri,
  parseShoalUri,
  parseSlice,
  percentDecode,
  refToUri,
  subscribableChannel,
} from "../../lib/mcp/uri.ts";
import { DEFAULT_BUDGET_MS, parseMcpArgs } from "../../lib/mcp/config.ts";
import { kernelCommand } from "../../lib/client/autostart.ts";

Deno.test("parseShoalUri: segments and query values are percent-decoded", () => {
  const u = parseShoalUri("shoal://out/17?path=.rows%5B0%5D.name&slice=20..40&format=json");
  assertEquals(u.root, "out");
  assertEquals(u.segs, ["17"]);
  assertEquals(u.query.get("path"), ".rows[0].name");
  assertEquals(u.query.get("slice"), "20..40");
  assertEquals(parseShoalUri("shoal://events/user%2Fbuild?since=3").segs, ["user/build"]);
  assertEquals(parseShoalUri("shoal://session//cwd/").segs, ["cwd"]);
  assertEquals(
    parseShoalUri("shoal://journal?effects=fs.write,proc.spawn").query.get("effects"),
    "fs.write,proc.spawn",
  );
  assertThrows(() => parseShoalUri("https://x/y"), BadUri);
  assertThrows(() => parseShoalUri("shoal://"), BadUri);
});

Deno.test("percentDecode: lossy UTF-8, invalid escapes literal, + kept", () => {
  assertEquals(percentDecode("a%20b+c"), "a b+c");
  assertEquals(percentDecode("%E2%9C%93"), "✓");
  assertEquals(percentDecode("%FF"), "\uFFFD");
  assertEquals(percentDecode("100%"), "100%");
  assertEquals(percentDecode("%zz✓"), "%zz✓");
});

Deno.test("subscribable URIs map to kernel channels", () => {
  assertEquals(subscribableChannel("shoal://events/journal"), "journal");
  assertEquals(subscribableChannel("shoal://task/9"), "task.9");
  assertEquals(subscribableChannel("shoal://task/9/out"), "task.9");
  assertEquals(subscribableChannel("shoal://task/task:9/out?path=.x"), "task.9");
  assertEquals(subscribableChannel("shoal://pty/3"), "pty.3");
  assertEquals(subscribableChannel("shoal://pty/pty:3"), "pty.3");
  for (
    const u of [
      "shoal://out/1",
      "shoal://session/env",
      "shoal://pty",
      "shoal://pty/x",
      "shoal://pty/1/extra",
      "shoal://jobs",
      "shoal://task/x",
    ]
  ) {
    assertThrows(() => subscribableChannel(u), BadUri, u);
  }
});

Deno.test("slices and refs", () => {
  assertEquals(parseSlice("0..50"), [0, 50]);
  assertEquals(parseSlice("-1..5"), undefined);
  assertEquals(parseSlice("[0,5]"), undefined);
  assertEquals(refToUri("out:17"), "shoal://out/17");
  assertEquals(refToUri("val:blake3:ab"), "shoal://val/blake3:ab");
  assertEquals(refToUri("nope"), null);
});

Deno.test("configuration: flags override environment; discovery; budget", () => {
  const env = (m: Record<string, string>) => (n: string) => m[n];
  const c = parseMcpArgs([], env({ XDG_RUNTIME_DIR: "/run/u", SHOAL_SESSION: "work" }))!;
  assertEquals(c.socket, "/run/u/shoal/work.sock");
  assertEquals(c.session, "work");
  assertEquals(c.autostart, true);
  assertEquals(c.budgetMs, DEFAULT_BUDGET_MS);
  const d = parseMcpArgs([
    "--socket",
    "/x.sock",
    "--session=b",
    "--token",
    "t",
    "--budget-ms",
    "500",
  ], env({ SHOAL_SOCKET: "/y.sock", SHOAL_NO_AUTOSTART: "1" }))!;
  assertEquals([d.socket, d.session, d.token, d.budgetMs, d.autostart], [
    "/x.sock",
    "b",
    "t",
    500,
    false,
  ]);
  assertEquals(
    parseMcpArgs([], env({ SHOAL_NO_AUTOSTART: "", SHOAL_SOCKET: "/z" }))!.autostart,
    true,
  );
  assertEquals(parseMcpArgs(["--help"], env({})), null);
  assertThrows(() => parseMcpArgs(["--session", "../x"], env({})));
  assertThrows(() => parseMcpArgs(["--budget-ms", "0"], env({})));
});

Deno.test("the kernel command comes from this distribution", () => {
  const k = kernelCommand("/tmp/s.sock");
  assertEquals(k.cmd, Deno.execPath());
  assertEquals(k.args.slice(-3), ["kernel", "--socket", "/tmp/s.sock"]);
  assertEquals(k.args.includes("--unstable-worker-options"), true);
});
