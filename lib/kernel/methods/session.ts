/**
 * Session methods (protocol §3, §4.1–§4.4): `session.attach`, the session views
 * (`session.env`, `session.reef`, `session.cwd`), and the context-free `parse` and `complete`.
 *
 * @module
 */

import { RPC, RpcError } from "../../client/errors.ts";
import { type AttachResult, STATIC_CHANNELS } from "../../client/protocol.ts";
import { parse, ParseError } from "../../syntax/mod.ts";
import { ELIDE_DEFAULTS } from "../../value/elide.ts";
import { complete } from "../complete.ts";
import { availableTier } from "../tier.ts";
import { invalid, optBool, optString, optUint, reqString } from "./params.ts";
import { att, type KernelServices, type P, type Register } from "./types.ts";

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
    if (optString(p, "token") !== undefined) {
      throw new RpcError(
        RPC.AUTH_FAILED,
        "bearer tokens unavailable: this kernel has no token store yet; attach without a token",
      );
    }
    const client = p.client;
    if (
      client !== undefined && client !== null &&
      (typeof client !== "object" || Array.isArray(client))
    ) {
      throw invalid("`client` must be an object {kind?, tty?}");
    }
    const c = (client ?? {}) as P;
    const kind = optString(c, "kind") ?? "";
    const tty = optBool(c, "tty") ?? false;
    const session = await k.session(name);
    const principal = `uid:${Deno.uid() ?? 0}`;
    conn.attachment = { session, principal, tty, kind };
    const result: AttachResult = {
      session: name,
      principal,
      caps: {
        enforced: false,
        tier: null,
        available_tier: availableTier(),
        policy_principal: principal,
        profile: "local-human",
        token_caps: [],
        opaque: "allow",
        note: "nothing is enforced yet: this kernel has no policy engine or sandbox; " +
          "every effect runs with the kernel's own permissions",
      },
      cwd: { display: session.facts.cwd },
      env_hash: session.facts.env_hash,
      ast_version: 2,
      caps_enforced: false,
      elide_defaults: { ...ELIDE_DEFAULTS },
      channels: [...STATIC_CHANNELS],
    };
    return result;
  }, false);

  add("session.env", (_p, conn) => att(conn).session.request("env", {}));

  // The worker reads the session's scopes and lock (no probe, no hash, no subprocess).
  add("session.reef", (_p, conn) => att(conn).session.request("reef", {}));

  add("session.cwd", (_p, conn) => ({ display: att(conn).session.facts.cwd }));

  add("parse", (p, conn) => {
    const src = reqString(p, "src", "parse");
    const names = conn.attachment?.session.facts.names;
    try {
      const ast = parse(src, names ? bindingContext(names) : {});
      return { ast_version: 2, ast };
    } catch (e) {
      if (!(e instanceof ParseError)) throw e;
      throw new RpcError(RPC.PARSE_ERROR, e.msg, {
        span: { start: e.span[0], end: e.span[1] },
        hint: e.hint,
      });
    }
  }, false);

  add("complete", (p, conn) => {
    const src = reqString(p, "src", "complete");
    const cursor = optUint(p, "cursor");
    return { candidates: complete(src, cursor, conn.attachment?.session.facts.names ?? null) };
  }, false);
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
