/**
 * Bytes methods (language §15.7): `len`/`count` (byte count), `is_empty`, and `lines()` (the
 * text's lines, decoded lossily — the one-step form of `.display().lines()` agents reach for:
 * `(git log).stdout.lines()`). Conversion (`str`, `display`), `json`, `save`/`append` are
 * universal; bytes are not a collection, so `first`, `contains`, `reverse`… are type errors,
 * and `upper`/`lower`/`trim` are str-only.
 */

import { BytesV, ListV, type Value } from "../../value/types.ts";
import type { MethodArgs, MethodTable } from "../method_types.ts";
import { arity, guardReceiver } from "./args.ts";
import { splitLines } from "./str.ts";
import { doc } from "../docs.ts";

const LOSSY = new TextDecoder("utf-8", { ignoreBOM: true });

function size(name: string) {
  return (_ip: unknown, recv: Value, args: MethodArgs): Value => {
    arity(name, args, 0, 0);
    const n = (recv as BytesV).size; // lazy content-store bytes know their true length
    return name === "is_empty" ? n === 0 : n;
  };
}

/** Bytes methods by name (receiver: bytes). */
export const BYTES_METHODS: MethodTable = guardReceiver("bytes", (v) => v instanceof BytesV, {
  len: doc(".len() -> int", "number of bytes", size("len")),
  count: doc(".count() -> int", "number of bytes", size("count")),
  is_empty: doc(".is_empty() -> bool", "true when there are no bytes", size("is_empty")),
  lines: doc(
    ".lines() -> list<str>",
    "the text's lines (decoded as UTF-8, lossily)",
    (_ip, recv, args) => {
      arity("lines", args, 0, 0);
      return new ListV(splitLines(LOSSY.decode((recv as BytesV).data)));
    },
  ),
});

/** The bytes method names (for did-you-mean); `stream` lives in the stream layer. */
export const BYTES_METHOD_NAMES: readonly string[] = [...Object.keys(BYTES_METHODS), "stream"];
