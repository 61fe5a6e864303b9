/**
 * Resource subscriptions (protocol §15.8, D-4). Both eras feed one registry: a 2025-era
 * `resources/subscribe` holds a URI for the connection, a 2026-era `subscriptions/listen`
 * holds each of its URIs until it is cancelled. A URI is held by a set of holders, so repeated
 * subscribes are one subscription; a channel is subscribed on the kernel's event connection
 * while at least one URI maps to it, and `events.unsubscribe` is sent when the last one goes —
 * unsubscribing really stops the stream. Kernel events become
 * `notifications/resources/updated {uri, seq, payload}` for every URI of the channel.
 */

import type { KernelEvent } from "../client/mod.ts";
import type { KernelLink } from "./kernel_link.ts";
import { subscribableChannel } from "./uri.ts";

/** Sends one resources/updated notification. */
export type Notify = (uri: string, e: KernelEvent) => void;

/** The holder used by 2025-era `resources/subscribe`. */
export const LEGACY_HOLDER = "resources/subscribe";

/** The registry. */
export class Subscriptions {
  /** uri → holders. */
  #holders = new Map<string, Set<string>>();
  /** channel → uris. */
  #uris = new Map<string, Set<string>>();
  /** Serialises kernel subscribe/unsubscribe per channel. */
  #chain = new Map<string, Promise<void>>();

  constructor(readonly link: KernelLink, readonly notify: Notify) {}

  /** URIs currently subscribed (tests, diagnostics). */
  get uris(): string[] {
    return [...this.#holders.keys()];
  }

  #serial(channel: string, fn: () => Promise<void>): Promise<void> {
    const p = (this.#chain.get(channel) ?? Promise.resolve()).then(fn, fn);
    const tail = p.catch(() => {});
    this.#chain.set(channel, tail);
    tail.then(() => {
      if (this.#chain.get(channel) === tail) this.#chain.delete(channel);
    });
    return p;
  }

  /** Hold `uri` for `holder`. Throws BadUri for a URI that is not subscribable. */
  async add(uri: string, holder: string): Promise<void> {
    const channel = subscribableChannel(uri);
    let hs = this.#holders.get(uri);
    if (hs?.has(holder)) return; // deduped
    if (!hs) this.#holders.set(uri, hs = new Set());
    hs.add(holder);
    let us = this.#uris.get(channel);
    const first = !us;
    if (!us) this.#uris.set(channel, us = new Set());
    us.add(uri);
    if (!first) return;
    await this.#serial(channel, async () => {
      if (!this.#uris.has(channel)) return; // released before we got here
      const ev = await this.link.events();
      await ev.subscribe(channel, (e) => {
        for (const u of this.#uris.get(channel) ?? []) this.notify(u, e);
      });
    }).catch((e) => {
      this.#drop(uri, holder, channel);
      throw e;
    });
  }

  #drop(uri: string, holder: string, channel: string): boolean {
    const hs = this.#holders.get(uri);
    if (!hs?.delete(holder)) return false;
    if (hs.size) return false;
    this.#holders.delete(uri);
    const us = this.#uris.get(channel);
    us?.delete(uri);
    if (us && us.size === 0) {
      this.#uris.delete(channel);
      return true;
    }
    return false;
  }

  /** Release `uri` for `holder`; the kernel stream stops when no URI needs its channel. */
  async remove(uri: string, holder: string): Promise<void> {
    let channel: string;
    try {
      channel = subscribableChannel(uri);
    } catch {
      return; // never subscribed
    }
    if (!this.#drop(uri, holder, channel)) return;
    await this.#serial(channel, async () => {
      if (this.#uris.has(channel)) return; // re-subscribed meanwhile
      const ev = await this.link.events();
      await ev.unsubscribe(channel);
    });
  }

  /** Release everything `holder` holds (a cancelled listen). */
  async removeHolder(holder: string): Promise<void> {
    const mine = [...this.#holders].filter(([, hs]) => hs.has(holder)).map(([u]) => u);
    await Promise.all(mine.map((u) => this.remove(u, holder)));
  }
}
