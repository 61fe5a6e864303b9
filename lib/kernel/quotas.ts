/**
 * Per-principal quotas (D-31): what one principal may hold in this kernel at once — sessions,
 * tasks, subscriptions, retained event payload bytes, session memory, and plans and PTYs (counted
 * by their owners, the plan store and the PTY registry, with their limits from this table). Reaching one is `-32040 QUOTA_EXCEEDED`
 * with `data {quota, limit, used, principal}`; nothing else is affected.
 *
 * Memory is the sum of the heap limits of the principal's session processes (each process is
 * bounded by its V8 heap limit; a cgroup `memory.max` is added where a memory controller is
 * delegated — see `Cgroup.limitMemory`).
 *
 * @module
 */

import { quotaExceeded } from "./quota_error.ts";
import { RING_SIZE } from "./event_bus.ts";
import { MAX_PTYS_PER_PRINCIPAL } from "./pty_registry.ts";
import { MAX_PLANS_PER_PRINCIPAL } from "../leash/mod.ts";

/** Every quota and its limit. */
export interface QuotaLimits {
  /** Sessions a principal other than the kernel's own has created (the person's are bounded
   * by the kernel-wide session limit alone). */
  sessions: number;
  /** Tasks a principal has waiting or running, across its sessions. */
  tasks: number;
  /** Event subscriptions a principal holds, across its connections. */
  subscriptions: number;
  /** Bytes of `user.*` event payloads a principal has published that the kernel still holds. */
  event_bytes: number;
  /** The sum of the heap limits of a principal's session processes, in MiB. */
  memory_mb: number;
  /** Pending plans (counted by Leash's plan store). */
  plans: number;
  /** Open PTYs (counted by the PTY registry). */
  ptys: number;
}

/** A quota's name. */
export type Quota = keyof QuotaLimits;

/** The defaults: generous for a person, bounded for anyone. */
export const DEFAULT_QUOTAS: QuotaLimits = {
  sessions: 16,
  tasks: 10_000,
  subscriptions: 1024,
  event_bytes: 64 * 1024 * 1024,
  memory_mb: 64 * 2048,
  plans: MAX_PLANS_PER_PRINCIPAL,
  ptys: MAX_PTYS_PER_PRINCIPAL,
};

/** Parse `NAME=N` (the kernel's `--quota` flag); throws with a usable message. */
export function parseQuota(text: string): [Quota, number] {
  const i = text.indexOf("=");
  const name = text.slice(0, i) as Quota;
  const n = Number(text.slice(i + 1));
  if (i <= 0 || !(name in DEFAULT_QUOTAS)) {
    throw new Error(
      `--quota takes NAME=N with NAME one of ${Object.keys(DEFAULT_QUOTAS).join(", ")}`,
    );
  }
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`--quota ${name}: N must be ≥ 0`);
  return [name, n];
}

/** Something taken from a quota; give it back once (later calls do nothing). */
export interface Lease {
  release(): void;
}

/** The quota counters of one kernel. */
export class Quotas {
  readonly limits: QuotaLimits;
  readonly #used = new Map<string, number>();
  /** Retained payload sizes per `scope\0channel`, oldest first (mirrors the bus ring). */
  readonly #retained = new Map<string, { principal: string; bytes: number }[]>();

  constructor(limits: Partial<QuotaLimits> = {}) {
    this.limits = { ...DEFAULT_QUOTAS, ...limits };
  }

  /** What `principal` holds of `quota` now. */
  used(principal: string, quota: Quota): number {
    return this.#used.get(`${quota}\0${principal}`) ?? 0;
  }

  /** Throw QUOTA_EXCEEDED unless `principal` may take `n` more of `quota`. */
  check(principal: string, quota: Quota, n = 1): void {
    const used = this.used(principal, quota);
    const limit = this.limits[quota];
    if (used + n > limit) throw quotaExceeded(quota, principal, used, limit, { n });
  }

  /** Take `n` of `quota` for `principal` (throws QUOTA_EXCEEDED); release it when done. */
  take(principal: string, quota: Quota, n = 1): Lease {
    this.check(principal, quota, n);
    this.#add(principal, quota, n);
    let held = true;
    return {
      release: () => {
        if (!held) return;
        held = false;
        this.#add(principal, quota, -n);
      },
    };
  }

  #add(principal: string, quota: Quota, n: number): void {
    const key = `${quota}\0${principal}`;
    const v = (this.#used.get(key) ?? 0) + n;
    if (v <= 0) this.#used.delete(key);
    else this.#used.set(key, v);
  }

  /**
   * A `user.*` event of `bytes` published by `principal` on `scope`/`channel` (check first):
   * held until the channel's ring drops it.
   */
  retainEvent(principal: string, scope: string, channel: string, bytes: number): void {
    const key = `${scope}\0${channel}`;
    let ring = this.#retained.get(key);
    if (!ring) this.#retained.set(key, ring = []);
    ring.push({ principal, bytes });
    this.#add(principal, "event_bytes", bytes);
    if (ring.length > RING_SIZE) {
      const old = ring.shift()!;
      this.#add(old.principal, "event_bytes", -old.bytes);
    }
  }
}
