/**
 * Bounded elision at the response boundary (protocol §8). A value that is too big for one
 * response becomes a `{"$":"ref"}` stub with a small preview; the full value stays in the
 * transcript and is fetched by URI. Every decision here costs O(budget), never O(value).
 */

import { BytesV, ListV, OutcomeV, RecordV, TableV, typeName, type Value } from "./types.ts";
import { encodeBounded, outcomeMetaWire, utf8Length, type Wire } from "./wire.ts";
import { renderBlock } from "./render.ts";

/** Per-call elision overrides (wire names). */
export interface ElideSpec {
  max_bytes?: number;
  max_rows?: number;
  max_items?: number;
}

/** The resolved budget. */
export interface Budget {
  maxBytes: number;
  maxRows: number;
  maxItems: number;
  maxBytesRaw: number;
}

/** The fixed wall for any single encoded value, render or raw payload. */
export const HARD_CAP = 65536;

/** Defaults advertised at attach (`elide_defaults`). */
export const ELIDE_DEFAULTS = {
  max_bytes: 8192,
  max_rows: 100,
  max_items: 500,
  max_bytes_raw: 4096,
  hard_cap: HARD_CAP,
} as const;

const PREVIEW_ITEMS = 5;
const PREVIEW_CHARS = 256;
const RENDER_HEAD_LINES = 10;
/** Rows sampled to describe a table's columns in a ref stub (keeps the stub O(budget)). */
const COL_SAMPLE_ROWS = 1000;

/** Resolve per-call overrides against the defaults (max_bytes clamped to the hard cap). */
export function resolveBudget(spec?: ElideSpec | null): Budget {
  const pos = (x: unknown): number | undefined =>
    typeof x === "number" && Number.isFinite(x) && x >= 0 ? Math.floor(x) : undefined;
  const mb = pos(spec?.max_bytes);
  const maxBytes = Math.min(mb ?? ELIDE_DEFAULTS.max_bytes, HARD_CAP);
  return {
    maxBytes,
    maxRows: pos(spec?.max_rows) ?? ELIDE_DEFAULTS.max_rows,
    maxItems: pos(spec?.max_items) ?? ELIDE_DEFAULTS.max_items,
    maxBytesRaw: mb === undefined ? ELIDE_DEFAULTS.max_bytes_raw : maxBytes,
  };
}

/** Append a path to a value URI: `shoal://out/3` + `out` → `shoal://out/3?path=out`. */
export function uriWithPath(uri: string, path: string): string {
  const i = uri.indexOf("?path=");
  return i < 0 ? `${uri}?path=${path}` : `${uri}.${path}`;
}

/** The `n` of a ref stub: rows, items, bytes, string bytes, fields, or 1. */
export function elisionCount(v: Value): number {
  if (typeof v === "string") return utf8Length(v);
  if (v instanceof TableV) return v.rows.length;
  if (v instanceof ListV) return v.items.length;
  if (v instanceof BytesV) return v.size;
  if (v instanceof RecordV) return v.fields.size;
  return 1;
}

/** The small value a ref stub previews. */
export function previewOf(v: Value, k = PREVIEW_ITEMS): Value {
  if (typeof v === "string") {
    return [...v.slice(0, PREVIEW_CHARS * 2)].slice(0, PREVIEW_CHARS).join("");
  }
  if (v instanceof TableV) return new TableV(v.rows.slice(0, k));
  if (v instanceof ListV) return new ListV(v.items.slice(0, k));
  if (v instanceof BytesV) return new BytesV(v.data.subarray(0, PREVIEW_CHARS));
  if (v instanceof RecordV) {
    const f = new Map<string, Value>();
    for (const key of v.fields.keys()) {
      if (f.size >= k) break;
      f.set(key, null);
    }
    return new RecordV(f);
  }
  return null;
}

function tableColumnTypes(t: TableV): Record<string, string> {
  const cols: Record<string, string> = {};
  const n = Math.min(t.rows.length, COL_SAMPLE_ROWS);
  for (let i = 0; i < n; i++) {
    for (const [k, x] of t.rows[i].fields) if (!(k in cols)) cols[k] = typeName(x);
  }
  return cols;
}

/** The first `RENDER_HEAD_LINES` lines of the 80-column render. */
function renderHead(v: Value): string {
  return renderBlock(v, 80).split("\n").slice(0, RENDER_HEAD_LINES).join("\n");
}

/** Build the `{"$":"ref"}` stub for a value. */
export function refStub(
  v: Value,
  uri: string,
  b: Budget,
  outcomeOut: (o: OutcomeV) => Value,
): Wire {
  let preview: Wire | null = null;
  let shown: Value = null;
  // Shrink the preview until it fits the budget (5 rows of huge cells may not).
  for (let k = PREVIEW_ITEMS; k >= 0 && preview === null; k--) {
    shown = previewOf(v, k);
    preview = encodeBounded(shown, Math.max(256, b.maxBytes >> 1), outcomeOut);
  }
  const stub: Wire = { $: "ref", uri, of: typeName(v), n: elisionCount(v) };
  if (v instanceof TableV) stub.cols = tableColumnTypes(v);
  stub.preview = preview ?? { $: "null" };
  stub.render_head = renderHead(preview ? shown : null);
  return stub;
}

function mustElide(v: Value, b: Budget): boolean {
  if (v instanceof TableV) return v.rows.length > b.maxRows;
  if (v instanceof ListV) return v.items.length > b.maxItems;
  if (v instanceof BytesV) return v.ref !== null || v.data.length > b.maxBytesRaw;
  return false;
}

/**
 * The response form of a value: encoded inline when it fits the budget, otherwise a ref stub.
 * Outcomes (ok or failed — D-19) keep their metadata inline; `out` is elided on its own and a
 * long stderr is cut to a preview with a ref to the whole.
 */
export function elide(
  v: Value,
  uri: string,
  b: Budget,
  outcomeOut: (o: OutcomeV) => Value,
): Wire {
  if (v instanceof OutcomeV) return elideOutcome(v, uri, b, outcomeOut);
  if (!mustElide(v, b)) {
    const w = encodeBounded(v, b.maxBytes, outcomeOut);
    if (w) return w;
  }
  return refStub(v, uri, b, outcomeOut);
}

const lossy = new TextDecoder("utf-8", { fatal: false });

function elideOutcome(
  o: OutcomeV,
  uri: string,
  b: Budget,
  outcomeOut: (o: OutcomeV) => Value,
): Wire {
  let err = o.stderr.length > b.maxBytesRaw
    ? lossy.decode(o.stderr.subarray(0, PREVIEW_CHARS))
    : lossy.decode(o.stderr);
  if (utf8Length(err) > b.maxBytesRaw) err = [...err].slice(0, PREVIEW_CHARS).join("");
  const cmd = o.cmd.length > PREVIEW_CHARS * 4 ? o.cmd.slice(0, PREVIEW_CHARS * 4) + "…" : o.cmd;
  const w = outcomeMetaWire(o, err, cmd);
  if (o.stderr.length > b.maxBytesRaw) {
    w.err_ref = { uri: uriWithPath(uri, "stderr"), n: o.stderr.length };
  }
  let out: Value;
  try {
    out = outcomeOut(o);
  } catch {
    // `.out` of a failed outcome raises in the language; on the wire show the raw stdout
    // (as text when small, as bytes — elided with a preview — when not).
    out = o.stdout.length <= b.maxBytes ? lossy.decode(o.stdout) : new BytesV(o.stdout);
  }
  w.out = elide(out, uriWithPath(uri, "out"), b, outcomeOut);
  return w;
}
