/**
 * `open PATH` (issue 13): the commonest multi-step conversion in one step — a file read as
 * the value its extension implies. Parse errors name the file; a missing file is not_found.
 */

import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import { error, session, show, withTempDir } from "./_helpers.ts";

Deno.test("open reads json, toml, yaml, csv and jsonl as values, anything else as text", async () => {
  await withTempDir(async (dir) => {
    const w = (name: string, text: string) => Deno.writeTextFileSync(join(dir, name), text);
    w("deno.json", '{"name": "demo", "tasks": {"dev": "deno run main.ts"}}\n');
    w("Cargo.toml", '[package]\nname = "demo"\nversion = "0.1.0"\n');
    w("ci.yml", "jobs:\n  test:\n    runs-on: ubuntu\n");
    w("data.csv", "name,size\na,1\nb,2\n");
    w("events.jsonl", '{"n": 1}\n{"n": 2}\n\n');
    w("notes.txt", "hello\n");
    Deno.writeFileSync(join(dir, "blob.bin"), new Uint8Array([0xff, 0x00, 0xfe]));
    const ev = session(dir);
    assertEquals(await show(ev, "(open deno.json).name"), '"demo"');
    assertEquals(await show(ev, "(open deno.json).tasks.dev"), '"deno run main.ts"');
    assertEquals(await show(ev, 'open("deno.json").name'), '"demo"');
    assertEquals(await show(ev, "(open Cargo.toml).package.version"), '"0.1.0"');
    assertEquals(await show(ev, "(open ci.yml).jobs.test"), '{"runs-on": "ubuntu"}');
    assertEquals(await show(ev, "(open data.csv).map(.name)"), '["a", "b"]');
    assertEquals(await show(ev, "(open events.jsonl).map(.n)"), "[1, 2]");
    assertEquals(await show(ev, "open notes.txt"), '"hello\\n"');
    assertEquals(await show(ev, "(open blob.bin).len()"), "3");
    assertEquals(await show(ev, "(open --raw deno.json).starts_with('{')"), "true");
    assertEquals(await show(ev, 'open("deno.json", raw: true).len() > 10'), "true");
  });
});

Deno.test("open: missing file not_found, bad content names the file, bad arguments arg_error", async () => {
  await withTempDir(async (dir) => {
    Deno.writeTextFileSync(join(dir, "bad.json"), "{nope");
    const ev = session(dir);
    const m = await error(ev, "open nope.json");
    assertEquals(m.code, "not_found");
    assert(m.msg.includes("nope.json"), m.msg);
    const b = await error(ev, "open bad.json");
    assertEquals(b.code, "arg_error");
    assert(b.msg.startsWith("open bad.json: json.parse: invalid JSON"), b.msg);
    assertEquals(b.hint, "read it as text with open --raw bad.json");
    assertEquals((await error(ev, "open")).code, "arg_error");
    assertEquals((await error(ev, "open a b")).code, "arg_error");
    assertEquals((await error(ev, "open --pretty bad.json")).msg, "open: unknown flag --pretty");
    assertEquals((await error(ev, 'open("bad.json", fmt: "x")')).code, "arg_error");
  });
});
