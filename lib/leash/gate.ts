/**
 * Leash inside a session host: the principal, its compiled policy (re-sent by the kernel when
 * the policy file reloads), and the checks the session makes itself — no kernel round trip per
 * exec:
 *
 * * {@link SessionLeash.check} derives an exec's effects and its verdict before it runs;
 * * {@link SessionLeash.approve} checks an approved-mode exec against its stored plan (D-22);
 * * {@link SessionLeash.nested} checks a program a nested evaluator is about to run that the
 *   exec's plan could not see in full — a `.shl` script, a `use`d module or a `source`d file as
 *   it is on disk *now* (D-12): it must stay inside what the exec was allowed or approved for;
 * * {@link SessionLeash.spawn} is the spawn gate (pinning, `hermetic`);
 * * {@link SessionLeash.ptySpawn} judges a PTY open like an exec of its program (D-38).
 *
 * @module
 */

import type { Program } from "../syntax/ast.ts";
import { covers, type Effect, effectsKey } from "./effects.ts";
import { type Derivation, deriveEffects } from "./derive.ts";
import { type DeriveHost, trackingHost } from "./derive_host.ts";

/** Derivations a session remembers. */
const MEMO_SIZE = 256;
import { CompiledPolicy, type PolicySpec, type Verdict } from "./policy.ts";

/** What a session host gets from the kernel (plain JSON). */
export interface LeashInit {
  principal: string;
  /** The principal's policy section; null: an unknown principal (everything is denied). */
  policy: PolicySpec | null;
  /** `~` in grants (the kernel's HOME). */
  home: string;
  /** The kernel's policy generation this copy belongs to. */
  generation: number;
}

/** A derivation with its verdict. */
export interface Checked extends Derivation {
  verdict: Verdict;
}

/** How the running exec was authorized (what nested programs must stay within). */
export type Authority =
  | { kind: "policy" }
  | { kind: "approved"; effects: Effect[] };

/** Leash of one session. */
export class SessionLeash {
  principal: string;
  policy: CompiledPolicy | null;
  generation: number;
  /**
   * The session runs under the OS sandbox lowered from this policy (issue 16). A hermetic
   * session only starts when every dimension it needs is enforced, so its spawns may go.
   */
  sandboxed = false;
  /** The running exec's authority (null between execs: handlers fall back to the policy). */
  authority: Authority | null = null;

  constructor(init: LeashInit) {
    this.principal = init.principal;
    this.policy = init.policy ? new CompiledPolicy(init.policy, init.home) : null;
    this.generation = init.generation;
  }

  /** Install a reloaded policy. */
  update(init: LeashInit): void {
    this.policy = init.policy ? new CompiledPolicy(init.policy, init.home) : null;
    this.generation = init.generation;
  }

  /** The verdict of this principal's policy for a derivation. */
  verdict(d: Derivation): Verdict {
    return this.policy ? this.policy.planVerdict(d.effects, d.reversibility) : "deny";
  }

  /**
   * Derive and judge an exec. `memoKey` — the source, cwd and bindings/environment version —
   * lets a derivation that depended on nothing else be remembered; the verdict is always
   * evaluated afresh (the policy may have changed).
   */
  check(program: Program, host: DeriveHost, memoKey?: string): Checked {
    let d = memoKey === undefined ? undefined : this.#memo.get(memoKey);
    if (d === undefined) {
      const t = trackingHost(host);
      d = deriveEffects(program, t.host);
      if (memoKey !== undefined && !t.volatile()) {
        if (this.#memo.size >= MEMO_SIZE) this.#memo.delete(this.#memo.keys().next().value!);
        this.#memo.set(memoKey, d);
      }
    }
    return { ...d, verdict: this.verdict(d) };
  }

  /** Remembered derivations (bounded; oldest out first). */
  readonly #memo = new Map<string, Derivation>();

  /**
   * An approved-mode exec: its effects now must equal the stored plan's, and the policy must
   * not deny it now. Returns null when it may run, else why not.
   */
  approve(now: Checked, planned: Effect[]): string | null {
    if (effectsKey(now.effects) !== effectsKey(planned)) {
      return "the plan's effects changed since it was approved (files, bindings or the cwd " +
        "moved on); plan it again and get a fresh approval";
    }
    if (now.verdict === "deny") return "the policy now denies this plan";
    return null;
  }

  /**
   * A program a nested evaluator is about to run. Null when it may; else the reason (the
   * caller raises it as a language error).
   */
  nested(program: Program, host: DeriveHost, what: string): string | null {
    const d = deriveEffects(program, host);
    const a = this.authority;
    if (a?.kind === "approved") {
      if (covers(a.effects, d.effects)) return null;
      return `${what} now does more than the approved plan covers ` +
        `(${JSON.stringify(d.effects)}); plan and approve it again`;
    }
    const v = this.verdict(d);
    if (v === "allow") return null;
    return `${what} needs ${v === "deny" ? "effects the policy denies" : "approval"} for ` +
      `${this.principal}: ${JSON.stringify(d.effects)}`;
  }

  /**
   * A PTY open (D-38): its program is an unknown external, so it is judged like an exec of it —
   * `proc_spawn` plus `opaque`, irreversible — and then passes the spawn gate. Null when it may
   * start; else `deny` (-32010) or `approval` (-32011; PTYs have no plan path yet) and why.
   */
  async ptySpawn(
    argv0: string,
    hash: () => Promise<string>,
  ): Promise<{ refuse: "deny" | "approval"; why: string } | null> {
    const effects: Effect[] = [{ kind: "proc_spawn", bin_hash: "", argv0 }, { kind: "opaque" }];
    const v = this.policy ? this.policy.planVerdict(effects, "irreversible") : "deny";
    if (v === "deny") {
      return { refuse: "deny", why: `the policy of ${this.principal} denies starting ${argv0}` };
    }
    if (v === "approval_required") {
      return {
        refuse: "approval",
        why: `starting ${argv0} on a PTY needs approval for ${this.principal}, and PTYs have ` +
          `no plan path: run it through exec (plan, approve, apply) instead`,
      };
    }
    const why = await this.spawn(argv0, hash);
    return why === null ? null : { refuse: "deny", why };
  }

  /**
   * The spawn gate: pinning (a non-empty `proc_spawn` list) and `hermetic` (no sandbox can be
   * enforced yet, so a hermetic restricted principal spawns nothing). `hash` computes the
   * binary's BLAKE3 lazily — only when a grant is a hash. Null when allowed, else why not.
   */
  async spawn(argv0: string, hash: () => Promise<string>): Promise<string | null> {
    const p = this.policy;
    if (p === null) return `${this.principal} has no policy: spawning ${argv0} is denied`;
    if (p.spec.hermetic && !p.allowAll && !this.sandboxed) {
      return `the hermetic policy of ${this.principal} needs a sandbox this kernel cannot ` +
        `enforce yet (caps_enforced is false), so ${argv0} was not started`;
    }
    if (!p.pinsSpawns) return null;
    const h = p.pinsHashes ? await hash().catch(() => "") : "";
    if (p.spawnAllowed(argv0, h)) return null;
    return `${argv0} is not in the proc_spawn list of ${this.principal}`;
  }
}
