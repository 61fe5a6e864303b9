/**
 * The policies in force in one kernel: the policy file's sections by principal, its global
 * `approvers`, and the rule that keeps the person in charge — the kernel's own `uid:N`
 * principal gets the built-in permissive policy unless the file has a section of its own for
 * it, so adding an agent's policy never locks the person out. A principal without a section
 * is unknown: every effect and plan is denied.
 *
 * Approval authority (D-2): the person may approve any plan; a principal named in the global
 * `approvers` list, or in the owner's own `approvers`, may approve the owner's plans; an owner
 * may approve its own plans only with `self_approve = true` (the person always may).
 *
 * @module
 */

import { CompiledPolicy, type JournalRead, permissiveSpec, type PolicySpec } from "./policy.ts";

/** A parsed policy file. */
export interface PolicyFile {
  /** Principals who may approve every principal's plans. */
  approvers: string[];
  /** Sections by principal. */
  principals: Record<string, PolicySpec>;
}

/** No file: only the built-in rule for the person. */
export const NO_POLICY_FILE: PolicyFile = { approvers: [], principals: {} };

/** The policies of a kernel (immutable; a reload builds a new set). */
export class PolicySet {
  readonly #compiled = new Map<string, CompiledPolicy | null>();

  /**
   * `local` is the kernel's own principal (`uid:<euid>`); `home` expands `~/` in grants;
   * `generation` counts reloads (sessions compare it to know their copy is current).
   */
  constructor(
    readonly file: PolicyFile,
    readonly local: string,
    readonly home: string,
    readonly generation = 0,
  ) {}

  /** The section that applies to `principal`, or null (unknown principal: deny everything). */
  specFor(principal: string): PolicySpec | null {
    const own = Object.hasOwn(this.file.principals, principal)
      ? this.file.principals[principal]
      : undefined;
    if (own) return own;
    return principal === this.local ? permissiveSpec() : null;
  }

  /** Where `principal`'s policy comes from. */
  sourceOf(principal: string): "file" | "builtin" | "none" {
    if (Object.hasOwn(this.file.principals, principal)) return "file";
    return principal === this.local ? "builtin" : "none";
  }

  /** The compiled policy of `principal` (cached), or null when it has none. */
  compiled(principal: string): CompiledPolicy | null {
    let c = this.#compiled.get(principal);
    if (c === undefined) {
      const spec = this.specFor(principal);
      c = spec ? new CompiledPolicy(spec, this.home) : null;
      this.#compiled.set(principal, c);
    }
    return c;
  }

  /** Which journal rows `principal` may read. */
  journalAccess(principal: string): JournalRead {
    return this.specFor(principal)?.journal_read ?? "none";
  }

  /** May `approver` approve (or decline) plans owned by `owner`? */
  mayApprove(approver: string, owner: string): boolean {
    if (approver === this.local) return true;
    if (approver === owner) return this.specFor(owner)?.self_approve === true;
    if (this.file.approvers.includes(approver)) return true;
    return this.specFor(owner)?.approvers.includes(approver) === true;
  }

  /** May `principal` approve some other principal's plans (the approval channel, listings)? */
  isApprover(principal: string): boolean {
    if (principal === this.local || this.file.approvers.includes(principal)) return true;
    return Object.values(this.file.principals).some((s) => s.approvers.includes(principal));
  }

  /** Why `approver` may not approve `owner`'s plans (for the -32010 message). */
  refusal(approver: string, owner: string): string {
    if (approver === owner) {
      return `${owner} may not approve its own plans (its policy has no \`self_approve = true\`); ` +
        `ask the person who runs the kernel (\`shoal plan approve REF\`) or an approver`;
    }
    return `${approver} may not approve plans of ${owner}: only the person who runs the kernel ` +
      `(${this.local}) and principals named in \`approvers\` may`;
  }
}
