/**
 * The journal heads (language §14): `journal`/`history [--head= --principal= --limit=]` and
 * `undo [id]`. They reach the journal through the host's journal port; a host without one
 * gives an empty table for `journal` and a `custom` error for `undo`. (issue 7)
 *
 * @module
 */

import { fail } from "../../value/errors.ts";
import { isInt, TableV, type Value } from "../../value/types.ts";
import { type CmdArgs, registerBuiltin } from "./registry.ts";
import { doc } from "../docs.ts";

function textFlag(args: CmdArgs, name: string): string | undefined {
  const v = args.flags.get(name);
  if (v === undefined) return undefined;
  if (typeof v !== "string") {
    throw fail("arg_error", `--${name} needs a value (--${name}=…)`, null, args.span);
  }
  return v;
}

function intOf(v: Value, what: string, args: CmdArgs): number {
  const n = isInt(v) ? Number(v) : typeof v === "string" && /^[0-9]+$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n <= 0) {
    throw fail("arg_error", `${what} must be a positive integer`, null, args.span);
  }
  return n;
}

for (const head of ["journal", "history"]) {
  registerBuiltin(head, {
    structured: false,
    run(ctx, args) {
      if (args.pos.length) {
        throw fail(
          "arg_error",
          `${head} takes only --head=, --principal= and --limit=`,
          null,
          args.span,
        );
      }
      for (const k of args.flags.keys()) {
        if (k !== "head" && k !== "principal" && k !== "limit") {
          throw fail("arg_error", `${head}: unknown flag --${k}`, null, args.span);
        }
      }
      const port = ctx.ev.ports.journal;
      const q = {
        head: textFlag(args, "head"),
        principal: textFlag(args, "principal"),
        limit: args.flags.has("limit")
          ? intOf(args.flags.get("limit")!, "--limit", args)
          : undefined,
      };
      if (port === undefined) return new TableV([]);
      return port.query(q);
    },
  });
}

registerBuiltin(
  "undo",
  doc(
    "undo [ID] -> record",
    "reverse the newest reversible entry (rm, mv, overwrites), or entry ID",
    {
      structured: false,
      run(ctx, args) {
        if (args.pos.length > 1 || args.flags.size) {
          throw fail("arg_error", "undo takes at most one journal entry id", null, args.span);
        }
        const id = args.pos.length ? intOf(args.pos[0], "undo's entry id", args) : null;
        const port = ctx.ev.ports.journal;
        if (port === undefined) {
          throw fail(
            "custom",
            "undo: this session has no journal",
            "undo works in journaled sessions (a kernel session with a state directory)",
            args.span,
          );
        }
        return port.undo(id);
      },
    },
  ),
);
