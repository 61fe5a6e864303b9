/**
 * Core builtins owned by the evaluator: `echo`, `pwd`, `exit`/`quit`, `assert`, `jobs`, the
 * call forms `assert() retry() now() today() path() glob() regex()`, and task methods.
 *
 * @module
 */

import {
  DurationV,
  GlobV,
  isInt,
  ListV,
  PathV,
  RecordV,
  TableV,
  type TaskV,
  typeName,
  type Value,
} from "../../value/types.ts";
import { fail, ShoalError } from "../../value/errors.ts";
import { asCondition, coerceWord } from "../../value/coerce.ts";
import { displayTop } from "../../value/render.ts";
import { startOfDay } from "../../value/datetime.ts";
import type { MaybePromise } from "../maybe.ts";
import type { MethodArgs } from "../method_types.ts";
import { ExitSignal } from "../ctl.ts";
import { registerBuiltin, registerCallForm } from "./registry.ts";
import type { Evaluator, TaskState } from "../evaluator.ts";
import { compileRegex } from "../expressions.ts";
import { registerMethods } from "../dispatch.ts";
import { doc } from "../docs.ts";
import { CWD_FLAGS, ECHO_FLAGS } from "./gnu_flags.ts";

registerBuiltin(
  "echo",
  doc("echo VALUE…", "the values as one line of text (str and paths as they are)", {
    flags: ECHO_FLAGS,
    structured: true,
    run: (_ctx, args) => args.pos.map(displayTop).join(" "),
  }),
);

registerBuiltin(
  "pwd",
  doc("pwd -> path", "the session working directory", {
    flags: CWD_FLAGS,
    structured: false,
    run: (ctx) => new PathV(ctx.ev.cwd()),
  }),
);

function exitCode(v: Value | undefined): number {
  if (v === undefined || v === null) return 0;
  const n = coerceWord(v, { name: "int", args: [], optional: false, span: [0, 0] });
  if (!isInt(n)) throw fail("type_error", `exit expects an int, found ${typeName(v)}`);
  const big = BigInt(n);
  return Number(big > 2147483647n ? 2147483647n : big < -2147483648n ? -2147483648n : big);
}

for (const name of ["exit", "quit"]) {
  registerBuiltin(name, {
    structured: false,
    run: (_ctx, args) => {
      throw new ExitSignal(exitCode(args.pos[0]));
    },
  });
}

/** `assert(cond, msg?)` semantics (language §14). */
function doAssert(
  cond: Value | undefined,
  msg: Value | undefined,
  span: MethodArgs["span"],
): Value {
  if (cond === undefined) throw fail("arg_error", "assert expects a condition", null, span);
  if (!asCondition(cond)) {
    const text = msg === undefined || msg === null
      ? "assertion failed"
      : typeof msg === "string"
      ? msg
      : displayTop(msg);
    throw fail("assert_failed", text, null, span);
  }
  return null;
}

registerBuiltin(
  "assert",
  doc("assert COND [MSG]", "raise assert_failed unless COND is true", {
    structured: false,
    run: (_ctx, args) => doAssert(args.pos[0], args.pos[1], args.span),
  }),
);

registerCallForm(
  "assert",
  doc(
    "assert(cond, msg?) -> null",
    "raise assert_failed unless cond is true",
    (_ev, a) => doAssert(a.pos[0] ?? a.named.get("cond"), a.pos[1] ?? a.named.get("msg"), a.span),
  ),
);

function noArgs(name: string, a: MethodArgs): void {
  if (a.pos.length || a.named.size) {
    throw fail("arg_error", `${name}() takes no arguments`, null, a.span);
  }
}

registerCallForm(
  "now",
  doc("now() -> datetime", "the current time", (ev, a) => {
    noArgs("now", a);
    return ev.now();
  }),
);

registerCallForm(
  "today",
  doc("today() -> datetime", "the start of today", (ev, a) => {
    noArgs("today", a);
    return startOfDay(ev.now());
  }),
);

function oneStr(name: string, a: MethodArgs): string {
  const v = a.pos[0];
  if (a.pos.length !== 1) {
    throw fail("arg_error", `${name} expects 1 argument, got ${a.pos.length}`, null, a.span);
  }
  if (typeof v === "string") return v;
  if (v instanceof PathV) return v.path;
  throw fail("type_error", `${name} expects a str, found ${typeName(v)}`, null, a.span);
}

registerCallForm(
  "path",
  doc(
    "path(s: str) -> path",
    "a path value (relative ones resolve against the cwd)",
    (_ev, a) => new PathV(oneStr("path", a)),
  ),
);

registerCallForm(
  "glob",
  doc(
    "glob(pattern: str, hidden: bool = false) -> glob",
    "a glob; iterate it or call list methods on it",
    (ev, a) => {
      const pat = oneStr("glob", a);
      const flag = (k: string): boolean => {
        const v = a.named.get(k);
        if (v === undefined) return false;
        if (typeof v !== "boolean") {
          throw fail("type_error", `glob ${k}: expects bool`, null, a.span);
        }
        return v;
      };
      return new GlobV(pat, ev.cwd(), flag("hidden"), flag("follow"));
    },
  ),
);

registerCallForm(
  "regex",
  doc(
    "regex(s: str) -> regex",
    'a regular expression (literal form: re"…")',
    (_ev, a) => compileRegex(oneStr("regex", a), a.span),
  ),
);

/** `retry(n, thunk, delay: d)`: first success of up to n calls, else the last error. */
registerCallForm(
  "retry",
  doc(
    "retry(n: int, f, delay: duration?) -> value",
    "f's first success in up to n tries, else its last error",
    (ev: Evaluator, a) => {
      const n = a.pos[0];
      const thunk = a.pos[1];
      if (!isInt(n) || Number(n) <= 0) {
        throw fail("arg_error", "retry expects a positive int count", null, a.span);
      }
      if (thunk === undefined) {
        throw fail("arg_error", "retry expects a function to call", null, a.span);
      }
      const delay = a.named.get("delay");
      if (delay !== undefined && !(delay instanceof DurationV)) {
        throw fail(
          "type_error",
          `retry delay: expects duration, found ${typeName(delay)}`,
          null,
          a.span,
        );
      }
      const ms = delay instanceof DurationV ? Number(delay.ns / 1_000_000n) : 0;
      const total = Number(n);
      const attempt = (i: number): MaybePromise<Value> => {
        let r: MaybePromise<Value>;
        try {
          r = ev.callValue(thunk, []);
        } catch (e) {
          return retryAfter(e, i);
        }
        if (r instanceof Promise) return r.catch((e) => retryAfter(e, i));
        return r;
      };
      const retryAfter = (e: unknown, i: number): MaybePromise<Value> => {
        if (!(e instanceof ShoalError) || i + 1 >= total) throw e;
        ev.checkCancelled();
        if (ms > 0) return ev.ports.clock.sleep(ms).then(() => attempt(i + 1));
        return attempt(i + 1);
      };
      return attempt(0);
    },
  ),
);

// ---- tasks ---------------------------------------------------------------------------------

function taskState(t: Value): TaskState {
  return (t as TaskV).impl as TaskState;
}

registerBuiltin(
  "jobs",
  doc(
    "jobs -> table",
    "the tasks this code started (cmd &, spawn { … }); the kernel's tasks — background execs, " +
      "shoal_exec {background: true} — are listed by task.list, and by the resource shoal://jobs",
    {
      structured: false,
      run: (ctx) =>
        new TableV(ctx.ev.tasks.map((t) => {
          const s = taskState(t);
          return new RecordV(
            new Map<string, Value>([
              ["id", t.id],
              ["desc", t.desc],
              ["state", s.done ? (s.error ? "failed" : "done") : "running"],
              ["done", s.done],
              ["suspended", s.suspended === true],
            ]),
          );
        })),
    },
  ),
);

const awaitTask = (_ip: unknown, recv: Value, args: MethodArgs): MaybePromise<Value> => {
  if (args.pos.length) throw fail("arg_error", ".await takes no arguments", null, args.span);
  const s = taskState(recv);
  if (s.done) {
    if (s.error) throw s.error;
    return s.value;
  }
  return s.promise;
};

/**
 * `suspend()` / `resume()` → the task (spawned tasks pause at their next wait, see tasks.ts);
 * a done task is left as it is.
 */
function suspendTask(name: "suspend" | "resume") {
  return (_ip: unknown, recv: Value, args: MethodArgs): Value => {
    if (args.pos.length) throw fail("arg_error", `.${name} takes no arguments`, null, args.span);
    const s = taskState(recv);
    const t = recv as TaskV;
    if (s.pause === undefined) {
      throw fail(
        "arg_error",
        `task ${t.id} (${t.desc}) cannot be ${name === "suspend" ? "suspended" : "resumed"}`,
        "this task has no pause point",
        args.span,
      );
    }
    if (!s.done) {
      s.suspended = name === "suspend";
      s.pause(s.suspended);
    }
    return recv;
  };
}

registerMethods("task", {
  await: doc(".await() -> value", "wait for the task; its value (or its error)", awaitTask),
  wait: doc(".wait() -> value", "same as .await()", awaitTask),
  is_done: doc(".is_done() -> bool", "true once it finished", (_ip, recv) => taskState(recv).done),
  // Stops the task's work where it supports that (`TaskState.cancel`); always null.
  cancel: doc(".cancel() -> null", "stop it", (_ip, recv, args) => {
    if (args.pos.length) throw fail("arg_error", ".cancel takes no arguments", null, args.span);
    taskState(recv).cancel?.();
    return null;
  }),
  suspend: doc(".suspend() -> task", "pause it at its next wait", suspendTask("suspend")),
  resume: doc(".resume() -> task", "let a suspended task go on", suspendTask("resume")),
  is_suspended: doc(
    ".is_suspended() -> bool",
    "true while suspended",
    (_ip, recv) => taskState(recv).suspended === true,
  ),
});

/**
 * `parallel(thunks…, settle: bool)`: call every thunk, letting waiting ones overlap; the list
 * of results in order. An error fails the whole call unless `settle: true`, which puts the
 * error values in place instead.
 */
registerCallForm(
  "parallel",
  doc(
    "parallel(f…, settle: bool = false) -> list",
    "call every f, overlapping their waits; the results in order",
    (ev: Evaluator, a) => {
      const settle = a.named.get("settle") ?? false;
      if (typeof settle !== "boolean") {
        throw fail(
          "type_error",
          `parallel settle: expects bool, found ${typeName(settle)}`,
          null,
          a.span,
        );
      }
      for (const k of a.named.keys()) {
        if (k !== "settle") throw fail("arg_error", `unknown argument \`${k}\``, null, a.span);
      }
      const results: MaybePromise<Value>[] = a.pos.map((thunk) => {
        try {
          const r = ev.callValue(thunk, []);
          if (settle && r instanceof Promise) {
            return r.catch((e) => {
              if (e instanceof ShoalError) return e.err;
              throw e;
            });
          }
          return r;
        } catch (e) {
          if (settle && e instanceof ShoalError) return e.err;
          throw e;
        }
      });
      if (results.some((r) => r instanceof Promise)) {
        return Promise.all(results).then((vs) => new ListV(vs));
      }
      return new ListV(results as Value[]);
    },
  ),
);
