/**
 * A minimal real host for calling namespace members directly: a session env map, an optional
 * injected config snapshot, and helpers that call `namespaceMember` the way the evaluator does.
 */

import type { RecordV, Value } from "../../../lib/value/types.ts";
import { fail } from "../../../lib/value/errors.ts";
import type { MaybePromise } from "../../../lib/eval/maybe.ts";
import type { Interp, MethodArgs } from "../../../lib/eval/method_types.ts";
import { namespaceMember } from "../../../lib/eval/namespaces/mod.ts";

/** Host with a session env (never the process env) and an optional config snapshot. */
export class NsInterp implements Interp {
  constructor(
    readonly envMap: Map<string, string> = new Map(),
    readonly snapshot: RecordV | null = null,
  ) {}
  callValue(): MaybePromise<Value> {
    throw fail("type_error", "namespaces never call back");
  }
  cwd(): string {
    return "/";
  }
  env(): Map<string, string> {
    return this.envMap;
  }
  checkCancelled(): void {}
  config(): RecordV | null {
    return this.snapshot;
  }
}

const defaultIp = new NsInterp();

/** Arguments as the evaluator builds them. */
export function args(pos: Value[], named: Record<string, Value> = {}): MethodArgs {
  return { pos, named: new Map(Object.entries(named)), span: null };
}

/** `ns.member(pos…)` (synchronous members only). */
export function call(ns: string, member: string, ...pos: Value[]): Value {
  return namespaceMember(defaultIp, ns, member, args(pos)) as Value;
}

/** `ns.member(pos…, named…)` through a given host. */
export function callWith(
  ip: Interp,
  ns: string,
  member: string,
  pos: Value[],
  named: Record<string, Value> = {},
): Value {
  return namespaceMember(ip, ns, member, args(pos, named)) as Value;
}

/** `ns.member` read as a field. */
export function field(ns: string, member: string, ip: Interp = defaultIp): Value {
  return namespaceMember(ip, ns, member, null) as Value;
}

/** Assert a ShoalError with a code and a needle in msg or hint (shared value-test helper). */
export { assertShoalError as raises } from "../../value/_helpers.ts";
