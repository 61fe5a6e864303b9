/**
 * The kernel's renders — an exec's `render` and `value.get` with `format: "render"` — for a
 * reader who sees only text: block rendering with paths relative to the session cwd, and, when
 * the value was cut, `more`: where it goes on as a `value.get` selection (path and slice) and as
 * a URI, so a client can page the rest exactly instead of getting the same preview again.
 */

import { boundText } from "../client/bound_text.ts";
import { type Cut, moreLine, readerWidth, renderBlock } from "../value/render.ts";
import type { Value } from "../value/types.ts";
import { trashText } from "./statement_text.ts";

/** Characters of text one page asks for. */
export const PAGE_CHARS = 4000;
/** Rows/items/fields one page asks for. */
export const PAGE_ROWS = 100;

/** Where a cut render goes on (wire shape of the `more` member). */
export interface More {
  /** `value.get` path from the ref to the cut value ("" for the value itself). */
  path: string;
  /** The next page as a `value.get` slice `[start, end)` of the value at `path`. */
  slice: [number, number];
  /** What the slice counts: rows, items and fields by index; lines and chars by character. */
  unit: Cut["unit"];
  /** Rows/items/fields/lines not shown; null when not counted. */
  left: number | null;
  /** Text: its size in bytes. */
  bytes?: number;
  /** The same page as a resource URI (`format=render`). */
  uri: string;
}

/** What a paged render needs to know about where the value came from. */
export interface RenderPlace {
  /** `out:N`. */
  ref: string;
  /** The `value.get` path that selected the value ("" for the transcript value itself). */
  path: string;
  /** The slice start already applied to the value at `path` (0 for none). */
  offset: number;
  /** The session cwd (paths under it render relative). */
  cwd: string;
  tty: boolean;
  /** Rows/lines to show (default: the renderer's 50). */
  maxRows?: number;
  /** Statement-sink text shown before the value (exec results). */
  before?: string;
  /** Notes shown after the value (a text reader's diagnostics: what a glob left out…). */
  after?: string;
  /** The value is a slice of a text (a page), not the whole of it. */
  piece?: boolean;
}

/** `a.b` from path parts, dropping empty ones and a leading dot. */
export function joinPath(...parts: string[]): string {
  return parts.map((p) => p.replace(/^\./, "")).filter((p) => p !== "").join(".");
}

/** The resource URI of a page. */
export function pageUri(ref: string, path: string, slice: [number, number]): string {
  const n = ref.replace(/^out:/, "");
  const q = [...(path ? [`path=${path}`] : []), `slice=${slice[0]}..${slice[1]}`, "format=render"];
  return `shoal://out/${n}?${q.join("&")}`;
}

/** The page after `start` of the value at `path` (text counts characters, else items). */
export function pageAt(
  ref: string,
  path: string,
  start: number,
  unit: Cut["unit"],
  left: number | null,
  bytes?: number,
): More {
  const size = unit === "lines" || unit === "chars" ? PAGE_CHARS : PAGE_ROWS;
  const slice: [number, number] = [start, start + size];
  const m: More = { path, slice, unit, left, uri: pageUri(ref, path, slice) };
  if (bytes !== undefined) m.bytes = bytes;
  return m;
}

/** Render `v` bounded for the wire, with `more` when it was cut. */
export function pagedRender(v: Value, place: RenderPlace): { render: string; more?: More } {
  let first: Cut | null = null;
  const trash = place.tty || v === null ? null : trashText(v, place.cwd);
  const body = v === null ? "" : trash ?? renderBlock(v, readerWidth(place.tty), {
    cwd: place.cwd,
    maxRows: place.maxRows,
    // Text readers (agents, not a terminal): last column whole, sizes exact, items counted,
    // a whole text's end told.
    forText: !place.tty,
    textEnds: !place.tty && !place.piece,
    more: (cut) => {
      // Columns and nested cuts are not pageable by a slice; the first row/line cut is.
      first ??= cut;
      return moreLine(cut);
    },
  });
  const before = place.before ?? "";
  let text = before === "" ? body : body === "" ? before.replace(/\n$/, "") : before + body;
  const after = (place.after ?? "").trimEnd();
  if (after !== "") text = text === "" ? after : `${text}\n${after}`;
  const cut = first as Cut | null;
  const uri = `shoal://${place.ref.replace(":", "/")}`;
  if (cut === null) return { render: boundText(text, uri, place.tty) };
  const path = joinPath(place.path, cut.path);
  const start = cut.next + (cut.path === "" ? place.offset : 0);
  const more = pageAt(place.ref, path, start, cut.unit, cut.left, cut.bytes);
  return { render: boundText(text, more.uri, place.tty), more };
}
