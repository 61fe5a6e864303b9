/**
 * `shoal token` (protocol §16 `shoal-token`): manage the bearer-token store.
 *
 * ```
 * shoal token create PRINCIPAL [PROFILE] [--cap C]… [--ttl D]   print the bearer once
 * shoal token list [--json]                                     ID PRINCIPAL PROFILE STATE
 * shoal token revoke ID
 *   [--token-store FILE] [--state-dir DIR]   (else $SHOAL_TOKEN_STORE, else <state>/tokens.json)
 * ```
 *
 * The bearer is the only line on stdout; `created <id> (secret shown once)` goes to stderr.
 * `--ttl` takes seconds or a number with a unit (`90s`, `30m`, `12h`, `7d`). Exit 2 on a usage
 * error, 1 when the operation fails.
 *
 * @module
 */

import { TokenStore, TokenStoreError, tokenStorePath } from "../leash/mod.ts";
import { defaultStateDir } from "../client/discovery.ts";
import { cliArgs } from "../client/cli_args.ts";

/** Usage text. */
export const TOKEN_USAGE =
  "usage: shoal token create PRINCIPAL [PROFILE] [--cap C]... [--ttl D]\n" +
  "       shoal token list [--json]\n" +
  "       shoal token revoke ID\n" +
  "options: --token-store FILE, --state-dir DIR (default: $SHOAL_TOKEN_STORE, else " +
  "<state>/tokens.json)";

class Usage extends Error {}

/** Seconds of a `--ttl` value. */
export function parseTtl(text: string): number {
  const m = /^(-?[0-9]+)(s|m|h|d)?$/.exec(text);
  if (!m) throw new Usage(`--ttl must be seconds or N with s, m, h or d (got ${text})`);
  const mult = { s: 1, m: 60, h: 3600, d: 86400 }[m[2] as "s" | "m" | "h" | "d"] ?? 1;
  return Number(m[1]) * mult;
}

/** Run `shoal token …`; returns the exit status. */
export async function tokenMain(args: string[]): Promise<number> {
  const out = (s: string) => console.log(s);
  const err = (s: string) => console.error(s);
  try {
    const rest: string[] = [];
    const caps: string[] = [];
    let ttl: number | undefined;
    let storeFlag: string | null = null;
    let stateDir: string | null = null;
    let json = false;
    for (const { arg: a, flag, value } of cliArgs(args, (f) => new Usage(`${f} needs a value`))) {
      if (flag === "--cap") caps.push(value());
      else if (flag === "--ttl") ttl = parseTtl(value());
      else if (flag === "--token-store") storeFlag = value();
      else if (flag === "--state-dir") stateDir = value();
      else if (flag === "--json") json = true;
      else if (flag === "-h" || flag === "--help") {
        out(TOKEN_USAGE);
        return 0;
      } else if (a.startsWith("-") && a !== "-") throw new Usage(`unknown option ${a}`);
      else rest.push(a);
    }
    const path = tokenStorePath({ explicit: storeFlag, stateDir: stateDir ?? defaultStateDir() })!;
    const store = new TokenStore(path);
    const [verb, ...pos] = rest;
    switch (verb) {
      case "create": {
        if (pos.length < 1 || pos.length > 2) throw new Usage("create takes PRINCIPAL [PROFILE]");
        const { bearer, record } = await store.create(pos[0], pos[1] ?? "default", caps, ttl);
        out(bearer);
        err(`created ${record.id} (secret shown once) for ${record.principal} in ${path}`);
        return 0;
      }
      case "list": {
        if (pos.length) throw new Usage("list takes no arguments");
        const now = Date.now() * 1_000_000;
        const rows = await store.list();
        if (json) {
          out(JSON.stringify(rows.map(({ digest: _, ...r }) => r)));
          return 0;
        }
        for (const t of rows) {
          const state = t.revoked_ns !== null
            ? "revoked"
            : t.expires_ns !== null && !(t.expires_ns > now)
            ? "expired"
            : "active";
          out(`${t.id}\t${t.principal}\t${t.profile}\t${state}`);
        }
        return 0;
      }
      case "revoke": {
        if (pos.length !== 1) throw new Usage("revoke takes one ID");
        const t = await store.revoke(pos[0]);
        err(`revoked ${t.id} (${t.principal})`);
        return 0;
      }
      default:
        throw new Usage(verb === undefined ? "missing command" : `unknown command ${verb}`);
    }
  } catch (e) {
    if (e instanceof Usage) {
      err(`shoal token: ${e.message}\n${TOKEN_USAGE}`);
      return 2;
    }
    if (e instanceof TokenStoreError) {
      err(`shoal token: ${e.message}`);
      return 1;
    }
    throw e;
  }
}
