/**
 * Bytes methods (language §15.7): `len`/`count` (byte count) and `is_empty`. Conversion
 * (`str`, `display`), `json`, `save`/`append` are universal; bytes are not a collection, so
 * `first`, `contains`, `reverse`… are type errors, and `upper`/`lower`/`trim` are str-only.
 */

import { BytesV, type Value } from "../../value/types.ts";
import type { MethodArgs, MethodTable } from "../method_types.ts";
import { arity, guardReceiver } from "./args.ts";

function size(name: string) {
  return (_ip: unknown, recv: Value, args: MethodArgs): Value => {
    arity(name, args, 0, 0);
    const n = (recv as BytesV).size; // lazy content-store bytes know their true length
    return name === "is_empty" ? n === 0 : n;
  };
}

/** Bytes methods by name (receiver: bytes). */
export const BYTES_METHODS: MethodTable = guardReceiver("bytes", (v) => v instanceof BytesV, {
  len: size("len"),
  count: size("count"),
  is_empty: size("is_empty"),
});

/** The bytes method names (for did-you-mean); `stream` lives in the stream layer. */
export const BYTES_METHOD_NAMES: readonly string[] = [...Object.keys(BYTES_METHODS), "stream"];
