/**
 * Kernel methods of the journal (issue 7): `blob.get` (protocol §5.2, D-8) and `journal.query`
 * (§14, D-1, D-11). Both need an attachment; a kernel without a journal answers `blob.get`
 * with -32004 and `journal.query` with an empty list.
 *
 * @module
 */

import { RPC, RpcError } from "../../client/errors.ts";
import { blobGet, entryJson, type KernelJournal, queryFilter } from "../kernel_journal.ts";
import type { Register } from "./types.ts";

/** Add the journal methods to a method table. */
export function addJournalMethods(add: Register, journal: KernelJournal | null): void {
  add("blob.get", (p) => {
    if (journal === null) {
      if (p.hash === undefined || p.hash === null) {
        throw new RpcError(RPC.INVALID_PARAMS, "blob.get requires a hash");
      }
      throw new RpcError(
        RPC.UNKNOWN_REF,
        "unknown value hash: this kernel has no content store",
        {
          ref: p.hash,
          code: "not_found",
        },
      );
    }
    return blobGet(journal.store, p);
  });
  add("journal.query", async (p, conn) => {
    const principal = conn.attachment!.principal;
    const f = queryFilter(p, principal, journal?.access(principal));
    if (journal === null) return [];
    return (await journal.store.journal.query(f)).map(entryJson);
  });
  add("journal.get", async (p, conn) => {
    const id = p.id;
    if (typeof id !== "number" || !Number.isSafeInteger(id) || id <= 0) {
      throw new RpcError(RPC.INVALID_PARAMS, "journal.get requires `id` (a positive integer)");
    }
    const principal = conn.attachment!.principal;
    const e = journal === null ? null : await journal.store.journal.get(id);
    // Rows the principal may not read are indistinguishable from missing ones (D-1).
    const access = journal?.access(principal) ?? "none";
    if (e === null || access === "none" || (access === "own" && e.principal !== principal)) {
      throw new RpcError(RPC.UNKNOWN_REF, `no journal entry ${id}`, { id });
    }
    return { ...entryJson(e), statements: e.statements.map(entryJson) };
  });
}
