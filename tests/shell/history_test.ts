import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { join } from "node:path";
import { History } from "../../lib/shell/history.ts";

function opts(path: string, over: Partial<ConstructorParameters<typeof History>[0]> = {}) {
  return {
    enabled: true,
    path,
    max_entries: 100,
    dedup: true,
    ignore: ["token *", "exit"],
    ignore_space: true,
    ...over,
  };
}

Deno.test("history: §11 rules — dedup vs the previous entry, leading space, glob ignores", () => {
  const dir = Deno.makeTempDirSync();
  const file = join(dir, "state", "history.txt");
  const h = new History(opts(file));
  for (const e of ["ls", "ls", "echo a", " secret", "token abc", "exit", "ls", ""]) h.add(e);
  assertEquals(h.entries, ["ls", "echo a", "ls"]);
  // dedup holds across restarts: the last entry read counts.
  const again = new History(opts(file));
  assertEquals(again.entries, ["ls", "echo a", "ls"]);
  again.add("ls");
  assertEquals(again.entries.length, 3);
  assertEquals(Deno.statSync(file).mode! & 0o777, 0o600);
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("history: multi-line entries and backslashes survive the file", () => {
  const dir = Deno.makeTempDirSync();
  const file = join(dir, "h.txt");
  const entry = 'if x {\n  "a\\\\nb"\n}';
  new History(opts(file)).add(entry);
  assertEquals(new History(opts(file)).entries, [entry]);
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("history: at most max_entries are kept; a grown file is compacted", () => {
  const dir = Deno.makeTempDirSync();
  const file = join(dir, "h.txt");
  Deno.writeTextFileSync(file, Array.from({ length: 200 }, (_, i) => `cmd ${i}\n`).join(""));
  const h = new History(opts(file, { max_entries: 10 }));
  assertEquals(h.entries, Array.from({ length: 10 }, (_, i) => `cmd ${190 + i}`));
  assertEquals(Deno.readTextFileSync(file).split("\n").length - 1, 10);
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("history: disabled keeps nothing and writes no file", () => {
  const dir = Deno.makeTempDirSync();
  const file = join(dir, "h.txt");
  const h = new History(opts(file, { enabled: false }));
  h.add("ls");
  assertEquals(h.entries, []);
  assertEquals(
    (() => {
      try {
        Deno.statSync(file);
        return true;
      } catch {
        return false;
      }
    })(),
    false,
  );
  Deno.removeSync(dir, { recursive: true });
});
