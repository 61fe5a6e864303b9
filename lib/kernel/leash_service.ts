/**
 * The kernel's wiring of Leash (issue 15): the policy source, the token store and the plan
 * store, connected to the sessions and the bus. It decides nothing itself — verdicts,
 * approvals and token validity come from lib/leash — it routes: it hands each session its
 * principal's policy (again when the file reloads), reports a refused reload on stderr and on
 * the `approval` channel, resolves a bearer to its principal, and re-checks a token
 * attachment before each request so a revoked token stops working without a restart.
 *
 * @module
 */

import { RPC, RpcError } from "../client/errors.ts";
import {
  type LeashInit,
  localPrincipal,
  PlanStore,
  PolicyError,
  type PolicySet,
  type PolicySource,
  type TokenStore,
  TokenStoreError,
} from "../leash/mod.ts";
import type { EventBus } from "./event_bus.ts";
import type { SessionHost } from "./session_host.ts";

const revoked = () =>
  new RpcError(
    RPC.AUTH_FAILED,
    "the bearer token of this attachment was revoked or expired; attach again with a valid one",
  );

/** Who an attachment is. */
export interface Identity {
  principal: string;
  profile: string;
  caps: string[];
  /** The token's id (null: attached without a token, as the kernel's own user). */
  tokenId: string | null;
}

/** Options of {@link KernelLeash}. */
export interface KernelLeashOptions {
  source: PolicySource;
  /** The token store (null: none — an ephemeral kernel without an explicit store). */
  tokens: TokenStore | null;
  /** Refuse tokenless attachments (D-15). */
  requireToken: boolean;
  /** Pending plans a principal may hold (the `plans` quota, D-31). */
  maxPlansPerPrincipal: number;
  bus: EventBus;
  /** The live sessions (to re-send policies). */
  sessions: () => Iterable<SessionHost>;
  /** stderr. */
  onError: (e: unknown) => void;
}

/** The bus scope of kernel-wide `approval` events (approvers read it). */
export const APPROVAL_SCOPE = "";

/** Leash as one kernel uses it. */
export class KernelLeash {
  readonly plans: PlanStore;
  readonly local = localPrincipal();
  #refusedAt: string | null = null;

  constructor(readonly opts: KernelLeashOptions) {
    this.plans = new PlanStore(opts.maxPlansPerPrincipal);
  }

  /** The policies in force, re-read first if the file changed. */
  policies(): PolicySet {
    const r = this.opts.source.refresh();
    if (r === null) return this.opts.source.current;
    if (r.ok) {
      this.#refusedAt = null;
      for (const h of this.opts.sessions()) h.setPolicy(this.init(h.principal));
      this.approvalEvent(null, { kind: "policy_reloaded", generation: r.set.generation });
      return r.set;
    }
    const e = r.error;
    const where = e instanceof PolicyError ? { line: e.line, column: e.column } : {};
    const message = `${e.message}; keeping the last good policy (generation ${r.kept.generation})`;
    if (this.#refusedAt !== message) {
      this.#refusedAt = message;
      this.opts.onError(new Error(`policy: ${message}`));
    }
    this.approvalEvent(null, {
      kind: "policy_error",
      file: this.opts.source.opts.path,
      ...where,
      message: e.message,
      kept_generation: r.kept.generation,
    });
    return r.kept;
  }

  /** What a session of `principal` is handed. */
  /** The policy file and its signature as last read (what a session's exec lane compares). */
  policyFile(): { path: string; stamp: string } | null {
    return this.opts.source.file;
  }

  init(principal: string): LeashInit {
    const set = this.opts.source.current;
    return {
      principal,
      policy: set.specFor(principal),
      home: set.home,
      generation: set.generation,
    };
  }

  /** Resolve `session.attach {token}` (or its absence) to an identity; throws -32030. */
  async identify(token: string | undefined): Promise<Identity> {
    if (token === undefined) {
      if (this.opts.requireToken) {
        throw new RpcError(
          RPC.AUTH_FAILED,
          "this kernel requires a bearer token (--require-token); attach with {token}, made " +
            "with `shoal token create PRINCIPAL`",
        );
      }
      return { principal: this.local, profile: "local-human", caps: [], tokenId: null };
    }
    const store = this.opts.tokens;
    if (store === null) {
      throw new RpcError(
        RPC.AUTH_FAILED,
        "bearer tokens unavailable in ephemeral kernel (it has no token store; start it with " +
          "--state-dir or --token-store)",
      );
    }
    let r;
    try {
      r = await store.validate(token);
    } catch (e) {
      if (!(e instanceof TokenStoreError)) throw e;
      throw new RpcError(RPC.AUTH_FAILED, `the token store is unusable: ${e.message}`);
    }
    if (typeof r === "string") {
      throw new RpcError(RPC.AUTH_FAILED, "invalid, expired, or revoked bearer token");
    }
    return { principal: r.principal, profile: r.profile, caps: r.caps, tokenId: r.id };
  }

  /**
   * Throw -32030 when a token attachment's token was revoked, expired or removed. Synchronous
   * (undefined) while the store file is unchanged; a promise when it must be re-read.
   */
  recheck(tokenId: string): Promise<void> | undefined {
    const store = this.opts.tokens;
    const now = store?.stillValidNow(tokenId) ?? false;
    if (now === true) return undefined;
    if (now === false) throw revoked();
    return store!.stillValid(tokenId).then((ok) => {
      if (!ok) throw revoked();
    });
  }

  /**
   * Publish on `approval`: in the plan owner's session scope (when given) and kernel-wide,
   * where approvers read it.
   */
  approvalEvent(ownerScope: string | null, payload: Record<string, unknown>): void {
    const p = { ...payload, ts_ns: Date.now() * 1_000_000 };
    if (ownerScope !== null && ownerScope !== APPROVAL_SCOPE) {
      this.opts.bus.publish(ownerScope, "approval", p);
    }
    this.opts.bus.publish(APPROVAL_SCOPE, "approval", p);
  }
}
