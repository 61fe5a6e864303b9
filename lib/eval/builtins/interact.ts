/**
 * `interact cmd args…` (language §9.1 step 4, §14: "force PTY run"): run a command in the
 * foreground of the host's terminal — on a PTY of its own, keys passed through, output shown as
 * it comes — whatever position `interact` is in: the command runs as a statement, which a host
 * with a person in front (its `process.foreground` port: the `shoal` CLI and REPL) runs in the
 * foreground. Elsewhere (a kernel session, a script without a terminal) it refuses at once,
 * pointing at the PTY methods: a program that waits for input nobody can type would only hang,
 * while `pty.open`/`shoal_pty_open` give an agent a terminal it can type into, read and wait on.
 *
 * @module
 */

import { fail } from "../../value/errors.ts";
import { PathV, typeName } from "../../value/types.ts";
import { runCmd, wordValue } from "../commands.ts";
import { then } from "../maybe.ts";
import { registerBuiltin } from "./registry.ts";

registerBuiltin("interact", {
  structured: false,
  rawArgs: true,
  run({ ev, cmd, sc }) {
    const [first, ...rest] = cmd.args;
    if (first === undefined) {
      throw fail(
        "arg_error",
        "interact expects a command, e.g. `interact vim notes.txt`",
        null,
        cmd.span,
      );
    }
    if (ev.ports.process.foreground === undefined) {
      throw fail(
        "custom",
        "interact needs a person at a terminal, and this session has none",
        "agents drive interactive programs with pty.open / shoal_pty_open, then pty.read " +
          "{wait_for} and pty.send",
        cmd.span,
      );
    }
    return then(wordValue(ev, first, sc), (head) => {
      if (typeof head !== "string" && !(head instanceof PathV)) {
        throw fail(
          "type_error",
          `interact expects a command, found ${typeName(head)}`,
          null,
          first.span,
        );
      }
      const name = typeof head === "string" ? head : head.path;
      // The command itself, in statement position: the host runs it in the foreground.
      return runCmd(
        ev,
        {
          ...cmd,
          forced: true,
          head: name,
          headKind: first.kind === "PathWord" || name.includes("/") ? "path" : "word",
          headSpan: first.span,
          args: rest,
        },
        sc,
        [],
        true,
      );
    });
  },
});
