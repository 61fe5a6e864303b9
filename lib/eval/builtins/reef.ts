/**
 * `which` and `reef` (language §14, §18): how a command head resolves, told truthfully.
 *
 * * `which NAME` follows the dispatch order of §9.1: a callable binding (`function`,
 *   `alias`), a builtin (`builtin` — `which head` says so, issue 13), else the external
 *   resolution: the Reef binding with its scope chain, the ambient PATH hit, null, or an
 *   `unresolved: <code>` record when Reef refuses a constrained name.
 * * `which --all NAME` (`-a`): every candidate (builtin, providers, PATH), nothing probed.
 * * `reef` (`reef status`): the binding table; `reef add TOOL@VERSION`, `reef lock
 *   [--refresh]`, `reef fetch TOOL`, `reef doctor`.
 *
 * @module
 */

import {
  ClosureV,
  CommandV,
  ListV,
  PathV,
  RecordV,
  typeName,
  type Value,
} from "../../value/types.ts";
import { fail } from "../../value/errors.ts";
import type { Span } from "../../syntax/ast.ts";
import {
  addTool,
  bindingRows,
  type Cell,
  doctorRows,
  fetchTool,
  lockAll,
  type Row,
  SpecError,
  whichAllRows,
  whichRow,
} from "../../reef/mod.ts";
import type { Evaluator } from "../evaluator.ts";
import type { Scope } from "../scope.ts";
import { reefContext, reefFailure, sessionEnv } from "../resolve_head.ts";
import { type CmdArgs, getBuiltin, registerBuiltin } from "./registry.ts";
import { flag, nameArg } from "./fs_util.ts";

/** Report fields that hold file paths (they become path values). */
const PATH_FIELDS = new Set(["path", "ambient_path", "manifest", "source"]);

function cellValue(key: string, c: Cell): Value {
  if (Array.isArray(c)) return new ListV(c.map((r) => rowValue(r as unknown as Row)));
  if (typeof c === "string" && PATH_FIELDS.has(key) && c.startsWith("/")) return new PathV(c);
  if (typeof c === "number") return BigInt(c);
  return c;
}

/** A report row as a record (paths as path values, the chain as a table). */
export function rowValue(r: Row): RecordV {
  return new RecordV(new Map(Object.entries(r).map(([k, v]) => [k, cellValue(k, v)])));
}

function tableValue(rows: Row[]): ListV {
  return new ListV(rows.map(rowValue));
}

/** The context of a Reef command (the session's environment). */
function ctxOf(ev: Evaluator) {
  return reefContext(ev, sessionEnv(ev));
}

async function reefCall<T>(span: Span, f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (e) {
    if (e instanceof SpecError) throw fail("arg_error", e.message, null, span);
    throw reefFailure(e, span);
  }
}

/** What a head means before external resolution (§9.1 steps 2–5), or null. */
function shadowing(name: string, sc: Scope): { scope: string; note: string } | null {
  const v = sc.lookup(name)?.v;
  if (v instanceof ClosureV) {
    return { scope: "function", note: `\`${name}\` is a function bound in this session` };
  }
  if (v instanceof CommandV) {
    return { scope: "alias", note: `\`${name}\` is an alias bound in this session` };
  }
  if (getBuiltin(name) !== undefined) {
    return {
      scope: "builtin",
      note: `\`${name}\` is a Shoal builtin; an external ${name} runs only when called by path`,
    };
  }
  return null;
}

function shadowRow(name: string, s: { scope: string; note: string }, external: Value): RecordV {
  return new RecordV(
    new Map<string, Value>([
      ["name", name],
      ["scope", s.scope],
      ["constraint", "*"],
      ["version", null],
      ["path", null],
      ["hash8", null],
      ["provider", s.scope],
      ["chain", new ListV([])],
      ["note", s.note],
      // What the name would run as a program (by path, `.feed`, interpreter blocks).
      ["external", external],
    ]),
  );
}

registerBuiltin("which", {
  structured: true,
  run({ ev, sc }, args: CmdArgs) {
    if (args.pos.length !== 1) {
      throw fail(
        "arg_error",
        `which expects exactly one name, got ${args.pos.length}`,
        null,
        args.span,
      );
    }
    const name = nameArg("which", args.pos[0], args.span);
    checkFlags(args, ["a", "all"], "which NAME [--all]");
    const all = flag(args, "a", "all");
    const s = name.includes("/") ? null : shadowing(name, sc);
    return reefCall(args.span, async () => {
      const ctx = ctxOf(ev);
      if (all) {
        const rows = whichAllRows(name, ctx).map(rowValue);
        if (s !== null) {
          rows.unshift(rowValue({
            name,
            version: null,
            path: null,
            provider: s.scope,
            scope: s.scope,
          }));
        }
        return new ListV(rows);
      }
      const ext = await whichRow(name, ctx);
      const extV = ext === null ? null : rowValue(ext);
      return s !== null ? shadowRow(name, s, extV) : extV;
    });
  },
});

function subcommandArg(args: CmdArgs, i: number, what: string): string {
  const v = args.pos[i];
  if (typeof v === "string") return v;
  if (v instanceof PathV) return v.path;
  throw fail(
    "arg_error",
    `${what}, found ${v === undefined ? "nothing" : typeName(v)}`,
    null,
    args.span,
  );
}

/** Exactly `n` positional words and no flags outside `flags`, else arg_error with the usage. */
function onlyArgs(args: CmdArgs, n: number, usage: string, flags: string[] = []): void {
  if (args.pos.length !== n) throw fail("arg_error", `usage: ${usage}`, null, args.span);
  checkFlags(args, flags, usage);
}

function checkFlags(args: CmdArgs, flags: string[], usage: string): void {
  for (const k of args.flags.keys()) {
    if (!flags.includes(k)) {
      throw fail(
        "arg_error",
        `unknown flag \`${k.length === 1 ? "-" : "--"}${k}\``,
        `usage: ${usage}`,
        args.span,
      );
    }
  }
}

registerBuiltin("reef", {
  structured: false,
  run({ ev }, args: CmdArgs) {
    const sub = args.pos.length === 0
      ? "status"
      : subcommandArg(args, 0, "reef expects a subcommand");
    const span = args.span;
    switch (sub) {
      case "status":
        onlyArgs(args, args.pos.length === 0 ? 0 : 1, "reef [status]");
        return reefCall(span, async () => tableValue(await bindingRows(ctxOf(ev))));
      case "add": {
        if (args.pos.length !== 2) {
          throw fail(
            "arg_error",
            "reef add expects one TOOL@VERSION (e.g. reef add node@22)",
            null,
            span,
          );
        }
        checkFlags(args, [], "reef add TOOL@VERSION");
        const spec = subcommandArg(args, 1, "reef add expects TOOL@VERSION");
        return reefCall(span, async () => rowValue(await addTool(spec, ctxOf(ev))));
      }
      case "lock":
        onlyArgs(args, 1, "reef lock [--refresh]", ["refresh"]);
        return reefCall(
          span,
          async () => tableValue(await lockAll(ctxOf(ev), flag(args, "refresh"))),
        );
      case "fetch": {
        onlyArgs(args, 2, "reef fetch TOOL");
        const tool = subcommandArg(args, 1, "reef fetch expects a tool name");
        return reefCall(span, async () => rowValue(await fetchTool(tool, ctxOf(ev))));
      }
      case "doctor":
        onlyArgs(args, 1, "reef doctor");
        return reefCall(span, async () => tableValue(await doctorRows(ctxOf(ev))));
    }
    throw fail(
      "arg_error",
      `unknown reef subcommand \`${sub}\``,
      "reef [status] | reef add TOOL@VERSION | reef lock [--refresh] | reef fetch TOOL | reef doctor",
      span,
    );
  },
});
