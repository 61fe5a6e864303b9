/**
 * Scripts and modules (language §9.8): `run TARGET args…` / `run(target, args…)`, a command
 * head ending in `.shl`, `source PATH` and `use ./lib/mod`.
 *
 * * A `.shl` script (or an extension-less file without a foreign shebang) runs in a **fresh
 *   child evaluator** (fresh root scope; a copy of the session cwd/env; same ports and cancel
 *   flag) with `args` (list) and `script` (path) bound; its value is the script's last value
 *   and none of its bindings leak back.
 * * Other scripts run through a runner chosen by extension, else by shebang, else
 *   `runner_not_found`.
 * * `source` evaluates a file in the current evaluator and scope, so its bindings persist.
 * * `use` evaluates a module once per session in a fresh root scope with cwd = the module's
 *   directory and binds a record of its `export`ed names under the file stem.
 *
 * Imported by `lib/eval/mod.ts` (after the evaluator module is initialised, because it
 * installs evaluator hooks).
 *
 * @module
 */

import { basename, dirname, join } from "node:path";
import type { CmdArg, CmdExpr, Program, Span } from "../../syntax/ast.ts";
import { parse, ParseError } from "../../syntax/mod.ts";
import { GlobV, ListV, PathV, RecordV, typeName, type Value } from "../../value/types.ts";
import { fail } from "../../value/errors.ts";
import { toArgv } from "../../value/coerce.ts";
import { type ArgvItem, which } from "../../exec/mod.ts";
import { chainOf, parseShebang, type RunnerSpec, runnerTable, SELF } from "../../reef/mod.ts";
import { reefContext, sessionEnv } from "../resolve_head.ts";
import { type MaybePromise, then } from "../maybe.ts";
import type { Scope } from "../scope.ts";
import { Ctl } from "../ctl.ts";
import { type Evaluator, type EvaluatorOptions, installHooks } from "../evaluator.ts";
import { spawnOutcome, wordValue } from "../commands.ts";
import { runAdaptedValues } from "../adapters/run.ts";
import { at } from "../expressions.ts";
import { compileBody } from "../statements.ts";
import { registerBuiltin, registerCallForm } from "./registry.ts";
import { absPath, osReason } from "./fs_util.ts";
import { fileName } from "../methods/path.ts";
import type { FsPort } from "../fs_port.ts";
import { doc } from "../docs.ts";

/** The names a `.shl` script starts with. */
const SCRIPT_NAMES = { values: ["args", "script"], commands: [] };

/** Nested script/module evaluations allowed before `recursion_limit` (a script running itself). */
const MAX_NESTING = 64;

/** Per-session module state shared by a session and every child evaluator it starts. */
interface SessionState {
  /** Canonical module path → its export record. */
  modules: Map<string, RecordV>;
  /** Canonical paths of modules being evaluated, outermost first (circular `use`). */
  loading: string[];
  /** Current script/module nesting depth. */
  nesting: number;
}

const SESSIONS = new WeakMap<Evaluator, SessionState>();

function session(ev: Evaluator): SessionState {
  let s = SESSIONS.get(ev);
  if (s === undefined) {
    s = { modules: new Map(), loading: [], nesting: 0 };
    SESSIONS.set(ev, s);
  }
  return s;
}

/** A fresh child evaluator of the same class sharing the session's module state. */
function childEvaluator(ev: Evaluator, cwd?: string): Evaluator {
  const opts = ev.childOptions();
  if (cwd !== undefined) opts.cwd = cwd;
  const Ctor = ev.constructor as new (o: EvaluatorOptions) => Evaluator;
  const child = new Ctor(opts);
  SESSIONS.set(child, session(ev));
  return child;
}

/** `~` / `~/…` against the session HOME. */
function expandTilde(ev: Evaluator, text: string): string {
  if (text !== "~" && !text.startsWith("~/")) return text;
  const home = ev.env().get("HOME") ?? "/";
  return text === "~" ? home : home + text.slice(1);
}

/** Read a script/module as text: unreadable → io_error. */
function readSource(fs: FsPort, path: string, what: string, span: Span | null): string {
  try {
    return new TextDecoder("utf-8", { ignoreBOM: true }).decode(fs.readFile(path));
  } catch (e) {
    throw fail("io_error", `${what} ${path}: ${osReason(e)}`, null, span);
  }
}

/** Parse a file's source: a syntax error is the runtime error `parse_error`. */
function parseFile(
  src: string,
  path: string,
  span: Span | null,
  names?: { values: string[]; commands: string[] },
): Program {
  try {
    return parse(src, {
      repl: false,
      valueNames: names?.values ?? [],
      commandNames: names?.commands ?? [],
    });
  } catch (e) {
    if (e instanceof ParseError) {
      throw fail("parse_error", `${path}: ${e.msg}`, e.hint ?? null, span);
    }
    throw e;
  }
}

/** Run `body` one nesting level deeper (recursion_limit beyond MAX_NESTING). */
function nested<T>(ev: Evaluator, span: Span | null, body: () => MaybePromise<T>): MaybePromise<T> {
  const s = session(ev);
  if (s.nesting >= MAX_NESTING) {
    throw fail(
      "recursion_limit",
      `scripts nested more than ${MAX_NESTING} deep`,
      null,
      span,
    );
  }
  s.nesting++;
  let r: MaybePromise<T>;
  try {
    r = body();
  } catch (e) {
    s.nesting--;
    throw e;
  }
  if (r instanceof Promise) {
    return r.finally(() => {
      s.nesting--;
    });
  }
  s.nesting--;
  return r;
}

/** Run a `.shl` file in a fresh child evaluator with `args` and `script` bound. */
export function runShl(
  ev: Evaluator,
  path: string,
  args: Value[],
  span: Span | null,
): MaybePromise<Value> {
  // `args` and `script` are value bindings of the child, also for the parser.
  const program = parseFile(readSource(ev.ports.fs, path, "run", span), path, span, SCRIPT_NAMES);
  return nested(ev, span, () => {
    const child = childEvaluator(ev);
    child.root.declare("args", new ListV(args));
    child.root.declare("script", new PathV(path));
    child.gateProgram(program, `run ${path}`, span);
    return child.evalProgram(program);
  });
}

/** The interpreter words of a `#!` file, or null. */
function shebang(fs: FsPort, path: string): string[] | null {
  let head: Uint8Array;
  try {
    const f = fs.open(path, { read: true });
    try {
      const buf = new Uint8Array(512);
      const n = f.read(buf) ?? 0;
      head = buf.subarray(0, n);
    } finally {
      f.close();
    }
  } catch {
    return null;
  }
  return parseShebang(head);
}

function extOf(path: string): string | null {
  const name = fileName(path);
  if (name === null) return null;
  const i = name.lastIndexOf(".");
  return i <= 0 ? null : name.slice(i + 1);
}

function exists(fs: FsPort, path: string): boolean {
  try {
    fs.lstat(path);
    return true;
  } catch {
    return false;
  }
}

/** True when an extension-less file is a Shoal script (no shebang naming another program). */
function isShoalFile(fs: FsPort, path: string): boolean {
  const sb = shebang(fs, path);
  return sb === null || sb.some((w) => basename(w) === "shoal");
}

/**
 * `run TARGET args…` (§9.8): a script file when the target looks like a path or has a known
 * script extension and exists; otherwise an external command.
 */
export function runTarget(
  ev: Evaluator,
  target: Value,
  args: Value[],
  sc: Scope,
  span: Span,
): MaybePromise<Value> {
  let text: string;
  if (typeof target === "string") text = target;
  else if (target instanceof PathV) text = target.path;
  else {
    throw fail(
      "type_error",
      `run expects a str or path target, found ${typeName(target)}`,
      null,
      span,
    );
  }
  if (text === "") throw fail("arg_error", "run expects a target", null, span);
  const expanded = expandTilde(ev, text);
  const abs = absPath(ev.cwd(), expanded);
  const ext = extOf(expanded);
  const pathLike = text.includes("/") || text.startsWith(".") || text.startsWith("~");
  const table = runners(ev);
  const known = ext !== null && (table.has(ext) || ext === "rs");
  const fs = ev.ports.fs;
  const script = pathLike || (known && exists(fs, abs));
  const argvOf = (prefix: ArgvItem[]): ArgvItem[] => [
    ...prefix,
    ...args.map((a) => at(span, () => toArgv(a))),
  ];
  if (!script) {
    // An adapted head runs through its adapter (subsystems §7).
    return runAdaptedValues(ev, text, args, sc, span) ??
      spawnOutcome(ev, argvOf([text]), {}, null, sc, span);
  }
  const spec = ext === null ? undefined : table.get(ext);
  if (
    spec?.tool === SELF || (ext === null && (!exists(fs, abs) || isShoalFile(fs, abs)))
  ) {
    return runShl(ev, abs, args, span);
  }
  // A file a runner would start must exist; without one, a missing file has no runner.
  if ((spec !== undefined || ext === "rs") && !exists(fs, abs)) {
    throw fail("io_error", `run ${abs}: No such file or directory (os error 2)`, null, span);
  }
  if (spec !== undefined) {
    return spawnOutcome(ev, argvOf([spec.tool, ...spec.args, abs]), {}, null, sc, span);
  }
  if (ext === "rs") return runRust(ev, abs, argvOf([]), sc, span);
  const sb = shebang(fs, abs);
  if (sb === null) {
    throw fail(
      "runner_not_found",
      `no runner for ${abs}`,
      "add a shebang line or a [runners] entry to .reef.toml",
      span,
    );
  }
  return spawnOutcome(ev, argvOf([...sb, abs]), {}, null, sc, span);
}

/** The runner table in scope (defaults overlaid by the `[runners]` of every Reef scope). */
function runners(ev: Evaluator): ReadonlyMap<string, RunnerSpec> {
  return runnerTable(chainOf(reefContext(ev, sessionEnv(ev))));
}

/**
 * `.rs` has no table runner (compile or script?): `rust-script FILE` when it is on the
 * session PATH, else `rustc -o TMP FILE` and the binary it built (a failed compile is the
 * outcome: its stderr says why).
 */
async function runRust(
  ev: Evaluator,
  abs: string,
  args: ArgvItem[],
  sc: Scope,
  span: Span,
): Promise<Value> {
  const path = ev.env().get("PATH");
  if (which("rust-script", path, ev.cwd()) !== null) {
    return await spawnOutcome(ev, ["rust-script", abs, ...args], {}, null, sc, span);
  }
  if (which("rustc", path, ev.cwd()) === null) {
    throw fail(
      "runner_not_found",
      `no runner for ${abs}: neither rust-script nor rustc is on the session PATH`,
      "install rust-script, or add an rs entry to [runners] in .reef.toml",
      span,
    );
  }
  const dir = Deno.makeTempDirSync({ prefix: "shoal-rs-" });
  try {
    const exe = join(dir, basename(abs, ".rs"));
    const built = await spawnOutcome(ev, ["rustc", "-o", exe, abs], {}, null, sc, span);
    if (!built.ok) return built;
    return await spawnOutcome(ev, [exe, ...args], {}, null, sc, span);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}

/**
 * True when a path head should run through `run`: an existing regular file that is not
 * executable, with a runner for its extension or a `#!` line (an executable file is exec'd
 * as is, as every shell does; upstream never dispatched `./x.py` at all).
 */
function runsAsScript(ev: Evaluator, head: string): boolean {
  const abs = absPath(ev.cwd(), expandTilde(ev, head));
  let info;
  try {
    info = ev.ports.fs.stat(abs);
  } catch {
    return false;
  }
  if (!info.isFile || ((info.mode ?? 0) & 0o111) !== 0) return false;
  const ext = extOf(abs);
  return (ext !== null && (runners(ev).has(ext) || ext === "rs")) ||
    shebang(ev.ports.fs, abs) !== null;
}

/** Command words as values in order: flags as their text, globs expanded (run's `args`). */
function wordValues(ev: Evaluator, words: CmdArg[], sc: Scope): MaybePromise<Value[]> {
  const out: Value[] = [];
  const step = (i: number): MaybePromise<Value[]> => {
    for (; i < words.length; i++) {
      const a = words[i];
      const r = then(wordValue(ev, a, sc), (v) => {
        if (v instanceof GlobV && a.kind === "GlobWord") {
          return then(ev.expandGlob(v, a.span), (paths) => {
            if (paths.length === 0) ev.ports.stderr(`shoal: no matches for ${v.pattern}\n`);
            out.push(...paths);
          });
        }
        out.push(v);
      });
      if (r instanceof Promise) {
        const next = i + 1;
        return r.then(() => step(next));
      }
    }
    return out;
  };
  return step(0);
}

registerBuiltin(
  "run",
  doc("run TARGET ARG…", "run a script (.shl, .sh, .py, …) or a program", {
    structured: false,
    rawArgs: true,
    run({ ev, cmd, sc }) {
      return then(wordValues(ev, cmd.args, sc), (vals) => {
        if (vals.length === 0) throw fail("arg_error", "run expects a target", null, cmd.span);
        return runTarget(ev, vals[0], vals.slice(1), sc, cmd.span);
      });
    },
  }),
);

registerCallForm(
  "run",
  doc(
    "run(target, args…) -> value",
    "run a script or program with these arguments",
    (ev, a, sc) => {
      const span = a.span ?? [0, 0];
      if (a.pos.length === 0) throw fail("arg_error", "run expects a target", null, span);
      if (a.named.size) {
        const k = [...a.named.keys()][0];
        throw fail("arg_error", `unknown argument \`${k}\``, null, span);
      }
      return runTarget(ev as Evaluator, a.pos[0], a.pos.slice(1), sc, span);
    },
  ),
);

/** `source PATH`: evaluate the file in the current evaluator and scope. */
function sourceFile(ev: Evaluator, target: Value, sc: Scope, span: Span): MaybePromise<Value> {
  let text: string;
  if (typeof target === "string") text = target;
  else if (target instanceof PathV) text = target.path;
  else throw fail("type_error", `source expects a path, found ${typeName(target)}`, null, span);
  const abs = absPath(ev.cwd(), expandTilde(ev, text));
  const program = parseFile(
    readSource(ev.ports.fs, abs, "source", span),
    abs,
    span,
    ev.boundNames(),
  );
  ev.gateProgram(program, `source ${abs}`, span);
  return nested(ev, span, () => {
    const body = compileBody(ev, program.body, "top");
    return then(body(sc), (r) => {
      if (r instanceof Ctl) {
        throw fail(
          "custom",
          r.kind === "return" ? "return outside function" : "loop control outside loop",
          null,
          span,
        );
      }
      return r;
    });
  });
}

registerBuiltin(
  "source",
  doc("source PATH", "evaluate a .shl file in this session (its bindings stay)", {
    structured: false,
    rawArgs: true,
    run({ ev, cmd, sc }) {
      return then(wordValues(ev, cmd.args, sc), (vals) => {
        if (vals.length !== 1) {
          throw fail("arg_error", `source expects one path, got ${vals.length}`, null, cmd.span);
        }
        return sourceFile(ev, vals[0], sc, cmd.span);
      });
    },
  }),
);

/** Resolve `use` target → canonical module file (`mod.shl`, then `mod`). */
function resolveModule(ev: Evaluator, target: string, span: Span): string {
  const base = absPath(ev.cwd(), expandTilde(ev, target));
  for (const cand of base.endsWith(".shl") ? [base] : [base + ".shl", base]) {
    try {
      if (ev.ports.fs.stat(cand).isFile) return ev.ports.fs.realPath(cand);
    } catch {
      // try the next candidate
    }
  }
  throw fail(
    "not_found",
    `module not found: ${target}`,
    `looked for ${base}.shl and ${base}`,
    span,
  );
}

/** The binding name of a module: its file stem. */
function moduleStem(path: string): string {
  const name = basename(path);
  return name.endsWith(".shl") ? name.slice(0, -4) : name;
}

function useModule(ev: Evaluator, target: string, sc: Scope, span: Span): MaybePromise<void> {
  const path = resolveModule(ev, target, span);
  const st = session(ev);
  const bind = (rec: RecordV): void => sc.declare(moduleStem(path), rec);
  const cached = st.modules.get(path);
  if (cached !== undefined) return bind(cached);
  if (st.loading.includes(path)) {
    const chain = [...st.loading.slice(st.loading.indexOf(path)), path].map(moduleStem);
    throw fail("custom", `circular \`use\`: ${chain.join(" -> ")}`, null, span);
  }
  const program = parseFile(readSource(ev.ports.fs, path, "use", span), path, span);
  st.loading.push(path);
  const done = () => {
    st.loading.splice(st.loading.lastIndexOf(path), 1);
  };
  let r: MaybePromise<Value>;
  const child = childEvaluator(ev, dirname(path));
  try {
    child.gateProgram(program, `use ${path}`, span);
    r = nested(ev, span, () => child.evalProgram(program));
  } catch (e) {
    done();
    throw e;
  }
  const finish = (): void => {
    done();
    const fields = new Map<string, Value>();
    for (const name of child.exportNames) {
      const cell = child.root.lookup(name);
      if (cell !== undefined) fields.set(name, cell.v);
    }
    const rec = new RecordV(fields);
    st.modules.set(path, rec);
    bind(rec);
  };
  if (r instanceof Promise) {
    return r.then(finish, (e) => {
      done();
      throw e;
    });
  }
  finish();
}

/** A command head ending in `.shl` (`./x.shl a b`), or a path head {@link runsAsScript}. */
function runScriptHead(ev: Evaluator, cmd: CmdExpr, sc: Scope): MaybePromise<Value> {
  const path = absPath(ev.cwd(), expandTilde(ev, cmd.head));
  return then(
    wordValues(ev, cmd.args, sc),
    (vals) =>
      path.endsWith(".shl")
        ? runShl(ev, path, vals, cmd.span)
        : runTarget(ev, new PathV(path), vals, sc, cmd.span),
  );
}

installHooks({ runScript: runScriptHead, runsAsScript, useModule });
