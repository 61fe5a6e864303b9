/**
 * The session-cwd verbs (language §14 special heads): `cd`, `pushd`, `popd`, `dirs`, `j`/`jump`.
 * They change the *evaluator's* cwd (never the process's) and are only allowed at session top
 * level — inside a closure body they raise custom «… use `with cwd:` inside a fn body» (§8.2).
 *
 * @module
 */

import type { Span } from "../../syntax/ast.ts";
import { ListV, PathV, type Value } from "../../value/types.ts";
import { fail } from "../../value/errors.ts";
import type { Evaluator } from "../evaluator.ts";
import { registerBuiltin } from "./registry.ts";
import { absPath, osReason, pathText } from "./fs_util.ts";
import { doc } from "../docs.ts";
import { CWD_FLAGS } from "./gnu_flags.ts";

/** The canonical directory `p` names (relative to the session cwd), else arg_error. */
function canonicalDir(ev: Evaluator, verb: string, p: string, span: Span): string {
  const abs = absPath(ev.cwd(), p);
  let real: string;
  try {
    real = ev.ports.fs.realPath(abs);
  } catch (e) {
    throw fail("arg_error", `${verb}: cannot enter ${abs}: ${osReason(e)}`, null, span);
  }
  let isDir = false;
  try {
    isDir = ev.ports.fs.stat(real).isDirectory;
  } catch {
    isDir = false;
  }
  if (!isDir) throw fail("arg_error", `${verb}: not a directory: ${abs}`, null, span);
  return real;
}

/** Move the session to `dir`, remembering the previous cwd for `cd -`. */
function enter(ev: Evaluator, dir: string): void {
  ev.oldPwd = ev.cwd();
  ev.setCwd(dir);
}

/** `[cwd] + stack` as paths (top of the stack first). */
function stackList(ev: Evaluator): ListV {
  return new ListV([ev.cwd(), ...ev.dirStack].map((p) => new PathV(p)));
}

function atMostOne(verb: string, pos: Value[], span: Span): void {
  if (pos.length > 1) {
    throw fail("arg_error", `${verb} takes at most one directory, got ${pos.length}`, null, span);
  }
}

registerBuiltin(
  "cd",
  doc("cd [DIR | -]", "change the session directory (no DIR: $HOME; -: the previous one)", {
    flags: CWD_FLAGS,
    structured: false,
    run({ ev, sc }, args) {
      ev.requireTopLevel("cd", "with cwd:", args.span, sc);
      atMostOne("cd", args.pos, args.span);
      const arg = args.pos[0];
      if (arg === "-") {
        // `cd -` returns to the exact path left, not a re-canonicalised one.
        const prev = ev.oldPwd;
        if (prev === null) throw fail("custom", "cd: OLDPWD not set", null, args.span);
        enter(ev, prev);
        return new PathV(prev);
      }
      let target: string;
      if (arg === undefined) {
        const home = ev.env().get("HOME");
        if (home === undefined || home === "") {
          throw fail("arg_error", "cd: HOME not set", null, args.span);
        }
        target = home;
      } else target = pathText(arg, "cd", args.span);
      const dir = canonicalDir(ev, "cd", target, args.span);
      enter(ev, dir);
      return new PathV(dir);
    },
  }),
);

registerBuiltin(
  "pushd",
  doc("pushd [DIR] -> list<path>", "cd to DIR, remembering this one (no DIR: swap)", {
    structured: false,
    run({ ev, sc }, args) {
      ev.requireTopLevel("pushd", "with cwd:", args.span, sc);
      atMostOne("pushd", args.pos, args.span);
      if (args.pos.length === 0) {
        const top = ev.dirStack[0];
        if (top === undefined) {
          throw fail(
            "custom",
            "pushd: no other directory on the stack to swap with",
            null,
            args.span,
          );
        }
        ev.dirStack[0] = ev.cwd();
        enter(ev, top);
        return stackList(ev);
      }
      const dir = canonicalDir(ev, "pushd", pathText(args.pos[0], "pushd", args.span), args.span);
      ev.dirStack.unshift(ev.cwd());
      enter(ev, dir);
      return stackList(ev);
    },
  }),
);

registerBuiltin(
  "popd",
  doc("popd -> list<path>", "cd back to the directory pushd remembered", {
    structured: false,
    run({ ev, sc }, args) {
      ev.requireTopLevel("popd", "with cwd:", args.span, sc);
      if (args.pos.length) throw fail("arg_error", "popd takes no arguments", null, args.span);
      const top = ev.dirStack.shift();
      if (top === undefined) {
        throw fail("custom", "popd: directory stack is empty", null, args.span);
      }
      enter(ev, top);
      return stackList(ev);
    },
  }),
);

registerBuiltin(
  "dirs",
  doc("dirs -> list<path>", "the directory stack, current first", {
    structured: false,
    run({ ev }, args) {
      if (args.pos.length) throw fail("arg_error", "dirs takes no arguments", null, args.span);
      return stackList(ev);
    },
  }),
);

/**
 * `j`/`jump [query]`: without a frecency store (none is wired into the evaluator yet) a query
 * jumps to the directory it names, else the nearest directory on the stack whose name
 * contains it; no match → not_found.
 */
for (const head of ["j", "jump"]) {
  registerBuiltin(head, {
    structured: false,
    run({ ev, sc }, args) {
      ev.requireTopLevel(head, "with cwd:", args.span, sc);
      if (args.pos.length > 1) {
        throw fail("arg_error", `${head} takes at most one query`, null, args.span);
      }
      if (args.pos.length === 0) return new PathV(ev.cwd());
      const q = pathText(args.pos[0], head, args.span);
      const candidates = [absPath(ev.cwd(), q), ...ev.dirStack, ...(ev.oldPwd ? [ev.oldPwd] : [])];
      for (const c of candidates) {
        const name = c.slice(c.lastIndexOf("/") + 1);
        if (c !== candidates[0] && !name.includes(q)) continue;
        try {
          if (!ev.ports.fs.stat(c).isDirectory) continue;
        } catch {
          continue;
        }
        const dir = ev.ports.fs.realPath(c);
        enter(ev, dir);
        return new PathV(dir);
      }
      throw fail("not_found", `${head}: no directory matches \`${q}\``, null, args.span);
    },
  });
}
