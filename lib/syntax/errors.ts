/**
 * Parse diagnostics. The teaching text lives in `msg` (the conformance corpus matches needles
 * against the message), optional advice in `hint`, and `span` is a byte range into the UTF-8
 * source. A bash-shaped error also carries `rewrites`: whole sources the writer can resend.
 */

import type { Span } from "./ast.ts";

/** A corrected source to resend: Shoal's own form, or the same text run by POSIX `sh`. */
export interface Rewrite {
  form: "native" | "sh";
  src: string;
}

/** Where the parser was when it failed (UTF-16 offsets, set by the innermost frame). */
export interface ParseSite {
  /** Start of the innermost command being parsed, if the error arose inside one. */
  cmd?: number;
  /** Start of the innermost statement being parsed. */
  stmt?: number;
}

/** A syntax error: the only exception the lexer and parser ever throw. */
export class ParseError extends Error {
  /** The diagnostic text (also the `Error.message`). */
  msg: string;
  /** Byte offsets `[start, end)` into the UTF-8 source. */
  span: Span;
  /** Where in the grammar the error arose (drives the rewrites). */
  site: ParseSite = {};
  #hint: string | null;
  #rewrites: Rewrite[] | null = null;
  #compute: (() => Rewrite[]) | null = null;

  /** Builds an error; `span` is in source offsets (converted to bytes by `parse`). */
  constructor(msg: string, span: Span, hint: string | null = null) {
    super(msg);
    this.name = "ParseError";
    this.msg = msg;
    this.#hint = hint;
    this.span = span;
  }

  /**
   * Sources to resend instead (native first when there is one), each of which parses. Empty
   * for errors that are not bash-shaped. Computed on first read.
   */
  get rewrites(): Rewrite[] {
    if (this.#rewrites === null) {
      const f = this.#compute;
      this.#compute = null;
      this.#rewrites = f === null ? [] : f();
    }
    return this.#rewrites;
  }

  /** Advice on how to fix it, ending with the rewrites when there are any; or null. */
  get hint(): string | null {
    const rw = this.rewrites;
    if (rw.length === 0) return this.#hint;
    const lines = rw.map((r) => {
      const label = r.form === "native" ? "resend as" : "or run it as POSIX sh";
      const src = showSrc(r.src);
      // A multi-line source goes on its own, indented lines so it reads as one block.
      return src.includes("\n") ? `${label}:\n${src.replace(/^/gm, "    ")}` : `${label}: ${src}`;
    });
    return [this.#hint ?? "", ...lines].filter((l) => l !== "").join("\n");
  }

  set hint(h: string | null) {
    this.#hint = h;
  }

  /** The hint as the parser wrote it, without the rewrites. */
  get baseHint(): string | null {
    return this.#hint;
  }

  /** Installs the (lazy) rewrite computation; `parse` does this once per error. */
  setRewriter(f: () => Rewrite[]): void {
    this.#rewrites = null;
    this.#compute = f;
  }
}

/** Long rewrites are shown by their first lines (the full text is in `rewrites`). */
function showSrc(src: string): string {
  const lines = src.split("\n");
  if (lines.length <= 12 && src.length <= 600) return src;
  return lines.slice(0, 8).join("\n").slice(0, 400) + "\n… (the full source is in `rewrites`)";
}
