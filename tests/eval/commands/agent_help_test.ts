/**
 * Teaching the language where the agent looks (issue 13): `help` (the primer, a command, a
 * namespace, a type, a method), `x.methods()` generated from the real tables, and errors for
 * an unknown or misplaced method that list what the receiver does have.
 */

import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { error, session, show, withTempDir } from "./_helpers.ts";
import { memberDocs } from "../../../lib/eval/dispatch.ts";
import { docOf } from "../../../lib/eval/docs.ts";
import { getBuiltin, registeredBuiltins } from "../../../lib/eval/builtins/registry.ts";
import { namespaceNames, namespaceTable } from "../../../lib/eval/namespaces/mod.ts";
import { OutcomeV, type TypeName } from "../../../lib/value/types.ts";

const PRIMER = Deno.readTextFileSync(new URL("../../../docs/agent_primer.md", import.meta.url));

async function text(src: string): Promise<string> {
  return await withTempDir(async (dir) => {
    const v = await session(dir).evalSource(src);
    assert(v instanceof OutcomeV, `${src}: ${v}`);
    return new TextDecoder().decode(v.stdout);
  });
}

Deno.test("help prints the primer — the same file the MCP server sends", async () => {
  assertEquals(await text("help"), PRIMER.endsWith("\n") ? PRIMER : PRIMER + "\n");
  await withTempDir(async (dir) => {
    assertEquals(await show(session(dir), '(help).out.starts_with("# Shoal primer")'), "true");
  });
});

Deno.test("help TOPIC: a command with its flags, a namespace, a type, a method", async () => {
  const head = await text("help head");
  assert(head.startsWith("head [-n N | -N | -c N] PATH"), head);
  assert(head.includes("-n N, --lines=N"), head);
  assert(head.includes("run the system's head"), head);
  const json = await text("help json");
  assert(json.includes("json.parse(text: str) -> value"), json);
  assert(json.includes("json.stringify("), json);
  const math = await text("help math");
  assert(math.includes("math.sqrt(x: number) -> float") && math.includes("constants: math.pi"));
  const bytes = await text("help bytes");
  for (const m of [".str() -> str", ".lines() -> list<str>", ".len() -> int", ".methods()"]) {
    assert(bytes.includes(m), `${m} in:\n${bytes}`);
  }
  const outcome = await text("help outcome");
  assert(outcome.includes(".ok -> bool") && outcome.includes(".stderr -> bytes"), outcome);
  const lines = await text("help lines");
  assert(/str\.lines\(\)/.test(lines) && /path\.lines\(\)/.test(lines), lines);
  assert((await text("help .take")).includes("list.take(n: int) -> list"));
  assert((await text("help path")).includes(".read() -> str"));
  assert((await text("help open")).includes("open [--raw] PATH -> value"));
  assert((await text("ls --help")).startsWith("ls [-a]"), "--help on a builtin is its help");
});

Deno.test("help: an unknown topic is not_found with did-you-mean and the topic list", async () => {
  await withTempDir(async (dir) => {
    const ev = session(dir);
    const e = await error(ev, "help hed");
    assertEquals(e.code, "not_found");
    assertEquals(e.msg, "help: no topic `hed`");
    assert(e.hint!.startsWith("did you mean `help head`?"), e.hint!);
    assert(e.hint!.includes("namespaces (json yaml toml csv math os config"), e.hint!);
    assertEquals((await error(ev, "help a b")).code, "arg_error");
  });
});

Deno.test("x.methods() lists a value's methods with signatures, from the dispatch tables", async () => {
  await withTempDir(async (dir) => {
    const ev = session(dir);
    assertEquals(
      await show(ev, '"x".methods().find(.name == "lines")'),
      '{name: "lines", sig: ".lines() -> list<str>", about: "split on newlines (no trailing empty line)"}',
    );
    assertEquals(await show(ev, '[1].methods().any(.name == "take")'), "true");
    assertEquals(await show(ev, '{a: 1}.methods().any(.name == "keys")'), "true");
    // an outcome: its own fields, then the methods of its .out
    const rows = await show(ev, "(echo hi).methods().map(.name).take(3)");
    assertEquals(rows, '["ok", "status", "out"]');
    assertEquals(await show(ev, '(echo hi).methods().any(.name == "upper")'), "true");
    // a record's own `methods` field still wins
    assertEquals(await show(ev, "{methods: 3}.methods"), "3");
    assertEquals((await error(ev, "[1].methods(2)")).code, "arg_error");
  });
  // Every entry of every table dispatch consults is documented (none falls back to a bare name).
  const types: TypeName[] = [
    "str",
    "list",
    "table",
    "range",
    "record",
    "int",
    "float",
    "bytes",
    "path",
    "outcome",
    "error",
    "glob",
    "stream",
    "task",
    "datetime",
    "duration",
    "bool",
    "size",
  ];
  for (const t of types) {
    for (const m of memberDocs(t)) assert(m.about !== "", `${t}.${m.name} has no doc`);
  }
  for (const ns of namespaceNames()) {
    for (const [m, f] of namespaceTable(ns)!.functions) assert(docOf(f), `${ns}.${m} has no doc`);
  }
  for (const b of ["ls", "cat", "head", "rm", "cp", "mv", "mkdir", "open", "help", "echo"]) {
    assert(docOf(getBuiltin(b)!), `builtin ${b} has no doc`);
  }
  assert(registeredBuiltins().includes("help"));
});

Deno.test("an unknown method lists the receiver's closest methods, not only a did-you-mean", async () => {
  await withTempDir(async (dir) => {
    const ev = session(dir);
    Deno.writeTextFileSync(`${dir}/f.txt`, "a\nb\n");
    const u = await error(ev, "(cat f.txt).upper()");
    assertEquals(u.code, "type_error");
    assert(u.hint!.startsWith("convert to text first: .str().upper(); bytes has "), u.hint!);
    for (const m of [".str()", ".lines()", ".len()"]) assert(u.hint!.includes(m), u.hint!);
    const l = await error(ev, "[1, 2].lenght()");
    assertEquals([l.code, l.msg], ["field_missing", "unknown method `.lenght` on list"]);
    assert(l.hint!.startsWith("list has .len()"), l.hint!);
    assert(l.hint!.endsWith("help list)"), l.hint!);
    // the corpus-pinned did-you-mean comes first
    const r = await error(ev, 'path("f.txt").read_str()');
    assert(r.hint!.startsWith("did you mean .read()?; path has "), r.hint!);
    const b = await error(ev, "(cat f.txt).frob()");
    assert(b.hint!.startsWith("bytes has .len(), .count(), .is_empty(), .lines()"), b.hint!);
  });
});
