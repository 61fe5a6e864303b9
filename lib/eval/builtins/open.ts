/**
 * `open PATH` / `open(path)` (issue 13): a file read as the value its extension implies, in
 * one step — `.json` `.toml` `.yaml`/`.yml` `.csv` parsed, `.jsonl`/`.ndjson` a list of
 * parsed lines, anything else its text (bytes when it is not UTF-8). `--raw` gives the text
 * as it is. This is nushell's `open`, which agents reach for; it replaces the reference's
 * host opener (xdg-open), which means nothing to a kernel serving agents (no corpus case
 * pins it).
 *
 * @module
 */

import type { Span } from "../../syntax/ast.ts";
import { fail, ShoalError } from "../../value/errors.ts";
import { type BytesV, ListV, PathV, type Value } from "../../value/types.ts";
import { doc } from "../docs.ts";
import type { Evaluator } from "../evaluator.ts";
import { PATH_METHODS } from "../methods/path.ts";
import { namespaceTable } from "../namespaces/mod.ts";
import type { FlagTable } from "./flags.ts";
import { pathText } from "./fs_util.ts";
import { registerBuiltin, registerCallForm } from "./registry.ts";

const STRICT = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Extension → the namespace whose `parse` reads it. */
const FORMATS: Readonly<Record<string, string>> = {
  json: "json",
  toml: "toml",
  yaml: "yaml",
  yml: "yaml",
  csv: "csv",
};

const OPEN_FLAGS: FlagTable = {
  own: [{ key: "raw", long: ["raw"], about: "the text as it is, not parsed" }],
};

/** `ns.parse(text)`, with the file named in any parse error. */
function parseAs(ev: Evaluator, ns: string, text: string, file: string, span: Span): Value {
  const parse = namespaceTable(ns)!.functions.get("parse")!;
  try {
    return parse(ev, { pos: [text], named: new Map(), span }) as Value;
  } catch (e) {
    if (!(e instanceof ShoalError)) throw e;
    throw fail(
      e.err.code,
      `open ${file}: ${e.err.msg}`,
      `read it as text with open --raw ${file}`,
      span,
    );
  }
}

/** The value of the file at `target` (relative to the session cwd). */
function openFile(ev: Evaluator, target: Value, raw: boolean, span: Span): Value {
  const file = pathText(target, "open", span);
  const bytes = PATH_METHODS.read_bytes(ev, new PathV(file), {
    pos: [],
    named: new Map(),
    span,
  }) as BytesV;
  let text: string;
  try {
    text = STRICT.decode(bytes.data);
  } catch {
    if (raw) throw fail("utf8_error", `open ${file}: not valid UTF-8`, "use cat for bytes", span);
    return bytes; // a binary file is its bytes
  }
  if (raw) return text;
  const ext = /\.([A-Za-z0-9]+)$/.exec(file)?.[1]?.toLowerCase() ?? "";
  if (ext === "jsonl" || ext === "ndjson") {
    const lines = text.split("\n").filter((l) => l.trim() !== "");
    return new ListV(lines.map((l, i) => parseAs(ev, "json", l, `${file}:${i + 1}`, span)));
  }
  const ns = FORMATS[ext];
  return ns === undefined ? text : parseAs(ev, ns, text, file, span);
}

const SIG = "open [--raw] PATH -> value";
const ABOUT = "a file as the value its extension implies: .json .toml .yaml .csv .jsonl " +
  "parsed; other files their text";

registerBuiltin(
  "open",
  doc(SIG, ABOUT, {
    flags: OPEN_FLAGS,
    structured: false,
    run(ctx, args) {
      if (args.pos.length !== 1) {
        throw fail(
          "arg_error",
          `open expects one path, got ${args.pos.length}`,
          "e.g. open deno.json",
          args.span,
        );
      }
      return openFile(ctx.ev, args.pos[0], args.flags.get("raw") === true, args.span);
    },
  }),
);

registerCallForm(
  "open",
  doc("open(path, raw: bool = false) -> value", ABOUT, (ev, a) => {
    const span = a.span ?? [0, 0];
    for (const k of a.named.keys()) {
      if (k !== "raw") throw fail("arg_error", `unknown argument \`${k}\``, null, span);
    }
    if (a.pos.length !== 1) {
      throw fail("arg_error", `open expects one path, got ${a.pos.length}`, null, span);
    }
    return openFile(ev as Evaluator, a.pos[0], a.named.get("raw") === true, span);
  }),
);
