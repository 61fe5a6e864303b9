/**
 * Process liveness for crash honesty. Several processes may share one journal
 * (kernel, REPL, history tool), so "rows still running at open" is not enough
 * to call a row unfinished: its writer may be alive. Each journal connection
 * therefore holds an exclusive SQLite lock on its own tiny lock file
 * `<state>/writers/<token>.lock` for its lifetime; the OS drops that lock when
 * the process dies (even on SIGKILL). Another opener tests the lock without
 * waiting: busy ⇒ the writer is alive; free ⇒ its running rows are unfinished.
 *
 * Built on `node:sqlite` only, so it needs no FFI and no extra permissions.
 *
 * @module
 */

import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { ioError } from "./errors.ts";

const TOKEN_RE = /^w[0-9]+-[0-9a-f-]{36}$/;

/** The lock held by this journal connection. */
export class WriterLock {
  /** Token recorded in the `writer` column of rows this connection begins. */
  readonly token: string;
  /** Lock file path. */
  readonly path: string;
  #db: DatabaseSync | null;

  private constructor(token: string, path: string, db: DatabaseSync) {
    this.token = token;
    this.path = path;
    this.#db = db;
  }

  /** Create and lock a fresh lock file under `dir`. */
  static acquire(dir: string): WriterLock {
    try {
      Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
    } catch (e) {
      throw ioError(e, "creating the writers directory", dir);
    }
    const token = `w${Deno.pid}-${crypto.randomUUID()}`;
    const path = join(dir, `${token}.lock`);
    try {
      Deno.writeFileSync(path, new Uint8Array(0), { createNew: true, mode: 0o600 });
      const db = new DatabaseSync(path);
      // Held until release() or process death. journal_mode=MEMORY: no -journal file.
      db.exec("PRAGMA journal_mode = MEMORY; PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE;");
      return new WriterLock(token, path, db);
    } catch (e) {
      throw ioError(e, "creating the journal writer lock", path);
    }
  }

  /** Release the lock and remove the file. */
  release(): void {
    if (!this.#db) return;
    try {
      this.#db.exec("ROLLBACK");
    } catch {
      // nothing to roll back
    }
    this.#db.close();
    this.#db = null;
    try {
      Deno.removeSync(this.path);
    } catch {
      // already gone
    }
  }
}

/**
 * Is the writer with `token` alive? A missing lock file means dead (its
 * process closed cleanly or was swept). When unsure (an unexpected error),
 * answer alive: never mark a live process's rows unfinished.
 */
export function writerAlive(dir: string, token: string | null): boolean {
  if (token === null || !TOKEN_RE.test(token)) return false;
  const path = join(dir, `${token}.lock`);
  try {
    Deno.statSync(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    return true;
  }
  let db: DatabaseSync | null = null;
  try {
    // Read-only: never re-creates a file another sweeper just removed. A shared
    // lock is enough to collide with the holder's exclusive one.
    // (Deno's DatabaseSync ignores `timeout: 0` and waits 5 s; the pragma is honoured.)
    db = new DatabaseSync(path, { readOnly: true });
    db.exec("PRAGMA busy_timeout = 0");
    db.prepare("SELECT count(*) FROM sqlite_master").get();
    db.close();
    db = null;
    // We got the lock: its owner is gone. Remove the stale file.
    try {
      Deno.removeSync(path);
    } catch {
      // raced with another sweeper
    }
    return false;
  } catch {
    return true; // "database is locked": held by a live process
  } finally {
    try {
      db?.close();
    } catch {
      // already closed
    }
  }
}

/** Remove lock files of dead writers (left by crashed processes with no running rows). */
export function sweepStaleLocks(dir: string, self: string): number {
  let removed = 0;
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(dir)];
  } catch {
    return 0;
  }
  for (const e of entries) {
    if (!e.isFile || !e.name.endsWith(".lock")) continue;
    const token = e.name.slice(0, -".lock".length);
    if (token === self || !TOKEN_RE.test(token)) continue;
    if (!writerAlive(dir, token)) removed++;
  }
  return removed;
}
