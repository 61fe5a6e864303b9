/**
 * Entry point of the journal Worker: owns the SQLite connection so that no
 * SQLite call (inserts, WAL checkpoints with their fsync, long queries, GC)
 * ever runs on the kernel's main thread. Speaks a tiny message protocol with
 * `journal_client.ts`.
 *
 * @module
 */
/// <reference no-default-lib="true" />
/// <reference lib="deno.worker" />

import { BatchRunner } from "./batch_runner.ts";
import { StoreError } from "./errors.ts";
import { JournalDb } from "./journal_db.ts";
import type { ToWorker } from "./journal_client.ts";

let runner: BatchRunner | null = null;

function errorJson(e: unknown) {
  return (e instanceof StoreError
    ? e
    : new StoreError("journal_write_failed", e instanceof Error ? e.message : String(e)))
    .toJSON();
}

self.onmessage = async (ev: MessageEvent<ToWorker>) => {
  const msg = ev.data;
  switch (msg.t) {
    case "open": {
      try {
        const db = JournalDb.open(msg.opts);
        runner = new BatchRunner(db);
        self.postMessage({ t: "opened", info: db.info });
      } catch (e) {
        self.postMessage({ t: "open_failed", error: errorJson(e) });
      }
      return;
    }
    case "call": {
      if (!runner) {
        self.postMessage({
          t: "result",
          id: msg.id,
          ok: false,
          error: errorJson(new StoreError("store_closed", "the journal is not open")),
        });
        return;
      }
      runner.submit(msg.op, msg.args).then(
        (value) => self.postMessage({ t: "result", id: msg.id, ok: true, value }),
        (e) => self.postMessage({ t: "result", id: msg.id, ok: false, error: errorJson(e) }),
      );
      return;
    }
    case "stats": {
      self.postMessage({ t: "stats", id: msg.id, stats: runner?.stats ?? null });
      return;
    }
    case "close": {
      try {
        await runner?.close();
      } finally {
        runner = null;
        self.postMessage({ t: "closed" });
        self.close();
      }
      return;
    }
  }
};
