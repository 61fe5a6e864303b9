/**
 * Reversibility (protocol §11.2, §18): the superset vocabulary
 * `reversible | conditional | irreversible | unknown`.
 *
 * * `reversible` — nothing outside the session changes in a way that needs undoing (reads,
 *   `cd`, environment edits, time).
 * * `conditional` — changes that the journal can undo under conditions: writes whose prior
 *   bytes are kept, `rm` into the trash, `mv` (undo refuses if the state moved on).
 * * `unknown` — Leash cannot tell (a spawned program with declared effects only).
 * * `irreversible` — opaque work, network traffic, permanent deletion.
 *
 * A plan's reversibility is the worst of its parts; `auto_apply = "reversible"` allows only
 * `reversible` plans.
 *
 * @module
 */

import type { Effect } from "./effects.ts";

/** A reversibility level. */
export type Reversibility = "reversible" | "conditional" | "unknown" | "irreversible";

const RANK: Record<Reversibility, number> = {
  reversible: 0,
  conditional: 1,
  unknown: 2,
  irreversible: 3,
};

/** The worse of two levels. */
export function worse(a: Reversibility, b: Reversibility): Reversibility {
  return RANK[b] > RANK[a] ? b : a;
}

/** The level an effect implies on its own (derivation may say worse, e.g. `rm --permanent`). */
export function effectReversibility(e: Effect): Reversibility {
  switch (e.kind) {
    case "fs_write":
    case "fs_delete":
      return "conditional";
    case "opaque":
    case "net_connect":
    case "net_listen":
      return "irreversible";
    default:
      return "reversible";
  }
}

/** The worst level over effects. */
export function reversibilityOf(effects: readonly Effect[]): Reversibility {
  let r: Reversibility = "reversible";
  for (const e of effects) r = worse(r, effectReversibility(e));
  return r;
}

/** True for a known level name. */
export function isReversibility(s: unknown): s is Reversibility {
  return typeof s === "string" && s in RANK;
}
