/**
 * Session methods (protocol §3, §4.1–§4.4): `session.attach`, the session views
 * (`session.env`, `session.reef`, `session.cwd`), and the context-free `parse` and `complete`.
 *
 * @module
 */

import { isAbsolute } from "node:path";
import { RPC, RpcError } from "../../client/errors.ts";
import { type AttachResult, STATIC_CHANNELS } from "../../client/protocol.ts";
import { parse, ParseError } from "../../syntax/mod.ts";
import { ELIDE_DEFAULTS } from "../../value/elide.ts";
import { parseRpcError } from "../parse_error.ts";
import { complete } from "../../eval/complete.ts";
import { sandboxCaps } from "../session_sandbox.ts";
import { invalid, optBool, optString, optUint, reqString } from "./params.ts";
import { att, type KernelServices, laneSynced, type P, type Register } from "./types.ts";
import type { Identity } from "../leash_service.ts";
import type { SessionHost } from "../session_host.ts";
import { localPrincipal } from "../../leash/mod.ts";

/** Connections whose close already takes their lane ticket back. */
const laneWatched = new WeakSet<object>();

/** Session names: the same alphabet as socket names, a little longer. */
const SESSION_NAME = /^[A-Za-z0-9._-]{1,128}$/;

/** Add the session family. */
export function addSessionMethods(add: Register, k: KernelServices): void {
  add("session.attach", async (p, conn) => {
    const name = optString(p, "session") ?? "default";
    if (!SESSION_NAME.test(name) || name === "." || name === "..") {
      throw invalid(
        `invalid session name ${JSON.stringify(name)}: use 1–128 letters, digits, '.', '_' or '-'`,
      );
    }
    const token = optString(p, "token");
    const client = p.client;
    if (
      client !== undefined && client !== null &&
      (typeof client !== "object" || Array.isArray(client))
    ) {
      throw invalid("`client` must be an object {kind?, tty?}");
    }
    const cwd = optString(p, "cwd");
    if (cwd !== undefined && cwd !== null && !isAbsolute(cwd)) {
      throw invalid(`\`cwd\` must be an absolute path (got ${JSON.stringify(cwd)})`);
    }
    const c = (client ?? {}) as P;
    const kind = optString(c, "kind") ?? "";
    const tty = optBool(c, "tty") ?? false;
    const who = k.leash ? await k.leash.identify(token) : noLeash(token);
    const session = await k.session(name, who.principal, cwd);
    await session.laneSync(); // its facts as of the last lane exec
    const before = conn.attachment;
    if (before?.lane) before.session.revokeLane(before.lane);
    // A token is re-checked before each request, which a lane would skip: tokens go the long way.
    // A client that will not use one says `lane: false` (no ticket is kept for it).
    const wantsLane = optBool(p, "lane") ?? true;
    const lane = who.tokenId === null && wantsLane ? session.grantLane(tty) : null;
    if (lane !== null && !laneWatched.has(conn)) {
      laneWatched.add(conn);
      conn.closed.addEventListener("abort", () => {
        const a = conn.attachment;
        if (a?.lane) a.session.revokeLane(a.lane);
      }, { once: true });
    }
    conn.attachment = {
      session,
      principal: who.principal,
      tty,
      kind,
      ...identityOf(who),
      lane,
    };
    const result: AttachResult = {
      session: name,
      principal: who.principal,
      caps: capsOf(k, who, session),
      cwd: session.init.cwdNote
        ? { display: session.facts.cwd, note: session.init.cwdNote }
        : { display: session.facts.cwd },
      instance: session.instance,
      env_hash: session.facts.env_hash,
      ast_version: 2,
      caps_enforced: sandboxCaps(session.confinement).enforced,
      elide_defaults: { ...ELIDE_DEFAULTS },
      channels: [...STATIC_CHANNELS],
      ...(lane !== null && session.laneSocket !== null
        ? { lane: { socket: session.laneSocket, ticket: lane } }
        : {}),
    };
    return result;
  }, false);

  add("session.env", (_p, conn) => att(conn).session.request("env", {}));

  // The worker reads the session's scopes and lock (no probe, no hash, no subprocess).
  add("session.reef", (_p, conn) => att(conn).session.request("reef", {}));

  add("session.cwd", async (_p, conn) => {
    await laneSynced(conn);
    return { display: att(conn).session.facts.cwd };
  });

  add("parse", async (p, conn) => {
    const src = reqString(p, "src", "parse");
    await laneSynced(conn); // the names the last lane exec bound
    const names = conn.attachment?.session.facts.names;
    try {
      const ast = parse(src, names ? bindingContext(names) : {});
      return { ast_version: 2, ast };
    } catch (e) {
      if (!(e instanceof ParseError)) throw e;
      throw parseRpcError(e);
    }
  }, false);

  add("complete", (p, conn) => {
    const src = reqString(p, "src", "complete");
    const cursor = optUint(p, "cursor");
    // Attached: the session's worker completes with its bindings, cwd, env and PATH (paths,
    // executables) and says which bytes the candidates replace (`from`). Unattached: the
    // context-free words only.
    if (conn.attachment) return conn.attachment.session.request("complete", { src, cursor });
    return { candidates: complete(src, cursor, null) };
  }, false);
}

/** Without Leash (a benchmark kernel): the kernel's own user only, no tokens. */
function noLeash(token: string | undefined): Identity {
  if (token !== undefined) {
    throw new RpcError(
      RPC.AUTH_FAILED,
      "bearer tokens unavailable: this kernel runs without Leash",
    );
  }
  return { principal: localPrincipal(), profile: "local-human", caps: [], tokenId: null };
}

function identityOf(who: Identity) {
  return { profile: who.profile, caps: who.caps, tokenId: who.tokenId };
}

/**
 * `caps` as they are (protocol §3.3, D-33): nothing is OS-enforced yet, so `enforced` is false
 * and `tier` is the tier active for this principal — null when its policy restricts nothing
 * (the person), "D" (advisory: plan verdicts only) when it does; `available_tier` is the best
 * backend the host has. `opaque` is the principal's verdict for an opaque effect.
 */
function capsOf(k: KernelServices, who: Identity, session: SessionHost): AttachResult["caps"] {
  const set = k.leash?.policies();
  const policy = set?.compiled(who.principal) ?? null;
  const source = set?.sourceOf(who.principal) ?? "builtin";
  const unrestricted = set === undefined || policy?.allowAll === true;
  const opaque = set === undefined ? "allow" : policy?.effectVerdict({ kind: "opaque" }) ?? "deny";
  // What the OS enforces for this principal here, dimension by dimension (§11.6, D-33).
  const sandbox = sandboxCaps(session.confinement);
  const confined = session.confinement !== null;
  return {
    ...sandbox,
    tier: confined && sandbox.tier !== null ? sandbox.tier : unrestricted ? null : "D",
    policy_principal: source === "none" ? null : who.principal,
    profile: who.profile,
    token_caps: who.caps,
    opaque,
    approver: set?.isApprover(who.principal) ?? true,
    policy: source,
    note: source === "none"
      ? `no policy section for ${who.principal}: every effect and plan is denied`
      : confined
      ? "the policy is evaluated on every plan and exec, and the OS confines this principal's " +
        "session to its grants as `detail` says"
      : unrestricted
      ? "this principal's policy allows every effect; nothing is sandboxed"
      : "the policy is evaluated on every plan and exec (advisory, tier D); no OS sandbox " +
        "confines this principal's session (caps_enforced is false)",
  };
}

/** Parser binding context from a session's root bindings. */
export function bindingContext(
  names: Record<string, string>,
): { valueNames: string[]; commandNames: string[] } {
  const valueNames: string[] = [];
  const commandNames: string[] = [];
  for (const [n, t] of Object.entries(names)) {
    (t === "closure" || t === "command" ? commandNames : valueNames).push(n);
  }
  return { valueNames, commandNames };
}
