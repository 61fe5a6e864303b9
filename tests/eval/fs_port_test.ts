/**
 * The filesystem port (issue 3): real programs run through an evaluator whose `FsPort` is a
 * thin wrapper over `denoFs`. One wrapper records every call (each builtin, method, redirect,
 * glob, `cd`, script and stream reaches the port), one serves a *virtual* root that exists
 * only inside the port (anything bypassing it would hit a missing path), and one denies
 * writes or reads (the evaluator reports a clean language error, never a crash).
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { denoFs, Evaluator, type FsPort } from "../../lib/eval/mod.ts";
import type { FsEvent, FsWatcher } from "../../lib/eval/ports.ts";
import { ShoalError } from "../../lib/value/errors.ts";
import { renderInline } from "../../lib/value/render.ts";

type AnyFn = (...a: unknown[]) => unknown;

interface Call {
  op: string;
  args: unknown[];
}

/** Options for {@link wrapFs}. */
interface WrapOptions {
  /** Operations that throw `PermissionDenied` instead of running. */
  deny?: (op: string, args: unknown[]) => boolean;
  /** Map a path argument before it reaches `denoFs`, and a returned path back. */
  toReal?: (p: string) => string;
  toVirtual?: (p: string) => string;
}

/** Ops that return a path the evaluator keeps. */
const PATH_RESULTS = new Set(["realPath"]);

/** A thin `FsPort` over `denoFs` that records every call (and may deny or remap). */
function wrapFs(opts: WrapOptions = {}): { fs: FsPort; calls: Call[] } {
  const calls: Call[] = [];
  const toReal = opts.toReal ?? ((p) => p);
  const toVirtual = opts.toVirtual ?? ((p) => p);
  const fs: Record<string, AnyFn> = {};
  for (const [op, f] of Object.entries(denoFs) as [string, AnyFn][]) {
    fs[op] = (...args) => {
      calls.push({ op, args });
      if (opts.deny?.(op, args)) {
        throw new Deno.errors.PermissionDenied("Permission denied (os error 13)");
      }
      // Symlink targets are stored text, not paths to map.
      const real = args.map((a, i) =>
        typeof a === "string" && !(op === "symlink" && i === 0) ? toReal(a) : a
      );
      const r = f(...real);
      if (PATH_RESULTS.has(op)) return toVirtual(r as string);
      if (op === "watch") return virtualWatcher(r as FsWatcher, toVirtual);
      return r;
    };
  }
  return { fs: fs as unknown as FsPort, calls };
}

/** A watcher whose event paths are mapped back into the virtual namespace. */
function virtualWatcher(w: FsWatcher, toVirtual: (p: string) => string): FsWatcher {
  return {
    close: () => w.close(),
    async *[Symbol.asyncIterator](): AsyncIterator<FsEvent> {
      for await (const ev of w) yield { kind: ev.kind, paths: ev.paths.map(toVirtual) };
    },
  };
}

/** True for a write-like operation (the "read-only filesystem" of the deny tests). */
function isWrite(op: string, args: unknown[]): boolean {
  if (op === "open") {
    const o = args[1] as { write?: boolean; append?: boolean; create?: boolean };
    return Boolean(o.write || o.append || o.create);
  }
  return [
    "writeFile",
    "mkdir",
    "remove",
    "rename",
    "copyFile",
    "symlink",
    "link",
    "utime",
  ].includes(op);
}

function tempDir(): string {
  return Deno.realPathSync(Deno.makeTempDirSync({ prefix: "shoal-fsport-" }));
}

function session(cwd: string, fs: FsPort): Evaluator {
  return new Evaluator({ cwd, env: { HOME: cwd, PATH: "/usr/bin:/bin" }, ports: { fs } });
}

async function show(ev: Evaluator, src: string): Promise<string> {
  return renderInline(await ev.evalSource(src));
}

async function langError(ev: Evaluator, src: string): Promise<ShoalError["err"]> {
  try {
    await ev.evalSource(src);
  } catch (e) {
    if (e instanceof ShoalError) return e.err;
    throw new Error(`${src}: not a language error: ${e}`);
  }
  throw new Error(`expected an error from: ${src}`);
}

Deno.test("every filesystem access of a program goes through the FsPort", async () => {
  const dir = tempDir();
  try {
    const { fs, calls } = wrapFs();
    const ev = session(dir, fs);
    Deno.mkdirSync(join(dir, "lib"));
    Deno.writeTextFileSync(join(dir, "lib", "m.shl"), "export fn twice(x) { x * 2 }\n");
    Deno.writeTextFileSync(join(dir, "s.shl"), "args.len()\n");
    Deno.writeTextFileSync(join(dir, "inc.shl"), "let included = 7\n");
    Deno.writeTextFileSync(join(dir, "noext"), "#!/usr/bin/env shoal\n1 + 1\n");
    const p = (name: string) => join(dir, name);
    // [program, expected value, [op, path] pairs that must have reached the port]
    const cases: [string, string, [string, string][]][] = [
      [`"hi\\nthere\\n".save("a.txt")`, `"hi\\nthere\\n"`, [["writeFile", p("a.txt")]]],
      [`"more\\n".append("a.txt")`, `"more\\n"`, [["writeFile", p("a.txt")]]],
      [`save b.txt "x"`, `"x"`, [["writeFile", p("b.txt")]]],
      [`(cat a.txt).out.len()`, "14", [["readFile", p("a.txt")]]],
      [`path("a.txt").read()`, `"hi\\nthere\\nmore\\n"`, [["readFile", p("a.txt")]]],
      [`path("a.txt").lines.len()`, "3", [["readFile", p("a.txt")]]],
      [`path("b.txt").read_bytes().len()`, "1", [["readFile", p("b.txt")]]],
      [`path("a.txt").is_file`, "true", [["stat", p("a.txt")]]],
      [`path("a.txt").size`, "14b", [["stat", p("a.txt")]]],
      [`path("a.txt").modified.year > 2000`, "true", [["stat", p("a.txt")]]],
      [`(head a.txt 1).out`, `["hi"]`, [["open", p("a.txt")]]],
      [`(mkdir sub).out.len()`, "1", [["mkdir", p("sub")]]],
      [`(touch sub/t).out.len()`, "1", [["open", p("sub/t")], ["utime", p("sub/t")]]],
      [`(ls *.txt).out.map(r => r.name)`, `["a.txt", "b.txt"]`, [
        ["readDir", dir],
        ["stat", p("a.txt")],
      ]],
      [`(ls sub).out.len()`, "1", [["readDir", p("sub")], ["lstat", p("sub/t")]]],
      [`(stat b.txt).out.size`, "1b", [["lstat", p("b.txt")]]],
      [`ls > out.json`, "null", [["writeFile", p("out.json")]]],
      [`[1, 2].stream().save("s.txt")`, p("s.txt"), [["open", p("s.txt")]]],
      [`(cp a.txt c.txt).out.len()`, "1", [["copyFile", p("a.txt")]]],
      [`(cp -r sub sub2).out.len()`, "1", [["mkdir", p("sub2")], ["copyFile", p("sub/t")]]],
      [`(mv c.txt d.txt).out.len()`, "1", [["rename", p("c.txt")]]],
      [`(ln -s a.txt l.txt).out.symbolic`, "true", [["symlink", p("l.txt")]]],
      [`(ln a.txt h.txt).out.symbolic`, "false", [["link", p("h.txt")]]],
      [`(rm d.txt).out.len()`, "1", [["lstat", p("d.txt")], ["rename", p("d.txt")]]],
      [`(rm --permanent h.txt).out.len()`, "1", [["remove", p("h.txt")]]],
      [`use ./lib/m\nm.twice(4)`, "8", [["stat", p("lib/m.shl")], ["readFile", p("lib/m.shl")]]],
      [`run s.shl 1 2`, "2", [["readFile", p("s.shl")]]],
      [`run ./noext`, "2", [["open", p("noext")], ["readFile", p("noext")]]],
      [`source inc.shl\nincluded`, "7", [["readFile", p("inc.shl")]]],
      [`tail("a.txt")`, "stream<str>", [["stat", p("a.txt")]]],
      [`cd sub`, p("sub"), [["realPath", p("sub")], ["stat", p("sub")]]],
      [`pushd ..`, `[${dir}, ${p("sub")}]`, [["realPath", p("sub/..")]]],
      [`popd`, `[${p("sub")}]`, []],
      [`cd -`, dir, []],
    ];
    for (const [src, want, expect] of cases) {
      calls.length = 0;
      assert.equal(await show(ev, src), want, src);
      for (const [op, path] of expect) {
        assert.ok(
          calls.some((c) => c.op === op && c.args.includes(path)),
          `${src}: expected ${op}(${path}); port saw ${
            JSON.stringify(calls.map((c) => [c.op, ...c.args.filter((a) => typeof a === "string")]))
          }`,
        );
      }
    }
    // The trash lives under the port's temp dir and is checked against the port's uid.
    calls.length = 0;
    Deno.writeTextFileSync(p("e.txt"), "");
    await ev.evalSource("rm e.txt");
    for (const op of ["tempDir", "uid", "mkdir"]) {
      assert.ok(calls.some((c) => c.op === op), `rm: expected ${op}`);
    }
    // watch registers through the port and its events come through the port's watcher.
    calls.length = 0;
    await ev.evalSource(`let w = watch(".")`);
    assert.ok(calls.some((c) => c.op === "watch" && c.args[0] === dir));
    setTimeout(() => Deno.writeTextFileSync(p("new.txt"), "x"), 20);
    assert.equal(
      await show(ev, `w.where(e => e.path.name == "new.txt").take(1).first().path`),
      p("new.txt"),
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("a virtual root served only by the FsPort works end to end (nothing bypasses it)", async () => {
  const real = tempDir();
  // This directory does not exist on the host: only the port knows where it lives.
  const virtual = `/shoal-virtual-${crypto.randomUUID()}`;
  const toReal = (p: string) =>
    p === virtual || p.startsWith(virtual + "/") ? real + p.slice(virtual.length) : p;
  const toVirtual = (p: string) =>
    p === real || p.startsWith(real + "/") ? virtual + p.slice(real.length) : p;
  try {
    const { fs } = wrapFs({ toReal, toVirtual });
    const ev = session(virtual, fs);
    Deno.mkdirSync(join(real, "lib"));
    Deno.writeTextFileSync(join(real, "lib", "m.shl"), "export fn twice(x) { x * 2 }\n");
    const program = [
      `"one\\ntwo\\n".save("a.txt")`,
      `save b.txt "bb"`,
      `mkdir -p sub/deep`,
      `touch sub/deep/t.txt`,
      `ls > listing.txt`,
      `cp a.txt sub/c.txt`,
      `mv b.txt sub/b.txt`,
      `use ./lib/m`,
      `cd sub`,
      `rm --permanent deep/t.txt`,
      `[(head c.txt 1).out, (cat b.txt).out.len(), path("c.txt").lines, path("b.txt").exists,`,
      ` (ls *.txt).out.map(r => r.name), glob("**/*.txt", hidden: false).len(), m.twice(21),`,
      ` path("../listing.txt").read().contains("a.txt"), path("deep/t.txt").exists]`,
    ].join("\n");
    assert.equal(
      await show(ev, program),
      `[["one"], 2, ["one", "two"], true, ["b.txt", "c.txt"], 2, 42, true, false]`,
    );
    assert.equal(await show(ev, "pwd"), `${virtual}/sub`);
    // The effects landed in the real directory behind the port.
    assert.equal(Deno.readTextFileSync(join(real, "sub", "c.txt")), "one\ntwo\n");
    assert.equal(Deno.readTextFileSync(join(real, "sub", "b.txt")), "bb");
    assert.match(Deno.readTextFileSync(join(real, "listing.txt")), /b\.txt/);
  } finally {
    Deno.removeSync(real, { recursive: true });
  }
});

Deno.test("a read-only FsPort: writes fail as clean language errors, reads still work", async () => {
  const dir = tempDir();
  try {
    Deno.writeTextFileSync(join(dir, "a.txt"), "keep\n");
    Deno.mkdirSync(join(dir, "d"));
    const { fs, calls } = wrapFs({ deny: isWrite });
    const ev = session(dir, fs);
    const denied = "Permission denied (os error 13)";
    const cases: [string, string][] = [
      [`"x".save("n.txt")`, `save ${dir}/n.txt: ${denied}`],
      [`"x".append("a.txt")`, `append ${dir}/a.txt: ${denied}`],
      [`save n.txt "x"`, `save ${dir}/n.txt: ${denied}`],
      [`ls > n.txt`, `write ${dir}/n.txt: ${denied}`],
      [`ls >> a.txt`, `write ${dir}/a.txt: ${denied}`],
      [`[1].stream().save("n.txt")`, `save ${dir}/n.txt: ${denied}`],
      [`mkdir n`, `mkdir ${dir}/n: ${denied}`],
      [`touch n.txt`, `touch ${dir}/n.txt: ${denied}`],
      [`cp a.txt n.txt`, `copy ${dir}/a.txt: ${denied}`],
      [`cp -r d d2`, `copy ${dir}/d: ${denied}`],
      [`mv a.txt n.txt`, `move ${dir}/a.txt: ${denied}`],
      [`ln -s a.txt n.txt`, `link ${dir}/n.txt: ${denied}`],
      [`rm --permanent a.txt`, `remove ${dir}/a.txt: ${denied}`],
    ];
    for (const [src, msg] of cases) {
      const e = await langError(ev, src);
      assert.equal(e.code, "custom", src);
      assert.equal(e.msg, msg, src);
    }
    // `rm` to the trash cannot create the trash directory.
    const trash = await langError(ev, "rm a.txt");
    assert.equal(trash.code, "custom");
    assert.match(trash.msg, /^trash .*shoal-trash.*: Permission denied \(os error 13\)$/);
    // Language code can catch it, and the session goes on.
    assert.equal(await show(ev, `try { "x".save("n.txt") } catch e { e.code }`), `"custom"`);
    assert.equal(await show(ev, `path("a.txt").read()`), `"keep\\n"`);
    assert.equal(await show(ev, `(cat a.txt).out.len()`), "5");
    assert.equal(await show(ev, `(ls).out.map(r => r.name)`), `["a.txt", "d"]`);
    // Nothing was written behind the port's back.
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name).sort(), ["a.txt", "d"]);
    assert.equal(Deno.readTextFileSync(join(dir, "a.txt")), "keep\n");
    assert.ok(calls.some((c) => c.op === "writeFile"));
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("a denied read keeps its codes: custom for path methods and builtins, io_error for scripts", async () => {
  const dir = tempDir();
  try {
    Deno.writeTextFileSync(join(dir, "a.txt"), "x");
    Deno.writeTextFileSync(join(dir, "s.shl"), "1");
    const { fs } = wrapFs({ deny: (op) => op === "readFile" || op === "open" });
    const ev = session(dir, fs);
    const denied = "Permission denied (os error 13)";
    const cases: [string, string, string][] = [
      [`path("a.txt").read()`, "custom", `read ${dir}/a.txt: ${denied}`],
      [`path("a.txt").read_bytes()`, "custom", `read_bytes ${dir}/a.txt: ${denied}`],
      [`cat a.txt`, "custom", `read ${dir}/a.txt: ${denied}`],
      [`head a.txt`, "custom", `read ${dir}/a.txt: ${denied}`],
      [`run s.shl`, "io_error", `run ${dir}/s.shl: ${denied}`],
      [`source s.shl`, "io_error", `source ${dir}/s.shl: ${denied}`],
    ];
    for (const [src, code, msg] of cases) {
      const e = await langError(ev, src);
      assert.equal(e.code, code, src);
      assert.equal(e.msg, msg, src);
    }
    // A missing file is still not_found for path methods.
    assert.equal((await langError(ev, `path("nope").size`)).code, "not_found");
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
