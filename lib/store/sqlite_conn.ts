/**
 * A `DatabaseSync` with a prepared-statement cache and a nestable transaction
 * helper (savepoints), shared by the row modules.
 *
 * @module
 */

import type { DatabaseSync, SQLInputValue, StatementSync } from "node:sqlite";
import { fromSqlite } from "./sqlite_errors.ts";

/** Parameter value accepted by statements. */
export type Param = SQLInputValue;

/** One connection. Single-threaded: use it only from the thread that opened it. */
export class Conn {
  /** The underlying database. */
  readonly db: DatabaseSync;
  readonly #stmts = new Map<string, StatementSync>();
  #depth = 0;
  /**
   * While set, {@link tx} inside a transaction runs its function bare (no savepoint): for a
   * caller that rolls the whole transaction back on any error and redoes it guarded. A
   * savepoint and its release cost two statements each — ~15 % of folding an exec.
   */
  unguarded = false;

  /** Wrap an open database. */
  constructor(db: DatabaseSync) {
    this.db = db;
  }

  /** A cached prepared statement. */
  stmt(sql: string): StatementSync {
    let s = this.#stmts.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.#stmts.set(sql, s);
    }
    return s;
  }

  /** Run `fn` atomically: a savepoint (inside a batch) or its own transaction (alone). */
  tx<T>(what: string, fn: () => T): T {
    if (this.unguarded && this.db.isTransaction) return fn();
    const name = `sp${this.#depth++}`;
    try {
      // Prepared once per depth: `exec` would parse the statement on every call.
      this.stmt(`SAVEPOINT ${name}`).run();
    } catch (e) {
      this.#depth--;
      throw fromSqlite(e, what);
    }
    try {
      const out = fn();
      this.stmt(`RELEASE ${name}`).run();
      return out;
    } catch (e) {
      // SQLite may already have rolled the whole transaction back (e.g. SQLITE_FULL).
      if (this.db.isTransaction) {
        try {
          this.db.exec(`ROLLBACK TO ${name}`);
          this.db.exec(`RELEASE ${name}`);
        } catch {
          // the transaction is gone; the caller sees the original error
        }
      }
      throw fromSqlite(e, what);
    } finally {
      this.#depth--;
    }
  }
}

/** A row id from `lastInsertRowid` as a number. */
export function idOf(v: number | bigint): number {
  return typeof v === "bigint" ? Number(v) : v;
}
